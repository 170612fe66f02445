# A fork child of a process that holds thousands of fds costs what one of
# a process with a hundred does: its exit record, its close_range and its
# first socket look only at the fd numbers the child itself used (fdtab.h's
# map of used numbers, wiped on fork), and the library's file work goes
# through a child with an empty fd table, not a copy of the whole one
# (progfd.c).  Counted in page faults (getrusage: deterministic where
# timings are not).  tests/progs/manyfds holds HELD fds (half tracked
# socketpairs, half /dev/null); each of its children makes a socketpair,
# moves a byte each way and _exits, after a close_range(3, ~0U) in the
# range case.  Before: 2,390 faults a child with 15,000 fds held against
# 110 with 200 (35 to 52 ms a child); now the same within a few.  The
# records stay exact: each child's exit record has its pair, the parent's
# its own pairs.
. "$(dirname "$0")/lib.sh"
need_prog manyfds

hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 30064 ]; then
	big=15000
else
	big=$(((hard - 64) / 2))
fi
[ "$big" -ge 4000 ] || skip "RLIMIT_NOFILE hard limit $hard: too few fds"

# faults HELD [range] - the median of three runs' faults per child; the
# logs of the last run stay in $T/HELD.*.log.
faults() {
	local held=$1 mode=${2:-} i
	for i in 1 2 3; do
		rm -f "$T/$held$mode".*.log
		SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/$held$mode.%p.log" \
			sm "$PROGS/manyfds" "$held" 10 $mode >"$T/out" 2>"$T/err" ||
			fail "manyfds $held $mode failed: $(head -n 3 "$T/err")"
		[ -s "$T/err" ] && fail "manyfds $held $mode: stderr: $(head -n 3 "$T/err")"
		expect_eq "children of manyfds $held $mode" \
			"$(field child_pairs "$T/out")" 10
		field child_faults "$T/out"
	done | sort -n | sed -n 2p
}

# check_logs HELD MODE - every child's exit record has its own pair (two
# unix fds, a byte each way on each), the parent's has HELD bytes each way.
check_logs() {
	local held=$1 mode=$2
	cat >"$T/check.py" <<PYEOF
import glob, json
held = $held
logs = sorted(glob.glob("$T/$held$mode.*.log"))
exits = []
for f in logs:
    rs = [json.loads(l) for l in open(f) if l.strip()]
    exits += [r for r in rs if r["type"] == "exit"]
parent = [e for e in exits if e["totals"]["bytes_in"] == held]
children = [e for e in exits if e["totals"]["bytes_in"] != held]
assert len(parent) == 1, "no one exit record with %d bytes in: %s" % (
    held, [e["totals"]["bytes_in"] for e in exits])
p = parent[0]["totals"]
assert p["bytes_out"] == held, "parent sent %d, not %d" % (p["bytes_out"], held)
assert len(children) == 10, "%d child exit records, not 10" % len(children)
for e in children:
    t = e["totals"]
    assert (t["bytes_in"], t["bytes_out"]) == (2, 2), "child %s: %s" % (e["pid"], t)
    fds = [f for f in e["fds"] if f["kind"] == "unix"]
    assert len(fds) == 2, "child %s: unix fds %s" % (e["pid"], fds)
    assert all(f["bytes_in"] == 1 and f["bytes_out"] == 1 for f in fds), fds
print("ok")
PYEOF
	"$PY" "$T/check.py" >"$T/check.out" 2>&1 ||
		fail "records of manyfds $held $mode: $(tail -n 3 "$T/check.out")"
}

for mode in "" range; do
	few=$(faults 200 $mode)
	check_logs 200 "$mode"
	many=$(faults "$big" $mode)
	check_logs "$big" "$mode"
	echo "faults a child ${mode:+(close_range) }: $few with 200 fds held, $many with $big"
	awk -v a="$many" -v b="$few" 'BEGIN { exit !(a - b <= 20) }' ||
		fail "a fork child ${mode:+with close_range }takes $many page faults with $big fds held, $few with 200 (at most 20 more)"
done
exit 0
