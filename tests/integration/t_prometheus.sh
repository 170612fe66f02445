# format = prometheus, end to end: socat moves a known file under the
# preload with the textfile written every 0.2 s; promtool accepts the file;
# a real prometheus-node-exporter on loopback with its textfile collector
# pointed at the directory serves the metered numbers, and curl scraping it
# reads exactly the bytes that moved.  The file is replaced atomically
# (no .tmp left behind) and is readable by a collector of another user.
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
command -v promtool >/dev/null || fail "promtool is not installed (package prometheus)"
exporter=$(command -v prometheus-node-exporter || command -v node_exporter) ||
	fail "prometheus-node-exporter is not installed"
size=$((2 * 1048576 + 777))
make_file "$T/src.bin" "$size"
mkdir -p "$T/prom"
socat_send tcp "$T/src.bin" "$T/dest.bin" \
	"LD_PRELOAD=$LIB SOCKMETER_FORMAT=prometheus SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$T/prom/recv.%p.prom" \
	"LD_PRELOAD=$LIB SOCKMETER_FORMAT=prometheus SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$T/prom/send.%p.prom"
recv=$(one_log "$T/prom/recv.*.prom")
send=$(one_log "$T/prom/send.*.prom")
ls "$T/prom" | grep -q '\.tmp$' && fail "a .tmp file was left behind"
[ "$(stat -c %a "$recv")" = 644 ] || fail "mode $(stat -c %a "$recv"), want 644"

for f in "$recv" "$send"; do
	promtool check metrics <"$f" >"$T/promtool.out" 2>&1 ||
		fail "promtool rejects $(basename "$f"): $(cat "$T/promtool.out")"
done

# Every family the defaults export is there (a family lost from the
# exposition went unnoticed), and the sender's calls were counted.
for fam in start_time_seconds last_update_timestamp_seconds fds_open \
	fds_closed_total bytes_total calls_total errors_total peer_bytes_total \
	tcp_rtt_seconds; do
	grep -q "^# TYPE sockmeter_$fam " "$send" ||
		fail "no sockmeter_$fam family in $(basename "$send")"
done
grep -qE "^sockmeter_calls_total\{.*kind=\"tcp\",direction=\"out\"\} [1-9]" "$send" ||
	fail "sender calls_total: $(grep calls_total "$send")"

# Exactly what moved, in the file itself.
want_in="sockmeter_bytes_total{prog=\"socat\",pid=\"${recv##*recv.}\",kind=\"tcp\",direction=\"in\"} $size"
want_in=${want_in/.prom\"/\"}
grep -qF "$want_in" "$recv" || fail "no '$want_in' in $(basename "$recv"): $(grep bytes_total "$recv")"
grep -qE "^sockmeter_bytes_total\{prog=\"socat\",pid=\"[0-9]+\",kind=\"tcp\",direction=\"out\"\} $size\$" "$send" ||
	fail "sender bytes_out: $(grep bytes_total "$send")"
grep -qE "^sockmeter_peer_bytes_total\{.*peer=\"127\.0\.0\.1\",direction=\"out\"\} $size\$" "$send" ||
	fail "sender per-peer bytes: $(grep peer_bytes "$send")"

# A real node_exporter serves them.
port=$(free_port)
bg_start "$exporter" --web.listen-address="127.0.0.1:$port" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$T/prom"
wait_listen "$port" "$BG_PID" || fail "node_exporter did not listen on $port"
curl -s "http://127.0.0.1:$port/metrics" >"$T/scrape" || fail "scrape failed"
# node_exporter prints values in Go's shortest float form (2.097929e+06).
scraped() { # DIRECTION PIDFILE -> the value for that process
	local pid=${2%.prom}
	pid=${pid##*.}
	awk -v d="$1" -v p="$pid" '$1 == "sockmeter_bytes_total{direction=\"" d "\",kind=\"tcp\",pid=\"" p "\",prog=\"socat\"}" { printf "%.0f\n", $2 }' "$T/scrape"
}
expect_eq "scraped receiver bytes in" "$(scraped in "$recv")" "$size"
expect_eq "scraped sender bytes out" "$(scraped out "$send")" "$size"
grep -q '^node_textfile_scrape_error 0' "$T/scrape" ||
	fail "node_exporter reports a textfile error: $(grep textfile "$T/scrape")"
exit 0
