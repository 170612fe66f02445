# Memory the library maps for itself refused after start-up, as at the
# process's map count limit (vm.max_map_count) or under strict overcommit
# (tests/progs/mapfail: a seccomp filter, unseen by the library, fails
# chosen mmap calls with ENOMEM after 100 bytes moved each way):
#  - fork: a fork child cannot make the library's memory its own (it is
#    the parent's state file there).  The children run unmetered, which
#    is said once (also when the fork and the child's whole life are in a
#    signal handler); the parent's numbers stay its own, at exit and when
#    it is killed and recovered.  Before, the children counted into the
#    parent's file without a word (a helper's injection: a child's records
#    held one of the parent's connections, and the parent's recovered
#    totals were short by it);
#  - sbuf: the ticker's record buffer cannot be mapped.  Said once; the
#    state file is kept, and recovery writes the exit record, exact, every
#    close record recovered or counted as dropped.  Before,
#    nothing reached the log and the state file was removed as if the
#    exit record had been written;
#  - grow (text records, each many lines): the buffer cannot grow while
#    the exit record is made: that record is left out whole, and recovery
#    writes it.  Before, its first lines went to the log (a cut at the
#    last line), recovery took it for written and removed the state file:
#    the totals in no record (a reviewer's run);
#  - lists: the lists a batch's close records and a record's fds are made
#    in cannot grow.  Said once (before, only close_records_dropped
#    showed it, and fds left out were blamed on `top`); the exit record
#    is written, exact, every close record made or counted as dropped.
. "$(dirname "$0")/lib.sh"
export SOCKMETER_FORMAT=json SOCKMETER_STATE=$T/st
mkdir -m 700 "$T/st" "$T/logs"
prog=$PROGS/mapfail
[ -x "$prog" ] || fail "missing $prog (make progs)"
want_child="sockmeter: mapfail: a forked child could not map memory of its own (Cannot allocate memory): the child is not metered, and its traffic is in no record"
want_sbuf="sockmeter: mapfail: no memory to make its records (Cannot allocate memory): close records not made are counted in close_records_dropped, fds left out of a record are counted among those not shown, and an exit record not made is left to \`sockmeter recover\` (the state file keeps the numbers)"

# ends MODE WANT: mapfail MODE, ending by itself, said WANT on stderr and
# wrote one log (its name in $LOG); no state file is left.
ends() {
	local mode=$1 out
	out=$(SOCKMETER_LOG="$T/logs/$mode.%p.log" timeout 30 env LD_PRELOAD="$LIB" \
		"$prog" "$mode" 2>"$T/$mode.err") || fail "$mode: status $?: $(cat "$T/$mode.err")"
	expect_eq "$mode: output" "$out" done
	expect_eq "$mode: stderr" "$(cat "$T/$mode.err")" "$2"
	set -- "$T"/logs/"$mode".*.log
	expect_eq "$mode: logs" "$#" 1
	LOG=$1
	[ -z "$(ls -A "$T/st")" ] || fail "$mode: state files left: $(ls "$T/st")"
}

# pids NAME: the pids that wrote records into logs/NAME.*
pids() {
	cat "$T"/logs/"$1".*.log >"$T/$1.all" 2>/dev/null || true
	q "$T/$1.all" "sorted(set(r['pid'] for r in R))"
}

# --- fork, ending by itself ------------------------------------------------
ends fork "$want_child"
expect_eq "fork: the parent's totals [in, out, closed]" \
	"$(q "$LOG" "[T['bytes_in'], T['bytes_out'], T['fds_closed']]")" "[200, 200, 2]"
expect_eq "fork: close records" "$(q "$LOG" "[c['bytes_in'] for c in CL]")" "[100, 100]"

# --- fork in a signal handler, the child's life in it ----------------------
# (Said all the same: to the original stderr, from the handler.)
ends forksig "$want_child"
expect_eq "forksig: the parent's totals [in, out, closed]" \
	"$(q "$LOG" "[T['bytes_in'], T['bytes_out'], T['fds_closed']]")" "[200, 200, 2]"

