# A process killed while its state file was being set up (strace kills it
# as the library reads the boot id, between sizing the file and filling
# its header) leaves a file with nothing to recover: sockmeter recover
# removes it once its process is gone.  Before, it was "left alone" for
# ever, and such files filled the automatic scan's quota of 64, hiding the
# files of killed processes that had numbers.  The header's magic is now
# written last, so that a half-made file is told apart from another
# build's.
. "$(dirname "$0")/lib.sh"
need strace
launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
mkdir -p "$T/state"
for i in 1 2 3; do
	SOCKMETER_STATE=$T/state SOCKMETER_LOG=$T/%p.log timeout 30 strace -f -o /dev/null \
		-P /proc/sys/kernel/random/boot_id -e inject=openat:signal=KILL:when=1 \
		env LD_PRELOAD="$LIB" "$PY" -c 'import socket; a, b = socket.socketpair(); a.send(b"x"); b.recv(1)' \
		>/dev/null 2>&1
done
n=$(ls "$T/state" | grep -c '\.state$')
[ "$n" -ge 1 ] || fail "no half-made state file: nothing was tested ($(ls "$T/state"))"
"$launcher" recover "$T/state" 2>"$T/rec" || fail "recover: $(cat "$T/rec")"
grep -q ": 0 recovered, $n removed" "$T/rec" || fail "recover: $(cat "$T/rec")"
expect_eq "state files left" "$(ls "$T/state" | grep -c '\.state')" 0
exit 0
