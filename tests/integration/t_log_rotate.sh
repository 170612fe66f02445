# Built-in rotation ([log] max_size, keep; issue 13): two processes share
# one log path and write about 2000 close records a second each, rotating
# at 64 KiB.  Every file of the set PATH, PATH.1 ... is at most 64 KiB,
# holds whole records only (no torn or interleaved line), and together
# they hold every close record and the exit record of both processes.
# With keep = 2, only PATH, PATH.1 and PATH.2 remain.
. "$(dirname "$0")/lib.sh"

need_prog fdrules
run_pair() { # LOG KEEP FORMAT
	local i
	PIDS=()
	for i in 1 2; do
		SOCKMETER_LOG=$1 SOCKMETER_FORMAT=$3 SOCKMETER_INTERVAL=0.1 \
			SOCKMETER_LOG_MAX_SIZE=64K SOCKMETER_LOG_KEEP=$2 \
			bg_start env LD_PRELOAD="$LIB" "$PROGS/fdrules" closerange 1.5 1000 \
			>"$T/p$i.out" 2>"$T/p$i.err"
		PIDS+=("$BG_PID")
	done
	for i in "${PIDS[@]}"; do
		bg_wait "$i" 30 || fail "fdrules failed"
	done
	for i in 1 2; do
		expect_eq "p$i: warnings" "$(sm_lines "$T/p$i.err")" 0
	done
}

log=$T/shared.log
run_pair "$log" 1000 json
n=0
while [ -e "$log.$((n + 1))" ]; do n=$((n + 1)); done
[ "$n" -ge 4 ] || fail "only $n rotated files"
for f in "$log" "$log".*; do
	size=$(stat -c %s "$f")
	[ "$size" -le 65536 ] || fail "$f is $size bytes, over 64K"
	[ "$size" -gt 0 ] || fail "$f is empty"
done
for i in 1 2; do
	pairs=$(field pairs "$T/p$i.out")
	pid=$(q "$log*" "sorted(set(r['pid'] for r in R))[$((i - 1))]")
	# Which pid printed which count is not known: compare the sets.
	echo "$((2 * pairs))" >>"$T/want"
	q "$log*" "len([r for r in R if r['type'] == 'close' and r['pid'] == $pid])" >>"$T/got"
	expect_eq "pid $pid: exit records" \
		"$(q "$log*" "len([r for r in R if r['type'] == 'exit' and r['pid'] == $pid])")" 1
done
expect_eq "close records per process" "$(sort "$T/got" | tr '\n' ' ')" "$(sort "$T/want" | tr '\n' ' ')"

log=$T/kept.log
run_pair "$log" 2 text
[ -s "$log" ] && [ -s "$log.1" ] && [ -s "$log.2" ] || fail "keep=2: missing files: $(ls "$T")"
[ ! -e "$log.3" ] || fail "keep=2: $log.3 was kept"
for f in "$log" "$log".*; do
	[ "$(stat -c %s "$f")" -le 65536 ] || fail "$f is over 64K"
	[ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || fail "$f ends mid-line"
	bad=$(grep -vc '^[0-9-]*T[0-9:.]*Z sockmeter \|^  ' "$f")
	expect_eq "$f: lines that are not records" "$bad" 0
done
exit 0
