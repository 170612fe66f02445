# [track]: pipes and regular files are not metered by default; with
# pipes = true and files = true they are (kinds "pipe" and "file", exact
# bytes); with unix = false unix sockets are not, while the rest still is.
. "$(dirname "$0")/lib.sh"

cat >"$T/kinds.py" <<'PYEOF'
import os, socket, sys
r, w = os.pipe()
os.write(w, b"p" * 3000)
os.read(r, 5000)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(fd, b"f" * 7000)
os.close(fd)
a, b = socket.socketpair()
a.send(b"u" * 500)
b.recv(1000)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
u.sendto(b"d" * 222, u.getsockname())
u.recv(1000)
print("pipe_r=%d\npipe_w=%d\nfile=%d\nsock_a=%d\nsock_b=%d\nudp=%d"
      % (r, w, fd, a.fileno(), b.fileno(), u.fileno()))
os.close(r); os.close(w); a.close(); b.close(); u.close()
PYEOF
# python3 reads its own modules through fds too (counted as "file" when
# files are on): leave out files that were only read.
summary() { # the [kind, in, out] of the close records of the fds listed
	echo "sorted([f['kind'], f['bytes_in'], f['bytes_out']] for f in CL if f['fd'] in ($fds) and not (f['kind'] == 'file' and not f['bytes_out']))"
}
run() { # NAME INI - run kinds.py with that [track] section
	printf '[track]\n%b' "$2" >"$T/$1.ini"
	SOCKMETER_CONFIG=$T/$1.ini SOCKMETER_LOG=$T/$1.log SOCKMETER_FORMAT=json \
		sm "$PY" -S "$T/kinds.py" "$T/$1.file" >"$T/$1.out" 2>"$T/$1.err" ||
		fail "$1: kinds.py failed: $(cat "$T/$1.err")"
	[ -s "$T/$1.err" ] && fail "$1: stderr: $(cat "$T/$1.err")"
	fds=""
	for k in pipe_r pipe_w file sock_a sock_b udp; do
		fds="$fds$(field $k "$T/$1.out"),"
	done
}

run defaults ""
expect_eq "defaults: [kind, in, out] of the program's fds" \
	"$(q "$T/defaults.log" "$(summary)")" \
	'[["udp", 222, 222], ["unix", 0, 500], ["unix", 500, 0]]'
check "$T/defaults.log" "not [f for f in CL if f['kind'] in ('pipe', 'file')]" \
	"defaults: pipes or files metered"

run on 'pipes = true\nfiles = true\n'
expect_eq "pipes+files: [kind, in, out] of the program's fds" \
	"$(q "$T/on.log" "$(summary)")" \
	'[["file", 0, 7000], ["pipe", 0, 3000], ["pipe", 3000, 0], ["udp", 222, 222], ["unix", 0, 500], ["unix", 500, 0]]'

run nounix 'unix = false\n'
expect_eq "unix = false: [kind, in, out] of the program's fds" \
	"$(q "$T/nounix.log" "$(summary)")" \
	'[["udp", 222, 222]]'
check "$T/nounix.log" "not [f for f in conns() if f['kind'].startswith('unix')]" \
	"unix = false: unix sockets metered"
exit 0
