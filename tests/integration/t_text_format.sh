# The default text format: the log is written at the path given, is not
# JSON, and has a "sockmeter exit" record, close lines carrying the peer
# address and the exact byte count (socat over TCP, both sides metered).
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
size=$((1048576 + 4242))
make_file "$T/src.bin" "$size"
socat_send tcp "$T/src.bin" "$T/dest.bin" \
	"LD_PRELOAD=$LIB SOCKMETER_LOG=$T/recv.log" \
	"LD_PRELOAD=$LIB SOCKMETER_LOG=$T/send.log"
addr=127.0.0.1:$SOCAT_PORT
for log in "$T/recv.log" "$T/send.log"; do
	[ -s "$log" ] || fail "no log at $log"
	grep -q '^{' "$log" && fail "$(basename "$log") looks like JSON"
	grep -q 'sockmeter exit' "$log" || fail "no 'sockmeter exit' in $(basename "$log")"
	grep -q "sockmeter exit pid=[0-9]* prog=socat" "$log" ||
		fail "exit record without pid/prog in $(basename "$log")"
	grep -qF "$addr" "$log" || fail "$addr not in $(basename "$log")"
done
# The sender's connection, by its peer; the receiver's, by its local
# address; each with the file size on its line (close or exit table).
grep -F "$addr" "$T/send.log" | grep -Eq "(bytes_out=|[[:space:]])$size([[:space:]]|$)" ||
	fail "send.log: no line with $addr and $size bytes: $(cat "$T/send.log")"
grep -E "127\.0\.0\.1:[0-9]+ +$addr|$addr +127\.0\.0\.1:[0-9]+|local=$addr" "$T/recv.log" |
	grep -Eq "(bytes_in=|[[:space:]])$size([[:space:]]|$)" ||
	fail "recv.log: no line with $addr and $size bytes: $(cat "$T/recv.log")"
grep -Eq "totals:.*bytes_in=$size\b" "$T/recv.log" ||
	fail "recv.log: exit totals without bytes_in=$size: $(grep -A1 'sockmeter exit' "$T/recv.log")"
grep -Eq "totals:.*bytes_out=$size\b" "$T/send.log" ||
	fail "send.log: exit totals without bytes_out=$size: $(grep -A1 'sockmeter exit' "$T/send.log")"
exit 0
