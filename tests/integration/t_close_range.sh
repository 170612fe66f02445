# closefrom() and close_range(lo, ~0U, 0) close many tracked fds at once:
# each socketpair end gets exactly one close record with its bytes
# (tests/progs/closer); with CLOSE_RANGE_CLOEXEC the fds stay open, get no
# close record, and the exit record lists them with their bytes.
. "$(dirname "$0")/lib.sh"

need_prog closer
for mode in closefrom close_range cloexec; do
	SOCKMETER_LOG=$T/$mode.log SOCKMETER_FORMAT=json \
		sm "$PROGS/closer" "$mode" >"$T/$mode.out" 2>"$T/$mode.err" ||
		fail "closer $mode failed: $(cat "$T/$mode.err")"
	log=$T/$mode.log
	want="" total=0
	while read -r _ _ fds bytes; do
		fds=${fds#fds=} bytes=${bytes#bytes=}
		want="$want${fds%,*}:0:$bytes ${fds#*,}:$bytes:0 "
		total=$((total + bytes))
	done < <(grep '^pair ' "$T/$mode.out")
	want=$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | sort | tr '\n' ' ')
	fds=$(grep '^pair ' "$T/$mode.out" | sed 's/.*fds=\([0-9]*\),\([0-9]*\).*/\1,\2/' | tr '\n' ,)
	if [ "$mode" = cloexec ]; then
		src="E['fds']"
		expect_eq "$mode: close records" "$(q "$log" "len(CL)")" 0
	else
		src="CL"
		expect_eq "$mode: exit record fds" "$(q "$log" "len(E['fds'])")" 0
	fi
	got=$(q "$log" "' '.join(sorted('%d:%d:%d' % (f['fd'], f['bytes_in'], f['bytes_out']) for f in $src if f['fd'] in ($fds))) + ' '")
	expect_eq "$mode: fd:bytes_in:bytes_out" "$got" "$want"
	expect_eq "$mode: exit bytes_out" "$(q "$log" "tot('bytes_out')")" "$total"
	expect_eq "$mode: exit bytes_in" "$(q "$log" "tot('bytes_in')")" "$total"
done
exit 0
