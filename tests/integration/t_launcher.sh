# scripts/sockmeter, the launcher: --help; the log goes where -o says, in
# the format -f says, and the launcher names it on stderr; the bytes are
# exact; the program's exit status passes through (curl -f on a 404 exits
# 22); an LD_PRELOAD already set is kept; -c reads the path from the ini;
# a bad option is refused with status 2 before anything runs; the
# launcher's own helpers are not metered; -s names the logs of the
# program's children (a shell running two curls), which have pids of
# their own, after the program's own.
. "$(dirname "$0")/lib.sh"

launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
export SOCKMETER_LIB=$LIB

"$launcher" --help >"$T/help" 2>&1 || fail "--help failed"
grep -q '^usage: sockmeter ' "$T/help" || fail "--help: $(head -2 "$T/help")"

size=$((1048576 + 4242))
mkdir -p "$T/www"
make_file "$T/www/f.bin" "$size"
start_http "$T/www"
url=http://127.0.0.1:$HTTP_PORT

# Exact bytes, where -o and -f say, named on stderr.
"$launcher" -f json -i 0.5 -o "$T/%n.%p.log" -- \
	curl -s -o "$T/got.bin" -w '%{size_download} %{size_header} %{size_request}\n' \
	"$url/f.bin" >"$T/out" 2>"$T/err" || fail "curl under the launcher failed: $(cat "$T/err")"
cmp -s "$T/www/f.bin" "$T/got.bin" || fail "download differs"
read -r body header request <"$T/out"
log=$(sed -n 's/^sockmeter: log of pid [0-9]*: //p' "$T/err")
[ -f "$log" ] || fail "launcher named no existing log: $(cat "$T/err")"
case $log in "$T"/curl.*.log) ;; *) fail "log $log is not where -o said" ;; esac
expect_eq "bytes_in" "$(q "$log" "tot('bytes_in')")" $((body + header))
expect_eq "bytes_out" "$(q "$log" "tot('bytes_out')")" "$request"

# Exit status passes through; the launcher still says where the log went.
"$launcher" -o "$T/s.%p.log" -- curl -s -f -o /dev/null "$url/missing" 2>"$T/err2"
expect_eq "exit status of curl -f on a 404" "$?" 22
grep -q '^sockmeter: log of pid ' "$T/err2" || fail "no log line: $(cat "$T/err2")"

