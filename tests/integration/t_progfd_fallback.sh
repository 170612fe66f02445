# The library's file work from threads other than the ticker (a fork
# child's state file, exit records) runs in a child that leaves the
# program's fd table for an empty one with close_range(0, ~0U,
# CLOSE_RANGE_UNSHARE) and asks the kernel (kcmp) that it did
# (core/progfd.c).  Where close_range cannot (before Linux 5.9, a filter)
# it falls back to unshare(CLONE_FILES), then to a child made with a copy
# of the table, and never works in the program's own table.  Each rung is
# forced here by a seccomp filter (tests/progs/sclaunch), under which the
# ticker cannot leave the table either, so every record goes through that
# child:
#  - enosys: close_range fails ENOSYS (an older kernel): unshare;
#  - eperm: close_range ENOSYS and unshare EPERM: a copy made by clone;
#  - faked: close_range does nothing and returns 0, with fds 0 to 2
#    closed (nothing for a look at them to find): kcmp says the table is
#    still the program's, and the child unshares (strace shows it); a
#    check of fds 0 to 2 alone took it for empty, and the log's open took
#    a number in the program's table;
#  - at the fd limit (tests/progs/fdlimit) under enosys and eperm: the
#    copies make room for the log (only copies known to be the child's
#    own are closed in).
# tests/progs/manyfds holds 200 fds and forks 5 children that each make
# a socketpair: every record exact, as without a filter.
. "$(dirname "$0")/lib.sh"
need_prog manyfds
need_prog sclaunch
need_prog fdlimit
need strace

# records NAME - manyfds 200 5's logs $T/NAME.*.log: one exit record per
# child with its own pair (a byte each way on each end), the parent's
# with its 100 pairs' bytes.
records() {
	cat >"$T/check.py" <<PYEOF
import glob, json
exits = []
for f in sorted(glob.glob("$T/$1.*.log")):
    exits += [r for r in map(json.loads, filter(str.strip, open(f)))
              if r["type"] == "exit"]
tot = sorted((e["totals"]["bytes_in"], e["totals"]["bytes_out"]) for e in exits)
assert tot == [(2, 2)] * 5 + [(200, 200)], tot
print("ok")
PYEOF
	"$PY" "$T/check.py" >"$T/check.out" 2>&1 ||
		fail "$1: exit records (bytes in, out): $(tail -n 1 "$T/check.out")"
}

run() { # NAME CLOSE_RANGE UNSHARE [-stdio]
	local name=$1
	shift
	SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/$name.%p.log" \
		timeout 60 "$PROGS/sclaunch" "$@" env LD_PRELOAD="$LIB" \
		"$PROGS/manyfds" 200 5 >"$T/$name.out" 2>"$T/$name.err" ||
		fail "$name: manyfds failed: $(head -n 3 "$T/$name.err")"
}

run enosys 38 allow
[ -s "$T/enosys.err" ] && fail "enosys: stderr: $(head -n 3 "$T/enosys.err")"
expect_eq "enosys: children" "$(field child_pairs "$T/enosys.out")" 5
records enosys
run eperm 38 1
[ -s "$T/eperm.err" ] && fail "eperm: stderr: $(head -n 3 "$T/eperm.err")"
records eperm

# faked: traced, to see each child's steps (fds 0 to 2 closed: no output).
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/faked.%p.log" \
	timeout 60 strace -f -qq -e trace=close_range,kcmp,unshare,clone \
	-o "$T/faked.trace" "$PROGS/sclaunch" 0 allow -stdio \
	env LD_PRELOAD="$LIB" "$PROGS/manyfds" 200 5 ||
	fail "faked: manyfds failed"
records faked
# Every helper child (clone with CLONE_FILES) that found the faked
# close_range had left it in the program's table (its kcmp = 0) went on
# to unshare before anything else; one helper per record at least (6).
cat >"$T/trace.py" <<'PYEOF'
import re, sys
helpers, seen, bad, pending = set(), {}, [], set()
for line in open(sys.argv[1]):
    pid, call = line.split(None, 1)
    call = call.strip()
    # A vfork-like clone is shown in two parts, unfinished and resumed.
    if call.startswith("clone(") and "CLONE_FILES|CLONE_VFORK" in call:
        pending.add(pid)
    m = re.search(r"= (\d+)$", call)
    if m and pid in pending and ("clone(" in call or "clone resumed" in call):
        helpers.add(m.group(1))
        pending.discard(pid)
    elif call.startswith("kcmp(") and call.rstrip().endswith("= 0"):
        seen.setdefault(pid, []).append("shared")
    elif call.startswith("unshare(CLONE_FILES)") and call.rstrip().endswith("= 0"):
        seen.setdefault(pid, []).append("unshared")
fooled = [p for p in helpers if seen.get(p, [None])[0] == "shared"]
for p in fooled:
    if seen[p][:2] != ["shared", "unshared"]:
        bad.append(p)
print("helpers=%d\nfooled=%d\nbad=%d" % (len(helpers), len(fooled), len(bad)))
PYEOF
"$PY" "$T/trace.py" "$T/faked.trace" >"$T/trace.out" ||
	fail "faked: reading the trace: $(tail -n 2 "$T/trace.out")"
[ "$(field fooled "$T/trace.out")" -ge 6 ] ||
	fail "faked: helper children that found the program's table: $(cat "$T/trace.out") (at least 6 expected)"
expect_eq "faked: helper children that worked in the program's table" \
	"$(field bad "$T/trace.out")" 0

for f in "enosys 38 allow" "eperm 38 1"; do
	# shellcheck disable=SC2086
	set -- $f
	SOCKMETER_LOG="$T/fl_$1.log" timeout 60 "$PROGS/sclaunch" "$2" "$3" \
		env LD_PRELOAD="$LIB" "$PROGS/fdlimit" >"$T/fl_$1.out" \
		2>"$T/fl_$1.err" || fail "fdlimit under $1 failed: $(cat "$T/fl_$1.err")"
	n=$(sed -n 's/^pairs=//p' "$T/fl_$1.out")
	[ "${n:-0}" -gt 20 ] || fail "fdlimit under $1: only ${n:-0} pairs"
	grep -q "totals: bytes_in=$((3 * n)) calls_in=$n bytes_out=$((3 * n)) calls_out=$n " \
		"$T/fl_$1.log" 2>/dev/null ||
		fail "fdlimit under $1: no exit record with its totals: $(cat "$T/fl_$1.log" "$T/fl_$1.err" 2>&1 | head -n 5)"
done
exit 0
