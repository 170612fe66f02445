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
# Still preloaded but without our settings (lighttpd's CGI environment
# keeps LD_PRELOAD alone): metered elsewhere, with other settings; said
# once, naming what was dropped.  The log of the new program is then at
# the default path, not in $T.
SOCKMETER_FORMAT=json sm env -u SOCKMETER_LOG /bin/true 2>"$T/err9" ||
	fail "env -u SOCKMETER_LOG failed"
expect_eq "env -u SOCKMETER_LOG: stderr" "$(cat "$T/err9")" \
	"sockmeter: exec of /bin/true with an environment that still preloads $LIB but drops SOCKMETER_LOG: the new program is metered with settings of its own, not these (its log may be elsewhere); a tool that cleans the environment must pass SOCKMETER_* on"
# A SOCKMETER* name the library does not read (the launcher's) is not a
# setting: nothing said.
SOCKMETER_LIB=$LIB sm env -u SOCKMETER_LIB /bin/true 2>"$T/err12" ||
	fail "env -u SOCKMETER_LIB failed"
expect_eq "env -u SOCKMETER_LIB: stderr" "$(cat "$T/err12")" ""
# (The run's own state directory, tests/runner.sh, is passed on: it
# would be one more variable dropped.)
SOCKMETER_FORMAT=json sm env -i LD_PRELOAD="$LIB" SOCKMETER_LOG="$T/cgi.%p.log" \
	${SOCKMETER_STATE:+SOCKMETER_STATE="$SOCKMETER_STATE"} \
	/bin/true 2>"$T/err10" || fail "env -i LD_PRELOAD=... failed"
grep -q "^sockmeter: exec of /bin/true with an environment that still preloads .* but drops SOCKMETER_FORMAT:" "$T/err10" ||
	fail "env -i keeping LD_PRELOAD: $(cat "$T/err10")"
expect_eq "env -i keeping LD_PRELOAD: lines" "$(grep -c . "$T/err10")" 1
sm "$PY" -c '
import os, subprocess
env = {"LD_PRELOAD": os.environ["LD_PRELOAD"]}
for i in range(3):
    assert subprocess.run(["/bin/true"], env=env).returncode == 0' 2>"$T/err11" ||
	fail "python, LD_PRELOAD only: $(cat "$T/err11")"
expect_eq "three children with LD_PRELOAD only: lines" "$(grep -c '^sockmeter: exec of /bin/true with an environment that still preloads' "$T/err11")" 1
expect_eq "three children with LD_PRELOAD only: other lines" "$(grep -vc '^sockmeter: exec of' "$T/err11")" 0
# Once per process: three children with an empty environment (Python's
# subprocess execs them from vfork children, which share its memory).
sm "$PY" -c '
import subprocess
for i in range(3):
    assert subprocess.run(["/bin/true"], env={}).returncode == 0' 2>"$T/err5" ||
	fail "python: $(cat "$T/err5")"
expect_eq "three empty environments: lines" "$(grep -c '^sockmeter: exec of /bin/true' "$T/err5")" 1
expect_eq "three empty environments: other lines" "$(grep -vc '^sockmeter: exec of' "$T/err5")" 0
# An exec that fails starts nothing: a PATH search tries each directory
# (Python's subprocess execs each candidate itself); the warning names
# the program that ran, and a missing one uses nothing up.
sm "$PY" -c '
import subprocess
try:
    subprocess.run(["/no/such/prog"], env={})
except FileNotFoundError:
    pass
subprocess.run(["true"], env={"PATH": "/nonexistent:/usr/bin:/bin"})' 2>"$T/err6" ||
	fail "python PATH search: $(cat "$T/err6")"
grep -q '^sockmeter: exec of /usr/bin/true with' "$T/err6" ||
	fail "PATH search: $(cat "$T/err6")"
expect_eq "PATH search: lines" "$(grep -c . "$T/err6")" 1
# A bare name the loader found on its path names us too.
timeout 30 env LD_PRELOAD=libsockmeter.so LD_LIBRARY_PATH="$(dirname "$LIB")" \
	env -i /bin/true 2>"$T/err7" || fail "bare name: status"
grep -q '^sockmeter: exec of /bin/true with' "$T/err7" || fail "bare name: $(cat "$T/err7")"
# Under another name found on the loader's path (the library copied as
# sm.so), or through a $LIB path: still ours, nothing to say (a review
# found both taken for a library loaded by --preload).
mkdir -p "$T/bare" "$T/dst/lib/x86_64-linux-gnu" "$T/dst/lib/aarch64-linux-gnu"
cp "$LIB" "$T/bare/sm.so"
cp "$LIB" "$T/dst/lib/x86_64-linux-gnu/libsockmeter.so"
cp "$LIB" "$T/dst/lib/aarch64-linux-gnu/libsockmeter.so"
timeout 30 env LD_PRELOAD=sm.so LD_LIBRARY_PATH="$T/bare" \
	sh -c '/bin/true; exec /bin/true' 2>"$T/err15" || fail "sm.so: status"