# An LD_PRELOAD already set is kept, after ours.
other=$(ldconfig -p | awk '/libm\.so\.6 .*x86-64|libm\.so\.6 \(libc6/ { print $NF; exit }')
[ -n "$other" ] || other=$(ls /lib/*/libm.so.6 | head -1)
LD_PRELOAD=$other "$launcher" -o "$T/e.%p.log" -- sh -c 'echo "$LD_PRELOAD"' >"$T/env" 2>/dev/null
expect_eq "LD_PRELOAD seen by the program" "$(cat "$T/env")" "$(readlink -f "$LIB") $other"

# -c: the path comes from the ini file.
printf '[log]\npath = %s/ini.%%p.log\nformat = json\n' "$T" >"$T/c.ini"
"$launcher" -c "$T/c.ini" -- curl -s -o /dev/null "$url/f.bin" 2>"$T/err3" || fail "curl -c failed"
log3=$(sed -n 's/^sockmeter: log of pid [0-9]*: //p' "$T/err3")
case $log3 in "$T"/ini.*.log) ;; *) fail "-c: log at '$log3': $(cat "$T/err3")" ;; esac
expect_eq "-c: bytes_in" "$(q "$log3" "tot('bytes_in')")" $((body + header))
# A config that is a FIFO nobody writes: the library refuses it, and so
# must the launcher's own look for [log] path (it read it with awk and
# hung for good, the program never started: a helper's sweep).
mkfifo "$T/c.fifo"
timeout 20 "$launcher" -c "$T/c.fifo" -o "$T/fifo.%p.log" -- curl -s -o /dev/null "$url/f.bin" 2>"$T/errf" ||
	fail "-c FIFO: curl failed or hung: $(cat "$T/errf")"
SOCKMETER_CONFIG=$T/c.fifo timeout 20 "$launcher" -- curl -s -o /dev/null "$url/f.bin" 2>"$T/errf2" ||
	fail "SOCKMETER_CONFIG FIFO: curl failed or hung: $(cat "$T/errf2")"

# The launcher's own helpers (basename, id; with -s mktemp and cat) are not
# metered: with pipes and files tracked, only the program's log is made,
# and a bad setting is said once, by the program (before: one log per
# helper beside it, and the warning three or four times).
mkdir "$T/own"
printf '[log]\npath = %s/own/%%n.%%p.log\nformat = json\n[track]\npipes = on\nfiles = on\n' "$T" >"$T/own.ini"
for s in "" -s; do
	rm -f "$T"/own/*
	SOCKMETER_INTERVAL=abc "$launcher" $s -c "$T/own.ini" -- curl -s -o /dev/null "$url/f.bin" \
		2>"$T/own.err" || fail "curl $s failed: $(cat "$T/own.err")"
	expect_eq "launcher $s: logs made" "$(cd "$T/own" && ls | sed 's/\.[0-9]*\.log$//' | sort -u)" curl
	expect_eq "launcher $s: the bad setting said" "$(grep -c 'SOCKMETER_INTERVAL' "$T/own.err")" 1
done

# The log it names is the library's, read by the library's own config
# code: a ';' in the path, a comment after a section header, format =
# prometheus in the ini (before, the launcher's own reading of the ini
# named /x/a, the default path, a .log); a program left alone is said to
# be unmetered, not given a log.
mkdir "$T/semi"
printf '[log] ; the log\npath = %s/semi/a;b.%%p.log\nformat = json\n' "$T" >"$T/semi.ini"
"$launcher" -s -c "$T/semi.ini" -- curl -s -o /dev/null "$url/f.bin" 2>"$T/semi.err" ||
	fail "curl -c semi failed: $(cat "$T/semi.err")"
named=$(sed -n 's/^sockmeter: log of pid [0-9]*: //p' "$T/semi.err")
case $named in "$T"/semi/a\;b.*.log) ;; *) fail "';' in the path: named '$named': $(cat "$T/semi.err")" ;; esac
[ -f "$named" ] || fail "';' in the path: $named does not exist"
grep -q '"type":"exit"' "$T/semi.err" || fail "-s did not show the log: $(cat "$T/semi.err")"
printf '[log]\nformat = prometheus\n' >"$T/prom.ini"
"$launcher" -c "$T/prom.ini" -- true 2>"$T/prom.err"
grep -q "^sockmeter: log of pid [0-9]*: /tmp/sockmeter-$(id -u)/true\.[0-9]*\.prom$" "$T/prom.err" ||
	fail "format = prometheus: $(cat "$T/prom.err")"
SOCKMETER=off "$launcher" -- true 2>"$T/off.err" || fail "SOCKMETER=off: true failed"
grep -q "^sockmeter: pid [0-9]* is not metered" "$T/off.err" && ! grep -q "log of pid" "$T/off.err" ||
	fail "SOCKMETER=off: $(cat "$T/off.err")"

# A script is known by its interpreter's name, as the library knows it
# (#! through env), until it execs another program (a wrapper: a pyenv
# shim, Debian's chromium, `exec curl "$@"`), which names the log after
# itself.  So for a script the launcher names the log with * for the name
# and says what * is (before: myscript.PID.log, and later sh.PID.log for
# a wrapper whose log was curl.PID.log).  -s shows the log itself.
printf '#!/usr/bin/env %s\nimport socket\na, b = socket.socketpair()\na.send(b"hello")\nb.recv(5)\n' \
	"$(basename "$PY")" >"$T/myscript"
chmod +x "$T/myscript"
PATH=$(dirname "$PY"):$PATH "$launcher" -f json -o "$T/%n.%p.log" -- "$T/myscript" 2>"$T/script.err" ||
	fail "a script under the launcher: $(cat "$T/script.err")"
grep -q "^sockmeter: log of pid [0-9]*: $T/\*\.[0-9]*\.log (a script: \* is $(basename "$PY"), or the program it execs)\$" "$T/script.err" ||
	fail "a script: the line: $(cat "$T/script.err")"
named=$(sed -n 's/^sockmeter: log of pid [0-9]*: \([^ ]*\) .*/\1/p' "$T/script.err")
set -- $named
[ $# = 1 ] && [ -f "$1" ] || fail "a script: the log named, '$named', is not one file: $(ls "$T")"
case $1 in "$T/$(basename "$PY")".*.log) ;; *) fail "a script: log $1" ;; esac
expect_eq "a script: bytes_out in the log named" "$(q "$1" "tot('bytes_out')")" 5
mkdir -p "$T/w"
printf '#!/bin/sh\nexec curl "$@"\n' >"$T/fetch"
chmod +x "$T/fetch"
"$launcher" -f json -o "$T/w/%n.%p.log" -- "$T/fetch" -s -o /dev/null -w '%{size_download} %{size_header}\n' \
	"$url/f.bin" >"$T/wrap.out" 2>"$T/wrap.err" ||
	fail "a wrapper under the launcher: $(cat "$T/wrap.err")"
