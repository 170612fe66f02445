# A process killed while it blocks in one long sendfile: its recovered
# record holds what the receiver got, up to one 1 MiB piece (the call in
# the kernel when the kill landed).  One sendfile can be a whole file:
# busybox cat asks for 16 MiB a call, Python's socket.sendfile for the
# whole file.  Such a call never returned, so none of it was counted:
# 8 MB received, 0 in the record (and for busybox, whose socket was
# inherited from bash's /dev/tcp and first used by that very call, no
# record at all).  The receiver reads 4 MB/s, so the 32 MiB file is well
# under way when SIGKILL lands after 4 MiB.
#  - the same transfers, not killed: exact, and counted as the program's
#    own calls (busybox: 3 sendfile calls, whatever the pieces).
#  - a count past MAX_RW_COUNT (busybox httpd asks 2^63 - 64 KiB, Rust's
#    io::copy 0x7ffff000): made in pieces too, up to what the kernel's
#    one call moves.  Before, such a call went whole: killed, 0 of it
#    counted (a helper's busybox httpd, 195 bytes against 16.6 MB).
. "$(dirname "$0")/lib.sh"

command -v busybox >/dev/null || skip "busybox is not installed (scripts/install-deps)"
export SOCKMETER_LIB=$LIB SOCKMETER_STATE=$T/state SOCKMETER_FORMAT=json
make_file "$T/f32m" 33554432

cat >"$T/recv.py" <<'PYEOF'
import socket, sys, time
rate = float(sys.argv[1])  # bytes/s; 0: as fast as it comes
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(1)
print("port", s.getsockname()[1], flush=True)
c, _ = s.accept()
n, t0, said = 0, time.time(), False
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b)
    if not said and n >= 4 << 20:
        print("progress", n, flush=True)
        said = True
    if rate:
        ahead = n / rate - (time.time() - t0)
        if ahead > 0:
            time.sleep(ahead)
print("total", n, flush=True)
PYEOF

# wait_line FILE PATTERN - until FILE has a line matching PATTERN (10 s).
wait_line() {
	wait_for 10 grep -q "$2" "$1" || fail "no '$2' in $1 after 10 s"
}

# sender NAME PORT - start the sender of NAME (busybox, python) at PORT,
# preloaded, in the background (BG_PID).
sender() {
	case $1 in
	busybox)
		SOCKMETER_LOG=$T/logs/$1.%p.log bg_start env LD_PRELOAD="$LIB" \
			bash -c "exec busybox cat '$T/f32m' >/dev/tcp/127.0.0.1/$2"
		;;
	python)
		SOCKMETER_LOG=$T/logs/$1.%p.log bg_start env LD_PRELOAD="$LIB" \
			"$PY" -c "import socket
s = socket.create_connection(('127.0.0.1', $2))
s.sendfile(open('$T/f32m', 'rb'))"
		;;
	huge | maxrw)
		# A count past what one call moves, which the kernel clamps:
		# busybox httpd's 2^63 - 64 KiB at an offset, Rust io::copy's
		# 0x7ffff000 from the file's position.
		SOCKMETER_LOG=$T/logs/$1.%p.log bg_start env LD_PRELOAD="$LIB" \
			"$PY" -c "import os, socket
s = socket.create_connection(('127.0.0.1', $2))
f = open('$T/f32m', 'rb')
if '$1' == 'huge':
    os.sendfile(s.fileno(), f.fileno(), 0, 0x7fffffffffff0000)
else:
    while os.sendfile(s.fileno(), f.fileno(), None, 0x7ffff000):
        pass"
		;;
	esac
}

# receiver RATE - fresh logs and state, and a receiver reading RATE
# bytes/s (0: as fast as it comes): its pid in rpid, its port in port.
receiver() {
	rm -rf "$T/logs" "$T/state"
	mkdir -p "$T/logs"
	bg_start "$PY" "$T/recv.py" "$1" >"$T/recv.out"
	rpid=$BG_PID
	wait_line "$T/recv.out" '^port'
	port=$(awk '/^port/ { print $2 }' "$T/recv.out")
}

