# fork never waits on the ticker's writing: records go to stderr, a pipe
# nobody reads, so the ticker's write blocks for good once the pipe is
# full, while a thread keeps closing connections (tests/progs/forkstuck).
# Then 20 forks: each must return at once (the ticker holds the state lock
# only to make a batch, never while writing; before, each fork waited out
# its 0.5 s bound).  The host still exits (its exit record is given up
# after 2 s).
. "$(dirname "$0")/lib.sh"

need_prog forkstuck
mkfifo "$T/pipe"
# This shell holds the pipe open and never reads from it.
exec 7<>"$T/pipe"
t0=$(date +%s%N)
SOCKMETER_LOG=stderr sm "$PROGS/forkstuck" 20 800 >"$T/out" 2>"$T/pipe" ||
	fail "forkstuck failed or hung"
t1=$(date +%s%N)
pipe_was_stuck 7
worst=$(field max_fork_ms "$T/out")
awk -v w="$worst" 'BEGIN { exit !(w < 100) }' ||
	fail "a fork took $worst ms while the ticker's write was stuck"
[ $(((t1 - t0) / 1000000)) -lt 15000 ] || fail "the host took $(((t1 - t0) / 1000000)) ms to end"
exit 0
