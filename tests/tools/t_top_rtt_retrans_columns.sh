# sockmeter top shows the kernel's view of a TCP connection (tcp_info):
# the RTT and RETR columns of a closed connection carry its close record's
# rtt and retransmits (the listening socket shows its own, 0).
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/logs"
tcpxfer_logged "$T/logs/x.log" 300000 4096 200
"$TOPCMD" -b --once --linger -1 "$T/logs/x.log" >"$T/top.out" 2>&1 ||
	fail "top failed: $(cat "$T/top.out")"
grep -q ' RTT  *RETR ' "$T/top.out" || fail "no RTT/RETR columns: $(cat "$T/top.out")"
pycheck "top's rtt and retrans" <<PY
f = [f for f in close_fds("$T/logs/x.log") if f["kind"] == "tcp" and f["bytes_out"]][0]
# A real connection has a round trip: 0 would match a top that shows 0.
assert f["tcp"]["rtt_us"] > 0, f["tcp"]
want = "%.3fms" % (f["tcp"]["rtt_us"] / 1000.0)
line = [l for l in open("$T/top.out") if " tcp " in l and want in l]
assert line, (want, open("$T/top.out").read())
assert line[0].split()[line[0].split().index(want) + 1] == str(f["tcp"]["retrans"]), line
PY
exit 0
