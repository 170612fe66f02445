# A state directory that fills up while a process runs: the slots of its
# later fds cannot be backed by its state file and stay in private memory,
# so a kill loses their numbers.  That must not pass in silence: the
# process says so once on stderr when it happens (once in all: each chunk
# refused after a tick that had said it said it again, 5 to 7 lines in a
# helper's run), and the exit record
# recovery writes after a kill says "incomplete" (JSON "incomplete": true;
# text "incomplete=yes").  Before, a helper's process with 203 fds on a
# 64 KiB tmpfs was recovered with 212,000 of 360,000 bytes and 55 of 203
# fds, and nothing said so anywhere.
. "$(dirname "$0")/lib.sh"

launcher=$SM_TOP/scripts/sockmeter
MNT=
# Lazily: a victim still running (a test that failed) holds the mount.
cleanup_full() {
	[ -n "$MNT" ] && umount -l "$MNT" 2>/dev/null
	sm_cleanup
}
trap cleanup_full EXIT

mkdir -p "$T/st" "$T/logs"
if ! mount -t tmpfs -o size=64k,mode=700 tmpfs "$T/st" 2>/dev/null; then
	skip "mount not permitted"
fi
MNT=$T/st
cat >"$T/victim.py" <<'PYEOF'
import os, socket, sys, time
pairs = []
for i in range(300):
    a, b = socket.socketpair()
    a.sendall(b"x" * 1000)
    got = 0
    while got < 1000:
        got += len(b.recv(1000 - got))
    pairs.append((a, b))
    if i in (100, 200):
        time.sleep(1.3)  # a tick between chunks refused: said once all the same
print("ready", os.getpid(), flush=True)
time.sleep(60)
PYEOF
SOCKMETER_STATE=$T/st SOCKMETER_LOG=$T/logs/v.%p.log SOCKMETER_FORMAT=json \
	bg_start env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" >"$T/out" 2>"$T/err"
wait_for 20 grep -q '^ready' "$T/out" || fail "the victim did not start: $(cat "$T/err")"
vpid=$(awk '/^ready/ { print $2 }' "$T/out")
# Said by the ticker at its next tick.
wait_for 10 grep -q "no room to keep the numbers of every fd" "$T/err" ||
	fail "nothing said of the full state directory: $(cat "$T/err")"
kill -KILL "$vpid"
while kill -0 "$vpid" 2>/dev/null; do sleep 0.02; done
"$launcher" recover "$T/st" >"$T/rec" 2>&1 || fail "recover failed: $(cat "$T/rec")"
log=$T/logs/v.$vpid.log
expect_eq "the recovered exit record's end and mark" \
	"$(q "$log" "[E.get('end'), E.get('incomplete')]")" '["killed", true]'
# The premise: numbers were missing indeed (300,000 bytes moved each way).
[ "$(q "$log" "T['bytes_out']")" -lt 300000 ] ||
	fail "every number was recovered: the state directory never filled"
expect_eq "warnings on stderr" "$(grep -c '^sockmeter:' "$T/err")" 1

# A fork child that cannot make a state file of its own (the directory
# filled after its parent made one) says so too, as a process that is not
# a fork child does: its numbers are in private memory only.  Before, the
# child said nothing, and a kill lost every number of its without a word
# (a helper's run).
umount -l "$MNT"
MNT=
mkdir -p "$T/st2"
mount -t tmpfs -o size=256k,mode=700 tmpfs "$T/st2" || fail "second mount"
MNT=$T/st2
cat >"$T/forker.py" <<PYEOF
import os, socket, sys, time
a, b = socket.socketpair()
a.sendall(b"p" * 100)
b.recv(100)
# The parent has its file: the directory fills up now.
try:
    with open("$T/st2/filler", "wb") as f:
        while True:
            f.write(b"\\0" * 4096)
            f.flush()
except OSError:
    pass
pid = os.fork()
if pid == 0:
    c, d = socket.socketpair()
    c.sendall(b"c" * 1000)
    d.recv(1000)
    print("child", os.getpid(), flush=True)
    time.sleep(60)
    os._exit(0)
os.waitpid(pid, 0)
PYEOF
SOCKMETER_STATE=$T/st2 SOCKMETER_LOG=$T/logs/f.%p.log SOCKMETER_FORMAT=json \
	bg_start env LD_PRELOAD="$LIB" "$PY" "$T/forker.py" >"$T/fout" 2>"$T/ferr"
wait_for 20 grep -q '^child' "$T/fout" || fail "the child did not start: $(cat "$T/ferr")"
cpid=$(awk '/^child/ { print $2 }' "$T/fout")
wait_for 10 grep -q "a forked child could not make its state file (No space left on device): its numbers are in private memory only, and a kill loses them" "$T/ferr" ||
	fail "nothing said of the child's missing state file: $(cat "$T/ferr")"
kill -KILL "$cpid"
expect_eq "fork: warnings on stderr" "$(grep -c '^sockmeter:' "$T/ferr")" 1
exit 0
