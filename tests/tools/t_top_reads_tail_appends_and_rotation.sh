# sockmeter top reads what it needs and no more: on a log bigger than its
# tail window it starts at a line boundary inside the window; each later
# refresh reads exactly the bytes appended; when the log is rotated
# (renamed to LOG.1 and started anew) the lines written to the old file
# after the last refresh are read from LOG.1, then the new file from its
# start, each record once and in order; rotated three times between two
# refreshes, from LOG.3, LOG.2, LOG.1 and the new file (before: LOG.1
# only); the file followed removed past keep: the rest read, the loss
# counted to be said; the log removed and made anew: nothing old read
# again; connections closed longer than
# --linger ago leave its memory.  And --once on a directory of 300 logs
# shows every process.
. "$(dirname "$0")/lib.sh"
fixture_paced
export TOPCMD LOG=$(ls "$SM_FIX"/paced/logs/python3.*.log) D=$T
pycheck "follower" <<'PY'
import importlib.machinery, importlib.util
loader = importlib.machinery.SourceFileLoader("smtop", os.environ["TOPCMD"])
spec = importlib.util.spec_from_loader("smtop", loader)
top = importlib.util.module_from_spec(spec)
loader.exec_module(top)
lines = open(os.environ["LOG"]).read().splitlines(True)
assert len(lines) >= 9, len(lines)
path = os.path.join(os.environ["D"], "f.log")
got = []
sink = lambda r, p: got.append(r["ts"])
# 1. the first read of a big log starts inside the tail window
top.TAIL_BYTES = len(lines[-1]) + len(lines[-2]) + 10
open(path, "w").write("".join(lines[:-3]))
size = os.path.getsize(path)
fol = top.Follower(path)
fol.poll(sink)
assert 1 <= len(got) <= 3 and fol.skipped > 0, (len(got), fol.skipped)
assert fol.offset == size
want_first = [json.loads(ln)["ts"] for ln in lines[:-3]][-len(got):]
assert got == want_first, (got, want_first)
# 2. a refresh reads exactly what was appended
got.clear()
with open(path, "a") as fh:
    fh.write(lines[-3])
fol.poll(sink)
assert fol.offset == size + len(lines[-3]) and len(got) == 1, (fol.offset, got)
fol.poll(sink)
assert len(got) == 1, "a refresh without news read records"
# 3. rotation: the end of the old file, then the new one
got.clear()
with open(path, "a") as fh:
    fh.write(lines[-2])
os.rename(path, path + ".1")
open(path, "w").write(lines[-1])
fol.poll(sink)
assert got == [json.loads(ln)["ts"] for ln in lines[-2:]], got
# 3b. rotated three times between two refreshes (a busy server with a
# small max_size): the rest of the file followed, now LOG.3, then LOG.2,
# LOG.1 and the new file, each record once and in order.
ts = [json.loads(ln)["ts"] for ln in lines]
def rotate(chain_len):
    for k in range(chain_len, 0, -1):
        src = path if k == 1 else "%s.%d" % (path, k - 1)
        os.rename(src, "%s.%d" % (path, k))
for k in range(1, 4):
    try:
        os.unlink("%s.%d" % (path, k))
    except OSError:
        pass
got.clear()
open(path, "w").write("")
fol = top.Follower(path)
fol.poll(sink)
with open(path, "a") as fh:
    fh.write(lines[0])
fol.poll(sink)
assert got == ts[:1], got
with open(path, "a") as fh:
    fh.write(lines[1])              # not read yet when rotated
rotate(1)
open(path, "w").write(lines[2])
rotate(2)
open(path, "w").write(lines[3])
rotate(3)
open(path, "w").write(lines[4])
fol.poll(sink)
assert got == ts[:5], (got, ts[:5])
assert fol.lost == 0, fol.lost
# 3c. the file followed removed by the rotation (past keep) before top
# read it: what is left is read, and the loss is counted to be said.
got.clear()
for k in (2, 3):
    os.unlink("%s.%d" % (path, k))
with open(path, "a") as fh:
    fh.write(lines[5])              # not read yet when rotated
rotate(1)                           # keep = 1: the file followed is LOG.1,
open(path, "w").write(lines[6])
os.unlink(path + ".1")              # then removed by the next rotation
rotate(1)
open(path, "w").write(lines[7])
fol.poll(sink)
assert got == ts[6:8], (got, ts[6:8])
assert fol.lost == 1, fol.lost
# 3d. the log removed and made anew, not rotated (LOG.1 is older than the
# last read): nothing old is read again, nothing said lost.
got.clear()
open(path + ".new", "w").write(lines[8])
os.rename(path + ".new", path)      # (a new inode: made before the old went)
fol.poll(sink)
assert got == [ts[8]], (got, ts[8])
assert fol.lost == 1, fol.lost
# 4. closed connections older than --linger are forgotten
t = top.Top(top.Sources([path], 60), 0.5)
for ln in lines:
    t.sink(json.loads(ln), path)
closes = [json.loads(ln) for ln in lines if '"type":"close"' in ln]
assert closes
t.newest = max(r["fds"][0]["closed"] for r in closes) + 1.0
t.src.files = {}
t.poll()
left = [c for p in t.procs.values() for c in p.conns.values() if c.state == "closed"]
assert not left, "%d closed connections kept past --linger" % len(left)
PY
mkdir -p "$T/many"
"$PY" "$SM_TOP/tests/bench/tools_gen.py" "$LOG" 3000 --procs 300 --split "$T/many" ||
	fail "tools_gen.py failed"
[ "$(ls "$T/many" | wc -l)" = 300 ] || fail "precondition: $(ls "$T/many" | wc -l) logs"
"$TOPCMD" --once "$T/many" >"$T/many.out" 2>&1 || fail "top --once on 300 logs: $(tail -3 "$T/many.out")"
grep -q "^sockmeter top - .* 300 processes" "$T/many.out" || fail "not 300 processes: $(head -2 "$T/many.out")"
exit 0
