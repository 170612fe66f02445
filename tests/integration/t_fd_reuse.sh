# A dead connection is never credited with another object's bytes (issue
# 14): tests/progs/reuse reads 1000205 + k bytes on TCP connection k, ends
# it where no close wrapper runs, and puts a new object at the same number
# from which it reads 20,000,000 bytes (a file) or 60,000 (a pipe):
#   fclose - fdopen + fclose, then open()     (the close is seen)
#   raw    - a raw close system call, then open()
#   fopen  - a raw close, then fopen()
#   scm    - a raw close, then a pipe arriving by SCM_RIGHTS over a unix
#            socketpair takes the number
#   net    - a raw close and a raw open: only the ticker's check of device
#            and inode can tell; the program waits for its record
# In text, JSON and Prometheus formats, every TCP close record holds
# exactly its connection's bytes, and those closed unseen say so.  And
# (tests/progs/fcloseflush) the output a FILE still buffers when fclose or
# freopen closes it counts for its connection, whose close is seen.
. "$(dirname "$0")/lib.sh"

need_prog reuse
need_prog fcloseflush
make_file "$T/big" 20000000
rounds=3
want_in=$(( 3 * 1000205 + 0 + 1 + 2 ))
for fmt in text json prometheus; do
	ext=log
	case $fmt in
	json) marker='"close_seen":false' ;;
	text) marker='close=unseen' ;;
	prometheus)
		ext=prom
		marker='sockmeter_fds_closed_total{prog="reuse",pid="%p",kind="tcp"} %k'
		;;
	esac
	for mode in fclose raw fopen scm net; do
		name=$fmt.$mode
		SOCKMETER_LOG=$T/$name.%p.$ext SOCKMETER_FORMAT=$fmt SOCKMETER_INTERVAL=0.1 \
			sm "$PROGS/reuse" "$mode" "$T/big" "$rounds" "$T/$name.%p.$ext" "$marker" \
			>"$T/$name.out" 2>"$T/$name.err" ||
			fail "$name: reuse failed: $(cat "$T/$name.err")"
		out=$T/$name.out
		expect_eq "$name: new objects at the old number" "$(field same "$out")" "$rounds"
		expect_eq "$name: TCP bytes read" "$(field tcp_in "$out")" "$want_in"
		log=$T/$name.$(field pid "$out").$ext
		[ -f "$log" ] || fail "$name: no log $log"
		unseen=$rounds
		[ "$mode" = fclose ] && unseen=0
		case $fmt in
		json)
			expect_eq "$name: TCP close records (bytes_in, bytes_out)" \
				"$(q "$log" "sorted([c['bytes_in'], c['bytes_out']] for c in closes(kind='tcp'))")" \
				"[[1000205, 0], [1000206, 0], [1000207, 0]]"
			expect_eq "$name: closes marked unseen" \
				"$(q "$log" "sum(1 for c in closes(kind='tcp') if c.get('close_seen') is False)")" "$unseen"
			check "$log" "all('duration' not in c for c in closes(kind='tcp') if c.get('close_seen') is False)" \
				"$name: no duration for an unseen close"
			check "$log" "tot('bytes_in') - sum(c['bytes_in'] for c in conns(kind='unix')) == $want_in" \
				"$name: process bytes_in is the TCP bytes"
			;;
		text)
			expect_eq "$name: TCP close lines" \
				"$(grep ' sockmeter close .* kind=tcp ' "$log" | grep -o ' bytes_in=[0-9]* ' | sort | tr -d '\n')" \
				" bytes_in=1000205  bytes_in=1000206  bytes_in=1000207 "
			expect_eq "$name: closes marked unseen" \
				"$(grep -c ' sockmeter close .* kind=tcp .*close=unseen' "$log")" "$unseen"
			;;
		prometheus)
			got=$(awk '/^sockmeter_bytes_total.*kind="tcp".*direction="in"/ { n += $2 } END { print n + 0 }' "$log")
			expect_eq "$name: TCP bytes in" "$got" "$want_in"
			got=$(awk '/^sockmeter_fds_closed_total.*kind="tcp"/ { n += $2 } END { print n + 0 }' "$log")
			expect_eq "$name: TCP fds closed" "$got" "$rounds"
			;;
		esac
	done
done

SOCKMETER_LOG=$T/flush.log SOCKMETER_FORMAT=json sm "$PROGS/fcloseflush" \
	>"$T/flush.out" 2>"$T/flush.err" || fail "fcloseflush failed: $(cat "$T/flush.err")"
expect_eq "fclose: bytes received" "$(field fclose_read "$T/flush.out")" 1000
expect_eq "freopen: bytes received" "$(field freopen_read "$T/flush.out")" 700
expect_eq "flushed by fclose/freopen: close records [bytes_out, seen]" \
	"$(q "$T/flush.log" "sorted([c['bytes_out'], c.get('close_seen', True)] for c in CL if c['bytes_out'])")" \
	"[[700, true], [1000, true]]"
exit 0
