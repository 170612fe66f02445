#!/usr/bin/env bash
# tests/bench/run.sh - the side-by-side benchmark suite (`make bench`).
#
#   tests/bench/run.sh [BUILD_DIR]
#
# Runs every workload of tests/bench/loadgen under every configuration in
# the same run, alternating (A B C ... A B C ...): one warm-up round, then
# BENCH_ROUNDS counted rounds.  Then the memory runs (peak RSS with many
# tracked fds), then the instruction counts (tests/bench/instr.sh, when
# valgrind is installed).  Prints one table of medians and ratios against
# "no preload" and writes it, with the machine and the command, into
# BENCHMARKS.md (BENCH_OUT) via tests/bench/report.py.
#
# Knobs (environment; the defaults keep the suite under 5 minutes on 2 cores):
#   BENCH_ROUNDS=7         counted rounds (plus one warm-up)
#   BENCH_MEM_ROUNDS=3     rounds of the memory runs
#   BENCH_BYTES=2400000000 workload 1 payload (the original report's 2.4 GB)
#   BENCH_PERCALL=100000   workload 2/4 iterations (1 send + 1 recv each)
#   BENCH_PERCALL_TCP=30000
#   BENCH_MANYFDS=10000    workload 3: sockets of the large run (10 for small)
#   BENCH_MANYFDS_N=100000 workload 3 iterations
#   BENCH_THREADS=50000    workload 5 iterations per thread
#   BENCH_TOOL_DIV=10      strace does 1/10 of the work (1/4 of the bytes)
#   BENCH_PIN=1            single-threaded workloads run pinned to the last
#                          CPU (taskset), which removes migration noise
#   BENCH_INSTR=1          0 skips the callgrind counts
#   BENCH_OUT=BENCHMARKS.md ("" writes no file)
#   BENCH_CHURN=1          0 skips the churn part (tests/bench/churn.sh:
#                          short connections, fork under churn, nginx + ab;
#                          its own knobs CHURN_* are listed there)
set -euo pipefail
shopt -s inherit_errexit

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
lib=$build/libsockmeter.so
loadgen=$build/bench/loadgen

ROUNDS=${BENCH_ROUNDS:-7}
MEM_ROUNDS=${BENCH_MEM_ROUNDS:-3}
BYTES=${BENCH_BYTES:-2400000000}
PERCALL=${BENCH_PERCALL:-100000}
PERCALL_TCP=${BENCH_PERCALL_TCP:-30000}
MANYFDS=${BENCH_MANYFDS:-10000}
MANYFDS_N=${BENCH_MANYFDS_N:-100000}
THREADS=${BENCH_THREADS:-50000}
TOOL_DIV=${BENCH_TOOL_DIV:-10}
INSTR=${BENCH_INSTR:-1}
PIN=${BENCH_PIN:-1}
OUT=${BENCH_OUT-$top/BENCHMARKS.md}

for f in "$lib" "$loadgen"; do
	[ -e "$f" ] || { echo "run.sh: $f missing (make bench builds it)" >&2; exit 2; }
done