named=$(sed -n 's/^sockmeter: log of pid [0-9]*: \([^ ]*\) (a script: \* is sh, .*/\1/p' "$T/wrap.err")
set -- $named
[ $# = 1 ] && [ -f "$1" ] || fail "a wrapper: the log named, '$named', is not one file: $(cat "$T/wrap.err"; ls "$T/w")"
case $1 in "$T"/w/curl.*.log) ;; *) fail "a wrapper: log $1" ;; esac
read -r wbody wheader <"$T/wrap.out"
expect_eq "a wrapper: bytes_in in the log named" "$(q "$1" "tot('bytes_in')")" $((wbody + wheader))

# A bad option: status 2, the program never runs.
"$launcher" -x -- touch "$T/ran" 2>/dev/null
expect_eq "status of a bad option" "$?" 2
[ ! -e "$T/ran" ] || fail "the program ran despite a bad option"
# Signals and ends.  Without -s the launcher becomes the program: its pid,
# its signals, its end.  With -s it waits (to show the log): a signal sent
# to it reaches the program (a TERM left it running, orphaned), and a
# program killed by a signal kills the launcher with it (its parent saw an
# exit status of 128 + N), without the shell's "Segmentation fault" note
# on stderr.  Either way stdin reaches the program.
for s in "" -s; do
	expect_eq "stdin through the launcher ${s:-without -s}" \
		"$(echo hello | "$launcher" $s -o "$T/i.%p.log" -- cat 2>/dev/null)" hello
