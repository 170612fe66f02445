# Exit handlers that run after the library's exit record (a library
# preloaded after it registers one: tests/progs/deeplib/lateexit.c) see
# the process as they would without the library, and the library says
# nothing of what they do:
#  - after a credential call with an explicit log path (the library then
#    keeps the log open and the record takes the ticker's path), the
#    handler's signal mask is the program's (all signals were left
#    blocked: a review's finding);
#  - a handler that changes user for good draws no warning (the state
#    file's "cannot mark or remove ... (errno 2)": it was gone with the
#    exit record; and, while the ticker left at the record, the log's
#    "records are lost");
# and the log holds one exit record with the 2 bytes each way; and a
# process whose last thread's exit is glibc's own ends with its status.
. "$(dirname "$0")/lib.sh"
late=$PROGS/deep/libsmlateexit.so
[ -f "$late" ] || fail "missing $late (make progs)"
mkdir -p "$T/logs" "$T/state"
export SOCKMETER_FORMAT=json SOCKMETER_STATE=$T/state
n=0
for case in "pin mask" "plain uid" "pin uid"; do
	set -- $case
	if [ "$2" = uid ] && [ "$(id -u)" != 0 ]; then
		continue
	fi
	n=$((n + 1))
	truth=$(LATEEXIT=$2 timeout 30 env LD_PRELOAD="$late" "$PROGS/lateexit" "$1" 2>&1) ||
		fail "$case without the library: $truth"
	got=$(LATEEXIT=$2 SOCKMETER_LOG="$T/logs/$n.%p.log" timeout 30 \
		env LD_PRELOAD="$LIB $late" "$PROGS/lateexit" "$1" 2>"$T/$n.err") ||
		fail "$case: status $?: $(cat "$T/$n.err")"
	expect_eq "$case: what the late handler saw" "$got" "$truth"
	[ ! -s "$T/$n.err" ] || fail "$case: said: $(cat "$T/$n.err")"
	log=$(ls "$T"/logs/"$n".*.log)
	expect_eq "$case: exit records" "$(grep -c '"type":"exit"' "$log")" 1
	expect_eq "$case: totals" "$(q "$log" "[T['bytes_in'], T['bytes_out']]")" '[2, 2]'
done
[ "$n" -gt 0 ] || fail "no case ran"
# glibc's own exit for its last thread (main called pthread_exit, the
# worker returned), whose handler ends the process with _exit(3) and
# leaves stdout's buffer unwritten: the same status and output with the
# library (its ticker, leaving after the record through glibc's thread
# exit, once took the count of threads to zero and called exit(0)
# itself: status 0, in a review's program).
plain "$PROGS/lateexit" pexit >"$T/pexit.truth" 2>&1
expect_eq "pexit: status without the library" "$?" 3
SOCKMETER_LOG="$T/logs/pexit.%p.log" sm "$PROGS/lateexit" pexit >"$T/pexit.out" 2>"$T/pexit.err"
expect_eq "pexit: status" "$?" 3
expect_eq "pexit: output" "$(cat "$T/pexit.out")" "$(cat "$T/pexit.truth")"
log=$(ls "$T"/logs/pexit.*.log)
expect_eq "pexit: exit records" "$(grep -c '"type":"exit"' "$log")" 1
# exit() from a SIGALRM handler that may have cut malloc or free short,
# then a later exit handler's setresuid (glibc's walk of its threads): 10
# runs, none may hang (the ticker, leaving through glibc's thread exit,
# freed its TLS and waited for the arena the handler's thread held, while
# holding the lock of glibc's thread list: 12 of 20 runs hung for good
# before it stayed for exits made in handlers), each log one exit record.
for i in 1 2 3 4 5 6 7 8 9 10; do
	LATEEXIT=setuid SOCKMETER_LOG="$T/logs/sig.%p.log" timeout 10 \
		env LD_PRELOAD="$LIB $late" "$PROGS/lateexit" sigexit 2>"$T/sig.err"
	rc=$?
	[ "$rc" != 124 ] || fail "sigexit: hung (run $i)"
	expect_eq "sigexit: status (run $i)" "$rc" 0
done
for log in "$T"/logs/sig.*.log; do
	expect_eq "sigexit: exit records in $log" "$(grep -c '"type":"exit"' "$log")" 1
done
exit 0
