# A program built with -O2 -D_FORTIFY_SOURCE=2 calls __printf_chk,
# __fprintf_chk, __vfprintf_chk, __dprintf_chk, __fgets_chk and
# __fread_chk instead of the plain stdio calls: its socket bytes are
# counted exactly all the same.
. "$(dirname "$0")/lib.sh"

need_prog fortified_stdio
syms=$(nm "$PROGS/fortified_stdio" 2>/dev/null)
for s in __printf_chk __fprintf_chk __vfprintf_chk __dprintf_chk \
	__fgets_chk __fread_chk; do
	grep -q " U $s\b" <<<"$syms" ||
		fail "$PROGS/fortified_stdio does not call $s (not built fortified?)"
done
for s in printf fprintf vfprintf dprintf fgets fread; do
	grep -q " U $s\(@\|\$\)" <<<"$syms" &&
		fail "$PROGS/fortified_stdio also calls plain $s"
done

SOCKMETER_LOG=$T/f.log SOCKMETER_FORMAT=json \
	sm "$PROGS/fortified_stdio" 2>"$T/err" ||
	fail "fortified_stdio failed: $(cat "$T/err")"
sock=$(field sock "$T/err")
expect_eq "truth" "$(field out1 "$T/err") $(field out "$T/err") $(field in "$T/err")" \
	"1000 3000 3000"
expect_eq "fd 1 (stdout) [bytes_out, bytes_in]" \
	"$(q "$T/f.log" "[[f['bytes_out'], f['bytes_in']] for f in conns(fd=1)]")" "[[1000, 0]]"
expect_eq "fd $sock [bytes_out, bytes_in]" \
	"$(q "$T/f.log" "[[f['bytes_out'], f['bytes_in']] for f in conns(fd=$sock)]")" "[[3000, 3000]]"
exit 0
