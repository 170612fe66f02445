# A process whose first records are not in the files (older rotated files
# removed) has its timeline start at its first record in the files, and
# no bytes of its earlier life land inside it.  The steady fixture's
# process moves about 960,000 B/s (in + out) in short connections.
#  - rot: rotated at 24 KiB keeping 2 files, the set holds only its last
#    seconds: close records, then the exit record, whose fds_closed counts
#    far more fds than the set has close records of: earlier records are
#    lost.  (Before, the timeline began at the process's start, the close
#    records were counted from 0, a flat trickle, and the exit record's
#    lifetime totals made a spike in the last bins.)
#  - the whole log (interval 2 s) cut just after its first interval
#    record, and cut at its second one: the first record with totals is
#    an interval record more than 1.5 intervals after the start.
# Each time the bins add up to the bytes the rounds moved after the first
# record (within 5%); the processes table keeps the exit record's totals.
# The whole log is read from the start, every byte in the timeline.
# Rates per bin: the report spreads the bytes of each step between two
# records evenly over it (its --help), so each whole bin is compared with
# what the rounds moved in the steps it lies in, spread the same way
# (within 15%; tlib's steady_steps says where the long pair's bytes
# go).  (The rounds' own
# rate per bin was compared before, and failed under load: the first
# step holds the interpreter's start, 0.3-0.4 s then, and a step that
# ends at an interval record holds the long pair's bytes of 2 s.)
. "$(dirname "$0")/lib.sh"
fixture_steady
log=$SM_FIX/steady/logs/steady.log
n=$(grep -n '"type":"interval"' "$log" | cut -d: -f1 | head -n 2 | tr '\n' ' ')
set -- $n
[ $# = 2 ] || fail "precondition: two interval records in $log"
mkdir -p "$T/cut1" "$T/cut2"
tail -n +$(($1 + 1)) "$log" >"$T/cut1/steady.log"
tail -n +"$2" "$log" >"$T/cut2/steady.log"
export T
pycheck "lost first records" <<'PY'
def rounds(name):
    return [tuple(map(float, l.split())) for l in open(os.path.join(FIX, "steady", name))]

def check(what, logs, out, partial=True):
    """logs: the files, oldest first; the report is given the last."""
    recs = [r for _, r in records(*logs)]
    start, first = recs[0]["start"], recs[0]["ts"]
    rs = rounds(out)
    rep = report("--bin", "0.5", logs[-1])
    tl = rep["timeline"]
    t0 = first if partial else start
    assert abs(tl["t0"] - t0) < 1e-6, "%s: timeline from %.3f, want %.3f (start %.3f)" % (
        what, tl["t0"], t0, start)
    truth = sum(b for t, b in rs if t > t0)
    got = sum(b["bytes_in"] + b["bytes_out"] for b in tl["bins"])
    assert abs(got - truth) <= 0.05 * truth, \
        "%s: bins add up to %.0f bytes, the rounds after the first record moved %.0f" % (what, got, truth)
    steps = steady_steps(recs, rs, None if partial else start)
    checked = 0
    for b in tl["bins"]:
        want = steady_rate(steps, b["ts"], b["ts"] + b["seconds"])
        if b["seconds"] != 0.5 or want is None:
            continue
        assert abs(b["rate"] - want) <= 0.15 * want, \
            "%s: bin at %.1f s: %.0f B/s, the rounds of its steps moved %.0f B/s" % (
                what, b["ts"] - t0, b["rate"], want)
        checked += 1
    assert checked, (what, tl["bins"], steps)
    ex = [r for r in recs if r["type"] == "exit"]
    assert len(ex) == 1, what
    p, = rep["processes"]
    assert (p["bytes_in"], p["bytes_out"]) == (ex[0]["totals"]["bytes_in"], ex[0]["totals"]["bytes_out"]), (what, p)
    return recs

rot = files("steady/rot/steady.log*")
assert len(rot) == 3, "precondition: %s" % rot
recs = check("rotated set", [rot[2], rot[1], rot[0]], "rot.out")
assert [r["type"] for r in recs if r["type"] != "close"] == ["exit"], "precondition: records %s" % (
    sorted({r["type"] for r in recs}))
assert recs[0]["type"] == "close" and recs[-1]["ts"] - recs[0]["ts"] >= 0.9, \
    "precondition: the set's close records span %.3f s" % (recs[-1]["ts"] - recs[0]["ts"])
T = os.environ["T"]
check("cut after the first interval record", [os.path.join(T, "cut1", "steady.log")], "steady.out")
recs = check("cut at the second interval record", [os.path.join(T, "cut2", "steady.log")], "steady.out")
assert recs[0]["type"] == "interval", recs[0]["type"]
check("whole log", files("steady/logs/steady.log"), "steady.out", partial=False)
PY
exit 0
