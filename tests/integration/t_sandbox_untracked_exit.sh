# A process that confines itself with a seccomp filter on its own thread
# (not TSYNC) before it tracked any fd, then ends (os._exit, sys.exit):
# its state file is removed, by the ticker the filter left free, and no
# log is made (nothing was tracked).  Before, the quiet thread left the
# file marked final for a recovery to remove: a helper's stress-ng run
# left 981 files of children that had exited normally.  The same with a
# socket tracked under the filter still writes its records.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
mkdir -p "$T/state"
chmod 700 "$T/state"

cat >"$T/f.py" <<'PYEOF'
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
class Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte),
                ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]
allow = (Filter * 1)(Filter(0x06, 0, 0, 0x7fff0000))  # BPF_RET|BPF_K, ALLOW
prog = Prog(1, allow)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
assert libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
assert libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0
if sys.argv[2] == "sock":
    a, b = socket.socketpair()
    a.send(b"x" * 1000)
    b.recv(2000)
    a.close()
    b.close()
print("filtered", os.getpid(), flush=True)
if sys.argv[1] == "_exit":
    os._exit(0)
sys.exit(0)
PYEOF

for how in _exit exit; do
	for what in none sock; do
		SOCKMETER_LOG=$T/$how.$what.%p.log LD_PRELOAD="$LIB" "$PY" "$T/f.py" "$how" "$what" \
			>"$T/$how.$what.out" 2>"$T/$how.$what.err" ||
			fail "$how $what: status $? ($(cat "$T/$how.$what.err"))"
		grep -q '^filtered' "$T/$how.$what.out" || fail "$how $what: no filter went on"
		[ -s "$T/$how.$what.err" ] && fail "$how $what: stderr: $(cat "$T/$how.$what.err")"
		left=$(find "$T/state" -name '*.state*' | wc -l)
		expect_eq "$how $what: state files left" "$left" 0
		if [ "$what" = none ]; then
			expect_eq "$how $what: logs" "$(ls "$T" | grep -c "^$how.$what.*\.log$")" 0
		else
			log=$(one_log "$T/$how.$what.*.log")
			expect_eq "$how $what: bytes_out" "$(q "$log" "tot('bytes_out')")" 1000
		fi
	done
done
# A thread made after a filter that forbids futex carries it unmarked:
# its exit takes the way that asks nothing of the ticker (a review's
# program died of SIGSYS there, status 159), with nothing tracked.
need_prog filterthread
# Also with 3,000 closes under it (the close queue's wake, a futex call,
# killed it at the 1,024th).  (With a socket tracked before the filter,
# such a thread's exit asks the ticker and dies: README, Limits.)
for f in kill errno; do
	for how in _exit exit; do
		for what in "" closes; do
			SOCKMETER_LOG=$T/ft.%p.log LD_PRELOAD="$LIB" timeout 20 \
				"$PROGS/filterthread" "$f" "$how" $what >"$T/ft.out" 2>"$T/ft.err"
			expect_eq "filterthread $f $how $what: status" "$?" 7
		done
	done
done
exit 0
