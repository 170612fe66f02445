# The exit and exec records say how many of the program's threads were
# still running when they were made (other_threads): what those threads
# move after the record is in none (README Limits), and before, nothing in
# the record said so (a helper's perl threads lost up to 24.7 MB that way).
#  - python3, two threads streaming over a socketpair, main calls
#    os._exit: the exit record (JSON, and text's header) says 2, the
#    close records made with it nothing;
#  - a thread execs while two stream and main waits for it: the exec
#    record says 3;
#  - no thread, or threads joined before the exit: no field.
. "$(dirname "$0")/lib.sh"

cat >"$T/thr.py" <<'PYEOF'
import os, socket, sys, threading, time
mode = sys.argv[1]
a, b = socket.socketpair()
def send():
    while True:
        a.send(b"x" * 4096)
def recv():
    while True:
        b.recv(65536)
if mode in ("_exit", "exec"):
    threading.Thread(target=send, daemon=True).start()
    threading.Thread(target=recv, daemon=True).start()
    time.sleep(0.2)
elif mode == "joined":
    t = threading.Thread(target=lambda: (a.send(b"y" * 100), b.recv(100)))
    t.start(); t.join()
else:
    a.send(b"y" * 100); b.recv(100)
if mode == "_exit":
    c, d = socket.socketpair()
    c.close(); d.close()
    os._exit(0)
if mode == "exec":
    t = threading.Thread(target=lambda: os.execv("/bin/true", ["true"]))
    t.start(); t.join()
sys.exit(0)
PYEOF

# run MODE FORMAT: thr.py MODE metered, its log $T/MODE.FORMAT.log.
run() {
	SOCKMETER_FORMAT=$2 SOCKMETER_LOG=$T/$1.$2.log LD_PRELOAD="$LIB" \
		timeout 20 "$PY" "$T/thr.py" "$1" >"$T/$1.out" 2>"$T/$1.err"
	expect_eq "$1: exit status" "$?" 0
}

run _exit json
expect_eq "_exit: other_threads" \
	"$(q "$T/_exit.json.log" "E.get('other_threads')")" 2
check "$T/_exit.json.log" "E['totals']['bytes_out'] > 0" "_exit"
# Not in the close records made with it (a copy of its fields: a review).
got=$("$PY" -c '
import json, sys
print([r.get("other_threads") for r in map(json.loads, open(sys.argv[1]))
       if r["type"] == "close"])' "$T/_exit.json.log")
expect_eq "_exit: the close records' other_threads" "$got" "[None, None]"
run _exit text
grep -q '^[^ ]* sockmeter exit pid=[0-9]* prog=python3 .* other_threads=2$' \
	"$T/_exit.text.log" || fail "_exit, text: $(grep 'sockmeter exit' "$T/_exit.text.log")"

run exec json
got=$("$PY" -c '
import json, sys
print([r.get("other_threads") for r in map(json.loads, open(sys.argv[1]))
       if r["type"] == "exec"])' "$T/exec.json.log")
expect_eq "exec: other_threads" "$got" "[3]"

for m in none joined; do
	run "$m" json
	expect_eq "$m: other_threads" \
		"$(q "$T/$m.json.log" "E.get('other_threads')")" null
	expect_eq "$m: bytes_out" "$(q "$T/$m.json.log" "E['totals']['bytes_out']")" 100
done
exit 0
