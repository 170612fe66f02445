# A program built with -O2 -D_FORTIFY_SOURCE=2 calls __read_chk,
# __recv_chk and __recvfrom_chk instead of read/recv/recvfrom: the
# preload must meter them exactly.
. "$(dirname "$0")/lib.sh"

need_prog fortified
syms=$(nm "$PROGS/fortified" 2>/dev/null; nm -D "$PROGS/fortified" 2>/dev/null)
for s in __read_chk __recv_chk __recvfrom_chk; do
	grep -q " U $s\b" <<<"$syms" ||
		fail "$PROGS/fortified does not call $s (not built fortified?)"
done
# ... and never the plain calls, so every byte read went through a _chk.
for s in read recv recvfrom; do
	grep -q " U $s\(@\|\$\)" <<<"$syms" &&
		fail "$PROGS/fortified also calls plain $s"
done

SOCKMETER_LOG=$T/fort.log SOCKMETER_FORMAT=json \
	sm "$PROGS/fortified" >"$T/out" 2>"$T/err" ||
	fail "fortified failed: $(cat "$T/out" "$T/err")"
log=$T/fort.log
total_in=0
for what in read recv recvfrom; do
	fd=$(field "${what}_fd" "$T/out")
	n=$(field "${what}_bytes" "$T/out")
	total_in=$((total_in + n))
	expect_eq "$what: bytes_in of fd $fd" \
		"$(q "$log" "[f['bytes_in'] for f in closes(fd=$fd)]")" "[$n]"
done
expect_eq "recvfrom fd kind" \
	"$(q "$log" "closes(fd=$(field recvfrom_fd "$T/out"))[0]['kind']")" udp
expect_eq "exit bytes_in" "$(q "$log" "tot('bytes_in')")" "$total_in"
expect_eq "exit bytes_out" "$(q "$log" "tot('bytes_out')")" \
	"$(field sent_bytes "$T/out")"
exit 0
