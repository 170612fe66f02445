# The report streams: its peak memory does not grow with the log.  Logs
# made from a real run's records (tests/bench/tools_gen.py: 4 processes,
# 1,000 peer hosts) of 30,000 and 300,000 records, the larger piped in on
# stdin, take about the same memory (less than 15 MB apart, under 100 MB);
# and the numbers of the smaller are right: per process the exit record's
# totals; per kind every connection once, with its last bytes (its close
# record's); the number of peer hosts; the top 5 connections by bytes.
# And a log of many busy processes one after the other (the smaller log
# 8 times over, new pids each time: 32 processes of about 7,500
# connections) takes about the memory of one: what a process keeps
# against late records goes at its exit record (0.8 MB each before: 67 MB
# for 60 such processes).
. "$(dirname "$0")/lib.sh"
need gzip
fixture_paced
tpl=$(ls "$SM_FIX"/paced/logs/python3.*.log)
gen=$SM_TOP/tests/bench/tools_gen.py
"$PY" "$gen" "$tpl" 30000 --out "$T/small.log" || fail "tools_gen.py failed"
/usr/bin/time -f '%M' -o "$T/small.rss" "$REPORT" -f json --top 5 "$T/small.log" >"$T/small.json" 2>"$T/small.err" ||
	fail "report on 30,000 records: $(cat "$T/small.err")"
"$PY" "$gen" "$tpl" 300000 | /usr/bin/time -f '%M' -o "$T/big.rss" "$REPORT" -f json --top 5 - >"$T/big.json" 2>"$T/big.err" ||
	fail "report on 300,000 records: $(cat "$T/big.err")"
small=$(tail -n 1 "$T/small.rss") big=$(tail -n 1 "$T/big.rss")
[ "$big" -lt 102400 ] || fail "peak RSS $big KB on 300,000 records"
[ $((big - small)) -lt 15360 ] || fail "memory grew with the log: $small KB -> $big KB"
"$PY" - "$T/small.log" "$T/seq.log" <<'PYEOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], "w") as out:
    for k in range(8):
        for ln in lines:
            r = json.loads(ln)
            r["pid"] += (k + 1) * 1000000
            out.write(json.dumps(r, separators=(",", ":")) + "\n")
PYEOF
/usr/bin/time -f '%M' -o "$T/seq.rss" "$REPORT" -f json --top 5 "$T/seq.log" >"$T/seq.json" 2>"$T/seq.err" ||
	fail "report on 8 runs one after the other: $(cat "$T/seq.err")"
seq=$(tail -n 1 "$T/seq.rss")
[ $((seq - small)) -lt 10240 ] || fail "memory grew with the processes: $small KB (4) -> $seq KB (32)"
export SMALL=$T/small.log OUT=$T/small.json BIG=$T/big.json
pycheck "numbers of the generated log" <<'PY'
rep = json.load(open(os.environ["OUT"]))
recs = [r for _, r in records(os.environ["SMALL"])]
assert rep["records"] == len(recs) == 30000, (rep["records"], len(recs))
exits = {r["pid"]: r["totals"] for r in recs if r["type"] == "exit"}
for p in rep["processes"]:
    t = exits[p["pid"]]
    assert (p["bytes_in"], p["bytes_out"]) == (t["bytes_in"], t["bytes_out"]), (p, t)
# the truth, straight from the lines: each connection's last numbers
# (its close record's when it has one), its kind and its peer's host
final = {}
for r in sorted(recs, key=lambda r: (r["type"] == "close", r["ts"])):
    for f in r["fds"]:
        final[(r["pid"], f["fd"], f.get("opened"))] = f
host = lambda peer: peer.rpartition(":")[0] if peer.count(":") == 1 else peer
kinds = {k["kind"]: k for k in rep["kinds"]}
for kind in {f["kind"] for f in final.values()}:
    fs = [f for f in final.values() if f["kind"] == kind]
    got = kinds[kind]
    assert got["connections"] == len(fs), (kind, got, len(fs))
    assert got["bytes_in"] == sum(f.get("bytes_in", 0) for f in fs), kind
    assert got["bytes_out"] == sum(f.get("bytes_out", 0) for f in fs), kind
assert rep["peers_total"] == len({host(f.get("peer", "")) for f in final.values()}), \
    rep["peers_total"]
top = sorted((f.get("bytes_in", 0) + f.get("bytes_out", 0) for f in final.values()),
             reverse=True)[:5]
assert [c["bytes"] for c in rep["by_bytes"]] == top, (rep["by_bytes"], top)
big = json.load(open(os.environ["BIG"]))
assert big["records"] == 300000, big["records"]
PY
exit 0
