# An exec made while the effective uid differs from the real one (squid's
# master, real uid proxy and effective uid root, execs its workers so)
# starts the new program in secure-execution mode, where the loader
# ignores LD_PRELOAD by path: it is not metered.  The library says so on
# stderr, once, naming the program and the ids; the new program indeed
# has no library mapped.  The control exec (ids equal) says nothing and
# is metered.  Needs root (setresuid); skipped otherwise.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	skip "needs root"
fi
cat >"$T/sx.py" <<'PYEOF'
import os, socket, sys
a, b = socket.socketpair()
a.send(b"x")
b.recv(1)
if sys.argv[1] == "mixed":
    os.setresgid(65534, 0, 0)
    os.setresuid(65534, 0, 0)
os.execv("/bin/sh", ["sh", "-c", "grep -c sockmeter /proc/self/maps || true"])
PYEOF
for mode in mixed plain; do
	SOCKMETER_LOG=$T/$mode.%p.log sm "$PY" "$T/sx.py" "$mode" \
		>"$T/$mode.out" 2>"$T/$mode.err" || fail "$mode: failed: $(cat "$T/$mode.err")"
done
expect_eq "mixed: the library in the new program" "$(cat "$T/mixed.out")" 0
expect_eq "mixed: warnings" "$(grep -c 'sockmeter: exec of /bin/sh in secure-execution mode (real uid 65534, effective uid 0, real gid 65534, effective gid 0): the dynamic loader ignores LD_PRELOAD=' "$T/mixed.err")" 1
expect_eq "mixed: other lines on stderr" "$(grep -vc 'secure-execution mode' "$T/mixed.err")" 0
[ "$(cat "$T/plain.out")" -ge 1 ] || fail "plain: the new program has no library mapped"
[ -s "$T/plain.err" ] && fail "plain: stderr: $(head -n 3 "$T/plain.err")"
exit 0
