# A log that filled its disk and then got space back (ENOSPC midway
# through a batch of records, then the disk is freed while the program
# runs on): once writing works again, the log must still be JSON Lines -
# every line one whole record.  A batch that did not fit must not leave
# half a record behind for the next batch to be glued onto.
#
# Regression: a batch that failed part-way (ENOSPC) once left a torn
# record that the next batch glued onto; the sink now truncates back to the
# size before the batch.
. "$(dirname "$0")/lib.sh"

need_prog slow_sender
MNT=
cleanup_full() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	sm_cleanup
}
trap cleanup_full EXIT

mkdir -p "$T/full"
if ! mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	skip "mount not permitted"
fi
MNT=$T/full
head -c $((60 * 1024)) /dev/zero >"$T/full/filler" 2>/dev/null
SOCKMETER_LOG=$T/full/s.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
	bg_start env LD_PRELOAD="$LIB" "$PROGS/slow_sender" 30 100 3000 "$T/times" \
	>"$T/out" 2>"$T/err"
pid=$BG_PID
i=0
until grep -q "No space left" "$T/err"; do
	i=$((i + 1))
	[ "$i" -gt 400 ] && fail "the disk never filled: $(cat "$T/err")"
	kill -0 "$pid" 2>/dev/null || fail "slow_sender ended before the disk filled"
	sleep 0.01
done
rm -f "$T/full/filler"
bg_wait "$pid" 30 || fail "slow_sender failed: $(cat "$T/err")"
expect_eq "sockmeter: lines" "$(sm_lines "$T/err")" 1
cp "$T/full/s.log" "$T/s.log"
"$PY" - "$T/s.log" >"$T/valid.out" 2>&1 <<'PYEOF' || fail "$(tail -n 1 "$T/valid.out")"
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"", "the log does not end with a whole line"
for no, line in enumerate(lines[:-1], 1):
    try:
        json.loads(line)
    except ValueError:
        raise SystemExit("line %d of %d is not one JSON record (a torn record "
                         "with the next batch glued on): %.80r ..."
                         % (no, len(lines) - 1, line))
PYEOF
# writing really resumed: the exit record is there
check "$T/s.log" "E['totals']['bytes_out'] == 90000" "exit record after recovery"
exit 0