expect_eq "another name on the loader's path: stderr" "$(cat "$T/err15")" ""
timeout 30 env LD_PRELOAD="$T/dst/\$LIB/libsockmeter.so" \
	sh -c '/bin/true; exec /bin/true' 2>"$T/err16" || fail "\$LIB: status"
expect_eq "a \$LIB path: stderr" "$(cat "$T/err16")" ""
# Never a stuck program: with stderr a full pipe nobody reads, the
# warning goes to syslog (off here) and the exec goes on.
"$PY" - "$LIB" "$T" <<'PYEOF' >"$T/full.out" 2>&1 || fail "full stderr: $(cat "$T/full.out")"
import fcntl, os, subprocess, sys
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
try:
    while True:
        os.write(w, b"." * 4096)
except BlockingIOError:
    pass
fcntl.fcntl(w, fcntl.F_SETFL, 0)
env = dict(os.environ, LD_PRELOAD=sys.argv[1], SOCKMETER_SYSLOG="off",
           SOCKMETER_LOG=sys.argv[2] + "/full.%p.log")
p = subprocess.run(["env", "-i", "/bin/true"], stderr=w, env=env, timeout=20)
assert p.returncode == 0, p.returncode
PYEOF
# Loaded through /etc/ld.so.preload as well (a mount namespace with its
# own /etc): every program gets the library anyway, so an environment
# without LD_PRELOAD is nothing to say; one without the settings is (the
# new program's log goes to the default path), and so is a static
# program, which no preload reaches (both were silent: a helper's).
if unshare -m true 2>/dev/null; then
	mkdir -p "$T/etc"
	cp -a /etc/. "$T/etc/" 2>/dev/null
	printf '%s\n' "$LIB" >"$T/etc/ld.so.preload"
	need_prog staticexit
	unshare -m sh -c 'mount --bind "$1/etc" /etc &&
		LD_PRELOAD="$2" SOCKMETER_LOG="$1/sys.%p.log" env -u LD_PRELOAD /bin/true &&
		LD_PRELOAD="$2" SOCKMETER_LOG="$1/sys.%p.log" env -i /bin/true' \
		sh "$T" "$LIB" 2>"$T/err8" || fail "ld.so.preload: $(cat "$T/err8")"
	expect_eq "ld.so.preload too: stderr" "$(cat "$T/err8")" \
		"sockmeter: exec of /bin/true with an environment that drops SOCKMETER_LOG${SOCKMETER_STATE:+ SOCKMETER_STATE}: the new program is metered (/etc/ld.so.preload loads $LIB) with settings of its own, not these (its log may be elsewhere); a tool that cleans the environment must pass SOCKMETER_* on"
	unshare -m sh -c 'mount --bind "$1/etc" /etc &&
		SOCKMETER_LOG="$1/sys.%p.log" sh -c "exec \"\$0\"" "$2"' \
		sh "$T" "$PROGS/staticexit" >"$T/out13" 2>"$T/err13"
	expect_eq "ld.so.preload, a static program: its status" "$?" 5
	expect_eq "ld.so.preload, a static program: stderr" "$(cat "$T/err13")" \
		"sockmeter: exec of $PROGS/staticexit, a statically linked program: no preload reaches it, so it is not metered (what it sends and receives, on its own sockets or on ones it inherits, is in no log)"
else
	echo "NOTE: no mount namespace here: the /etc/ld.so.preload case is not tried"
fi
# Loaded by the dynamic loader's --preload option: nothing carries the
# library into what the process execs, and that is said (it was not).
interp=$(readelf -l /bin/sh 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
[ -x "$interp" ] || fail "no program interpreter found for /bin/sh"
SOCKMETER_LOG=$T/opt.%p.log timeout 30 "$interp" --preload "$LIB" /bin/sh -c \
	'/bin/true; /bin/true' 2>"$T/err14" || fail "--preload: $(cat "$T/err14")"
expect_eq "--preload: stderr" "$(cat "$T/err14")" \
	"sockmeter: exec of /bin/true: $LIB was not loaded through LD_PRELOAD (the dynamic loader's --preload option, or dlopen), and the new program's environment does not preload it: the new program is not metered; set LD_PRELOAD=$LIB to meter the programs a process starts"
exit 0
