# stdio's corner cases on a socket behave the same with the preload as
# without (every return value, errno and stream flag compared line by
# line), and are counted as the kernel saw them: a 4-byte-item fread over
# the last 10 bytes consumed all 10, and the writes that failed with EPIPE
# count two errors and no bytes.
. "$(dirname "$0")/lib.sh"

need_prog stdio_edge
plain "$PROGS/stdio_edge" >"$T/plain.out" 2>"$T/plain.err" ||
	fail "stdio_edge failed: $(cat "$T/plain.err")"
SOCKMETER_LOG=$T/e.log SOCKMETER_FORMAT=json \
	sm "$PROGS/stdio_edge" >"$T/pre.out" 2>"$T/pre.err" ||
	fail "stdio_edge failed under the preload: $(cat "$T/pre.err")"
diff "$T/plain.out" "$T/pre.out" >"$T/diff" ||
	fail "output differs with the preload: $(cat "$T/diff")"
fd=$(field fd "$T/pre.out")
expect_eq "fd $fd [bytes_in, bytes_out, errors_out.other]" \
	"$(q "$T/e.log" "[[f['bytes_in'], f['bytes_out'], f['errors_out']['other']] for f in conns(fd=$fd)]")" \
	"[[$(field in "$T/pre.out"), 0, 2]]"
exit 0