tmp=$(mktemp -d /tmp/sockmeter-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
raw=$tmp/raw.tsv
: >"$raw"
t_start=$EPOCHREALTIME

# --- configurations ----------------------------------------------------------

CATS=(bytes calls errors sizes windows peers latency)

# ini NAME LINES... : a config file; the log goes to $tmp, records at exit
# only (interval far above any run).
ini() {
	local name=$1
	shift
	{
		printf '[log]\npath = %s/log/%%n.%%p.log\ninterval = 86400\n' "$tmp"
		printf '%s\n' "$@"
	} >"$tmp/$name.ini"
}
mkdir -p "$tmp/log"
ini off '[sockmeter]' 'enabled = false'
ini defaults
all=('[stats]')
for c in "${CATS[@]}"; do all+=("$c = true"); done
ini all "${all[@]}"
for only in "${CATS[@]}"; do
	lines=('[stats]')
	for c in "${CATS[@]}"; do
		if [ "$c" = "$only" ]; then lines+=("$c = true"); else lines+=("$c = false"); fi
	done
	ini "only-$only" "${lines[@]}"
done
# History from 60 s to a day at 1 s buckets: the spans set the tiers.
ini history-60 '[window]' 'bucket = 1' 'buckets = 60' 'spans = 1, 10, 60'
ini history-3600 '[window]' 'bucket = 1' 'buckets = 3600' 'spans = 1, 60, 3600'
ini history-86400 '[window]' 'bucket = 1' 'buckets = 86400' \
	'spans = 1, 60, 3600, 86400'
# Memory: a day at 1 s (issue 15), and the largest window any accepted
# configuration plans (four spans on four 64-bit tiers, at the budget of
# WINDOW_MAX_BYTES = 3072 bytes; see core/window.h).
ini day '[window]' 'bucket = 1' 'buckets = 86400' 'spans = 1, 60, 3600, 86400'
ini largest '[window]' 'bucket = 1' 'buckets = 86400' \
	'spans = 14352, 18560, 47994, 84284'

pin=()
if [ "$PIN" = 1 ] && command -v taskset >/dev/null; then
	pin=(taskset -c "$(($(nproc) - 1))")
fi

have_strace=0
have_trickle=0
command -v strace >/dev/null && have_strace=1
command -v trickle >/dev/null && have_trickle=1
TOOLS=()
[ $have_strace = 1 ] && TOOLS+=(strace)
[ $have_trickle = 1 ] && TOOLS+=(trickle)

# --- workloads ----------------------------------------------------------------
# id | loadgen arguments, with @N@ for the size | configurations
ONLY=()
for c in "${CATS[@]}"; do ONLY+=("only-$c"); done
MAIN=(none off defaults all)
WORKLOADS=(
	"throughput|throughput @$BYTES@|${MAIN[*]} ${TOOLS[*]}"
	"percall-unix|percall unix @$PERCALL@|${MAIN[*]} idle ${ONLY[*]} ${TOOLS[*]}"
	"percall-tcp|percall tcp @$PERCALL_TCP@|${MAIN[*]} idle ${TOOLS[*]}"
	"manyfds-10|manyfds 10 @$MANYFDS_N@|${MAIN[*]}"
	"manyfds-$MANYFDS|manyfds $MANYFDS @$MANYFDS_N@|${MAIN[*]}"
	"window|percall unix @$PERCALL@|none history-60 history-3600 history-86400"
	"threads-separate|threads separate @$THREADS@|${MAIN[*]}"
	"threads-shared|threads shared @$THREADS@|${MAIN[*]}"
)
# Memory: sockets created, data moved on each, then 1.5 s of sleep so the
# preload's ticker (1 s buckets) has sampled every fd and allocated its
# window before the peak RSS is read.
# 2,000 sockets with a day of 1 s history is issue 15's own figure.
MEMORY=(
	"memory-10|manyfds 10 @1000@ 1.5|none off defaults day largest"
	"memory-2000|manyfds 2000 @2000@ 1.5|none day"
	"memory-$MANYFDS|manyfds $MANYFDS @$MANYFDS@ 1.5|none off defaults day largest"
)

# run ROUND WORKLOAD CONFIG ARGS : one run, appended to $raw.
run() {
	local round=$1 wl=$2 cfg=$3 args=$4 div=1 n
	local -a pre=() envs=() argv
	case $cfg in
	none) ;;
	idle) envs=(LOADGEN_IDLE_THREAD=1) ;;
	strace)
		pre=(strace -c -f -o "$tmp/strace.out")
		div=$TOOL_DIV
		[ "$wl" = throughput ] && div=4
		;;
	trickle) pre=(trickle -s -u 100000000 -d 100000000) ;;
	*) envs=("LD_PRELOAD=$lib" "SOCKMETER_CONFIG=$tmp/$cfg.ini") ;;
	esac
	# @N@ is the size; a slow tool gets 1/div of it (rates stay comparable).
	n=${args#*@}
	n=${n%%@*}
	args=${args/@$n@/$((n / div))}
	read -ra argv <<<"$args"
	# Single-threaded loops run on one CPU; the tool (strace) stays free.
	case ${argv[0]} in
	percall | manyfds) argv=("${pin[@]}" "$loadgen" "${argv[@]}") ;;
	*) argv=("$loadgen" "${argv[@]}") ;;
	esac
	local t0 t1 line
	t0=$EPOCHREALTIME
	line=$(env -u LD_PRELOAD -u SOCKMETER -u SOCKMETER_CONFIG \
		-u SOCKMETER_LOG -u SOCKMETER_FORMAT -u SOCKMETER_INTERVAL \
		-u SOCKMETER_TOP "${envs[@]}" "${pre[@]}" "${argv[@]}" \
		2>"$tmp/stderr") || {
		echo "run.sh: failed: $cfg: $loadgen $args" >&2
		cat "$tmp/stderr" >&2
		exit 2
	}
	t1=$EPOCHREALTIME
	line=$(grep '^RESULT ' <<<"$line")
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$wl" "$cfg" "$div" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')" \
		"${line#RESULT }" >>"$raw"
}

