# A host that dumps core dumps its own memory, not the library's: the
# tables sized by the fd limit (the durable state's reservation, the fd
# table, the close queue's ring) are marked MADV_DONTDUMP, in the process
# and again in a fork child, where the reset mapping lost the mark.  Before
# that a python abort() under the preload left a core 22 MB larger (with an
# fd hard limit of 20,000; about 600 MB at a million), streamed as zeroes
# to a core handler.  Measured here: the core's size with the preload may
# exceed the one without by at most 4 MiB (the ticker's stack, the
# library's data).  Runs where cores are files in the working directory
# (core_pattern without a '/' or a '|').
. "$(dirname "$0")/lib.sh"

pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || true)
case $pattern in
'' | '|'* | */*) skip "core_pattern is '$pattern': cores do not land in the working directory" ;;
esac
ulimit -c unlimited 2>/dev/null || skip "core dumps are limited here (ulimit -c unlimited refused)"
export SOCKMETER_LOG=$T/%p.log

cat >"$T/crash.py" <<'PYEOF'
import os, socket, sys
a, b = socket.socketpair()
a.sendall(b"x" * 100)
assert len(b.recv(100)) == 100
if sys.argv[1] == "child":
    pid = os.fork()
    if pid == 0:
        a.sendall(b"y" * 10)
        os.abort()
    os.waitpid(pid, 0)
    sys.exit(0)
os.abort()
PYEOF

# core_size DIR: the apparent size of the one core file made in DIR.
core_size() {
	local f
	f=$(find "$1" -maxdepth 1 -type f -newer "$T/crash.py" ! -name '*.log' | head -n 1)
	[ -n "$f" ] || fail "no core file in $1 (core_pattern '$pattern')"
	stat -c %s "$f"
}

for who in process child; do
	for how in plain sm; do
		d=$T/$who-$how
		mkdir "$d"
		(cd "$d" && $how "$PY" "$T/crash.py" "$who" >/dev/null 2>&1) || true
	done
	plain_size=$(core_size "$T/$who-plain")
	sm_size=$(core_size "$T/$who-sm")
	echo "$who: core $plain_size bytes without the preload, $sm_size with it"
	[ "$sm_size" -le $((plain_size + 4 * 1024 * 1024)) ] ||
		fail "$who: the core grew from $plain_size to $sm_size bytes under the preload"
done
