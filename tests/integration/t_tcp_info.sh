# tcp_info category: the kernel's view of a connection in its records.
# A receiver that reads slowly (4 KiB reads 1 ms apart, 64 KiB SO_RCVBUF)
# makes the sender rwnd_limited most of its busy time; a fast receiver
# far less; a tiny SO_SNDBUF shows sndbuf_limited.  While the sender's socket sits idle
# after its transfer, `ss -ti` prints the same busy, rwnd_limited and rtt
# as its close record.  bytes_acked agrees with bytes_out (+1: the
# connecting side's SYN), interval records carry the live view, text
# records the compact one, and tcp_info = false leaves it all out.
. "$(dirname "$0")/lib.sh"

need_prog tcpxfer
command -v ss >/dev/null || fail "ss (iproute2) is not installed"

# xfer NAME BYTES RCVBUF DELAY_US SNDBUF [ENV...] - one transfer; the
# sender preloaded (json log $T/NAME.log, extra settings ENV); the sender's
# `ss -tin` line while idle in $T/NAME.ss.
xfer() {
	local name=$1 bytes=$2 rcvbuf=$3 delay=$4 sndbuf=$5 spid cpid i lport
	shift 5
	rm -f "$T/$name.port" "$T/$name.hold"
	bg_start "$PROGS/tcpxfer" serve "$T/$name.port" "$bytes" "$rcvbuf" \
		"$delay" >"$T/$name.serve.out"
	spid=$BG_PID
	i=0
	until [ -s "$T/$name.port" ]; do
		i=$((i + 1))
		[ "$i" -gt 500 ] && fail "$name: server did not start"
		sleep 0.02
	done
	bg_start env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json \
		SOCKMETER_LOG="$T/$name.log" "$@" "$PROGS/tcpxfer" send \
		"$(cat "$T/$name.port")" "$bytes" "$sndbuf" "$T/$name.hold" \
		>"$T/$name.send.out"
	cpid=$BG_PID
	i=0
	until grep -q '^ready=1' "$T/$name.send.out" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt 1000 ] && fail "$name: sender never finished sending"
		sleep 0.02
	done
	lport=$(field lport "$T/$name.send.out")
	ss -tinH src "127.0.0.1:$lport" >"$T/$name.ss"
	touch "$T/$name.hold"
	bg_wait "$cpid" 30 || fail "$name: sender failed"
	bg_wait "$spid" 30 || fail "$name: server failed"
	expect_eq "$name: bytes the server read" \
		"$(field in "$T/$name.serve.out")" "$bytes"
}

# The sender's connection in its close record.
conn() {
	q "$T/$1.log" "[f for f in closes(kind='tcp') if f['bytes_out']][0]$2"
}

# ss VALUE of KEY (e.g. busy:552ms -> 552; rtt:1.1/0.02 -> 1.1).
ssval() {
	sed -n "s/.* $2:\([0-9.]*\).*/\1/p" "$T/$1.ss" | head -n 1
}

# 1. Slow receiver: 64 KiB receive buffer, 1 ms between 4 KiB reads.  (A
# 4 KiB buffer, a window under one segment, left 40 % of the busy time
# plain busy, and over half under load: rwnd_limited is not "most".)
xfer slow 2000000 65536 1000 0 SOCKMETER_INTERVAL=0.1
check "$T/slow.log" "len([f for f in closes(kind='tcp') if f['bytes_out']]) == 1" \
	"slow: one sending connection"
expect_eq "slow: bytes_out" "$(conn slow "['bytes_out']")" 2000000
check "$T/slow.log" "(lambda t: t['rwnd_limited_us'] > 0.5 * t['busy_us'] > 0)([f for f in closes(kind='tcp') if f['bytes_out']][0]['tcp'])" \
	"slow: rwnd_limited is most of the busy time"
expect_eq "slow: limited_by" "$(conn slow "['tcp']['limited_by']")" rwnd
check "$T/slow.log" "0 < [f for f in closes(kind='tcp') if f['bytes_out']][0]['tcp']['rwnd_limited_frac'] <= 1" \
	"slow: rwnd_limited as a fraction of the connection's life"
# The same socket, idle, seen by ss: the same numbers.
[ -s "$T/slow.ss" ] || fail "slow: ss printed nothing for the sender's socket"
expect_eq "slow: busy (ms) as ss -ti shows it" \
	"$(conn slow "['tcp']['busy_us'] // 1000")" "$(ssval slow busy)"
expect_eq "slow: rwnd_limited (ms) as ss -ti shows it" \
	"$(conn slow "['tcp']['rwnd_limited_us'] // 1000")" \
	"$(ssval slow rwnd_limited)"
check "$T/slow.log" "abs([f for f in closes(kind='tcp') if f['bytes_out']][0]['tcp']['rtt_us'] - 1000 * $(ssval slow rtt)) <= 1" \
	"slow: rtt as ss -ti shows it ($(ssval slow rtt) ms)"
expect_eq "slow: bytes_acked as ss -ti shows it" \
	"$(conn slow "['tcp']['bytes_acked']")" "$(ssval slow bytes_acked)"
# bytes_acked at close: our bytes_out, plus the SYN of the connecting side.
expect_eq "slow: bytes_acked = bytes_out + SYN" \
	"$(conn slow "['tcp']['bytes_acked']")" 2000001
expect_eq "slow: bytes_out_unseen" "$(conn slow "['bytes_out_unseen']")" 0
# Interval records carried the live connection's view.
check "$T/slow.log" "any('tcp' in f and f['tcp']['bytes_acked'] > 0 for r in IV for f in r['fds'])" \
	"slow: an interval record with the live tcp view"

# 2. Fast receiver, default buffers: the same bytes spend a small part of
# the slow receiver's window-limited time (on loopback the kernel may still
# call a fast receiver's few milliseconds of busy time rwnd_limited: the
# sender can outrun any reader; what must hold is the difference).
xfer fast 2000000 0 0 0
slow_rwnd=$(conn slow "['tcp']['rwnd_limited_us']")
check "$T/fast.log" "[f for f in closes(kind='tcp') if f['bytes_out']][0]['tcp'].get('rwnd_limited_us', 0) * 10 < $slow_rwnd" \
	"fast: rwnd_limited under a tenth of the slow receiver's ($slow_rwnd us)"

# 3. A tiny send buffer (and a receiver that takes a moment per read).
xfer sndbuf 4000000 0 100 4096
check "$T/sndbuf.log" "[f for f in closes(kind='tcp') if f['bytes_out']][0]['tcp']['sndbuf_limited_us'] > 0" \
	"sndbuf: sndbuf_limited"

# 4. Text records: compact key=value; tcp_info = false: nothing of it.
xfer text 100000 0 0 0 SOCKMETER_FORMAT=text
grep -q ' kind=tcp .* rtt=[0-9.]*ms .*retrans=0 .*bytes_out_unseen=0' "$T/text.log" ||
	fail "text: no compact tcp view in the close record: $(cat "$T/text.log")"
xfer off 100000 0 0 0 SOCKMETER_TCP_INFO=off
check "$T/off.log" "not any(k in keys() for k in ('tcp', 'bytes_in_unseen', 'bytes_out_unseen'))" \
	"tcp_info off: no kernel fields"
exit 0
