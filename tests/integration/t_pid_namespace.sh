# Processes in their own pid namespace share the state directory with the
# host, and no recovery takes a live one for dead.  A state file's name
# holds a pid, which means something only in the namespace /proc numbers
# it in: in a container (unshare -fp --mount-proc) the process is pid 1,
# to the host another process.  Before, a recovery on the host appended a
# "killed" exit record to the live process's log and removed its state
# file; two processes under unshare -fp (no /proc of their own, where
# /proc/1 is the host's init) both named their file after the host's pid 1
# and took each other's for their own.  One whose namespace is gone (its
# pid 1 killed from outside) is recovered, as any killed process.
. "$(dirname "$0")/lib.sh"

need socat unshare
unshare -fp --mount-proc true 2>/dev/null || skip "no pid namespaces here (needs root)"
mkdir -m 700 "$T/state"
export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
# slow_server PORT: 100,000 bytes, a pause of 3 s, 100,000 more.
slow_server() {
	bg_start sh -c "{ head -c 100000 /dev/zero; sleep 3; head -c 100000 /dev/zero; } |
		exec socat -u STDIN TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr"
	wait_listen "$1" "$BG_PID" 10 || fail "the server on $1 did not start"
}

# A container's process, alive while the host recovers.
p1=$(free_port)
slow_server "$p1"
LD_PRELOAD=$LIB SOCKMETER_LOG=$T/c-%p.log timeout 30 unshare -fp --mount-proc \
	socat -u "TCP:127.0.0.1:$p1" STDOUT >"$T/c.got" 2>"$T/c.err" &
c=$!
wait_for 10 test -s "$T/c.got" || fail "the container's socat got nothing"
sleep 0.3
"$SM_BUILD/sockmeter-recover" "$T/state" >"$T/rec.out" 2>&1 ||
	fail "recover failed: $(cat "$T/rec.out")"
wait "$c" || fail "the container's socat failed: $(cat "$T/c.err")"
expect_eq "bytes the container's socat got" "$(stat -c %s "$T/c.got")" 200000
log=$(ls "$T"/c-1.log) || fail "no log of the container's pid 1"
expect_eq "its exit records [end, bytes_in]" \
	"$(q "$log" "[[r.get('end', 'exit'), r['totals']['bytes_in']] for r in R if r['type'] == 'exit']")" \
	'[["exit", 200000]]'

# A container's pid 1 killed from outside: its namespace is gone with it,
# so its live state file was left by a kill, and the host's recovery
# (root's: every process's namespace readable) writes its records.
# Before, "a process of another pid namespace; left alone", for good.
p4=$(free_port)
slow_server "$p4"
LD_PRELOAD=$LIB SOCKMETER_LOG=$T/k-%p.log timeout 30 unshare -fp --mount-proc \
	socat -u "TCP:127.0.0.1:$p4" STDOUT >"$T/k.got" 2>"$T/k.err" &
k=$!
wait_for 10 test -s "$T/k.got" || fail "the killed container's socat got nothing"
# (A function: wait_for runs it again each time, the size read anew.)
got_first() { [ "$(stat -c %s "$T/k.got")" -ge 100000 ]; }
wait_for 10 got_first ||
	fail "the killed container's socat got $(stat -c %s "$T/k.got") bytes"
# timeout -> unshare -> socat (pid 1 inside)
u=$(cat "/proc/$k/task/$k/children")
s=$(cat "/proc/${u%% *}/task/${u%% *}/children")
[ -n "$s" ] || fail "no container process under unshare $u"
ls "$T/state" | grep -q -- '-ns[0-9]*\.state$' || fail "the container made no state file"
kill -KILL $s
wait "$k" 2>/dev/null
"$SM_BUILD/sockmeter-recover" "$T/state" >"$T/rec.out" 2>&1 ||
	fail "recover failed: $(cat "$T/rec.out")"
log=$(ls "$T"/k-1.log) || fail "no log of the killed container's pid 1"
expect_eq "the killed container's exit records [end, bytes_in]" \
	"$(q "$log" "[[r.get('end', 'exit'), r['totals']['bytes_in']] for r in R if r['type'] == 'exit']")" \
	'[["killed", 100000]]'
