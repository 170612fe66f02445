# --since T counts only the bytes moved after T.  The steady fixture's
# process moves about 960,000 B/s (in + out) in short connections, each
# in its close record, with interval records every 2 s and close records
# drained every second between them; T is 2.5 s after its start, between
# the interval record at 2 s and the close records at 3 s.  Its totals
# at T are those of its last records before T (read for that, though
# left out of the report), so the timeline's bins add up to the bytes
# the rounds moved after T (steady.out, within 5%), and each whole bin
# reads the rate the rounds give the steps between records it lies in,
# spread evenly over each step as the report does (tlib's steady_steps;
# within 15%), the first one too: the step from the last record before T
# to the first after it counts for its part after T.  (Compared with
# the rounds' own rate per bin, it failed under load: the long pair's
# bytes since the interval record reach the log only with its close
# record, and go to that step.)  (Before, its totals at T were 0: the close
# records after T were counted from 0, then the next interval record
# brought the whole life's totals, 1.7 times the bytes, inside the
# window.)  The long pair, listed by the interval record before T and
# closed after it, counts only what it moved after that listing.  The
# processes table keeps the latest totals: the exit record's.  A window
# after the exit record reports nothing (exit status 1).
. "$(dirname "$0")/lib.sh"
fixture_steady
pycheck "--since" <<'PY'
log = files("steady/logs/steady.log")[0]
recs = [r for _, r in records(log)]
start = recs[0]["start"]
ivs = [r["ts"] - start for r in recs if r["type"] == "interval"]
assert ivs and 1.5 < ivs[0] < 2.4, "precondition: interval records at %s" % ivs
T = start + 2.5
assert any(r["type"] == "close" and 2.5 < r["ts"] - start < 3.6 for r in recs), \
    "precondition: no close record between T and the next interval record"
rounds = [tuple(map(float, l.split())) for l in open(os.path.join(FIX, "steady/steady.out"))]
truth = sum(b for t, b in rounds if t >= T)
rep = report("--since", "%.6f" % T, "--bin", "0.5", log)
tl = rep["timeline"]
assert abs(tl["t0"] - T) < 1e-6, (tl["t0"], T)
got = sum(b["bytes_in"] + b["bytes_out"] for b in tl["bins"])
assert abs(got - truth) <= 0.05 * truth, \
    "bins add up to %.0f bytes after T, the rounds moved %.0f" % (got, truth)
whole = [b for b in tl["bins"] if b["seconds"] == 0.5]
assert len(whole) >= 2, tl["bins"]
steps = steady_steps(recs, rounds, start)
for b in whole:
    lo = b["ts"]
    want = steady_rate(steps, lo, lo + 0.5)
    assert want is not None, ("precondition: a bin past the records", b, steps[-1])
    assert abs(b["rate"] - want) <= 0.15 * want, \
        "bin at T+%.1f s: %.0f B/s, the rounds of its steps moved %.0f B/s" % (lo - T, b["rate"], want)
ex = exit_record(log)
p, = rep["processes"]
assert (p["bytes_in"], p["bytes_out"]) == (ex["totals"]["bytes_in"], ex["totals"]["bytes_out"]), p
assert p["fds_closed"] == ex["totals"]["fds_closed"], p
res = run(REPORT, "--since", "%.6f" % (ex["ts"] + 1), log, check=False)
assert res.returncode == 1 and "matches --since" in res.stderr, res
PY
exit 0
