# sockmeter-report and sockmeter top read logs and format numbers with one
# module, scripts/sockmeter_log.py (installed beside the library): neither
# tool keeps its own copy of what had drifted (looks_like_text_log,
# shortest_rate, the human formats, the record check); the module's
# answers are the ones both tools act on; a tool called through a symlink
# still finds it.
. "$(dirname "$0")/lib.sh"
fixture_paced
for f in "$REPORT" "$TOPCMD"; do
	grep -q '^import sockmeter_log as sl' "$f" || fail "$(basename "$f") does not import sockmeter_log"
	for fn in looks_like_text_log foreign_format shortest_rate human_rate human_bytes check_record counters num utc; do
		! grep -Eq "^def $fn\\(" "$f" || fail "$(basename "$f") has its own $fn"
	done
done
pycheck "the shared module" <<'PY'
sys.path.insert(0, os.path.join(TOP, "scripts"))
import sockmeter_log as sl
text = "2026-11-30T01:37:40.144Z sockmeter interval pid=1 prog=x fds_open=0"
assert sl.looks_like_text_log(text)
# the copy in top accepted this one (no '-' at [4]); the report did not
assert not sl.looks_like_text_log("20261130T01:37:40.144Zx sockmeter close")
assert sl.foreign_format(text) == "a text-format log (format = text)"
assert sl.foreign_format("# HELP sockmeter_bytes_total x").startswith("a Prometheus")
assert sl.foreign_format('{"type":"close"}') is None
f = {"rates": {"10s": {"in": 1, "out": 2}, "1s": {"in": 3.5, "out": 4},
               "0.5s": {"in": 5, "out": 6}}}
assert sl.shortest_rate(f) == ("0.5s", 0.5, 5.0, 6.0), sl.shortest_rate(f)
assert sl.shortest_rate({}) is None
assert sl.human_rate(1536) == "1.5K/s" and sl.human_rate(10) == "10B/s"
assert sl.human_bytes(1536) == "1.5K" and sl.human_bytes(10) == "10"
lean = {"type": "close", "ts": 2.0, "pid": 1, "start": 1.0,
        "fds": [{"fd": 3}]}
assert sl.check_record(lean) is None
assert sl.check_record(dict(lean, type="interval")) is not None
c = sl.counters({"bytes_in": 5, "errors_out": {"again": 1, "other": 2}})
assert c["bytes_in"] == 5 and c["errors_in"] == 0 and c["errors_out"] == 3
# a close record as the library writes it is read by the fast path
log = files("paced/logs/python3.*.log")[0]
closes = [ln for ln in open(log) if ln.startswith('{"type":"close"')]
assert closes and all(sl.CLOSE_LINE(ln) for ln in closes)
def fast(line):
    """What the fast path reads from a close line, beside what JSON says."""
    m = sl.CLOSE_LINE(line)
    assert m, "fast path refused: %s" % line[:200]
    g, f = m.groups(), json.loads(line)["fds"][0]
    got = (int(g[sl.CL_FD]), g[sl.CL_PEER], int(g[sl.CL_BYTES_IN] or 0),
           int(g[sl.CL_BYTES_OUT] or 0), int(g[sl.CL_CALLS_OUT] or 0),
           float(g[sl.CL_CLOSED]))
    want = (f["fd"], f["peer"], f.get("bytes_in", 0), f.get("bytes_out", 0),
            f.get("calls_out", 0), f["closed"])
    assert got == want, (got, want)
for ln in closes:
    fast(ln)
# fields added later (rates with "res", TCP figures, anything) are skipped,
# and what the tools read stays right
base = closes[-1]
for ln in (base.replace(',"opened"', ',"rates":{"1s":{"in":1.0,"out":2.0,"res":1},'
                        '"86400s":{"in":1.5,"out":2.5,"res":1440}},"opened"'),
           base.replace(',"bytes_in"', ',"unseen_in":5,"bytes_in"'),
           base.replace(',"opened"', ',"tcp":{"rtt_us":12,"x":[1,2]},"opened"'),
           base.replace("}]}", ',"new":"abc","n":null}]}'),
           base.replace("}]}", ',"peer_name":"x.example","lookup_ms":1.5,'
                        '"tcp":{"state":1,"rtt_us":5},"bytes_in_unseen":0,'
                        '"bytes_out_unseen":7}]}')):
    fast(ln)
# a line with an escape is left to the JSON parser
assert not sl.CLOSE_LINE(base.replace('"prog":"', '"prog":"a\\"b', 1))
PY
mkdir -p "$T/bin"
ln -s "$REPORT" "$T/bin/report"
ln -s "$TOPCMD" "$T/bin/top"
log=$(ls "$SM_FIX"/paced/logs/python3.*.log)
"$T/bin/report" --only processes "$log" >"$T/r.out" 2>&1 || fail "report through a symlink: $(cat "$T/r.out")"
"$T/bin/top" --once "$log" >"$T/t.out" 2>&1 || fail "top through a symlink: $(cat "$T/t.out")"
printf '2026-11-30T01:37:40.144Z sockmeter close pid=1 prog=x fd=3 kind=tcp\n' >"$T/text.log"
"$REPORT" "$T/text.log" 2>"$T/r.err" >/dev/null
"$TOPCMD" --once "$T/text.log" 2>"$T/t.err" >/dev/null
grep -q "a text-format log (format = text)" "$T/r.err" && grep -q "a text-format log (format = text)" "$T/t.err" ||
	fail "the tools describe a text log differently: $(cat "$T/r.err" "$T/t.err")"
exit 0
