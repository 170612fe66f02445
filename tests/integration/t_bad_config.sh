# A config file with problems: an unknown key (line 3) and a bad value
# (line 5).  stderr gets exactly one "sockmeter:" line per problem, naming
# FILE:LINE; the program's output and exit status are unchanged; the other
# keys of the file still apply (format = json, calls = false) and the bad
# one keeps its default (sizes on); bytes are exact.  Likewise bad values
# in the environment: one line each, ignored, metering goes on.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
cfg=$T/bad.ini
cat >"$cfg" <<'INI'
[log]
format = json
frobnicate = 1
[stats]
sizes = maybe
calls = false
INI
SOCKMETER_CONFIG=$cfg SOCKMETER_LOG=$T/bad.log \
	sm "$PROGS/pairxfer" 50000 4 >"$T/with.out" 2>"$T/with.err"
st=$?
plain "$PROGS/pairxfer" 50000 4 >"$T/without.out" 2>&1
expect_eq "exit status" "$st" 4
cmp -s "$T/with.out" "$T/without.out" || fail "stdout differs"
expect_eq "sockmeter: lines on stderr" "$(sm_lines "$T/with.err")" 2
expect_eq "other lines on stderr" "$(grep -vc '^sockmeter:' "$T/with.err")" 0
grep -q "^sockmeter: $cfg:3: .*frobnicate" "$T/with.err" ||
	fail "no message naming $cfg:3 and the unknown key: $(cat "$T/with.err")"
grep -q "^sockmeter: $cfg:5: .*sizes" "$T/with.err" ||
	fail "no message naming $cfg:5 and the bad value: $(cat "$T/with.err")"
log=$T/bad.log
check "$log" "'calls_in' not in keys() and 'calls_out' not in keys()" "calls = false"
check "$log" "'sizes_in' in keys()" "sizes keeps its default"
expect_eq "exit bytes_out" "$(q "$log" "tot('bytes_out')")" 50000
expect_eq "exit bytes_in" "$(q "$log" "tot('bytes_in')")" 50000

SOCKMETER=maybe SOCKMETER_FORMAT=xml SOCKMETER_INTERVAL=0.05 SOCKMETER_TOP=-1 \
	SOCKMETER_LOG=$T/env.log sm "$PROGS/pairxfer" 20000 5 >"$T/with.out" 2>"$T/with.err"
st=$?
expect_eq "bad environment: exit status" "$st" 5
expect_eq "bad environment: stdout" "$(cat "$T/with.out")" "$(plain "$PROGS/pairxfer" 20000 2>&1)"
expect_eq "bad environment: sockmeter: lines" "$(sm_lines "$T/with.err")" 4
expect_eq "bad environment: other lines" "$(grep -vc '^sockmeter:' "$T/with.err")" 0
for v in SOCKMETER SOCKMETER_FORMAT SOCKMETER_INTERVAL SOCKMETER_TOP; do
	grep -q "^sockmeter: .*$v\b" "$T/with.err" ||
		fail "bad environment: no message naming $v: $(cat "$T/with.err")"
done
# format stays text, metering stays on.
grep -q 'sockmeter exit' "$T/env.log" || fail "bad environment: no text exit record"
grep -Eq 'totals:.*bytes_out=20000\b' "$T/env.log" ||
	fail "bad environment: exit totals: $(grep -A1 'sockmeter exit' "$T/env.log")"

# A script's commands that meter nothing say nothing of a bad setting; the
# one that meters says it once (before: one line per command, five here).
# A program left alone (SOCKMETER=off, enabled = false) says nothing.
SOCKMETER_TOP=bad SOCKMETER_LOG=$T/script.%p.log timeout 30 env LD_PRELOAD="$LIB" \
	sh -c 'ls / >/dev/null; date >/dev/null; id >/dev/null; true; "$1" 1000 3' sh "$PROGS/pairxfer" \
	>/dev/null 2>"$T/script.err"
expect_eq "a script: its pairxfer's status" "$?" 3
expect_eq "a script: sockmeter: lines" "$(sm_lines "$T/script.err")" 1
grep -q "SOCKMETER_TOP" "$T/script.err" || fail "a script: no word of SOCKMETER_TOP: $(cat "$T/script.err")"
printf '[sockmeter]\nenabled = false\n[log]\ntop = bad\n' >"$T/off.ini"
for how in "SOCKMETER=off SOCKMETER_TOP=bad" "SOCKMETER_CONFIG=$T/off.ini SOCKMETER_TOP=bad"; do
	# shellcheck disable=SC2086 # two assignments, split on purpose
	timeout 30 env $how LD_PRELOAD="$LIB" "$PROGS/pairxfer" 1000 3 >/dev/null 2>"$T/off.err"
	expect_eq "left alone ($how): sockmeter: lines" "$(sm_lines "$T/off.err")" 0
done
exit 0
