# --plot out.svg on the paced transfer's real logs: gnuplot writes an SVG
# that parses as XML, with a title, both axes labelled with units (s,
# KiB/s) and one series per line of the legend: the total and each
# connection as prog[pid] fd N peer.
. "$(dirname "$0")/lib.sh"
need gnuplot
fixture_paced
"$REPORT" --plot "$T/rate.svg" "$SM_FIX"/paced/logs/*.log >/dev/null 2>"$T/err" ||
	fail "exit status $?: $(cat "$T/err")"
grep -q "plot written to $T/rate.svg (3 series)" "$T/err" || fail "message: $(cat "$T/err")"
export SVG=$T/rate.svg
pycheck "svg" <<'PY'
import xml.etree.ElementTree as ET
root = ET.parse(os.environ["SVG"]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
texts = ["".join(e.itertext()).strip() for e in root.iter("{http://www.w3.org/2000/svg}text")]
py_log, = files("paced/logs/python3.*.log")
so_log, = files("paced/logs/socat.*.log")
port = open(FIX + "/paced/port").read().strip()
local = re.search(r"local=(\S+)", open(FIX + "/paced/pace.out").read()).group(1)
py_fd = [f for f in close_fds(py_log) if f["kind"] == "tcp"][0]["fd"]
so_fd = [f for f in close_fds(so_log) + exit_record(so_log)["fds"] if f["peer"] == local][0]["fd"]
want = ["total (all processes)",
        "python3[%d] fd %d 127.0.0.1:%s" % (exit_record(py_log)["pid"], py_fd, port),
        "socat[%d] fd %d %s" % (exit_record(so_log)["pid"], so_fd, local)]
for w in want:
    assert w in texts, "series %r not in %s" % (w, texts)
assert "rate (KiB/s, in + out)" in texts, texts
assert "time since the first start (s)" in texts, texts
assert any(t.startswith("sockmeter: rate over time") for t in texts), texts
ids = {e.get("id") for e in root.iter() if e.get("id")}
assert {"gnuplot_plot_1", "gnuplot_plot_2", "gnuplot_plot_3"} <= ids, ids
# a data line of each series really draws something
paths = [e for e in root.iter("{http://www.w3.org/2000/svg}path") if len(e.get("d", "")) > 200]
assert len(paths) >= 3, len(paths)
PY
exit 0
