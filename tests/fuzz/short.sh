#!/usr/bin/env bash
# short.sh - the CI fuzzing run (make fuzz-short).
#
#   tests/fuzz/short.sh FUZZ_DIR SECONDS_PER_HARNESS
#
# For each harness (FUZZ_DIR/fuzz_config, FUZZ_DIR/fuzz_summary): first
# every input kept under tests/fuzz/regressions/NAME/ must pass (each run
# alone, so every failing one is named), then SECONDS of fuzzing starting
# from the committed corpus tests/fuzz/corpus/NAME/ (only read: new inputs
# go to FUZZ_DIR/work-NAME) with the harness's dictionary.  A crash leaves
# its input as FUZZ_DIR/crash-NAME-*.  Prints the executions per harness;
# exits 1 if any regression input or the fuzzing failed.
set -u
dir=${1:?usage: short.sh FUZZ_DIR SECONDS}
secs=${2:?usage: short.sh FUZZ_DIR SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
failed=0
for h in config summary; do
	bin=$dir/fuzz_$h
	[ -x "$bin" ] || { echo "FAIL fuzz_$h: no $bin"; failed=1; continue; }
	for input in "$here/regressions/$h"/*; do
		[ -f "$input" ] || continue
		if ! "$bin" "$input" >"$dir/$h.regress.log" 2>&1; then
			why=$(grep -a -m 1 -e 'contract broken' -e 'ERROR:' -e 'runtime error' \
				"$dir/$h.regress.log" | tr -c '[:print:]\n' '?')
			echo "FAIL fuzz_$h: regression input ${input#"$here/"}: $why"
			failed=1
		fi
	done
	rm -rf "$dir/work-$h"
	mkdir -p "$dir/work-$h"
	dict=()
	[ -f "$here/$h.dict" ] && dict=(-dict="$here/$h.dict")
	"$bin" "${dict[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$dir/crash-$h-" \
		"$dir/work-$h" "$here/corpus/$h" >"$dir/$h.short.log" 2>&1
	st=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$h.short.log")
	if [ "$st" != 0 ]; then
		echo "FAIL fuzz_$h: a finding after ${runs:-?} runs:"
		grep -a -e 'contract broken' -e 'ERROR:' -e 'SUMMARY' "$dir/$h.short.log" |
			head -n 5 | sed 's/^/    | /'
		ls "$dir"/crash-"$h"-* 2>/dev/null | sed 's/^/    input: /'
		failed=1
	else
		echo "PASS fuzz_$h: $runs runs in $secs s, no finding"
	fi
done
exit $failed
