# A process that exits with every fd number its limit allows in use still
# gets its exit record: the record is written from a short-lived child
# with an fd table of its own (core/progfd.c: empty since 2026-12-04;
# before, a copy of the program's, with no number left for the log, where
# it made room).  Before that, no log at all, and a warning "Too many open
# files".  The copies' case is t_progfd_fallback's.  tests/progs/fdlimit:
# soft limit 64, socketpairs of 3 bytes each way until EMFILE.
. "$(dirname "$0")/lib.sh"
SOCKMETER_LOG=$T/fl.log sm "$PROGS/fdlimit" >"$T/out" 2>"$T/err" ||
	fail "fdlimit failed: $(cat "$T/err")"
n=$(sed -n 's/^pairs=//p' "$T/out")
[ "${n:-0}" -gt 20 ] || fail "only ${n:-0} pairs"
[ ! -s "$T/err" ] || fail "warning: $(cat "$T/err")"
grep -q " sockmeter exit .* fds_open=$((2 * n)) " "$T/fl.log" ||
	fail "no exit record with $((2 * n)) open fds: $(cat "$T/fl.log" 2>&1)"
grep -q "totals: bytes_in=$((3 * n)) calls_in=$n bytes_out=$((3 * n)) calls_out=$n " "$T/fl.log" ||
	fail "totals: $(grep totals "$T/fl.log")"
exit 0
