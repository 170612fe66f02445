# A close waits for the ticker's copy of its fd (t_close_releases_port)
# for 50 ms at most, even when signals keep interrupting the wait: with
# the ticker stuck writing records to a stderr FIFO nobody reads (holding
# a copy of fd 2), tests/progs/closewait's close(2) and dup2 onto 2
# return, and so does a close(2) under a 2 ms SIGALRM timer (which never
# returned before: each signal restarted the wait).
. "$(dirname "$0")/lib.sh"
mkfifo "$T/err.fifo"
exec 7<>"$T/err.fifo" # open, never read: writes block once it is full
SOCKMETER_LOG=stderr SOCKMETER_INTERVAL=0.5 sm "$PROGS/closewait" \
	>"$T/out" 2>"$T/err.fifo"
rc=$?
exec 7<&-
[ "$rc" = 0 ] || fail "closewait exited $rc: $(cat "$T/out")"
read -r a b c w <"$T/out"
# The library's write was really stuck when the closes were timed.
[ "${w#stuck_writers=}" -ge 1 ] 2>/dev/null ||
	fail "no thread was blocked writing the log: $(cat "$T/out")"
for v in "$a" "$b" "$c"; do
	ms=${v#*=}
	[ "$ms" -le 1000 ] || fail "a close waited ${ms} ms: $(cat "$T/out")"
done
exit 0
