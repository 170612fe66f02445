# A TCP transfer a preload cannot see (io_uring send/recv on loopback) is
# flagged, exactly: each side's record shows the io_uring bytes as
# bytes_in_unseen / bytes_out_unseen (the kernel's count minus ours), the
# bytes of plain send/recv on the same connections as counted, the totals
# sum them, text records carry them, and the suite's common check
# (unseen.py, run after every test) fails on such a log.
. "$(dirname "$0")/lib.sh"

SM_UNSEEN_OK=1 # this test's logs are meant to show unseen bytes
need_prog uring_xfer
out=300001 back=45678 plain=1234

sm env SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/u.log" \
	"$PROGS/uring_xfer" $out $back $plain >"$T/u.out"
st=$?
[ "$st" = 77 ] && fail "io_uring is not available on this kernel"
[ "$st" = 0 ] || fail "uring_xfer failed ($st)"
c=$(field client "$T/u.out")
s=$(field server "$T/u.out")

expect_eq "client: bytes_out (plain send only)" "$(q "$T/u.log" "closes(fd=$c)[0]['bytes_out']")" $plain
expect_eq "client: bytes_out_unseen" "$(q "$T/u.log" "closes(fd=$c)[0]['bytes_out_unseen']")" $out
expect_eq "client: bytes_in_unseen" "$(q "$T/u.log" "closes(fd=$c)[0]['bytes_in_unseen']")" $back
expect_eq "server: bytes_in (plain recv only)" "$(q "$T/u.log" "closes(fd=$s)[0]['bytes_in']")" $plain
expect_eq "server: bytes_in_unseen" "$(q "$T/u.log" "closes(fd=$s)[0]['bytes_in_unseen']")" $out
expect_eq "server: bytes_out_unseen" "$(q "$T/u.log" "closes(fd=$s)[0]['bytes_out_unseen']")" $back
expect_eq "totals: bytes_out_unseen" "$(q "$T/u.log" "tot('bytes_out_unseen')")" $((out + back))
expect_eq "totals: bytes_in_unseen" "$(q "$T/u.log" "tot('bytes_in_unseen')")" $((out + back))

# The same in text.
sm env SOCKMETER_LOG="$T/u.txt" "$PROGS/uring_xfer" $out $back $plain \
	>/dev/null || fail "uring_xfer (text) failed"
grep -q "kind=tcp .* bytes_in_unseen=$back bytes_out_unseen=$out" "$T/u.txt" ||
	fail "text: client's unseen bytes not in its close record"
grep -q "totals:.* bytes_in_unseen=$((out + back)) bytes_out_unseen=$((out + back))" "$T/u.txt" ||
	fail "text: unseen bytes not in the totals"

# Prometheus: the unseen counters, the kernel's TCP metrics, promtool.
sm env SOCKMETER_FORMAT=prometheus SOCKMETER_LOG="$T/u.prom" \
	"$PROGS/uring_xfer" $out $back $plain >/dev/null ||
	fail "uring_xfer (prometheus) failed"
for d in in out; do
	got=$(sed -n "s/^sockmeter_bytes_unseen_total{.*direction=\"$d\"} //p" "$T/u.prom")
	expect_eq "prometheus: unseen $d" "$got" $((out + back))
done
grep -q '^sockmeter_tcp_rtt_seconds_count{.*} 2$' "$T/u.prom" ||
	fail "prometheus: no rtt histogram of the 2 connections"
grep -q '^sockmeter_tcp_limited_seconds_total{.*reason="rwnd"}' "$T/u.prom" ||
	fail "prometheus: no limitation timers"
grep -q '^sockmeter_tcp_retransmitted_bytes_total{.*kind="tcp"} 0$' "$T/u.prom" ||
	fail "prometheus: no retransmitted bytes counter"
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/u.prom" >"$T/promtool.out" 2>&1 ||
		fail "promtool rejects the file: $(cat "$T/promtool.out")"
fi

# The common check sees them.
if "$PY" "$HERE/unseen.py" "$T" >"$T/check.out"; then
	fail "unseen.py passed a log with unseen bytes"
fi
grep -q "bytes_out_unseen" "$T/check.out" || fail "unseen.py: $(cat "$T/check.out")"
exit 0
