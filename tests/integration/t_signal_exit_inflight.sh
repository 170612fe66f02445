# A handler that ends the process (exit or _exit) after cutting a data call
# short: the call had moved bytes before the signal (a blocking send with
# part of its buffer taken, a recv(MSG_WAITALL) with part of its data), and
# the handler ran before the wrapper could count them (PostgreSQL's
# immediate shutdown: SIGQUIT, quickdie, _exit).  tests/progs/sigexit: a
# forked peer prints what really moved; the exit record's totals must say
# the same, for send, write, sendmsg and recv, for handlers installed with
# sigaction (with and without SA_SIGINFO) and signal(), and for a handler
# that left by siglongjmp before another ended the process.
. "$(dirname "$0")/lib.sh"

need_prog sigexit
# longjmp: the first handler leaves by siglongjmp (its call's bytes are
# counted at the next handler), and a stale note must not make the
# result of a later fcntl(F_GETFL) on the socket pass for bytes.
for m in "send plain _exit" "write signal exit" "sendmsg info _exit" \
	"recv info _exit" "recv plain exit" "send plain longjmp" \
	"recv info longjmp"; do
	# shellcheck disable=SC2086
	sigexit_ends_3 "the handler's" $m
done
exit 0