# --- fork, the parent killed, then recovered --------------------------------
mkfifo "$T/fifo"
SOCKMETER_LOG="$T/logs/kill.%p.log" LD_PRELOAD="$LIB" \
	"$prog" fork hold >"$T/fifo" 2>"$T/kill.err" &
pid=$!
read -r line <"$T/fifo" || fail "kill: no output"
expect_eq "kill: output" "$line" done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
"$SM_BUILD/sockmeter-recover" -q "$T/st" 2>"$T/rec.err" ||
	fail "kill: recover failed: $(cat "$T/rec.err")"
expect_eq "kill: processes with records" "$(pids kill)" "[$pid]"
expect_eq "kill: the recovered exit record [end, in, out, closed]" \
	"$(q "$T/kill.all" "[E['end'], T['bytes_in'], T['bytes_out'], T['fds_closed']]")" \
	'["killed", 200, 200, 2]'
expect_eq "kill: stderr" "$(cat "$T/kill.err")" "$want_child"

# --- no memory for the records ---------------------------------------------
out=$(SOCKMETER_LOG="$T/logs/sbuf.%p.log" timeout 30 env LD_PRELOAD="$LIB" \
	"$prog" sbuf 2>"$T/sbuf.err") || fail "sbuf: status $?: $(cat "$T/sbuf.err")"
expect_eq "sbuf: output" "$out" done
expect_eq "sbuf: stderr" "$(cat "$T/sbuf.err")" "$want_sbuf"
[ -n "$(ls -A "$T/st")" ] || fail "sbuf: no state file kept for recovery"
"$SM_BUILD/sockmeter-recover" -q "$T/st" 2>"$T/rec2.err" ||
	fail "sbuf: recover failed: $(cat "$T/rec2.err")"
expect_eq "sbuf: records" "$(pids sbuf | tr -d '[]' | tr ',' '\n' | wc -l)" 1
expect_eq "sbuf: the recovered exit record [end, in, out, closed]" \
	"$(q "$T/sbuf.all" "[E['end'], T['bytes_in'], T['bytes_out'], T['fds_closed']]")" \
	'["exit-recovered", 600, 600, 4]'
# (Drained ones not made count as dropped; those the ticker had not
# drained yet are recovered from the state file's queue.)
expect_eq "sbuf: close records recovered and dropped" \
	"$(q "$T/sbuf.all" "len(CL) + T.get('close_records_dropped', 0)")" 4

# --- no memory for the lists -------------------------------------------------
ends lists "$want_sbuf"
expect_eq "lists: the exit record [in, out, closed]" \
	"$(q "$LOG" "[T['bytes_in'], T['bytes_out'], T['fds_closed']]")" "[600, 600, 4]"
expect_eq "lists: close records made and dropped" \
	"$(q "$LOG" "len(CL) + T.get('close_records_dropped', 0)")" 4

# --- text records that cannot grow ----------------------------------------
out=$(SOCKMETER_FORMAT=text SOCKMETER_LOG="$T/logs/grow.%p.log" timeout 30 \
	env LD_PRELOAD="$LIB" "$prog" grow 2>"$T/grow.err") ||
	fail "grow: status $?: $(cat "$T/grow.err")"
expect_eq "grow: output" "$out" done
expect_eq "grow: stderr" "$(cat "$T/grow.err")" "$want_sbuf"
set -- "$T"/logs/grow.*.log
expect_eq "grow: exit records before recovery" "$(grep -c ' sockmeter exit ' "$1")" 0
[ -z "$(tail -c 1 "$1")" ] || fail "grow: the log ends in a torn line"
[ -n "$(ls -A "$T/st")" ] || fail "grow: no state file kept for recovery"
"$SM_BUILD/sockmeter-recover" -q "$T/st" 2>"$T/rec3.err" ||
	fail "grow: recover failed: $(cat "$T/rec3.err")"
expect_eq "grow: the recovered exit record" \
	"$(grep -A1 ' sockmeter exit ' "$1" | sed -n 's/.* sockmeter exit \(end=[^ ]*\).*/\1/p; s/^  totals: \(bytes_in=[0-9]*\) [^ ]* \(bytes_out=[0-9]*\).*/\1 \2/p' | tr '\n' ' ')" \
	"end=exit-recovered bytes_in=800 bytes_out=800 "
