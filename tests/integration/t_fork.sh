# A parent forks 3 children (tests/progs/forker); each child sends its own
# known number of bytes to the parent and exits normally.  With
# SOCKMETER_LOG=DIR/%n.%p.log each of the 4 processes has its own log; a
# child's exit record holds exactly its own bytes_out and nothing of the
# parent's (which moved 777 bytes on a socketpair before forking), and the
# parent's holds the sum it received.
. "$(dirname "$0")/lib.sh"

need_prog forker
mkdir -p "$T/logs"
SOCKMETER_LOG=$T/logs/%n.%p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/forker" 3 >"$T/out" 2>"$T/err" ||
	fail "forker failed: $(cat "$T/out" "$T/err")"

n=$(find "$T/logs" -type f | wc -l)
expect_eq "log files" "$n" 4
ppid=$(sed -n 's/^parent pid=\([0-9]*\) .*/\1/p' "$T/out")
warm=$(sed -n 's/^parent pid=[0-9]* warm_bytes=\([0-9]*\)/\1/p' "$T/out")
sum=$(field parent_in "$T/out")
plog=$T/logs/forker.$ppid.log
[ -f "$plog" ] || fail "no log $plog for the parent"
expect_eq "parent: pid in its exit record" "$(q "$plog" "E['pid']")" "$ppid"
expect_eq "parent: exit bytes_in" "$(q "$plog" "tot('bytes_in')")" $((sum + warm))
expect_eq "parent: exit bytes_out" "$(q "$plog" "tot('bytes_out')")" "$warm"

kids=0
while read -r _ pidf idxf bytesf; do
	pid=${pidf#pid=}
	idx=${idxf#index=}
	bytes=${bytesf#bytes=}
	kids=$((kids + 1))
	clog=$T/logs/forker.$pid.log
	[ -f "$clog" ] || fail "no log $clog for child $idx"
	expect_eq "child $idx: exit records" \
		"$(q "$clog" "len([r for r in R if r['type'] == 'exit'])")" 1
	expect_eq "child $idx: pid in its records" \
		"$(q "$clog" "sorted(set(r['pid'] for r in R))")" "[$pid]"
	expect_eq "child $idx: exit bytes_out" "$(q "$clog" "tot('bytes_out')")" "$bytes"
	expect_eq "child $idx: exit bytes_in" "$(q "$clog" "tot('bytes_in')")" 0
	# The inherited fds, still open at exit, start from zero in the child.
	expect_eq "child $idx: bytes on fds it did not use" \
		"$(q "$clog" "sum(f['bytes_in'] + f['bytes_out'] for f in conns() if f['bytes_out'] != $bytes)")" 0
	expect_eq "child $idx: the fd it sent on" \
		"$(q "$clog" "len([f for f in conns(kind='unix') if f['bytes_out'] == $bytes])")" 1
	# The parent's own sockets closed in the child belong to the child's
	# records with zero bytes, never to the parent's numbers.
	check "$clog" "tot('fds_closed') == len(CL)" "child $idx: fds_closed"
	# The parent's per-child fd got exactly this child's bytes.
	expect_eq "parent: connections that received $bytes bytes" \
		"$(q "$plog" "len([f for f in conns(kind='unix') if f['bytes_in'] == $bytes])")" 1
done < <(grep '^child ' "$T/out")
expect_eq "children" "$kids" 3
# A child starts from zero even when its parent's closed connections are
# already in the parent's totals (drained before the fork).
cat >"$T/fk.py" <<'PYEOF'
import os, socket, time
a, b = socket.socketpair(); a.sendall(b"w" * 1000); b.recv(4096); a.close(); b.close()
time.sleep(0.5)
pid = os.fork()
if pid == 0:
    c, d = socket.socketpair(); c.sendall(b"c" * 7); d.recv(100); c.close(); d.close(); os._exit(0)
os.waitpid(pid, 0)
print(pid)
PYEOF
mkdir -p "$T/fk"
kid=$(SOCKMETER_INTERVAL=0.1 SOCKMETER_LOG=$T/fk/%p.log SOCKMETER_FORMAT=json sm "$PY" "$T/fk.py") ||
	fail "fk.py failed"
expect_eq "fork child: exit totals [in, out, fds_closed] after the parent's closed connections" \
	"$(q "$T/fk/$kid.log" "[tot('bytes_in'), tot('bytes_out'), tot('fds_closed')]")" "[7, 7, 2]"
exit 0
