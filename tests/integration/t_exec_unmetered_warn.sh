# An exec whose environment no longer preloads the library starts a
# program that goes unmetered: `env -i`, systemd-socket-activate without
# -E, a program that cleans its children's environment.  That is said
# once per process, on stderr (or syslog when stderr is not the original
# one), naming the program and the library; the program runs as before.
# An exec that keeps LD_PRELOAD (among other libraries too) says nothing.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_LOG=$T/%p.log
sm env -i sh -c 'exit 3' 2>"$T/err1"
expect_eq "env -i: status" "$?" 3
expect_eq "env -i: stderr" "$(cat "$T/err1")" \
	"sockmeter: exec of sh with an environment that does not preload $LIB (LD_PRELOAD was removed or changed): the new program is not metered; a tool that cleans the environment must pass LD_PRELOAD and SOCKMETER_* on"
sm env -u LD_PRELOAD /bin/true 2>"$T/err2" || fail "env -u failed"
grep -q '^sockmeter: exec of /bin/true with an environment that does not preload' "$T/err2" ||
	fail "env -u LD_PRELOAD: $(cat "$T/err2")"
# Kept: nothing said.
sm env FOO=1 /bin/true 2>"$T/err3" || fail "env FOO=1 failed"
expect_eq "env FOO=1: stderr" "$(cat "$T/err3")" ""
timeout 30 env LD_PRELOAD="libc.so.6:$LIB" env FOO=1 /bin/true 2>"$T/err4" ||
	fail "two preloads failed"
expect_eq "LD_PRELOAD with two libraries, kept: stderr" "$(cat "$T/err4")" ""
# Once per process: three children with an empty environment (Python's
# subprocess execs them from vfork children, which share its memory).
sm "$PY" -c '
import subprocess
for i in range(3):
    assert subprocess.run(["/bin/true"], env={}).returncode == 0' 2>"$T/err5" ||
	fail "python: $(cat "$T/err5")"
expect_eq "three empty environments: lines" "$(grep -c '^sockmeter: exec of /bin/true' "$T/err5")" 1
expect_eq "three empty environments: other lines" "$(grep -vc '^sockmeter: exec of' "$T/err5")" 0
exit 0
