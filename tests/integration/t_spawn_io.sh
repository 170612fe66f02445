# Children started by vfork+exec and by posix_spawn (with file actions)
# meter their own I/O (tests/progs/spawnio): the child gets one end of a
# socketpair as stdin and one as stdout, copies 300,000 bytes from one to
# the other with read/write, and its own log shows exactly that on fds 0
# and 1 (inherited: opened null).  The parent's log has exactly one close
# record for each of its four socket ends (the vfork child's dup2/close
# calls, made in the parent's memory, retire nothing of the parent's) with
# the bytes it sent and got back, and none for fds 0 and 1.
# (t_vfork_spawn.sh covers a vfork child that execs an unmetered program.)
. "$(dirname "$0")/lib.sh"

need_prog spawnio
for mode in vfork spawn; do
	mkdir -p "$T/$mode"
	SOCKMETER_LOG=$T/$mode/%n.%p.log SOCKMETER_FORMAT=json \
		sm "$PROGS/spawnio" "$mode" 300000 >"$T/$mode.out" 2>"$T/$mode.err" ||
		fail "spawnio $mode failed: $(cat "$T/$mode.out" "$T/$mode.err")"
	[ -s "$T/$mode.err" ] && fail "$mode: stderr: $(head -n 3 "$T/$mode.err")"
	kid=$(sed -n 's/.*child_pid=\([0-9]*\).*/\1/p' "$T/$mode.out")
	in0=$(sed -n 's/^in_fd=\([0-9]*\).*/\1/p' "$T/$mode.out")
	out0=$(sed -n 's/.* out_fd=\([0-9]*\).*/\1/p' "$T/$mode.out")
	expect_eq "$mode: log files" "$(find "$T/$mode" -type f | wc -l)" 2
	klog=$T/$mode/spawnio.$kid.log
	[ -f "$klog" ] || fail "$mode: no log for the child ($klog)"
	expect_eq "$mode: child's fds 0 and 1 [fd, kind, opened, in, out]" \
		"$(q "$klog" "sorted([f['fd'], f['kind'], f['opened'], f['bytes_in'], f['bytes_out']] for f in E['fds'])")" \
		'[[0, "unix", null, 300000, 0], [1, "unix", null, 0, 300000]]'
	expect_eq "$mode: child's pid" "$(q "$klog" "sorted(set(r['pid'] for r in R))")" "[$kid]"
	plog=$(find "$T/$mode" -type f ! -name "spawnio.$kid.log")
	expect_eq "$mode: parent's close records [fd, in, out]" \
		"$(q "$plog" "sorted([f['fd'], f['bytes_in'], f['bytes_out']] for f in CL if f['fd'] in ($in0, $out0))")" \
		"$(printf '[[%d, 0, 300000], [%d, 300000, 0]]' "$in0" "$out0" |
			"$PY" -c 'import json,sys; print(json.dumps(sorted(json.load(sys.stdin))))')"
	expect_eq "$mode: parent's close records per fd" \
		"$(q "$plog" "sorted(__import__('collections').Counter(f['fd'] for f in CL).values())")" \
		"[1, 1, 1, 1]"
	expect_eq "$mode: parent's records of fds 0/1" \
		"$(q "$plog" "len([f for f in CL + E['fds'] if f['fd'] in (0, 1)])")" 0
	expect_eq "$mode: parent's totals [in, out]" \
		"$(q "$plog" "[tot('bytes_in'), tot('bytes_out')]")" "[300000, 300000]"
done
exit 0
