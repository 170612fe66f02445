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
start_echo
port=$ECHO_PORT

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

# Loads and unloads in other threads meanwhile (deep and not, the same
# libraries): every byte sent through a deep-bound copy is counted (a
# library unloaded and loaded again at the same address was taken for an
# old one and left unmetered; an object another thread unloaded was read
# after it was gone: crashes).
SOCKMETER_LOG=$T/race.log SOCKMETER_FORMAT=json \
	sm "$PROGS/deepbind" race "$PROGS/deep" 1500 >"$T/race.out" 2>"$T/race.err" ||
	fail "race: status $?: $(head -n 3 "$T/race.err")"
[ -s "$T/race.err" ] && fail "race: stderr: $(head -n 3 "$T/race.err")"
expect_eq "race: loads that failed" "$(field fails "$T/race.out")" 0
expect_eq "race: bytes sent" "$(field sent "$T/race.out")" 3000
expect_eq "race: bytes_out of the pair in the log" \
	"$(q "$T/race.log" "max(f['bytes_out'] for f in E['fds'] + CL if f['kind'] == 'unix')")" 3000

# Under an auditor (LD_AUDIT), a lazily bound deep library's calls bind
# through the loader's trampolines, which tell the auditor (la_symbind):
# left to them, as many bindings seen as without the preload, and said.
au=$PROGS/deep/libsmaudit.so
LD_AUDIT=$au plain "$PROGS/deepbind" deep-lazy "$PROGS/deep/libsmdeep_lazy.so" "$port" 1000 \
	>"$T/audit.plain" 2>"$T/audit.plain.err" || fail "audit fails without the preload: $(cat "$T/audit.plain.err")"
SOCKMETER_LOG=$T/audit.log LD_AUDIT=$au \
	sm "$PROGS/deepbind" deep-lazy "$PROGS/deep/libsmdeep_lazy.so" "$port" 1000 \
	>"$T/audit.out" 2>"$T/audit.err" || fail "audit fails under the preload: $(cat "$T/audit.err")"
want=$(field audit_binds "$T/audit.plain.err")
[ "$want" -ge 1 ] || fail "the auditor saw no binding even without the preload"
expect_eq "bindings the auditor saw" "$(field audit_binds "$T/audit.err")" "$want"
cmp -s "$T/audit.plain" "$T/audit.out" || fail "audit: output differs: $(tr '\n' ' ' <"$T/audit.out")"
grep -q "loaded with RTLD_DEEPBIND and lazy binding under an auditor (LD_AUDIT)" "$T/audit.err" ||
	fail "audit: not said: $(cat "$T/audit.err")"

# A text relocation (send's address in the library's code, a page that is
# not writable): that slot is left alone and said, not written (SIGSEGV).
if [ -e "$PROGS/deep/libsmtextrel.so" ]; then
	SOCKMETER_LOG=$T/textrel.log \
		sm "$PROGS/deepbind" textrel "$PROGS/deep/libsmtextrel.so" \
		>"$T/textrel.out" 2>"$T/textrel.err" ||
		fail "textrel: status $?: $(head -n 3 "$T/textrel.err")"
	expect_eq "textrel: sent" "$(field sent "$T/textrel.out")" 100
	expect_eq "textrel: lines on stderr" "$(sm_lines "$T/textrel.err")" 1
	grep -q "libsmtextrel.so, loaded with RTLD_DEEPBIND, and some of its slots could not be written" "$T/textrel.err" ||
		fail "textrel: $(cat "$T/textrel.err")"
fi
exit 0