expect_eq "state files left" "$(ls "$T/state" | tr '\n' ' ')" ""

# Two at once under unshare -fp, whose /proc is the host's.
p2=$(free_port)
slow_server "$p2"
p3=$(free_port)
slow_server "$p3"
clients=
for p in "$p2" "$p3"; do
	LD_PRELOAD=$LIB SOCKMETER_LOG=$T/u$p-%p.log timeout 30 unshare -fp \
		socat -u "TCP:127.0.0.1:$p" STDOUT >"$T/u$p.got" 2>"$T/u$p.err" &
	clients="$clients $!"
done
# Each names its file after its own start time (read through
# /proc/self), not that of the host's pid 1 (/proc/1 there): before, a
# later run whose namespace got the same tag took such a file, left by a
# killed run, for its own predecessor (a helper's Chromium zygotes).
two_files() { [ "$(ls "$T/state" | grep -c -- '^1-.*-ns[0-9]*\.state$')" = 2 ]; }
wait_for 10 two_files || fail "unshare -fp: state files $(ls "$T/state")"
starts=$(for p in $(pgrep -x socat); do awk '{print $22}' "/proc/$p/stat"; done)
for f in $(ls "$T/state" | grep -- '^1-.*-ns[0-9]*\.state$'); do
	st=${f#1-}
	st=${st%%-ns*}
	echo "$starts" | grep -qx "$st" ||
		fail "unshare -fp: $f names start time $st, no socat's ($(echo $starts)); /proc/1's is $(awk '{print $22}' /proc/1/stat)"
done
for c in $clients; do
	wait "$c" || fail "an unshare -fp socat failed: $(cat "$T"/u*.err)"
done
for p in "$p2" "$p3"; do
	expect_eq "unshare -fp socat $p: bytes" "$(stat -c %s "$T/u$p.got")" 200000
	log=$(ls "$T"/u"$p"-1.log) || fail "no log of socat $p"
	expect_eq "unshare -fp socat $p: exit records [end, bytes_in]" \
		"$(q "$log" "[[r.get('end', 'exit'), r['totals']['bytes_in']] for r in R if r['type'] == 'exit']")" \
		'[["exit", 200000]]'
done
"$SM_BUILD/sockmeter-recover" "$T/state" >"$T/rec2.out" 2>&1 ||
	fail "recover failed: $(cat "$T/rec2.out")"
expect_eq "state files left" "$(ls "$T/state" | tr '\n' ' ')" ""

# bubblewrap's pid 1 (a namespace of its own) made its state file, then
# pivot_roots into a root where the state directory is not (/tmp a tmpfs
# of the sandbox's): at its exit it marked the file final but could not
# remove it by its path.  Such a file is litter, and recovery removes it
# (it was "a process of another pid namespace; left alone", one per run,
# for good).  Now that only a tracked fd makes a file, it makes none.  The program in the sandbox is metered and exact all the same
# (the library's directory is bound in: a build under /tmp is hidden).
if command -v bwrap >/dev/null &&
	bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-pid true 2>/dev/null; then
	mkdir "$T/bwlogs"
	LD_PRELOAD=$LIB SOCKMETER_LOG=$T/bwlogs/%n.%p.log timeout 30 bwrap \
		--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
		--ro-bind "$(dirname "$LIB")" "$(dirname "$LIB")" \
		--bind "$T/bwlogs" "$T/bwlogs" --unshare-pid "$PY" -c '
import socket
a, b = socket.socketpair()
a.sendall(b"q" * 5000)
print(len(b.recv(9000)))' >"$T/bw.out" 2>"$T/bw.err" ||
		fail "python3 in bwrap failed: $(cat "$T/bw.err")"
	expect_eq "python3 in bwrap" "$(cat "$T/bw.out")" 5000
	[ ! -s "$T/bw.err" ] || fail "said in bwrap: $(cat "$T/bw.err")"
	check "$(one_log "$T/bwlogs/python3.*.log")" "tot('bytes_in') == 5000 and tot('bytes_out') == 5000" \
		"python3 in bwrap: its exit record"
	# (Since 2026-12-03 bwrap's pid 1, which only opens files and pipes,
	# makes no state file at all: nothing to litter.  If one is there,
	# recovery removes it once its namespace is gone.)
	ls "$T/state" | grep -q -- '-ns[0-9]*\.state$' ||
		echo "bwrap's pid 1 made no state file (it tracked no fd)" >&2
	# Only once its namespace is gone (a final file is also a live
	# process's for the moment of an exec): bwrap's pid 1 may still be
	# on its way out when bwrap returns.
	gone() {
		"$SM_BUILD/sockmeter-recover" "$T/state" >"$T/rec3.out" 2>&1 ||
			fail "recover failed: $(cat "$T/rec3.out")"
		[ -z "$(ls "$T/state")" ]
	}
	wait_for 10 gone ||
		fail "state files left after bwrap: $(ls "$T/state"): $(cat "$T/rec3.out")"
else
	echo "SKIP part: no bwrap that can make a pid namespace here" >&2
fi

# Files of other namespaces never keep the automatic scan (64 files at
# most) from this namespace's own: 2,000 of them, and a process killed
# here is recovered by the next metered process all the same.
for i in $(seq 2 2001); do : >"$T/state/$i-1-ns4026599999.state"; done
# (Named after the process: root's recovery makes a log only so.)
LD_PRELOAD=$LIB SOCKMETER_LOG=$T/victim.%p.log "$PY" -c '
import socket, sys, time
a, b = socket.socketpair()
a.send(b"v" * 1000)
b.recv(4096)
open(sys.argv[1], "w").close()
time.sleep(60)
' "$T/victim.ready" &
victim=$!
wait_for 10 test -e "$T/victim.ready" || fail "the victim did not start"
ls "$T/state" | grep -q "^$victim-" || fail "the victim made no state file"
kill -9 "$victim"
wait "$victim" 2>/dev/null
rm -f "$T/state/.recover.lock"
LD_PRELOAD=$LIB SOCKMETER_LOG=$T/next.log "$PY" -c '
import os, socket, sys, time
a, b = socket.socketpair()
end = time.time() + 20
while time.time() < end and not os.path.exists(sys.argv[1]):
    time.sleep(0.1)
' "$T/victim.$victim.log"
check "$T/victim.$victim.log" "[r.get('end') for r in R if r['type'] == 'exit'] == ['killed'] and tot('bytes_out') == 1000" \
	"the killed process, recovered by the next one's automatic scan"

# A metered process that enters a pid namespace of its own
# (unshare(CLONE_NEWPID): its new children go there, where it has no
# pid), forks its pid 1 there, and exits: its exit record and every close
# record in its log, as before the unshare.  The library's files are
# written from a child of its own, which found its parent's pid 0 there,
# took it for gone, and refused every batch (a reviewer's run: 20 of 40
# close records and no exit record, "Resource temporarily unavailable").
cat >"$T/enter.py" <<'PYEOF'
import ctypes, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
def churn(n):
    for i in range(n):
        a, b = socket.socketpair(); a.send(b"x"); b.recv(10); a.close(); b.close()
churn(10)
if libc.unshare(0x20000000) != 0:  # CLONE_NEWPID
    print("unshare failed", ctypes.get_errno()); sys.exit(2)
pid = os.fork()
if pid == 0:
    time.sleep(3); os._exit(0)
churn(10)
time.sleep(0.3)
print("exits", os.getpid(), flush=True)
PYEOF
LD_PRELOAD=$LIB SOCKMETER_LOG=$T/enter.log sm "$PY" "$T/enter.py" >"$T/enter.out" 2>"$T/enter.err" ||
	fail "enter.py: $(cat "$T/enter.out" "$T/enter.err")"
[ -s "$T/enter.err" ] && fail "enter.py said: $(cat "$T/enter.err")"
epid=$(awk '/^exits/ { print $2 }' "$T/enter.out")
check "$T/enter.log" "len([r for r in R if r['type'] == 'exit' and r['pid'] == $epid and not r.get('end')]) == 1 and sum(len(r['fds']) for r in R if r['type'] == 'close' and r['pid'] == $epid) == 40" \
	"a process that entered a pid namespace of its own"
exit 0