for who in busybox python huge maxrw; do
	# --- whole: exact ------------------------------------------------
	receiver 0
	sender "$who" "$port"
	bg_wait "$BG_PID" 30 || fail "$who: the sender failed"
	bg_wait "$rpid" 30 || fail "$who: the receiver failed"
	expect_eq "$who, whole: received" "$(awk '/^total/ { print $2 }' "$T/recv.out")" 33554432
	log=$(one_log "$T/logs/$who.*.log")
	expect_eq "$who, whole: bytes_out" "$(q "$log" "tot('bytes_out')")" 33554432
	if [ "$who" = busybox ]; then
		# 16 MiB, 16 MiB and the 0 at the end, as strace shows them.
		expect_eq "$who, whole: calls_out" "$(q "$log" "tot('calls_out')")" 3
	fi

	# --- killed in the middle ------------------------------------------
	receiver 4000000
	sender "$who" "$port"
	spid=$BG_PID
	wait_line "$T/recv.out" '^progress'
	# bg_start runs it under timeout: the sender is its child.
	victim=$(ps -o pid= --ppid "$spid" | tr -d ' ')
	[ -n "$victim" ] || fail "$who: the sender is not running"
	kill -KILL "$victim"
	bg_wait "$rpid" 30 || fail "$who: the receiver failed"
	total=$(awk '/^total/ { print $2 }' "$T/recv.out")
	[ "$total" -lt 33554432 ] || fail "$who: the transfer ended before the kill"
	recovered_killed "$who, killed" "$T/logs/$who.*.log" "$total" 1048576
done

# What the kernel refuses, refused the same (results and positions), with
# the preload and without: a count that carries the file's own position
# (off NULL) or the given offset past the largest, one negative as
# ssize_t, an offset pointer it cannot read; and a count past what one
# call moves, from the start.
cat >"$T/edges.py" <<'PYEOF'
import os, socket, sys
a, b = socket.socketpair()
b.setblocking(False)
path = sys.argv[1]
with open(path, "w+b") as f:
    f.write(b"hello" * 1000)
    f.flush()
    def show(what, pos, off, n):
        f.seek(pos)
        try:
            r = os.sendfile(a.fileno(), f.fileno(), off, n)
        except OSError as e:
            r = e.strerror
        print(what, r, f.tell())
        try:
            while b.recv(65536):
                pass
        except BlockingIOError:
            pass
    big = 2**63 - 1 - (3 << 19)
    show("near the largest position, off NULL", big, None, 2 << 20)
    show("near the largest offset", 0, big, 2 << 20)
    show("a huge count from the position", 0, None, 2**63 - 65536)
    show("a huge count at offset 1 MiB", 0, 1 << 20, 2**63 - 65536)
    show("2 MiB from the start", 0, None, 2 << 20)
    # An offset pointer the kernel cannot read: its EFAULT, not a crash
    # (a review's proof: the library read it first, SIGSEGV).
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.sendfile.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                              ctypes.c_size_t]
    libc.sendfile.restype = ctypes.c_ssize_t
    f.seek(0)
    r = libc.sendfile(a.fileno(), f.fileno(), 16, 2 << 20)
    print("a bad offset pointer", r, os.strerror(ctypes.get_errno()))
PYEOF
"$PY" "$T/edges.py" /dev/shm/sockmeter-sf-$$ >"$T/edges.plain" 2>&1
SOCKMETER_LOG=$T/edges.%p.log LD_PRELOAD="$LIB" "$PY" "$T/edges.py" \
	/dev/shm/sockmeter-sf-$$ >"$T/edges.metered" 2>&1
rm -f /dev/shm/sockmeter-sf-$$
grep -q 'near the largest position, off NULL Invalid argument' "$T/edges.plain" ||
	skip "the kernel here says otherwise: $(cat "$T/edges.plain")"
expect_eq "sendfile edges" "$(cat "$T/edges.metered")" "$(cat "$T/edges.plain")"

# The same under a seccomp filter the program inherited that kills it
# at a process_vm_readv (as systemd's SystemCallFilter=@system-service
# does): the fortieth session's library read the offset with one, for
# every sendfile of more than a piece, and died of SIGSYS there.
[ -x "$PROGS/sclaunch" ] || fail "$PROGS/sclaunch missing (make progs)"
SCLAUNCH_KILL=process_vm_readv SOCKMETER_LOG=$T/edges.f%p.log \
	"$PROGS/sclaunch" allow allow env LD_PRELOAD="$LIB" "$PY" \
	"$T/edges.py" /dev/shm/sockmeter-sf-$$ >"$T/edges.filtered" 2>&1
st=$?
rm -f /dev/shm/sockmeter-sf-$$
expect_eq "sendfile edges under a filter: status" "$st" 0
expect_eq "sendfile edges under a filter" "$(cat "$T/edges.filtered")" \
	"$(cat "$T/edges.plain")"
exit 0
