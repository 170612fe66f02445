#!/usr/bin/env bash
# run.sh - other projects' own test suites, with and without the preload:
# the results must be identical.
#
#   tests/transparency/run.sh BUILD_DIR [SUITE...]    (make test-transparency)
#
# Suites (all by default), from Debian's packages, run with Debian's
# /usr/bin/python3:
#   cpython  CPython's regression tests of its network modules
#            (libpython3.X-testsuite): test_socket, test_asyncio, test_ssl,
#            test_httplib, test_selectors, test_ftplib, test_poplib,
#            test_imaplib, test_smtplib, test_telnetlib, test_xmlrpc,
#            test_urllib2_localnet, test_httpservers, test_wsgiref,
#            test_asyncore; 4 worker processes (-j4); the AF_VSOCK tests are
#            left out (they block forever where the kernel has vsock but no
#            peer, with or without the preload)
#   tornado  Tornado's test suite (python3-tornado): HTTP client and
#            server, IOStream, TCP client/server, websockets...; its
#            runner fails on any log output or stderr byte, so a library
#            message would fail it too
# Each suite runs once without and once with LD_PRELOAD (JSON logs with
# interval records every second, one per process, in a temp dir).  Every
# test's outcome (passed, skipped, failed...) and the suite's exit status
# must be the same; a test whose outcome differs is re-run twice each way,
# alone, and only a difference that persists fails (a noisy 2-core machine
# makes timing tests flaky either way).  The logs must show the preload
# really metered the suites (processes, bytes).  Prints one line of figures
# per suite - tests, outcomes, wall time without/with, processes and
# bytes metered - and "transparency: N suites identical" at the end.
# A suite whose package is missing fails (set SM_ALLOW_MISSING=1 to skip).
set -u

build=$(cd "${1:?usage: run.sh BUILD_DIR [SUITE...]}" && pwd) || exit 2
shift
here=$(cd "$(dirname "$0")" && pwd)
lib=$build/libsockmeter.so
[ -f "$lib" ] || { echo "run.sh: no $lib (run make)" >&2; exit 2; }
PY=/usr/bin/python3
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(cpython tornado)

unset LD_PRELOAD SOCKMETER SOCKMETER_LOG SOCKMETER_FORMAT SOCKMETER_INTERVAL \
	SOCKMETER_CONFIG SOCKMETER_TOP http_proxy https_proxy HTTP_PROXY \
	HTTPS_PROXY ALL_PROXY all_proxy no_proxy NO_PROXY
export LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1

T=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-transparency.XXXXXX") || exit 2
failed=0
identical=0
trap 'rm -rf "$T"' EXIT

CPYTHON_TESTS="test_socket test_asyncio test_ssl test_httplib test_selectors
test_ftplib test_poplib test_imaplib test_smtplib test_telnetlib test_xmlrpc
test_urllib2_localnet test_httpservers test_wsgiref test_asyncore"

# suite_cmd SUITE OUT [TEST_ID...] - set CMD to the command line of one
# run, writing the per-test results to OUT; with TEST_IDs only those tests
suite_cmd() {
	local suite=$1 out=$2 id
	shift 2
	case $suite in
	cpython)
		if [ $# -gt 0 ]; then
			CMD=("$PY" -m test --timeout 300 --junit-xml "$out")
			for id in "$@"; do
				CMD+=(-m "$id")
			done
			# the module of each id: test.test_x.Class.method -> test_x
			for id in $(printf '%s\n' "$@" | cut -d. -f2 | sort -u); do
				CMD+=("$id")
			done
		else
			# shellcheck disable=SC2206
			CMD=("$PY" -m test -j4 --timeout 300 -i '*VSOCK*' -i '*Vsock*'
				--junit-xml "$out" $CPYTHON_TESTS)
		fi
		;;
	tornado)
		CMD=("$PY" "$here/tornado_runner.py" "$out" "$@")
		;;
	esac
}

# present SUITE - whether the suite's package is installed
present() {
	case $1 in
	cpython) "$PY" -c 'import test.support, test.test_socket' 2>/dev/null ;;
	tornado) "$PY" -c 'import tornado.test.runtests' 2>/dev/null ;;
	*) return 1 ;;
	esac
}

package() {
	case $1 in
	cpython) echo "libpython$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-testsuite" ;;
	tornado) echo python3-tornado ;;
	esac
}

