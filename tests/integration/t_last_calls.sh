# Issue 8's cases of a process image that ends without exit(): each leaves
# its final numbers in its log, equal to the truth from the other end.
#  - a forked child receives 1 MiB sent with sendfile and ends with
#    _exit(0): its exit record holds the 1,048,576 bytes in;
#  - _Exit after 100,000 bytes through a socketpair;
#  - execlp("true") after 100,000 bytes: an exec record with the totals
#    (and no exit record: the new image never had a metered fd);
#  - an exec that fails on a file that is there (EACCES): the exec record,
#    then metering goes on, and the exit record holds both halves;
#    sockmeter-report counts each byte once;
#  - an exec of a path that names no file (ENOENT) starts nothing: no exec
#    record, and the exit record holds both halves; a PATH search made with
#    execve (python3's os.execvp) writes one exec record, not one per
#    directory tried.
. "$(dirname "$0")/lib.sh"

need_prog lastcall
report=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter-report
export SOCKMETER_FORMAT=json SOCKMETER_STATE=$T/state

run_case() { # MODE BYTES: logs in $T/MODE/
	mkdir -p "$T/$1"
	SOCKMETER_LOG=$T/$1/%p.log sm "$PROGS/lastcall" "$1" "$2" \
		>"$T/$1.out" 2>"$T/$1.err" || fail "lastcall $1: $(cat "$T/$1.err")"
}

# sendfile to a fork child that _exits
run_case sendfile 1048576
cpid=$(sed -n 's/^child pid=//p' "$T/sendfile.out")
ppid=$(field pid "$T/sendfile.out")
expect_eq "child's truth" "$(field child_in "$T/sendfile.out")" 1048576
clog=$T/sendfile/$cpid.log
[ -f "$clog" ] || fail "no log for the _exit child ($(ls "$T/sendfile"))"
expect_eq "_exit child: exit bytes_in" "$(q "$clog" "tot('bytes_in')")" 1048576
expect_eq "_exit child: its records' pid" \
	"$(q "$clog" "sorted(set(r['pid'] for r in R))")" "[$cpid]"
expect_eq "sendfile parent: bytes_out" \
	"$(q "$T/sendfile/$ppid.log" "tot('bytes_out')")" 1048576

# _Exit
run_case _Exit 100000
log=$T/_Exit/$(field pid "$T/_Exit.out").log
expect_eq "_Exit: exit records" "$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 1
expect_eq "_Exit: bytes_out" "$(q "$log" "tot('bytes_out')")" 100000
expect_eq "_Exit: bytes_in" "$(q "$log" "tot('bytes_in')")" "$(field in "$T/_Exit.out")"

