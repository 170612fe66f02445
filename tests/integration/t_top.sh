# SOCKMETER_TOP=3 with 16 busy fds (tests/progs/threads own 8) and
# interval records every 0.1 s: each record lists at most 3 fds, says how
# many it left out, and the totals stay exact.
. "$(dirname "$0")/lib.sh"

need_prog threads
SOCKMETER_TOP=3 SOCKMETER_INTERVAL=0.1 SOCKMETER_LOG=$T/top.log \
	SOCKMETER_FORMAT=json sm "$PROGS/threads" own 8 60000 >"$T/out" 2>"$T/err" ||
	fail "threads failed: $(cat "$T/err")"
read -r tout tcalls tin < <(sed -n \
	's/^total_out=\([0-9]*\) total_calls=\([0-9]*\) total_in=\([0-9]*\)/\1 \2 \3/p' "$T/out")
cat >"$T/check.py" <<PYEOF
assert IV, "no interval record (the run took %.2f s)" % (E["ts"] - E["start"])
for r in IV + [E]:
    assert len(r["fds"]) <= 3, "%s record lists %d fds" % (r["type"], len(r["fds"]))
    assert len(r["fds"]) + r["fds_omitted"] <= 16, "%s record: %d + %d omitted" % (
        r["type"], len(r["fds"]), r["fds_omitted"])
    # fds_omitted only when the list is full
    assert not r["fds_omitted"] or len(r["fds"]) == 3
assert any(r["fds_omitted"] for r in IV), "no interval record left an fd out"
assert T["bytes_out"] == $tout and T["bytes_in"] == $tin, "exit totals"
assert T["calls_out"] == $tcalls, "exit calls_out"
PYEOF
check_py "$T/top.log" "$T/check.py"
exit 0
