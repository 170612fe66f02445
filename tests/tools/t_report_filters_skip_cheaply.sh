# --pid, --prog, --since and --until keep only the matching records, and
# the rest is skipped without being parsed: the forker fixture's four
# processes filtered by pid or by program pattern report exactly the
# records of those processes; a time window keeps exactly the records
# whose ts is in it (a line that the window leaves out, broken after its
# head, gives no message: it was never parsed); nothing matching is exit
# status 1 with a message saying so.
. "$(dirname "$0")/lib.sh"
fixture_fork
fixture_paced
export FORK_OUT=$SM_FIX/fork/forker.out
pycheck "--pid and --prog" <<'PY'
logs = files("fork/logs/*.log")
recs = [r for _, r in records(*logs)]
pids = sorted({r["pid"] for r in recs})
assert len(pids) == 4, pids
one = pids[1]
rep = report("--pid", str(one), *logs)
assert [p["pid"] for p in rep["processes"]] == [one], rep["processes"]
assert rep["records"] == sum(r["pid"] == one for r in recs), rep["records"]
rep = report("--pid", str(pids[0]), "--pid", str(pids[2]), *logs)
assert sorted(p["pid"] for p in rep["processes"]) == [pids[0], pids[2]]
prog = recs[0]["prog"]
rep = report("--prog", prog[:2] + "*", *logs)
assert rep["records"] == len(recs), (rep["records"], len(recs))
res = run(REPORT, "--prog", "no-such-program", *logs, check=False)
assert res.returncode == 1 and "matches --since/--until/--prog/--pid" in res.stderr, res
PY
log=$(ls "$SM_FIX"/paced/logs/python3.*.log)
export LOG=$log BROKEN=$T/broken.log
pycheck "--since and --until" <<'PY'
recs = [r for _, r in records(os.environ["LOG"])]
ts = sorted(r["ts"] for r in recs)
assert len(ts) >= 8, len(ts)
lo, hi = ts[2], ts[-3]
rep = report("--since", "%.6f" % lo, "--until", "%.6f" % hi, os.environ["LOG"])
want = sum(lo <= t <= hi for t in ts)
assert rep["records"] == want, (rep["records"], want)
assert abs(rep["t0"] - lo) < 1e-6, (rep["t0"], lo)
# ISO 8601 and -DURATION forms: all records are after 1970 and before now
import time
rep = report("--since", "1970-01-02T00:00:00Z", "--until=-0s", os.environ["LOG"])
assert rep["records"] == len(recs), rep["records"]
# a record outside the window whose body is broken: skipped by its head
lines = open(os.environ["LOG"]).read().splitlines(True)
first = lines[0]
broken = first[:first.index('"start"')] + "BROKEN\n"
open(os.environ["BROKEN"], "w").write(broken + "".join(lines[1:]))
# (just after the first line's own ts: a log's records are not always in
# ts order, a close that came during the ticker's batch moves its ts)
since = json.loads(first)["ts"] + 1e-6
res = run(REPORT, "-f", "json", "--since", "%.6f" % since, os.environ["BROKEN"])
assert res.stderr == "", res.stderr
res = run(REPORT, "-f", "json", os.environ["BROKEN"])
assert ":1: not valid JSON" in res.stderr, res.stderr
PY
"$REPORT" --since yesterday "$log" >/dev/null 2>"$T/err" && fail "--since yesterday accepted"
grep -q "expected Unix seconds" "$T/err" || fail "bad --since message: $(cat "$T/err")"
exit 0
