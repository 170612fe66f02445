# Environment values holding control bytes (newline, carriage return,
# ESC) in every variable: each bad value gives exactly one line on stderr
# (two values are valid relative log paths, and give none)
# - the line starting "sockmeter:" and nothing else, no byte below 0x20
# but the final newline (a newline would forge a second line, an ESC could
# drive the user's terminal) - and the program is unaffected.
#
# Regression (found by tests/fuzz/fuzz_config.c, inputs kept in
# tests/fuzz/regressions/config/): the unknown-escape message once printed
# the byte after '%' raw.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
plain "$PROGS/pairxfer" 1000 3 >"$T/plain.out" 2>&1
# Logs go where the config file says (a bad SOCKMETER_LOG is ignored); an
# odd but valid relative SOCKMETER_LOG lands in $T.
mkdir -p "$T/logs" "$T/cwd"
printf '[log]\npath = %s/logs/%%p.log\n' "$T" >"$T/c.ini"
cd "$T/cwd" || fail "cd"
failures=()
n=0
for var in SOCKMETER SOCKMETER_LOG SOCKMETER_FORMAT SOCKMETER_INTERVAL SOCKMETER_TOP; do
	for val in $'/tmp/x%\ny.log' $'a\rb' $'/tmp/%\e[31mred' $'1\n2' $'%\t'; do
		n=$((n + 1))
		timeout 20 env SOCKMETER_CONFIG="$T/c.ini" "$var=$val" LD_PRELOAD="$LIB" \
			"$PROGS/pairxfer" 1000 3 >"$T/out" 2>"$T/err"
		st=$?
		what="$var=$(printf '%q' "$val")"
		# Metered all the same: one more log, where the config file or
		# the valid relative SOCKMETER_LOG says.
		logs=$(find "$T/logs" "$T/cwd" -type f -printf x | wc -c)
		[ "$logs" = "$n" ] || { failures+=("$what: $logs logs after $n runs"); continue; }
		[ "$st" = 3 ] || { failures+=("$what: status $st"); continue; }
		cmp -s "$T/out" "$T/plain.out" || { failures+=("$what: stdout differs"); continue; }
		# A valid SOCKMETER_LOG value (a relative path: a\rb, 1\n2) is
		# no problem: no line at all.  Every other value: one line.
		want=1
		[ "$var" = SOCKMETER_LOG ] && case $val in $'a\rb' | $'1\n2') want=0 ;; esac
		lines=$(wc -l <"$T/err")
		if [ "$lines" != "$want" ] || [ "$(sm_lines "$T/err")" != "$lines" ]; then
			failures+=("$what: $lines lines on stderr: $(tr '\n\r\033' '|^E' <"$T/err" | head -c 200)")
			continue
		fi
		if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$T/err"; then
			failures+=("$what: a control byte on stderr")
		fi
	done
done
# SOCKMETER_CONFIG naming a file that cannot be read: the message names
# the path, control bytes shown as '?' (it printed them raw), and a huge
# path by its start and end, so that the reason still ends the line (it
# was cut off at 1,023 bytes).
mkdir -p "$T/logs2"
huge=/tmp/$(head -c 100000 /dev/zero | tr '\0' a)
for val in $'/tmp/\e[31mred\nx.ini' $'\x01' "$huge"; do
	n=$((n + 1))
	timeout 20 env SOCKMETER_CONFIG="$val" SOCKMETER_LOG="$T/logs2/%p.log" \
		LD_PRELOAD="$LIB" "$PROGS/pairxfer" 1000 3 >"$T/out" 2>"$T/err"
	st=$?
	what="SOCKMETER_CONFIG=$(printf '%q' "$val" | head -c 60)"
	[ "$st" = 3 ] || { failures+=("$what: status $st"); continue; }
	cmp -s "$T/out" "$T/plain.out" || { failures+=("$what: stdout differs"); continue; }
	if [ "$(wc -l <"$T/err")" != 1 ] || [ "$(sm_lines "$T/err")" != 1 ]; then
		failures+=("$what: $(wc -l <"$T/err") lines on stderr: $(tr '\n\r\033' '|^E' <"$T/err" | head -c 200)")
		continue
	fi
	if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$T/err"; then
		failures+=("$what: a control byte on stderr")
	fi
	grep -q 'cannot read config: .*; using defaults$' "$T/err" ||
		failures+=("$what: no reason at the end: $(head -c 100 "$T/err")...$(tail -c 100 "$T/err")")
done
[ "${#failures[@]}" = 0 ] ||
	fail "${#failures[@]} of $n values: $(printf '%s; ' "${failures[@]}")"
exit 0
