# The library's own system calls failing or killed (strace's fault
# injection, found so by helpers), tests/progs/pairxfer moving 10000 bytes
# each way over a socketpair, its exit record written at exit by a
# short-lived child (core/progfd.c):
#  - that child killed in its close of the log, after the whole batch was
#    written: nothing is said and nothing is left for recovery, the close
#    records counted written.  Before, a false "cannot write: Resource
#    temporarily unavailable", and the records that were in the log
#    counted as dropped once a kill there left them to recovery;
#  - that child killed before it wrote: the warning says that it was
#    killed (the same false EAGAIN before), and recovery writes the exit
#    record, exact, the close records of the batch never written counted
#    as dropped;
#  - mremap refused with ENOMEM from its third call (the state file's
#    chunks cannot be moved into place): the warning gives that reason,
#    not "its file system is full";
#  - an EINTR from flock (rotation's lock, max_size set) or from the state
#    file's ftruncate: retried, nothing said, nothing lost.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || skip "no strace"
export SOCKMETER_FORMAT=json SOCKMETER_STATE=$T/st
mkdir -m 700 "$T/st"
prog=$PROGS/pairxfer

# run NAME STRACE-ARGS...: pairxfer under the preload and strace, its log
# $T/NAME.log; fails on a status or output not pairxfer's own.
run() {
	local name=$1 out
	shift
	out=$(SOCKMETER_LOG="$T/$name.log" timeout 60 strace -f -qq -o /dev/null "$@" \
		-E LD_PRELOAD="$LIB" "$prog" 10000 2>"$T/$name.err") ||
		fail "$name: status $?: $(cat "$T/$name.err")"
	case $out in
	"out=10000 in=10000 "*) ;;
	*) fail "$name: output: $out" ;;
	esac
}
exact() { # NAME FILE [DROPPED]: the exit record's totals
	expect_eq "$1: [in, out, closed, dropped]" \
		"$(q "$2" "[T['bytes_in'], T['bytes_out'], T['fds_closed'], T.get('close_records_dropped', 0)]")" \
		"[10000, 10000, 2, ${3:-0}]"
}

# --- the writer killed after its write ---------------------------------------
# The kill must find the exit's writer.  A tick of the ticker between
# pairxfer's closes and its exit (once a second) writes their records
# itself, and its close of the log comes first: the kill then takes the
# whole process (status 137 in 0 s, once in a CI run under load).  Then
# it is run again, at most 5 times.
for try in 1 2 3 4 5; do
	rm -f "$T/after.log" "$T"/st/*
	SOCKMETER_LOG="$T/after.log" timeout 60 strace -f -qq -o /dev/null \
		-P "$T/after.log" -e inject=close:signal=SIGKILL:when=1 \
		-E LD_PRELOAD="$LIB" "$prog" 10000 >"$T/after.out" 2>"$T/after.err"
	rc=$?
	[ $rc = 137 ] || break
done
[ $rc = 0 ] || fail "after: status $rc (try $try): $(cat "$T/after.err")"
case $(cat "$T/after.out") in
"out=10000 in=10000 "*) ;;
*) fail "after: output: $(cat "$T/after.out")" ;;
esac
expect_eq "after: stderr" "$(cat "$T/after.err")" ""
exact after "$T/after.log"
expect_eq "after: close records" "$(q "$T/after.log" "len(CL)")" 2
[ -z "$(ls -A "$T/st")" ] || fail "after: state files left: $(ls "$T/st")"

# --- the writer killed before it wrote ----------------------------------------
run before -e inject=getppid:signal=SIGKILL:when=2
grep -q "log $T/before.log: cannot write: the short-lived child that writes it for this process was killed" "$T/before.err" ||
	fail "before: stderr: $(cat "$T/before.err")"
[ -n "$(ls -A "$T/st")" ] || fail "before: no state file kept"
"$SM_BUILD/sockmeter-recover" -q "$T/st" 2>"$T/rec.err" ||
	fail "before: recover: $(cat "$T/rec.err")"
cat "$T/before.log" "$T"/st/*.recovered.log >"$T/before.all" 2>/dev/null
# (The close records of the batch never written are lost, counted; those
# the ticker wrote before are in the log.)
expect_eq "before: [in, out, closed]" \
	"$(q "$T/before.all" "[T['bytes_in'], T['bytes_out'], T['fds_closed']]")" \
	"[10000, 10000, 2]"
expect_eq "before: close records written and dropped" \
	"$(q "$T/before.all" "len(CL) + T.get('close_records_dropped', 0)")" 2
rm -f "$T"/st/*

# --- mremap refused -----------------------------------------------------------
run remap -e inject=mremap:error=ENOMEM:when=3+
grep -q "no room to keep the numbers of every fd (its file's pages were refused: Cannot allocate memory)" "$T/remap.err" ||
	fail "remap: stderr: $(cat "$T/remap.err")"
exact remap "$T/remap.log"

# --- EINTR once ---------------------------------------------------------------
printf '[log]\nmax_size = 1M\n' >"$T/rot.ini"
SOCKMETER_CONFIG=$T/rot.ini run flock -e inject=flock:error=EINTR:when=1
expect_eq "flock: stderr" "$(cat "$T/flock.err")" ""
exact flock "$T/flock.log"
run ftruncate -e inject=ftruncate:error=EINTR:when=1
expect_eq "ftruncate: stderr" "$(cat "$T/ftruncate.err")" ""
exact ftruncate "$T/ftruncate.log"
