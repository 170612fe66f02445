# The man pages render without a single groff warning (-ww) and through
# man(1); sockmeter.ini(5) gives every key of config/sockmeter.ini with the
# same default; sockmeter(1) names every environment variable of the
# README and docs/ and every option of sockmeter-report --help and sockmeter top
# --help.
. "$(dirname "$0")/lib.sh"
need groff man
for page in sockmeter.1 sockmeter.ini.5; do
	groff -man -Tutf8 -ww "$SM_TOP/man/$page" >"$T/out" 2>"$T/err" || fail "groff $page: status $?"
	[ ! -s "$T/err" ] || fail "groff warnings in $page: $(head -3 "$T/err")"
done
MANWIDTH=80 man -l "$SM_TOP/man/sockmeter.1" 2>"$T/err" >"$T/m1" || fail "man -l sockmeter.1"
head -1 "$T/m1" | grep -q "^SOCKMETER(1) " || fail "man -l sockmeter.1: $(head -1 "$T/m1")"
MANWIDTH=80 man -l "$SM_TOP/man/sockmeter.ini.5" 2>>"$T/err" >"$T/m5" || fail "man -l sockmeter.ini.5"
[ ! -s "$T/err" ] || fail "man: $(cat "$T/err")"
"$REPORT" --help >"$T/rhelp"
"$TOPCMD" --help >"$T/thelp"
export M1=$T/m1 M5=$T/m5 RHELP=$T/rhelp THELP=$T/thelp
pycheck "man pages" <<'PY'
m1, m5 = open(os.environ["M1"]).read(), open(os.environ["M5"]).read()
flat5 = re.sub(r"\s+", " ", m5)
section = None
keys = 0
for line in open(os.path.join(TOP, "config", "sockmeter.ini")):
    line = line.split(";")[0].strip() if not line.lstrip().startswith((";", "#")) else ""
    m = re.match(r"^\[(\w+)\]$", line)
    if m:
        section = m.group(1)
        assert "[%s]" % section in m5, "section [%s] missing" % section
        continue
    m = re.match(r"^(\w+)\s*=\s*(.*)$", line)
    if m:
        key, default = m.group(1), m.group(2).strip() or "(empty)"
        keys += 1
        assert "%s = %s" % (key, default) in flat5, "%s = %s missing from sockmeter.ini(5)" % (key, default)
assert keys >= 20, keys
import glob
readme = "".join(open(f).read() for f in [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "*.md"))))
for var in set(re.findall(r"`(SOCKMETER(?:_[A-Z]+)?)`", readme)):
    assert var in m1, "%s missing from sockmeter(1)" % var
    if var != "SOCKMETER_LIB":
        assert var in m5, "%s missing from sockmeter.ini(5)" % var
flat1 = re.sub(r"\s+", " ", m1)
for helpfile in (os.environ["RHELP"], os.environ["THELP"]):
    for opt in set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", open(helpfile).read())):
        if opt != "--help":
            assert opt in flat1, "%s (%s) missing from sockmeter(1)" % (opt, os.path.basename(helpfile))
PY
exit 0
