# With [log] close_records = off, a server's closed connections are in its
# totals and in no record: the report's peers and kinds tables show them
# in one "(no record)" row, so that the tables add up to the totals (before,
# a helper's nginx moved 66 MB and the tables showed its listener's few
# bytes, without a word).  python3's http.server (metered, close records
# off) serves 1,000,000 bytes twice to curl (not metered): the row holds
# what curl says it received and sent; with close records on, no such row.
. "$(dirname "$0")/lib.sh"
need curl
mkdir -p "$T/www"
head -c 1000000 /dev/urandom >"$T/www/body.bin"

serve() { # NAME CLOSE_RECORDS: logs in $T/NAME/, curl's numbers in $T/NAME.curl
	local spid
	mkdir -p "$T/$1"
	rm -f "$T/$1.port"
	SOCKMETER_FORMAT=json SOCKMETER_CLOSE_RECORDS=$2 SOCKMETER_LOG="$T/$1/%n.%p.log" \
		sm "$PY" "$HERE/serve.py" "$T/www" 2 "$T/$1.port" &
	spid=$!
	wait_for 10 test -s "$T/$1.port" || fail "$1: the HTTP server did not start"
	plain curl -s -o /dev/null -o /dev/null \
		-w '%{size_download} %{size_header} %{size_request}\n' \
		"http://127.0.0.1:$(cat "$T/$1.port")/body.bin" \
		"http://127.0.0.1:$(cat "$T/$1.port")/body.bin" >"$T/$1.curl" ||
		fail "$1: curl failed"
	wait "$spid" || fail "$1: the HTTP server failed"
}

serve off off
serve on each
export D=$T
pycheck "the no-record row" <<'PY'
d = os.environ["D"]
got_in = got_out = 0
for line in open(os.path.join(d, "off.curl")):
    body, head, req = map(int, line.split())
    got_in += body + head
    got_out += req
assert got_in > 2000000, got_in
rep = report(*files(os.path.join(d, "off", "*.log")))
p = rep["processes"][0]
assert (p["bytes_out"], p["bytes_in"]) == (got_in, got_out), (p, got_in, got_out)
row = [r for r in rep["peers"] if r["peer"] == "(no record)"]
assert len(row) == 1, rep["peers"]
assert (row[0]["bytes_out"], row[0]["bytes_in"]) == (got_in, got_out), row
kind = [r for r in rep["kinds"] if r["kind"] == "(no record)"]
assert len(kind) == 1 and (kind[0]["bytes_out"], kind[0]["bytes_in"]) == (got_in, got_out), kind
assert sum(r["bytes_out"] for r in rep["kinds"]) == p["bytes_out"], rep["kinds"]
assert sum(r["bytes_in"] for r in rep["peers"]) == p["bytes_in"], rep["peers"]
assert rep["peers_total"] == len([r for r in rep["peers"] if r["peer"] != "(no record)"])
on = report(*files(os.path.join(d, "on", "*.log")))
assert not [r for r in on["peers"] + on["kinds"]
            if "(no record)" in (r.get("peer"), r.get("kind"))], on["kinds"]
assert sum(r["bytes_out"] for r in on["kinds"]) == on["processes"][0]["bytes_out"]
PY
# The text report shows the row too.
"$REPORT" --only peers --only kinds "$T"/off/*.log >"$T/off.txt" 2>&1 || fail "report: $(cat "$T/off.txt")"
grep -q "^ *(no record) " "$T/off.txt" || fail "no (no record) row in the text report: $(cat "$T/off.txt")"
exit 0
