# A library loaded with dlopen(..., RTLD_DEEPBIND), as PHP loads its
# extensions, binds its calls to libc before the preload; the preload gives
# its slots the wrappers after the load (preload/wrap_dlopen.c).  Through
# tests/progs/deepbind and its library (a PLT call, an address from the
# GOT, an absolute data word; bound now with a read-only GOT, and lazily):
# the log has the connection with exactly the bytes the program moved, the
# library's own dup stays its own, and every output is the one without the
# preload.  A bare name found through the caller's RUNPATH still loads, with
# and without RTLD_DEEPBIND (dlopen's caller is the program's, not ours); deep
# bound that way it is said once, as unmetered.
. "$(dirname "$0")/lib.sh"

need_prog deepbind
command -v socat >/dev/null || fail "socat is not installed"
for try in 1 2 3; do
	port=$(free_port)
	bg_start socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" EXEC:cat
	wait_listen "$port" "$BG_PID" 10 && break
	port=
done
[ -n "$port" ] || fail "the echo server did not start"

n=$((300000 + 1234))
for lib in libsmdeep libsmdeep_lazy; do
	for how in deep deep-lazy bare plain-bare; do
		c=$how.$lib
		plain "$PROGS/deepbind" "$how" "$PROGS/deep/$lib.so" "$port" "$n" \
			>"$T/$c.plain" 2>&1 || fail "$c fails without the preload: $(cat "$T/$c.plain")"
		SOCKMETER_LOG=$T/$c.log SOCKMETER_FORMAT=json \
			sm "$PROGS/deepbind" "$how" "$PROGS/deep/$lib.so" "$port" "$n" \
			>"$T/$c.out" 2>"$T/$c.err" || fail "$c fails under the preload: $(cat "$T/$c.err")"
		diff "$T/$c.plain" "$T/$c.out" >/dev/null ||
			fail "$c: output differs with the preload: $(tr '\n' ' ' <"$T/$c.out") against $(tr '\n' ' ' <"$T/$c.plain")"
		expect_eq "$c: bytes the program sent" "$(field out "$T/$c.out")" "$n"
		expect_eq "$c: bytes the program received" "$(field in "$T/$c.out")" "$n"
		case $how in
		bare)
			# Unmetered, and said so: one line, naming the library.
			expect_eq "$c: lines on stderr" "$(sm_lines "$T/$c.err")" 1
			grep -q "$lib.so, loaded with RTLD_DEEPBIND by a caller with a library path of its own: its calls are not metered" "$T/$c.err" ||
				fail "$c: $(cat "$T/$c.err")"
			# (a log, if any, without the connection: else the
			# warning would be wrong)
			[ ! -e "$T/$c.log" ] ||
				check "$T/$c.log" "len(closes(kind='tcp')) == 0" "$c: metered after all?"
			;;
		*)
			[ -s "$T/$c.err" ] && fail "$c: stderr: $(head -n 2 "$T/$c.err")"
			expect_eq "$c: tcp close records" "$(q "$T/$c.log" "len(closes(kind='tcp', peer='127.0.0.1:$port'))")" 1
			expect_eq "$c: bytes_out" "$(q "$T/$c.log" "closes(kind='tcp')[0]['bytes_out']")" "$n"
			expect_eq "$c: bytes_in" "$(q "$T/$c.log" "closes(kind='tcp')[0]['bytes_in']")" "$n"
			;;
		esac
	done
done
# The library's own dup stayed its own where it was deep-bound.
expect_eq "own dup of a deep-bound library" "$(field dup "$T/deep.libsmdeep.out")" 4242
exit 0