# rounds COUNT FIRST SPEC... : alternate every configuration of every
# workload, round after round; round 0 is the warm-up.
rounds() {
	local count=$1 first=$2 r spec wl args cfgs cfg
	shift 2
	for ((r = first; r <= count; r++)); do
		printf 'round %s/%s%s ' "$r" "$count" "$([ "$r" = 0 ] && echo ' (warm-up)')" >&2
		for spec in "$@"; do
			IFS='|' read -r wl args cfgs <<<"$spec"
			for cfg in $cfgs; do
				run "$r" "$wl" "$cfg" "$args"
			done
			printf '.' >&2
		done
		printf ' %.0fs\n' "$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" >&2
	done
}

echo "sockmeter bench: $ROUNDS rounds + warm-up, alternating configurations" >&2
rounds "$ROUNDS" 0 "${WORKLOADS[@]}"
echo "memory: $MEM_ROUNDS rounds (each run holds 1.5 s for the ticker)" >&2
rounds "$MEM_ROUNDS" 1 "${MEMORY[@]}"

instr_md=
if [ "$INSTR" = 1 ] && command -v valgrind >/dev/null; then
	echo "instructions: tests/bench/instr.sh (callgrind)" >&2
	instr_md=$tmp/instr.md
	"$here/instr.sh" --md "$instr_md" "$build" >"$tmp/instr.txt" || true
	cat "$tmp/instr.txt" >&2
fi

t_end=$EPOCHREALTIME
# Keep the raw runs beside the binary, to re-run report.py on them.
cp "$raw" "$build/bench/last-run.tsv"
if [ -n "$instr_md" ]; then cp "$instr_md" "$build/bench/last-instr.md"; fi
cmd="make bench"
for v in ROUNDS MEM_ROUNDS BYTES PERCALL PERCALL_TCP MANYFDS MANYFDS_N \
	THREADS TOOL_DIV PIN INSTR; do
	if [ -n "$(eval "echo \${BENCH_$v:-}")" ]; then
		cmd="BENCH_$v=$(eval "echo \$BENCH_$v") $cmd"
	fi
done
python3 "$here/report.py" --raw "$raw" --out "$OUT" --instr "$instr_md" \
	--command "$cmd" --seconds "$(awk -v a="$t_start" -v b="$t_end" 'BEGIN { print b - a }')" \
	--rounds "$ROUNDS" --mem-rounds "$MEM_ROUNDS" --tool-div "$TOOL_DIV" \
	--manyfds "$MANYFDS" --tools "${TOOLS[*]}" --pin "${pin[*]}" \
	--sizes "bytes=$BYTES percall=$PERCALL percall_tcp=$PERCALL_TCP manyfds_n=$MANYFDS_N threads=$THREADS"

# Issue 9: short connections, fork under churn, the ticker's cost per close
# record, nginx + ab (tests/bench/churn.sh), added to the same page.
if [ "${BENCH_CHURN:-1}" = 1 ]; then
	"$here/churn.sh" "$build" >"$tmp/churn.md"
	cat "$tmp/churn.md"
	if [ -n "$OUT" ]; then cat "$tmp/churn.md" >>"$OUT"; fi
fi