# run_once SUITE MODE OUT [IDS...] - MODE plain or with; sets ST and SECS
run_once() {
	local suite=$1 mode=$2 out=$3 t0 t1
	shift 3
	local -a pre=()
	suite_cmd "$suite" "$out" "$@"
	if [ "$mode" = with ]; then
		mkdir -p "$T/$suite.logs"
		pre=(env LD_PRELOAD="$lib" SOCKMETER_LOG="$T/$suite.logs/%n.%p.log"
			SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=1)
	fi
	t0=$(date +%s.%N)
	(cd "$T/work" && timeout 900 "${pre[@]}" "${CMD[@]}") \
		>"$out.stdout" 2>"$out.stderr"
	ST=$?
	t1=$(date +%s.%N)
	SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

mkdir -p "$T/work"
for suite in "${suites[@]}"; do
	if ! present "$suite"; then
		if [ -n "${SM_ALLOW_MISSING:-}" ]; then
			echo "SKIP $suite: $(package "$suite") is not installed"
			continue
		fi
		echo "FAIL $suite: $(package "$suite") is not installed (scripts/install-deps)"
		failed=$((failed + 1))
		continue
	fi
	ext=json
	[ "$suite" = cpython ] && ext=xml
	run_once "$suite" plain "$T/$suite.plain.$ext"
	st_plain=$ST secs_plain=$SECS
	run_once "$suite" with "$T/$suite.with.$ext"
	st_with=$ST secs_with=$SECS
	for f in "$T/$suite.plain.$ext" "$T/$suite.with.$ext"; do
		if [ ! -s "$f" ]; then
			echo "FAIL $suite: no results in $f: $(tail -n 3 "$f.stderr" "$f.stdout")"
			failed=$((failed + 1))
			continue 2
		fi
	done
	"$PY" "$here/results.py" compare "$T/$suite.plain.$ext" "$T/$suite.with.$ext" \
		>"$T/$suite.diff"
	# Re-run what differs, alone, twice each way: a persistent
	# difference fails, a flaky test does not.
	persistent=()
	flaky=()
	while read -r id _; do
		[ -n "$id" ] || continue
		same=1
		for i in 1 2; do
			run_once "$suite" plain "$T/re.plain.$ext" "$id"
			run_once "$suite" with "$T/re.with.$ext" "$id"
			if ! "$PY" "$here/results.py" compare "$T/re.plain.$ext" \
				"$T/re.with.$ext" >/dev/null 2>&1; then
				same=0
			fi
		done
		if [ "$same" = 1 ]; then
			flaky+=("$id")
		else
			persistent+=("$(grep -F "$id " "$T/$suite.diff" | head -n 1)")
		fi
	done <"$T/$suite.diff"
	summary=$("$PY" "$here/results.py" summary "$T/$suite.with.$ext")
	procs=$(find "$T/$suite.logs" -type f 2>/dev/null | wc -l)
	bytes=$("$PY" - "$T/$suite.logs" <<'PYEOF'
import glob, json, sys
total = 0
for name in glob.glob(sys.argv[1] + "/*.log"):
    last = None
    for line in open(name, encoding="utf-8", errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and "totals" in r:   # close records: none
            last = r
    if last:
        t = last["totals"]
        total += t.get("bytes_in", 0) + t.get("bytes_out", 0)
print(total)
PYEOF
)
	echo "$suite: $summary; exit status $st_plain without, $st_with with;" \
		"${secs_plain} s without, ${secs_with} s with the preload;" \
		"$procs processes metered, $bytes bytes"
	[ ${#flaky[@]} -gt 0 ] &&
		echo "  (flaky, same outcome both ways on re-run: ${flaky[*]})"
	if [ ${#persistent[@]} -gt 0 ]; then
		echo "FAIL $suite: outcomes differ with the preload:"
		printf '    %s\n' "${persistent[@]}"
		failed=$((failed + 1))
	elif [ "$st_plain" != "$st_with" ] && [ ${#flaky[@]} = 0 ]; then
		echo "FAIL $suite: exit status $st_plain without, $st_with with the preload"
		tail -n 5 "$T/$suite.with.$ext.stderr" | sed 's/^/    | /'
		failed=$((failed + 1))
	elif [ "$procs" = 0 ] || [ "$bytes" = 0 ]; then
		echo "FAIL $suite: the preload metered nothing ($procs logs, $bytes bytes)"
		failed=$((failed + 1))
	else
		identical=$((identical + 1))
	fi
	if grep -q '^sockmeter:' "$T/$suite.with.$ext.stderr"; then
		echo "FAIL $suite: the library wrote to stderr:"
		grep -m 3 '^sockmeter:' "$T/$suite.with.$ext.stderr" | sed 's/^/    | /'
		failed=$((failed + 1))
	fi
done
echo "transparency: $identical suites identical, $failed failed"
[ "$failed" = 0 ]
