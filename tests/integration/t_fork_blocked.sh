# fork while other threads are inside wrapped calls (tests/progs/forkblock):
# one thread blocked in recv(), one in send() on a full socket, one in
# accept(), one opening/using/closing socketpairs non-stop (close records
# queued across the fork), interval records every 0.2 s; the main thread
# forks 20 children, each of which moves 5000 bytes on a new socketpair,
# forks a grandchild (3000 bytes) and exits.  No child or grandchild may
# hang (each is bounded to 10 s, and the whole run to 30 s); each writes
# its own log with exactly its own bytes; the parent's blocked threads
# complete afterwards and the blocked recv's fd has exactly its 100 bytes.
. "$(dirname "$0")/lib.sh"

need_prog forkblock
mkdir -p "$T/logs"
SOCKMETER_LOG=$T/logs/%n.%p.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	sm "$PROGS/forkblock" 20 >"$T/out" 2>"$T/err"
st=$?
[ "$st" = 124 ] && fail "forkblock timed out (a deadlock?)"
grep -q hung "$T/err" && fail "$(grep -m1 hung "$T/err") (deadlock in a forked child)"
[ "$st" = 0 ] || fail "forkblock failed ($st): $(tail -n 3 "$T/err")"
expect_eq "children" "$(grep -c '^child pid=' "$T/out")" 20
expect_eq "grandchildren" "$(grep -c '^grandchild pid=' "$T/out")" 20
expect_eq "log files" "$(find "$T/logs" -type f | wc -l)" 41
cat >"$T/check.py" <<PYEOF
import re, sys, glob
sys.path.insert(0, "$HERE")
import logq
out = open("$T/out").read()
kids = [int(p) for p in re.findall(r"^child pid=(\d+)", out, re.M)]
grands = [int(p) for p in re.findall(r"^grandchild pid=(\d+)", out, re.M)]
for pids, n, who in ((kids, 5000, "child"), (grands, 3000, "grandchild")):
    for pid in pids:
        c = logq.namespace(logq.load("$T/logs/forkblock.%d.log" % pid))
        what = "%s %d" % (who, pid)
        assert {r["pid"] for r in c["R"]} == {pid}, what + ": foreign pid"
        assert c["T"]["bytes_out"] == n and c["T"]["bytes_in"] == n, \
            (what, c["T"]["bytes_out"], c["T"]["bytes_in"])
        assert sorted((f["bytes_in"], f["bytes_out"]) for f in c["CL"]
                      if f["bytes_in"] or f["bytes_out"]) == [(0, n), (n, 0)], what
rfd = int(re.search(r"^recv_fd=(\d+)", out, re.M).group(1))
plog = [f for f in glob.glob("$T/logs/forkblock.*.log")
        if int(f.rsplit(".", 2)[1]) not in kids + grands]
assert len(plog) == 1, plog
p = logq.namespace(logq.load(plog[0]))
efd = {f["fd"]: f for f in p["E"]["fds"]}
assert efd[rfd]["bytes_in"] == 100 and efd[rfd]["calls_in"] == 1, efd.get(rfd)
PYEOF
"$PY" "$T/check.py" >"$T/check.out" 2>&1 ||
	fail "$(tail -n 1 "$T/check.out")"
exit 0
