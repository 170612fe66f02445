# runner.sh - what both test runners share (tests/integration/run.sh,
# tests/tools/run.sh): the command line, the test list and the loop;
# sourced, not run.  The tests themselves share tests/lib.sh.
#
# run_suite DIR [BUILD_DIR] [TEST...] - run the suite in DIR: every
# DIR/t_*.sh, or only the TEST names given (with or without the t_ prefix
# and .sh suffix), against BUILD_DIR (default: build/ beside the Makefile),
# which must hold libsockmeter.so.  Exports SM_BUILD; returns as run_tests.
#
# run_tests OUT TEST... - run each test script as `bash TEST` (bounded by
# SM_TEST_TIMEOUT seconds, default 120: a hang detector, with room for the
# slowest tests on two loaded cores (t_fd_rules and t_close_range_race
# took 57-60 s beside a busy loop); the environment is the caller's, so
# export what the tests read first), with its output in OUT.  Prints
# "PASS name" or "FAIL name: reason" per test - the reason is the test's
# last "reason: ..." line - and "N passed, M failed" at the end; returns 0
# only when all passed.  A test that exits 77 is skipped ("SKIP name: why",
# why being its last "skip: ..." line; counted apart, not a failure).
# A test that ends in 0 after an error of its own shell ("TEST: line N:
# ...", or in a helper it sourced) fails: the error may have left a check
# out.
# Each PASS and FAIL line ends with the test's time in seconds, " (12s)":
# which tests make a run long is then in every CI log.
# SM_VERBOSE=1 shows a failed test's whole output.
run_tests() {
	local out=$1 t name st reason kept err took passed=0 failed=0 skipped=0
	shift
	for t in "$@"; do
		name=$(basename "$t" .sh)
		name=${name#t_}
		if [ ! -f "$t" ]; then
			echo "FAIL $name: no such test $t"
			failed=$((failed + 1))
			continue
		fi
		SECONDS=0
		timeout -k 5 "${SM_TEST_TIMEOUT:-120}" bash "$t" </dev/null >"$out" 2>&1
		st=$?
		took=" (${SECONDS}s)"
		# An error of the test script's own shell (an unbound variable
		# in a here-document, a command not found, a bad test
		# expression) can leave a check out and still end in 0: that
		# is a failure.
		# (Job notices such as "line N: PID Killed ..." are no error.)
		err="^[^ ]*\.sh: line [0-9]*: .*\(unbound variable\|command not found\|syntax error\|expression expected\|operator expected\|too many arguments\|bad substitution\|ambiguous redirect\)"
		if [ "$st" = 0 ] && grep -q "$err" "$out"; then
			echo "FAIL $name: the test script erred: $(grep -m 1 "$err" "$out")$took"
			failed=$((failed + 1))
			continue
		fi
		if [ "$st" = 0 ]; then
			echo "PASS $name$took"
			passed=$((passed + 1))
			continue
		fi
		if [ "$st" = 77 ]; then
			echo "SKIP $name: $(sed -n 's/^skip: //p' "$out" | tail -n 1)"
			skipped=$((skipped + 1))
			continue
		fi
		reason=$(sed -n 's/^reason: //p' "$out" | tail -n 1)
		if [ -z "$reason" ]; then
			if [ "$st" = 124 ] || [ "$st" = 137 ]; then
				reason="timed out after ${SM_TEST_TIMEOUT:-120}s"
			else
				reason="exit status $st: $(tail -n 1 "$out")"
			fi
		fi
		kept=$(sed -n 's/^files kept in //p' "$out" | tail -n 1)
		echo "FAIL $name: $reason${kept:+ (files in $kept)}$took"
		if [ -n "${SM_VERBOSE:-}" ]; then
			sed 's/^/    | /' "$out"
		fi
		failed=$((failed + 1))
	done
	echo "$passed passed, $failed failed$([ "$skipped" = 0 ] || echo ", $skipped skipped")"
	[ "$failed" = 0 ]
}

# private_state_begin - keep the state files (docs/state.md) of what runs
# next in a directory of its own, which private_state_end removes (also
# on SIGINT and SIGTERM).  Tests that make a log unwritable on purpose
# leave their state files parked (NAME.state.unwritten, kept for a
# `sockmeter recover` by hand), and so do processes killed by a test that
# then removed their log's directory: run after run they piled up in the
# user's /dev/shm (990 files, 390 MB of memory, after a day of runs on
# one machine).  Mode 1777, as /dev/shm's own: a daemon's workers that
# drop root make their own %u directory in it.  Exported as
# SOCKMETER_STATE (whatever the caller had: the tests ignore the caller's
# SOCKMETER* variables) and as SM_PRIVATE_STATE, from which tests/lib.sh
# sets SOCKMETER_STATE again after clearing them.
private_state_begin() {
	SM_PRIVATE_STATE=
	[ -d /dev/shm ] || return 0
	SM_PRIVATE_STATE=$(mktemp -d /dev/shm/sockmeter-test.XXXXXX) || {
		SM_PRIVATE_STATE=
		return 0
	}
	chmod 1777 "$SM_PRIVATE_STATE"
	export SM_PRIVATE_STATE SOCKMETER_STATE="$SM_PRIVATE_STATE/%u"
	trap 'private_state_end; exit 130' INT
	trap 'private_state_end; exit 143' TERM
}

private_state_end() {
	if [ -n "${SM_PRIVATE_STATE:-}" ]; then
		rm -rf "$SM_PRIVATE_STATE"
		unset SOCKMETER_STATE
	fi
	unset SM_PRIVATE_STATE
	trap - INT TERM
}

run_suite() {
	local dir=$1 top build name t out st
	shift
	top=$(cd "$dir/../.." && pwd)
	build=$top/build
	if [ $# -gt 0 ] && [ -d "$1" ]; then
		build=$(cd "$1" && pwd)
		shift
	fi
	if [ ! -f "$build/libsockmeter.so" ]; then
		echo "$0: $build/libsockmeter.so is missing (run make)" >&2
		return 2
	fi
	local tests=()
	if [ $# -gt 0 ]; then
		for name in "$@"; do
			name=${name%.sh}
			name=${name#t_}
			tests+=("$dir/t_$name.sh")
		done
	else
		for t in "$dir"/t_*.sh; do
			tests+=("$t")
		done
	fi
	out=$(mktemp "${TMPDIR:-/tmp}/sockmeter-run.XXXXXX") || return 2
	export SM_BUILD=$build
	private_state_begin
	run_tests "$out" "${tests[@]}"
	st=$?
	private_state_end
	rm -f "$out"
	return "$st"
}