done
cat >"$T/sig.py" <<'PYEOF'
import os, signal, subprocess, sys, time
launcher, tmp = sys.argv[1], sys.argv[2]
for show in ([], ["-s"]):
    what = "with -s" if show else "without -s"
    def run(*cmd):
        return subprocess.run([launcher, *show, "-o", tmp + "/g.%p.log", "--", *cmd],
                              stderr=subprocess.PIPE)
    r = run("sh", "-c", "kill -SEGV $$")
    assert r.returncode == -signal.SIGSEGV, "%s: SEGV: launcher status %d" % (what, r.returncode)
    assert b"Segmentation" not in r.stderr, r.stderr
    r = run("sh", "-c", "exit 3")
    assert r.returncode == 3, "%s: exit 3: %d" % (what, r.returncode)
    # SIGXFSZ, which the launcher ignores for itself (its own lines under
    # a file size limit), still ends it as it ended the program.
    r = run("sh", "-c", "kill -XFSZ $$")
    assert r.returncode == -signal.SIGXFSZ, "%s: XFSZ: launcher status %d" % (what, r.returncode)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        p = subprocess.Popen([launcher, *show, "-o", tmp + "/g.%p.log", "--", "sh", "-c",
                              "echo $$; exec sleep 30"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        prog = int(p.stdout.readline())
        if not show:
            assert prog == p.pid, "without -s: program %d, launcher %d" % (prog, p.pid)
        os.kill(p.pid, sig)
        try:
            rc = p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            sys.exit("%s: %s: the launcher did not end" % (what, sig.name))
        alive = True
        try:
            with open("/proc/%d/stat" % prog) as f:
                alive = f.read().rsplit(") ", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            alive = False
        if alive:
            os.kill(prog, signal.SIGKILL)
        assert not alive, "%s: %s: the program %d outlived the launcher" % (what, sig.name, prog)
        assert rc == -sig, "%s: %s: launcher status %d" % (what, sig.name, rc)
PYEOF
"$PY" "$T/sig.py" "$launcher" "$T" 2>"$T/sig.err" || fail "signals: $(tail -n 2 "$T/sig.err")"

# Started as an `&` job of a script, where the shell ignores SIGINT and
# SIGQUIT for it: a QUIT sent to the launcher still reaches the program
# (a helper's graceful stop of php-fpm did nothing), which has SIGINT
# ignored as it would without the launcher, and sees nothing of ours in
# its environment.  The same without the launcher, for the truth.
cat >"$T/q.py" <<'PYEOF'
import os, signal, socket, sys, time
print("int", "ignored" if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else "default")
print("env", sorted(k for k in os.environ if k.startswith("SM_LAUNCH")))
got = []
signal.signal(signal.SIGQUIT, lambda *a: got.append(1))
s = socket.socket()
for _ in range(200):
    if got:
        break
    time.sleep(0.05)
print("got QUIT" if got else "no signal", flush=True)
sys.exit(5 if got else 0)
PYEOF
for how in plain launcher; do
	run=("$PY" "$T/q.py")
	[ "$how" = plain ] || run=("$launcher" -s -o "$T/q.%p.log" -- "${run[@]}")
	bash -c '"$@" >"'"$T/q.$how.out"'" & P=$!; sleep 1; kill -QUIT $P; wait $P; echo "status $?" >>"'"$T/q.$how.out"'"' \
		_ "${run[@]}" 2>"$T/q.$how.err"
done
expect_eq "a QUIT to a launcher started with it ignored" \
	"$(cat "$T/q.launcher.out")" "$(cat "$T/q.plain.out")"
grep -q '^got QUIT$' "$T/q.plain.out" || fail "the truth: $(cat "$T/q.plain.out")"

# The program's ignored signals are the ones it would have had without the
# launcher, with -s and without, whatever was ignored when the launcher
# started: until 2026-12-07 every program of -s had SIGQUIT ignored (the
# launcher read its own SigIgn, where bash shows SIGQUIT ignored always).
for pre in "" --ignore-signal=QUIT --ignore-signal=INT --ignore-signal=INT,QUIT,XFSZ; do
	want=$(env $pre grep '^SigIgn' /proc/self/status)
	for opt in -s ""; do
		got=$(env $pre "$launcher" $opt -o "$T/ig.%p.log" -- grep '^SigIgn' /proc/self/status 2>"$T/ig.err")
		expect_eq "ignored signals (${pre:-none ignored}, launcher ${opt:-without -s})" "$got" "$want"
	done
done

# Under a file size limit of 0 with stderr on a file, the launcher's own
# line about the log cannot be written: it is cut short (EFBIG), not a
# SIGXFSZ that killed the launcher before the program ran (status 153);
# the program has SIGXFSZ at its default action, as without the launcher.
for opt in -s ""; do
	: >"$T/fs.err"
	got=$(prlimit --fsize=0 "$launcher" $opt -o "$T/fs.%p.log" -- grep '^SigIgn' /proc/self/status 2>"$T/fs.err")
	rc=$?
	expect_eq "launcher ${opt:-without -s} under --fsize=0: status" "$rc" 0
	expect_eq "launcher ${opt:-without -s} under --fsize=0: the program's ignored signals" \
		"$got" "$(grep '^SigIgn' /proc/self/status)"
done

# -s shows the numbers of a program killed by a signal: they are in its
# state file, recovered into its log before it is shown (the launcher
# said "no log ... nothing metered" before; a helper's crashed program had
# moved 160,000 bytes).  Python moves 70,000 bytes through a socketpair
# and kills itself with SIGKILL.
mkdir -p "$T/kstate"
SOCKMETER_STATE=$T/kstate "$launcher" -s -f json -o "$T/k.%p.log" -- \
	"$PY" -c 'import os, socket
a, b = socket.socketpair()
n = 0
while n < 70000:
    n += a.send(b"x" * min(4096, 70000 - n))
    b.recv(65536)
os.kill(os.getpid(), 9)' >/dev/null 2>"$T/k.err"
expect_eq "killed under -s: launcher status" "$?" 137
grep -q '^sockmeter: no log' "$T/k.err" && fail "killed under -s: $(cat "$T/k.err")"
klog=$(sed -n 's/^sockmeter: log of pid [0-9]*: //p' "$T/k.err")
[ -f "$klog" ] || fail "killed under -s: no log named: $(cat "$T/k.err")"
expect_eq "killed under -s: recovered exit record" \
	"$(q "$klog" "[E.get('end'), T['bytes_out']]")" '["killed", 70000]'
grep -q 'exit record is not in the log' "$T/k.err" && fail "killed under -s, recovered: $(cat "$T/k.err")"
# The same in text (the default format), where a recovered exit record's
# header has end= and alive_until= before pid=: the launcher said its exit
# record was not in the log, beside it (a helper's sweep).
SOCKMETER_STATE=$T/kstate "$launcher" -s -f text -o "$T/kt.%p.log" -- \
	"$PY" -c 'import os, socket
a, b = socket.socketpair()
a.send(b"x" * 5000)
b.recv(65536)
os.kill(os.getpid(), 9)' >/dev/null 2>"$T/kt.err"
expect_eq "killed under -s, text: launcher status" "$?" 137
grep -q ' sockmeter exit end=killed alive_until=[^ ]* pid=[0-9]* ' "$T/kt.err" ||
	fail "killed under -s, text: no recovered exit record shown: $(cat "$T/kt.err")"
grep -q 'exit record is not in the log' "$T/kt.err" && fail "killed under -s, text, recovered: $(cat "$T/kt.err")"

# A child killed while the program itself ends normally (a script's
# command killed by timeout, a worker the OOM killer took): the log named
# for it holds its exit record, recovered before the launcher names it
# (before, only a killed program's state directory was recovered, so the
# log named lacked the child's exit record until some later process's
# recovery: a helper's node cluster worker).
mkdir "$T/kk"
SOCKMETER_STATE=$T/kstate "$launcher" -s -f json -o "$T/kk/%n.%p.log" -- sh -c \
	"\"\$1\" -c 'import os, socket
a, b = socket.socketpair()
a.send(b\"k\" * 6000)
b.recv(65536)
os.kill(os.getpid(), 9)'; exit 0" sh "$PY" >/dev/null 2>"$T/kk.err"
expect_eq "a killed child: launcher status" "$?" 0
kid=$(ls "$T"/kk/*.log 2>/dev/null)
[ -n "$kid" ] && [ "$(printf '%s\n' "$kid" | wc -l)" = 1 ] ||
	fail "a killed child: logs $kid: $(cat "$T/kk.err")"
grep -q "^sockmeter: 1 other log written since the launch, by its children (a pid of their own each) or other metered programs: $kid\$" "$T/kk.err" ||
	fail "a killed child: not named: $(cat "$T/kk.err")"
expect_eq "a killed child: its exit record, recovered" \
	"$(q "$kid" "[E.get('end'), T['bytes_out']]")" '["killed", 6000]'

# The same when the program changed user first: its state file is in the
# new user's directory, which the launcher's recovery (as root) does not
# read; the log shown has no exit record, and one line says why and what
# to do (before, nothing did: a helper's VLC under setpriv).
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || exit 0
chmod 755 "$T"
mkdir -m 1777 "$T/ulog" "$T/ustate"
# killed_as_nobody NAME PAUSE: the launcher (-s, interval 0.2 s) runs
# python as nobody, which moves 5000 bytes, waits PAUSE s and kills
# itself; its stderr in $T/NAME.err, the program's pid in UPID.
killed_as_nobody() {
	SOCKMETER_STATE="$T/ustate/%u" "$launcher" -s -i 0.2 -f json -o "$T/ulog/$1.%p.log" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" -c 'import os, socket, sys, time
a, b = socket.socketpair()
a.send(b"u" * 5000)
b.recv(65536)
time.sleep(float(sys.argv[1]))
os.kill(os.getpid(), 9)' "$2" >/dev/null 2>"$T/$1.err"
	expect_eq "$1: killed under -s as another user: launcher status" "$?" 137
	UPID=$(sed -n 's/^sockmeter: \(log of \)*pid \([0-9]*\)[: ].*/\2/p' "$T/$1.err" | head -n 1)
}
# Killed before any record: no log, and the line says why.
killed_as_nobody early 0
grep -q "^sockmeter: no log at .*: pid [0-9]* was killed before it wrote a record, and no state file of it was in" "$T/early.err" ||
	fail "early: not said: $(cat "$T/early.err")"
# Killed after its interval records: the log shown has no exit record.
killed_as_nobody late 0.7
grep -q "^sockmeter: pid $UPID was killed, and its exit record is not in the log" "$T/late.err" ||
	fail "late: not said: $(cat "$T/late.err")"
setpriv --reuid=65534 --regid=65534 --clear-groups "$launcher" recover "$T/ustate/65534" 2>"$T/u.rec" ||
	fail "recover as nobody: $(cat "$T/u.rec")"
expect_eq "late: recovered by that user" \
	"$(q "$T/ulog/late.$UPID.log" "[E.get('end'), T['bytes_out']]")" '["killed", 5000]'

# A shell's children: their logs named after the shell's (none: it has no
# socket), oldest first; a log older than the launch is not.
mkdir "$T/kids"
touch -d '1 hour ago' "$T/kids/curl.1.log"
"$launcher" -s -f json -o "$T/kids/%n.%p.log" -- sh -c \
	"curl -s -o /dev/null $url/f.bin; sleep 0.1; curl -s -o /dev/null $url/f.bin" 2>"$T/kids.err" ||
	fail "a shell's children: $(cat "$T/kids.err")"
grep -q '^sockmeter: no log at ' "$T/kids.err" || fail "a shell's children: the shell's log: $(cat "$T/kids.err")"
named=$(sed -n 's/^sockmeter: 2 other logs written since the launch, by its children (a pid of their own each) or other metered programs: //p' "$T/kids.err")
expect_eq "a shell's children: the logs named" "$named" \
	"$(ls -tr "$T"/kids/curl.*.log | grep -v '/curl\.1\.log$' | paste -sd ' ' -)"
# The same from a script run through env (its #! line has two words: a
# reviewer found them read as one name, and no log named).
mkdir "$T/envkids"
printf '#!/usr/bin/env sh\ncurl -s -o /dev/null %s/f.bin\ncurl -s -o /dev/null %s/f.bin\n' \
	"$url" "$url" >"$T/envkids.sh"
chmod +x "$T/envkids.sh"
"$launcher" -s -f json -o "$T/envkids/%n.%p.log" -- "$T/envkids.sh" 2>"$T/envkids.err" ||
	fail "an env script's children: $(cat "$T/envkids.err")"
named=$(sed -n 's/^sockmeter: 2 other logs written since the launch, by its children (a pid of their own each) or other metered programs: //p' "$T/envkids.err")
expect_eq "an env script's children: the logs named" "$named" \
	"$(ls -tr "$T"/envkids/curl.*.log | paste -sd ' ' -)"
# A path that follows the uid: its uid is a number, and a file of the same
# shape whose "uid" is not (a helper's run named a test's directory,
# /tmp/sockmeter-it.X, among the children's) is not named.
mkdir "$T/uk"
"$launcher" -s -f json -o "$T/uk/u%u.%n.%p.log" -- sh -c \
	"curl -s -o /dev/null $url/f.bin; echo x >'$T/uk/uit.X.curl.1.log'" 2>"$T/uk.err" ||
	fail "a uid path: $(cat "$T/uk.err")"
named=$(sed -n 's/^sockmeter: 1 other log written since the launch, by its children (a pid of their own each) or other metered programs: //p' "$T/uk.err")
expect_eq "a uid path: the log named" "$named" "$(ls "$T"/uk/u"$(id -u)".curl.*.log)"
exit 0
