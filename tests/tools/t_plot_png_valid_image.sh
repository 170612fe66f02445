# --plot out.png: a real PNG (signature, an IHDR chunk first, IEND last)
# of the default 1000x600 pixels, or of --size; a wrong extension is
# refused.
. "$(dirname "$0")/lib.sh"
need gnuplot
fixture_download
"$REPORT" --plot "$T/a.png" "$SM_FIX"/dl/logs/*.log >/dev/null 2>"$T/err" ||
	fail "exit status $?: $(cat "$T/err")"
"$REPORT" --size 640x400 -p "$T/b.png" "$SM_FIX"/dl/logs/*.log >/dev/null 2>"$T/err" ||
	fail "--size: exit status $?: $(cat "$T/err")"
export A=$T/a.png B=$T/b.png
pycheck "png" <<'PY'
for path, size in ((os.environ["A"], (1000, 600)), (os.environ["B"], (640, 400))):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "%s: no PNG signature" % path
    length, kind, w, h = struct.unpack(">I4sII", data[8:24])
    assert kind == b"IHDR" and length == 13, (kind, length)
    assert (w, h) == size, "%s: %dx%d, wanted %dx%d" % ((path, w, h) + size)
    assert data[-8:-4] == b"IEND", "%s: no IEND at the end" % path
    assert len(data) > 5000, "%s: only %d bytes" % (path, len(data))
PY
"$REPORT" --plot "$T/c.jpg" "$SM_FIX"/dl/logs/*.log >/dev/null 2>"$T/err"
[ $? = 1 ] || fail "a .jpg plot: expected exit status 1"
grep -q "must end in .svg or .png" "$T/err" || fail "message: $(cat "$T/err")"
exit 0
