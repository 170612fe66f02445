# 100 forks during traffic (tests/progs/forkstorm): two pump threads keep
# a socketpair busy (inside send/recv) while the main thread forks 100
# children one after the other.  Each child sends its own known number of
# bytes to the parent, 1 byte on the inherited pump socket, and exits.
# Every process has its own log (101 files); each child's records carry
# only its pid, its totals are exactly its own bytes (nothing of the
# parent's pump traffic), and its connection to the parent has a close
# record with those bytes; the parent's per-child fds received exactly
# each child's bytes, and its pump fds hold exactly what its own threads
# moved (the children's single bytes arrive as bytes_in only).
. "$(dirname "$0")/lib.sh"

need_prog forkstorm
mkdir -p "$T/logs"
SOCKMETER_LOG=$T/logs/%n.%p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/forkstorm" 100 >"$T/out" 2>"$T/err" ||
	fail "forkstorm failed: $(tail -n 3 "$T/err")"
[ -s "$T/err" ] && fail "stderr not empty: $(head -n 3 "$T/err")"
expect_eq "log files" "$(find "$T/logs" -type f | wc -l)" 101
cat >"$T/check.py" <<PYEOF
import re, sys
sys.path.insert(0, "$HERE")
import logq
out = open("$T/out").read()
m = re.search(r"^parent pid=(\d+) pump_out_fd=(\d+) pump_in_fd=(\d+) pump_bytes=(\d+)$", out, re.M)
ppid, pout, pin, pumped = map(int, m.groups())
kids = [tuple(map(int, k)) for k in re.findall(
    r"^child pid=(\d+) index=(\d+) fd=(\d+) child_fd=(\d+) bytes=(\d+)$", out, re.M)]
assert len(kids) == 100, "%d children" % len(kids)
total = int(re.search(r"^parent_in=(\d+)$", out, re.M).group(1))
assert total == sum(k[4] for k in kids)

def ns(pid):
    return logq.namespace(logq.load("$T/logs/forkstorm.%d.log" % pid))

p = ns(ppid)
assert {r["pid"] for r in p["R"]} == {ppid}, "foreign pid in the parent's log"
pfds = {f["fd"]: f for f in p["E"]["fds"]}
assert pfds[pout]["bytes_out"] == pumped, ("pump out", pfds[pout]["bytes_out"], pumped)
assert pfds[pin]["bytes_in"] == pumped + 100, ("pump in", pfds[pin]["bytes_in"], pumped)
got = sorted(f["bytes_in"] for f in p["CL"] if f["bytes_in"])
assert got == sorted(k[4] for k in kids), "parent: per-child bytes_in"
assert p["T"]["bytes_in"] == pumped + 100 + total, "parent bytes_in total"
assert p["T"]["bytes_out"] == pumped, "parent bytes_out total"
for pid, idx, fd, cfd, nbytes in kids:
    c = ns(pid)
    what = "child %d (pid %d)" % (idx, pid)
    assert {r["pid"] for r in c["R"]} == {pid}, what + ": foreign pid"
    assert c["T"]["bytes_out"] == nbytes + 1, (what, c["T"]["bytes_out"], nbytes)
    assert c["T"]["bytes_in"] == 0, (what, "bytes_in", c["T"]["bytes_in"])
    sent = [f for f in c["CL"] if f["fd"] == cfd]
    assert [f["bytes_out"] for f in sent] == [nbytes], (what, sent)
    efd = {f["fd"]: f for f in c["E"]["fds"]}
    assert efd[pout]["bytes_out"] == 1 and efd[pout]["opened"] is None, (what, efd.get(pout))
    assert c["T"]["fds_closed"] == len(c["CL"]), what
PYEOF
"$PY" "$T/check.py" >"$T/check.out" 2>&1 ||
	fail "$(tail -n 1 "$T/check.out")"
exit 0
