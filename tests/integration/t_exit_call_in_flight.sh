# A process that ends while another of its threads is still inside a long
# send: the call never returns, so its count never comes, yet the kernel
# moved (and on the way out delivers) bytes for it.  The exit record must
# say so: what the peer received = bytes_out + bytes_out_unseen, for the
# connection it lists and, when busier connections fill the top-N list,
# in the totals alone.  (Before, a helper's 512 MiB send cut off by
# _exit: bytes_out=5, unseen 0, and 1.5 GB sent in a longer run.)
#
# The program: python3 itself.  Its main thread sends 2 MB on a first
# connection (it completes; the connection stays open), then one sendall
# of 64 MiB on a second one, which a slow reader drains; a thread calls
# os._exit(7) after 0.5 s.  The reader (not metered) counts what each
# connection delivered up to its EOF.
. "$(dirname "$0")/lib.sh"

# Bytes the wrappers did not count, on purpose.
export SM_UNSEEN_OK=1
export SOCKMETER_FORMAT=json

cat >"$T/sink.py" <<'PYEOF'
import socket, sys, threading, time
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(8)
open(sys.argv[1] + ".port", "w").write("%d\n" % l.getsockname()[1])
counts = {}
def take(n, c):
    got = 0
    while True:
        d = c.recv(65536)
        if not d:
            break
        got += len(d)
        if n == 1:  # the second connection reads slowly
            time.sleep(0.004)
    counts[n] = got
ts = []
for n in range(2):
    c, _ = l.accept()
    t = threading.Thread(target=take, args=(n, c))
    t.start()
    ts.append(t)
for t in ts:
    t.join()
open(sys.argv[1], "w").write("first=%d\nsecond=%d\n" % (counts[0], counts[1]))
PYEOF

cat >"$T/sender.py" <<'PYEOF'
import os, socket, sys, threading, time
port = int(sys.argv[1])
a = socket.create_connection(("127.0.0.1", port))
a.sendall(b"a" * 2000000)
b = socket.create_connection(("127.0.0.1", port))
def end():
    time.sleep(0.5)
    os._exit(7)
threading.Thread(target=end, daemon=True).start()
b.sendall(b"b" * (64 << 20))
print("the send finished before the exit: nothing was cut off")
PYEOF

run_case() { # NAME TOP
	local st
	rm -f "$T/$1.counts" "$T/$1.counts.port"
	bg_start "$PY" "$T/sink.py" "$T/$1.counts"
	local sink=$BG_PID
	wait_for 10 test -s "$T/$1.counts.port" || fail "$1: the reader did not start"
	SOCKMETER_TOP=$2 SOCKMETER_LOG=$T/$1.%p.log \
		sm "$PY" "$T/sender.py" "$(cat "$T/$1.counts.port")" >"$T/$1.out" 2>"$T/$1.err"
	st=$?
	expect_eq "$1: exit status (os._exit(7))" "$st" 7
	[ -s "$T/$1.err" ] && fail "$1: stderr: $(head -n 3 "$T/$1.err")"
	bg_wait "$sink" 30 || fail "$1: the reader failed"
	expect_eq "$1: first connection delivered" "$(field first "$T/$1.counts")" 2000000
	second=$(field second "$T/$1.counts")
	[ "$second" -lt $((64 << 20)) ] || fail "$1: the 64 MiB send was not cut off (all delivered)"
	log=$(one_log "$T/$1.*.log")
}

# The cut-off connection listed (top 10): its own bytes_out_unseen.
run_case listed 10
expect_eq "listed: process totals, out + unseen = delivered" \
	"$(q "$log" "T['bytes_out'] + T['bytes_out_unseen']")" $((2000000 + second))
expect_eq "listed: its exit-record fd, out + unseen = delivered" \
	"$(q "$log" "[f['bytes_out'] + f.get('bytes_out_unseen', -1) for f in E['fds'] if f['kind'] == 'tcp' and f['bytes_out'] != 2000000]")" \
	"[$second]"

# Only the busier first connection listed (top 1): the totals still hold
# the cut-off call's bytes.
run_case unlisted 1
expect_eq "unlisted: fds listed" "$(q "$log" "[f['bytes_out'] for f in E['fds']]")" "[2000000]"
expect_eq "unlisted: process totals, out + unseen = delivered" \
	"$(q "$log" "T['bytes_out'] + T['bytes_out_unseen']")" $((2000000 + second))
