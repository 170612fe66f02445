# No fd leaks into a program exec'd by another thread at the moment the
# library starts its ticker thread (tests/progs/leakrace: in each fresh
# process one thread forks non-stop, each child checking for an fd
# without close-on-exec that the program did not make, while another
# thread makes the process's first socket).  With strace installed, every
# openat() is held for 100 ms on its way out (strace -e inject=...
# delay_exit), so any fd the library opens without O_CLOEXEC is open long
# enough for a fork to copy it: deterministic, 5 processes.  Without
# strace, 2000 processes and luck.  The same run without the preload is
# the control (no leak).
#
# Regression: pthread_setname_np() on the new ticker opened
# /proc/self/task/TID/comm without O_CLOEXEC in the creating thread, and a
# concurrent fork()+exec() could inherit it.  The ticker now names itself
# with prctl(PR_SET_NAME), which opens nothing.  To widen the window:
#   strace -f -qq -o /dev/null -e trace=openat -e inject=openat:delay_exit=100000 \
#     env LD_PRELOAD=$PWD/build/libsockmeter.so build/progs/leakrace 5
. "$(dirname "$0")/lib.sh"

need_prog leakrace
if command -v strace >/dev/null; then
	how=(timeout 50 strace -f -qq -o /dev/null -e trace=openat
		-e inject=openat:delay_exit=100000)
	rounds=5
else
	echo "NOTE: strace not installed; 2000 processes, probabilistic"
	how=(timeout 50)
	rounds=2000
fi
"${how[@]}" "$PROGS/leakrace" "$rounds" >"$T/plain.out" 2>&1 ||
	fail "control run without the preload: $(tail -n 2 "$T/plain.out" | tr '\n' ' ')"
"${how[@]}" env LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/l.%p.log" \
	"$PROGS/leakrace" "$rounds" >"$T/with.out" 2>"$T/with.err"
st=$?
[ "$st" = 0 ] ||
	fail "status $st: $(grep -m 2 -e '^leak' "$T/with.out" | tr '\n' ' ')$(grep rounds "$T/with.out")$(head -n 2 "$T/with.err")"
# The library did start its ticker in each of them: every round's process
# wrote its log (with no ticker there is no race to lose).
logs=$(ls "$T"/l.*.log 2>/dev/null | grep -c .)
[ "$logs" -ge "$rounds" ] || fail "$logs logs for $rounds rounds: was anything metered?"
exit 0
