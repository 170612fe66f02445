# sockmeter top --once on a log whose last record alone is longer than its
# 8 MiB start window (an interval record with top = 0 lists every open fd:
# 20,000 of them make one line of about 16 MB) shows that record's process
# and connections; before, the window held no line start and top said
# "no JSON log with records yet" of a live process.  And a file of lines
# that are not sockmeter records: top says how many it skipped, and
# --once exits 1 when that is all there was (it said "no records yet" and
# exited 0).
. "$(dirname "$0")/lib.sh"
fixture_paced
src=$(ls "$SM_FIX"/paced/logs/python3.*.log)
export SRC=$src BIG=$T/big.log
pycheck "a log ending in a record longer than the window" <<'PY'
import copy
lines = open(os.environ["SRC"]).read().splitlines()
recs = [json.loads(ln) for ln in lines]
iv = [r for r in recs if r["type"] == "interval" and r["fds"]]
assert iv, "the fixture has no interval record with fds"
big = copy.deepcopy(iv[-1])
proto = big["fds"][0]
fds = []
for k in range(12000):
    e = copy.deepcopy(proto)
    e["fd"] = 1000 + k
    e["local"] = "127.0.0.1:%d" % (1024 + k % 60000)
    fds.append(e)
big["fds"] = fds
big["totals"]["fds_open"] = len(fds)
big["ts"] = recs[-1]["ts"] + 1
# A start whose exit record is not in the file: the process is live.
pre = [ln for ln, r in zip(lines, recs) if r["type"] != "exit"]
line = json.dumps(big, separators=(",", ":"))
assert len(line) > 8 << 20, len(line)
with open(os.environ["BIG"], "w") as fh:
    fh.write("\n".join(pre) + "\n")
    fh.write("x" * (9 << 20) + "\n")   # a long line that is no record
    fh.write(line + "\n")
PY
out=$("$PY" "$TOPCMD" --once -n 3 "$BIG") || fail "top --once failed on the big log"
head=$(printf '%s\n' "$out" | head -n 1)
[[ $head =~ ([0-9]+)\ process.*\ ([0-9]+)\ connection ]] ||
	fail "no header in: $head"
[ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[2]}" -ge 12000 ] ||
	fail "the long last record not shown: $head"
printf '%s\n' "$out" | grep -q 'no JSON log with records' &&
	fail "top said there were no records"

# Lines that are not records.
printf 'not a log\n[1,2]\n{"type":"nope"}\n' >"$T/garbage.log"
rc=0
out=$("$PY" "$TOPCMD" --once "$T/garbage.log") || rc=$?
[ "$rc" = 1 ] || fail "--once on a file of no records exited $rc, not 1"
printf '%s\n' "$out" | grep -q "lines skipped, not sockmeter JSON records: $T/garbage.log (3)" ||
	fail "the skipped lines not said: $out"
# Records and one bad line: shown, the line counted, status 0.
{ cat "$src"; echo 'garbage'; } >"$T/mixed.log"
out=$("$PY" "$TOPCMD" --once "$T/mixed.log") || fail "--once on a log with one bad line failed"
printf '%s\n' "$out" | grep -q "mixed.log (1)" || fail "the bad line not counted: $out"
printf '%s\n' "$out" | grep -q '^python3 ' || fail "the records not shown: $out"
echo "ok: a 12,000-fd record past the window shown; non-records counted, exit 1 when nothing else"
