# The stdio calls that flush a FILE's output on the way (fseek, fseeko,
# fsetpos, rewind, setvbuf, setbuf, setbuffer, fcloseall) on a socket:
# what left the buffer is counted, exactly what reached the peer
# (tests/progs/stdio_flushing reads it there), and every return value and
# errno is the same with the preload as without.
. "$(dirname "$0")/lib.sh"

need_prog stdio_flushing
plain "$PROGS/stdio_flushing" >"$T/plain.out" 2>"$T/plain.err" ||
	fail "stdio_flushing failed: $(cat "$T/plain.err")"
SOCKMETER_LOG=$T/f.log SOCKMETER_FORMAT=json \
	sm "$PROGS/stdio_flushing" >"$T/pre.out" 2>"$T/pre.err" ||
	fail "stdio_flushing failed under the preload: $(cat "$T/pre.err")"
diff "$T/plain.out" "$T/pre.out" >"$T/diff" ||
	fail "output differs with the preload: $(cat "$T/diff")"
expect_eq "what the peer received" "$(field out "$T/pre.out")" 3960
fd=$(field fd "$T/pre.out")
expect_eq "fd $fd [bytes_out, errors_out.other]" \
	"$(q "$T/f.log" "[[f['bytes_out'], f['errors_out']['other']] for f in conns(fd=$fd)]")" \
	"[[$(field out "$T/pre.out"), 0]]"
# fcloseall while another thread waits in stdio: no wait for its lock.
sleep 8 | SOCKMETER_LOG=$T/h.log timeout 5 env LD_PRELOAD="$LIB" \
	"$PROGS/stdio_flushing" held ||
	fail "fcloseall with a thread in fgets: status $? (124: it hung)"
exit 0
