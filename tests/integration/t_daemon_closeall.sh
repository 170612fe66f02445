# A daemon-style program that closes every fd at start, 0, 1 and 2
# included - by a close() loop up to the limit, by close_range(0, ~0U, 0)
# and by closefrom(0) - and later opens sockets, which take fds 0 to 4
# (tests/progs/daemonish).  It finds no fd of the library left open, moves
# its bytes over a socketpair and a TCP connection, and no stray byte
# arrives on any of them while interval records are written every 0.1 s;
# its log is written, with exact numbers on fds 0 to 4.
. "$(dirname "$0")/lib.sh"

need_prog daemonish
for mode in loop close_range closefrom; do
	SOCKMETER_LOG=$T/$mode.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
		sm "$PROGS/daemonish" "$mode" "$T/$mode.res" >"$T/$mode.out" 2>"$T/$mode.err"
	st=$?
	expect_eq "$mode: exit status" "$st" 0
	expect_eq "$mode: result" "$(cat "$T/$mode.res")" \
		"open_after_close=0 pair=0,1 tcp=2,3,4 got=3333,4444,5555 stray=0"
	[ -f "$T/$mode.log" ] || fail "$mode: no log written"
	expect_eq "$mode: exit record [fd, kind, bytes_in, bytes_out]" \
		"$(q "$T/$mode.log" "sorted([f['fd'], f['kind'], f['bytes_in'], f['bytes_out']] for f in E['fds'])")" \
		'[[0, "unix", 0, 3333], [1, "unix", 3333, 0], [2, "tcp", 0, 0], [3, "tcp", 5555, 4444], [4, "tcp", 4444, 5555]]'
	check "$T/$mode.log" "len(IV) >= 1" "$mode: interval records"
done
exit 0