# _exit from a signal handler that most likely interrupted malloc: the
# record is made by the ticker (no malloc, no lock in the handler), so the
# process never hangs, 20 times over.
for i in $(seq 1 20); do
	run_case sigexit 100000
	log=$T/sigexit/$(field pid "$T/sigexit.out").log
	expect_eq "sigexit $i: bytes_out" "$(q "$log" "tot('bytes_out')")" 100000
	rm -f "$T"/sigexit/*.log
done

# exec after traffic
run_case exec 100000
log=$T/exec/$(field pid "$T/exec.out").log
expect_eq "exec: exec records" "$(q "$log" "len(X)")" 1
expect_eq "exec: exit records" "$(q "$log" "len([r for r in R if r['type'] == 'exit'])")" 0
expect_eq "exec: bytes_out" "$(q "$log" "X[0]['totals']['bytes_out']")" 100000
expect_eq "exec: bytes_in" "$(q "$log" "X[0]['totals']['bytes_in']")" 100000
expect_eq "exec: open fds listed" "$(q "$log" "X[0]['totals']['fds_open']")" 2
expect_eq "exec: one log (true moved nothing)" "$(ls "$T/exec" | wc -l)" 1
"$report" -f json "$log" >"$T/exec.rep" 2>&1 || fail "report: $(cat "$T/exec.rep")"
expect_eq "report: state after exec" \
	"$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["state"])' "$T/exec.rep")" exec

# exec that fails on a file that is there: its exec record, then metering
# goes on, nothing counted twice
run_case execdenied 100000
[ "$(field exec_errno "$T/execdenied.out")" = 13 ] || fail "exec did not fail with EACCES"
log=$T/execdenied/$(field pid "$T/execdenied.out").log
expect_eq "execdenied: exec records" "$(q "$log" "len(X)")" 1
expect_eq "execdenied: exec record's bytes_out" "$(q "$log" "X[0]['totals']['bytes_out']")" 100000
expect_eq "execdenied: exit bytes_out" "$(q "$log" "tot('bytes_out')")" 200000
expect_eq "execdenied: exit bytes_in" "$(q "$log" "tot('bytes_in')")" 200000
"$report" -f json "$log" >"$T/fail.rep" 2>&1 || fail "report: $(cat "$T/fail.rep")"
got=$("$PY" -c 'import json,sys
p = json.load(open(sys.argv[1]))["processes"]
print(len(p), p[0]["bytes_out"], p[0]["bytes_in"], p[0]["state"])' "$T/fail.rep")
expect_eq "report after a failed exec" "$got" "1 200000 200000 exited"

# exec of a path that names no file: it starts nothing, so no exec record
run_case execfail 100000
[ "$(field exec_errno "$T/execfail.out")" = 2 ] || fail "exec did not fail with ENOENT"
log=$T/execfail/$(field pid "$T/execfail.out").log
expect_eq "execfail: exec records" "$(q "$log" "len(X)")" 0
expect_eq "execfail: exit bytes_out" "$(q "$log" "tot('bytes_out')")" 200000
expect_eq "execfail: exit bytes_in" "$(q "$log" "tot('bytes_in')")" 200000

# A PATH search made with execve, directory after directory (python3's
# os.execvp; djb's pathexec does the same): 5 directories without the
# program, then the one with it.  One exec record, with the totals.
cat >"$T/execvp.py" <<'PYEOF'
import os, socket
a, b = socket.socketpair(); a.sendall(b"y" * 4321); b.recv(8192)
os.execvp("true", ["true"])
PYEOF
SOCKMETER_LOG=$T/execvp.log SOCKMETER_FORMAT=json \
	PATH="$T/no1:$T/no2:/nonexistent:$T/no3:$T/no4:/usr/bin:/bin" \
	sm "$PY" "$T/execvp.py" || fail "execvp.py failed"
expect_eq "execvp through PATH: exec records [bytes_in, bytes_out]" \
	"$(q "$T/execvp.log" "[[x['totals']['bytes_in'], x['totals']['bytes_out']] for x in X]")" "[[4321, 4321]]"
# A direct execve() (Python's os.execve), and fexecve (os.execve on an fd):
# each writes the exec record before the image goes.
cat >"$T/execve.py" <<'PYEOF'
import os, socket, sys
a, b = socket.socketpair(); a.sendall(b"x" * 1234); b.recv(4096)
if sys.argv[1] == "fd":
    os.execve(os.open("/bin/true", os.O_RDONLY), ["true"], dict(os.environ))
os.execve("/bin/true", ["true"], dict(os.environ))
PYEOF
for how in path fd; do
	SOCKMETER_LOG=$T/execve-$how.log SOCKMETER_FORMAT=json \
		sm "$PY" "$T/execve.py" "$how" || fail "execve.py $how failed"
	expect_eq "execve ($how): exec record [bytes_in, bytes_out, fds_open]" \
		"$(q "$T/execve-$how.log" "[[x['totals']['bytes_in'], x['totals']['bytes_out'], x['totals']['fds_open']] for x in X]")" "[[1234, 1234, 2]]"
done
# Every image removed its state file: _exit, exit, and the exec'd true
# removed the one its predecessor marked final.
expect_eq "state files left" "$(ls -A "$T/state" | grep -vc '^\.recover')" 0
exit 0
