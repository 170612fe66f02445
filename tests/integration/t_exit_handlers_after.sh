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
# and the log holds one exit record with the 2 bytes each way.
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
exit 0
