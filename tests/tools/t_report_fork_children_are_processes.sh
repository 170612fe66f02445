# forker 3: the parent and each child are separate processes in the
# report (each child with the bytes it says it sent); the parent's bytes in
# are what it says it read plus its warm-up; the children's connections
# (inherited, "opened" null) are kept apart from the parent's.
. "$(dirname "$0")/lib.sh"
fixture_fork
pycheck "forked children" <<'PY'
out = open(FIX + "/fork/forker.out").read()
parent = int(re.search(r"parent pid=(\d+)", out).group(1))
warm = int(re.search(r"warm_bytes=(\d+)", out).group(1))
parent_in = int(re.search(r"parent_in=(\d+)", out).group(1))
kids = {int(p): int(b) for p, b in re.findall(r"child pid=(\d+) index=\d+ bytes=(\d+)", out)}
assert len(kids) == 3, out
rep = report(*files("fork/logs/*.log"))
procs = {r["pid"]: r for r in rep["processes"]}
assert set(procs) == {parent} | set(kids), sorted(procs)
for pid, b in kids.items():
    assert procs[pid]["bytes_out"] == b, "child %d: %d, sent %d" % (pid, procs[pid]["bytes_out"], b)
    assert procs[pid]["bytes_in"] == 0
    kc = [r for r in rep["by_bytes"] if r["pid"] == pid and r["bytes"] > 0]
    assert len(kc) == 1 and kc[0]["bytes_out"] == b, kc
assert procs[parent]["bytes_in"] == parent_in + warm, (procs[parent], parent_in, warm)
PY
exit 0
