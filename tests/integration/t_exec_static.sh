# An exec of a statically linked program (tests/progs/staticexit, built
# with -static: no program interpreter, so no preload reaches it) starts a
# program that goes unmetered whatever its environment.  Nothing of ours
# runs there, so the exec says so before it happens: once, naming the
# file, on stderr; the program runs as before (its output, its status).
# Before, silence: a helper's static program wrote 5,000 bytes on an
# inherited socket and they appeared nowhere.
#  - by path (sh's exec), and by a bare name found on PATH (env(1) calls
#    execvp): one warning each, status 5, output intact;
#  - with a socket as its stdout (socat's SYSTEM): warned, bytes intact;
#  - dynamically linked programs and scripts: nothing said.
. "$(dirname "$0")/lib.sh"

need_prog staticexit
export SOCKMETER_LOG=$T/%p.log
want="sockmeter: exec of $PROGS/staticexit, a statically linked program: no preload reaches it, so it is not metered"

sm sh -c "exec '$PROGS/staticexit'" >"$T/out1" 2>"$T/err1"
expect_eq "by path: status" "$?" 5
expect_eq "by path: output" "$(cat "$T/out1")" static
grep -qF "$want" "$T/err1" || fail "by path: no warning: $(cat "$T/err1")"
expect_eq "by path: lines on stderr" "$(wc -l <"$T/err1")" 1

sm env PATH="$PROGS:$PATH" staticexit >"$T/out2" 2>"$T/err2"
expect_eq "on PATH: status" "$?" 5
grep -qF "$want" "$T/err2" || fail "on PATH (execvp): no warning: $(cat "$T/err2")"

# On an inherited socket: socat (SYSTEM: a shell that execs it) hands the
# static program the connection as its stdout; the 7 bytes reach socat
# (the program runs as before), and the warning is said there too.
need socat
sm socat -u "SYSTEM:exec $PROGS/staticexit" - >"$T/out3" 2>"$T/err3" || true
expect_eq "through socat: bytes at the other end" "$(cat "$T/out3")" static
grep -qF "$want" "$T/err3" || fail "through socat: no warning: $(cat "$T/err3")"

# Dynamic programs and scripts: nothing said.
printf '#!/bin/sh\nexit 0\n' >"$T/script.sh"
chmod +x "$T/script.sh"
sm sh -c "/bin/true && '$T/script.sh' && exec /bin/true" 2>"$T/err4" ||
	fail "dynamic programs failed: $(cat "$T/err4")"
expect_eq "dynamic programs and a script: stderr" "$(cat "$T/err4")" ""

# The launcher's own exec is not the library's to see: it looks at the
# program itself, says it is statically linked instead of naming a log
# that will never be written (before: "log of pid N: ..."), and runs it as
# ever; with -s too.  A dynamic program still gets its log named.
launcher=$SM_TOP/scripts/sockmeter
for opt in "" -s; do
	SOCKMETER_LIB=$LIB "$launcher" $opt -o "$T/l.%p.log" -- "$PROGS/staticexit" \
		>"$T/out5" 2>"$T/err5"
	expect_eq "launcher ${opt:-without -s}: status" "$?" 5
	expect_eq "launcher ${opt:-without -s}: output" "$(cat "$T/out5")" static
	grep -qF "sockmeter: $PROGS/staticexit is statically linked: no preload reaches it, so it is not metered" "$T/err5" ||
		fail "launcher ${opt:-without -s}: not said: $(cat "$T/err5")"
	! grep -q "log of pid" "$T/err5" || fail "launcher ${opt:-without -s} named a log: $(cat "$T/err5")"
done
SOCKMETER_LIB=$LIB "$launcher" -o "$T/l.%p.log" -- /bin/true 2>"$T/err6" ||
	fail "launcher, /bin/true: $(cat "$T/err6")"
grep -q "^sockmeter: log of pid [0-9]*: $T/l\.[0-9]*\.log$" "$T/err6" ||
	fail "launcher, /bin/true: $(cat "$T/err6")"
! grep -q "statically linked" "$T/err6" || fail "launcher, /bin/true: $(cat "$T/err6")"
