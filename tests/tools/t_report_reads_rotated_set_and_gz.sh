# A log rotated into LOG.2.gz (compressed), LOG.1 and LOG is one log to the
# report: given LOG it reads the three files oldest first and prints
# exactly what it prints for the unrotated log (the log column aside);
# given the shell glob LOG* it reads each file once, the same; LOG.1 alone
# is read alone (only its records); a corrupt .gz is reported, with the
# rest still read.  The same with logrotate's dateext names (LOG-DATE.gz,
# LOG-DATE, LOG; LOG-2 is another log): before, LOG* read each dated file
# as a log of its own, its processes counted again (totals 4.6 times the
# truth in a helper's run).  And one process's records in two logs that
# are not one set is said (counted as two processes).
. "$(dirname "$0")/lib.sh"
fixture_paced
src=$(ls "$SM_FIX"/paced/logs/python3.*.log)
n=$(wc -l <"$src")
[ "$n" -ge 6 ] || fail "precondition: only $n lines in $src"
a=$((n / 3)) b=$((2 * n / 3))
mkdir -p "$T/rot"
log=$T/rot/server.log
sed -n "1,${a}p" "$src" | gzip -c >"$log.2.gz"
sed -n "$((a + 1)),${b}p" "$src" >"$log.1"
sed -n "$((b + 1)),\$p" "$src" >"$log"
: >"$T/rot/server.logx"      # not a member: a different name
dlog=$T/rot/dated.log
sed -n "1,${a}p" "$src" | gzip -c >"$dlog-20261201.gz"
sed -n "$((a + 1)),${b}p" "$src" >"$dlog-20261202"
sed -n "$((b + 1)),\$p" "$src" >"$dlog"
sed -n "1,${a}p" "$src" >"$dlog-2"  # not a member: another log's name
"$REPORT" -f json --top 0 "$src" >"$T/whole.json" 2>"$T/whole.err" || fail "report on the whole log: $(cat "$T/whole.err")"
"$REPORT" -f json --top 0 "$log" >"$T/set.json" 2>"$T/set.err" || fail "report on the set: $(cat "$T/set.err")"
[ ! -s "$T/set.err" ] || fail "messages on the set: $(cat "$T/set.err")"
(cd "$T/rot" && "$REPORT" -f json --top 0 server.log*) >"$T/glob.json" 2>"$T/glob.err" ||
	fail "report on server.log*: $(cat "$T/glob.err")"
"$REPORT" -f json --top 0 "$log.1" >"$T/one.json" 2>"$T/one.err" || fail "report on LOG.1: $(cat "$T/one.err")"
"$REPORT" -f json --top 0 "$dlog" >"$T/dset.json" 2>"$T/dset.err" || fail "report on the dated set: $(cat "$T/dset.err")"
[ ! -s "$T/dset.err" ] || fail "messages on the dated set: $(cat "$T/dset.err")"
(cd "$T/rot" && "$REPORT" -f json --top 0 dated.log dated.log-2026*) >"$T/dglob.json" 2>"$T/dglob.err" ||
	fail "report on dated.log*: $(cat "$T/dglob.err")"
[ ! -s "$T/dglob.err" ] || fail "messages on dated.log*: $(cat "$T/dglob.err")"
# One process in two logs that are not one set: said.
cp "$log.1" "$T/copy.log"
"$REPORT" -f json --top 0 "$log" "$T/copy.log" >/dev/null 2>"$T/two.err" || fail "report on two logs: $(cat "$T/two.err")"
grep -q "counted as two processes" "$T/two.err" || fail "one process in two logs, nothing said: $(cat "$T/two.err")"
export SRC=$src LOG=$log A=$a B=$b T
pycheck "rotated set" <<'PY'
def load(name, log):
    rep = json.load(open(os.path.join(os.environ["T"], name)))
    for sec in ("processes", "by_bytes", "by_peak", "slowest"):
        for row in rep[sec]:
            assert row["log"] == log, (name, row["log"], log)
            row["log"] = "-"
    return rep
whole = load("whole.json", os.environ["SRC"])
assert whole == load("set.json", os.environ["LOG"]), "the set reads differently from the whole log"
assert whole == load("glob.json", "server.log"), "server.log* reads differently from the whole log"
assert whole == load("dset.json", os.environ["LOG"].replace("server.log", "dated.log")), "the dated set reads differently from the whole log"
assert whole == load("dglob.json", "dated.log"), "dated.log* reads differently from the whole log"
one = json.load(open(os.path.join(os.environ["T"], "one.json")))
want = int(os.environ["B"]) - int(os.environ["A"])
assert one["records"] == want, (one["records"], want)
PY
printf 'not gzip at all\n' | gzip -c | head -c 20 >"$T/rot/server.log.3.gz"
"$REPORT" -f json --top 0 "$log" >"$T/bad.json" 2>"$T/bad.err" || fail "status $? with a corrupt .gz"
grep -q "^sockmeter-report: $log.3.gz: read error" "$T/bad.err" || fail "corrupt .gz: $(cat "$T/bad.err")"
"$PY" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(a["records"] != b["records"])' \
	"$T/bad.json" "$T/set.json" || fail "records lost beside a corrupt .gz"
exit 0
