#!/usr/bin/env bash
# tests/bench/tcpinfo.sh - what the tcp_info and names categories cost
# (`make bench-tcpinfo`, run by `make bench` after the main suite).
#
#   tests/bench/tcpinfo.sh [BUILD_DIR]
#
# 1. The library's own functions, timed directly (tcpinfo_cost direct):
#    the read a close adds, the read each TCP fd listed in a record adds to
#    an interval, a name remembered, a peer looked up.
# 2. End to end, under the preload: loopback connections opened, used and
#    closed (tcpinfo_cost churn), tcp_info on and off alternating, one
#    warm-up then BENCH_ROUNDS (7) counted rounds; medians of per-round
#    differences.
# Prints a table; writes it into BENCH_OUT (BENCHMARKS.md; "" for none)
# between <!-- bench-tcpinfo --> markers, replacing an earlier one.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
lib=$build/libsockmeter.so
bin=$build/bench/tcpinfo_cost
ROUNDS=${BENCH_ROUNDS:-7}
N=${BENCH_TCPINFO_N:-200000}
CONNS=${BENCH_TCPINFO_CONNS:-3000}
OUT=${BENCH_OUT-$top/BENCHMARKS.md}

tmp=$(mktemp -d /tmp/sockmeter-bench-ti.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

val() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$tmp/direct"
for r in $(seq 0 "$ROUNDS"); do
	line=$("$bin" direct "$N")
	[ "$r" = 0 ] || echo "$line" >>"$tmp/direct"
done
read_ns=$(val read_ns <"$tmp/direct" | median)
live_ns=$(val live_ns <"$tmp/direct" | median)
add_ns=$(val names_add_ns <"$tmp/direct" | median)
find_ns=$(val names_find_ns <"$tmp/direct" | median)

run() {
	env LD_PRELOAD="$lib" SOCKMETER_LOG="$tmp/log.%p" SOCKMETER_INTERVAL=86400 \
		SOCKMETER_TCP_INFO="$1" "$bin" churn "$CONNS" | val conn_ns
}
: >"$tmp/on"
: >"$tmp/off"
: >"$tmp/diff"
for r in $(seq 0 "$ROUNDS"); do
	off=$(run off)
	on=$(run on)
	rm -f "$tmp"/log.*
	[ "$r" = 0 ] && continue
	echo "$off" >>"$tmp/off"
	echo "$on" >>"$tmp/on"
	echo "$on $off" | awk '{ print $1 - $2 }' >>"$tmp/diff"
done
off_ns=$(median <"$tmp/off")
on_ns=$(median <"$tmp/on")
diff_ns=$(median <"$tmp/diff")
ratio=$(awk -v a="$on_ns" -v b="$off_ns" 'BEGIN { printf "%.3f", a / b }')
lo=$(sort -n "$tmp/diff" | head -n 1)
hi=$(sort -n "$tmp/diff" | tail -n 1)

table=$(cat <<MD

## tcp_info and names (issue 11)

Written by \`make bench\` (tests/bench/tcpinfo.sh), $(date -u '+%Y-%m-%d %H:%M UTC'); medians of $ROUNDS rounds after one warm-up.
The data calls do not change (their instruction counts are above, and \`make test-instr\` holds them); these are the costs off the data path.

| what | median | notes |
|---|---|---|
| one close of a TCP fd: tcpinfo_read (getsockopt TCP_INFO + SIOCINQ + SIOCOUTQ) | ${read_ns} ns | the whole of what tcp_info adds to a close |
| each TCP fd a record lists: enrich_read_live (the read + the generation check) | ${live_ns} ns | per interval: × the fds listed (top = 20: $(awk -v a="$live_ns" 'BEGIN { printf "%.1f", a * 20 / 1000 }') µs per record) |
| a name lookup: names_add into a full table (256 names) | ${add_ns} ns | on top of the lookup itself (usually 0.1–100 ms) |
| a peer named in a record: names_find over a full table | ${find_ns} ns | ticker only |
| a loopback connection, connect + accept + 1 byte each way + 2 closes, tcp_info off | ${off_ns} ns | under the preload, $CONNS connections per run |
| the same, tcp_info on | ${on_ns} ns | on ÷ off: ${ratio}; added per connection: ${diff_ns} ns (per-round ${lo} … ${hi}) |
MD
)
printf '%s\n' "$table"
# Our section of BENCHMARKS.md sits between markers (as bench-tools'), so
# the main suite's rewrite keeps it and a new run replaces it.
if [ -n "$OUT" ] && [ -f "$OUT" ]; then
	printf '<!-- bench-tcpinfo -->%s\n<!-- /bench-tcpinfo -->\n' "$table" |
		python3 -c '
import re, sys
path, new = sys.argv[1], sys.stdin.read()
old = open(path).read()
pat = re.compile(r"\n*^<!-- bench-tcpinfo -->\n.*?^<!-- /bench-tcpinfo -->\n?",
                 re.S | re.M)
old = pat.sub("", old).rstrip("\n") + "\n\n"
open(path, "w").write(old + new)' "$OUT"
fi
exit 0
