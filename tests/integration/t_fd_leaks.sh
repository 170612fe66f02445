# No fd of the library's leaks into exec'd programs:
#  - a program with sockets of its own (some close-on-exec, some not) and
#    a ticker writing records every 0.1 s execs a program that lists its
#    fds (tests/progs/execfds): the list is identical with and without
#    the preload;
#  - (the moment the ticker thread starts: t_fd_leak_ticker_start.sh)
#  - under strace (when installed), every file the library opens - the
#    config file and the log - is opened with O_CLOEXEC (and the log with
#    O_NOFOLLOW|O_NONBLOCK), in the program and in its forked child.
. "$(dirname "$0")/lib.sh"

need_prog execfds
plain "$PROGS/execfds" run >"$T/plain.out" 2>&1 || fail "execfds failed without the preload"
SOCKMETER_LOG=$T/e.%p.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
	sm "$PROGS/execfds" run >"$T/with.out" 2>"$T/with.err" || fail "execfds failed: $(cat "$T/with.err")"
cmp -s "$T/plain.out" "$T/with.out" ||
	fail "the exec'd program's fds differ: $(diff "$T/plain.out" "$T/with.out" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
grep -q '^fd=3 socket$' "$T/with.out" || fail "execfds: its own socket was not inherited"
ls "$T"/e.*.log >/dev/null 2>&1 || fail "execfds: no log"

if ! command -v strace >/dev/null; then
	echo "SKIP the strace check: strace is not installed"
	exit 0
fi
need_prog forker
printf '[log]\ninterval = 0.1\n' >"$T/c.ini"
SOCKMETER_CONFIG=$T/c.ini SOCKMETER_LOG=$T/s.%p.log \
	timeout 30 strace -f -qq -e trace=openat,open,creat -e signal=none -o "$T/trace" \
	env LD_PRELOAD="$LIB" "$PROGS/forker" 2 >/dev/null 2>"$T/st.err" ||
	fail "forker under strace failed: $(cat "$T/st.err")"
grep -F "$T/" "$T/trace" | grep -e '\.ini"' -e '\.log"' >"$T/ours" || true
[ "$(grep -c '\.ini"' "$T/ours")" -ge 1 ] || fail "strace: the config file was not seen opened"
[ "$(grep -c '\.log"' "$T/ours")" -ge 3 ] || fail "strace: the logs were not seen opened"
bad=$(grep -v O_CLOEXEC "$T/ours" | head -n 2)
[ -z "$bad" ] || fail "opened without O_CLOEXEC: $bad"
bad=$(grep '\.log"' "$T/ours" | grep -v 'O_NOFOLLOW' | head -n 2)
[ -z "$bad" ] || fail "log opened without O_NOFOLLOW: $bad"
exit 0
