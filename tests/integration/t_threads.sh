# 8 writer threads, 20,000 writes of mixed sizes each (tests/progs/threads):
#  - own:    each thread on its own socketpair, a reader thread per pair:
#            every writer fd's bytes_out/calls_out and every reader fd's
#            bytes_in equal what the threads counted, and the totals too;
#  - shared: all 8 threads write into ONE fd at once: its bytes_out and
#            calls_out are exact (no update lost between threads).
. "$(dirname "$0")/lib.sh"

need_prog threads

SOCKMETER_LOG=$T/own.log SOCKMETER_FORMAT=json \
	sm "$PROGS/threads" own 8 20000 >"$T/own.out" 2>"$T/own.err" ||
	fail "threads own failed: $(cat "$T/own.out" "$T/own.err")"
log=$T/own.log
read -r tout tcalls tin < <(sed -n \
	's/^total_out=\([0-9]*\) total_calls=\([0-9]*\) total_in=\([0-9]*\)/\1 \2 \3/p' \
	"$T/own.out")
expect_eq "own: exit bytes_out" "$(q "$log" "tot('bytes_out')")" "$tout"
expect_eq "own: exit bytes_in" "$(q "$log" "tot('bytes_in')")" "$tin"
expect_eq "own: exit calls_out" "$(q "$log" "tot('calls_out')")" "$tcalls"
# One query for all fds: "fd:bytes_out:calls_out" and "fd:bytes_in".
want_w=$(sed -n 's/^writer [0-9]* fd=\([0-9]*\) bytes=\([0-9]*\) calls=\([0-9]*\)/\1:\2:\3/p' \
	"$T/own.out" | sort | tr '\n' ' ')
want_r=$(sed -n 's/^reader [0-9]* fd=\([0-9]*\) bytes=\([0-9]*\)/\1:\2/p' \
	"$T/own.out" | sort | tr '\n' ' ')
fds_w=$(sed -n 's/^writer [0-9]* fd=\([0-9]*\) .*/\1/p' "$T/own.out" | tr '\n' ,)
fds_r=$(sed -n 's/^reader [0-9]* fd=\([0-9]*\) .*/\1/p' "$T/own.out" | tr '\n' ,)
got_w=$(q "$log" "' '.join(sorted('%d:%d:%d' % (f['fd'], f['bytes_out'], f['calls_out']) for f in CL if f['fd'] in ($fds_w))) + ' '")
got_r=$(q "$log" "' '.join(sorted('%d:%d' % (f['fd'], f['bytes_in']) for f in CL if f['fd'] in ($fds_r))) + ' '")
expect_eq "own: writer fds fd:bytes_out:calls_out" "$got_w" "$want_w"
expect_eq "own: reader fds fd:bytes_in" "$got_r" "$want_r"

SOCKMETER_LOG=$T/shared.log SOCKMETER_FORMAT=json \
	sm "$PROGS/threads" shared 8 20000 >"$T/shared.out" 2>"$T/shared.err" ||
	fail "threads shared failed: $(cat "$T/shared.out" "$T/shared.err")"
log=$T/shared.log
read -r tout tcalls tin < <(sed -n \
	's/^total_out=\([0-9]*\) total_calls=\([0-9]*\) total_in=\([0-9]*\)/\1 \2 \3/p' \
	"$T/shared.out")
wfd=$(sed -n 's/^writer 0 fd=\([0-9]*\) .*/\1/p' "$T/shared.out")
rfd=$(sed -n 's/^reader 0 fd=\([0-9]*\) .*/\1/p' "$T/shared.out")
expect_eq "shared: bytes_out of fd $wfd" \
	"$(q "$log" "[f['bytes_out'] for f in closes(fd=$wfd)]")" "[$tout]"
expect_eq "shared: calls_out of fd $wfd" \
	"$(q "$log" "[f['calls_out'] for f in closes(fd=$wfd)]")" "[$tcalls]"
expect_eq "shared: transfers in the sizes_out histogram of fd $wfd" \
	"$(q "$log" "[sum(f['sizes_out']) for f in closes(fd=$wfd)]")" "[$tcalls]"
expect_eq "shared: bytes_in of fd $rfd" \
	"$(q "$log" "[f['bytes_in'] for f in closes(fd=$rfd)]")" "[$tin]"
expect_eq "shared: exit bytes_out" "$(q "$log" "tot('bytes_out')")" "$tout"
expect_eq "shared: exit bytes_in" "$(q "$log" "tot('bytes_in')")" "$tin"
exit 0
