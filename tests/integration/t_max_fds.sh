# [track] max_fds: how many fd numbers are metered.  Python moves bytes
# over a socketpair on low fds and over one whose end is dup2'ed to fd 100:
#  - by default (capacity: the RLIMIT_NOFILE hard limit, at least 1,024)
#    every byte is counted, and nothing is said;
#  - with max_fds = 64 (SOCKMETER_MAX_FDS, or the config file) fd 100 is
#    passed through: its bytes are not counted, the low fds' are, exactly,
#    and one warning names the fd and the capacity (the traffic it cannot
#    see is never missed silently); the tables' reservation shrinks
#    (VmSize), which is what the key is for (strict overcommit charges
#    every reserved page: docs/config.md).
. "$(dirname "$0")/lib.sh"
need python3

cat >"$T/prog.py" <<'PYEOF'
import os, socket
a, b = socket.socketpair()
a.sendall(b"x" * 1000)
assert len(b.recv(1000)) == 1000
c, d = socket.socketpair()
os.dup2(c.fileno(), 100)
c.close()
e = socket.socket(fileno=100)
e.sendall(b"y" * 500)
assert len(d.recv(500)) == 500
d.sendall(b"z" * 300)
assert len(e.recv(300)) == 300
for line in open("/proc/self/status"):
    if line.startswith("VmSize:"):
        print("vmsize=%s" % line.split()[1])
PYEOF

run() { # NAME ENV... - run the program under the preload
	local name=$1
	shift
	mkdir -p "$T/$name"
	env SOCKMETER_LOG="$T/$name/%p.log" SOCKMETER_FORMAT=json "$@" \
		timeout 30 env LD_PRELOAD="$LIB" "$PY" "$T/prog.py" \
		>"$T/$name.out" 2>"$T/$name.err" ||
		fail "$name: the program failed: $(cat "$T/$name.err")"
}

totals() { # NAME - [bytes_out, bytes_in] of the exit record
	q "$(one_log "$T/$1/*.log")" \
		"[E['totals']['bytes_out'], E['totals']['bytes_in']]"
}

run default
expect_eq "default: [bytes_out, bytes_in]" "$(totals default)" "[1800, 1800]"
[ ! -s "$T/default.err" ] || fail "default: said $(cat "$T/default.err")"

run env SOCKMETER_MAX_FDS=64
# Low fds only: a's 1000 out, b's 1000 in, d's 500 in and 300 out.
expect_eq "max_fds 64: [bytes_out, bytes_in]" "$(totals env)" "[1300, 1500]"
expect_eq "max_fds 64: warnings" "$(grep -c . "$T/env.err")" 1
grep -q "fd 100 is beyond the 64 fds metered" "$T/env.err" ||
	fail "max_fds 64: the warning does not name fd 100 and 64: $(cat "$T/env.err")"

printf '[track]\nmax_fds = 64\n' >"$T/sm.ini"
run ini SOCKMETER_CONFIG="$T/sm.ini"
expect_eq "max_fds 64 (config file): [bytes_out, bytes_in]" "$(totals ini)" "[1300, 1500]"
expect_eq "max_fds 64 (config file): warnings" "$(grep -c . "$T/ini.err")" 1

big=$(field vmsize "$T/default.out")
small=$(field vmsize "$T/env.out")
echo "VmSize: $big kB by default (hard limit $(ulimit -Hn)), $small kB with max_fds = 64"
[ "$small" -lt "$big" ] || fail "max_fds 64 did not shrink VmSize ($small kB, default $big kB)"

# A C program that ends at once (its exit record made by the exiting
# thread, not the ticker) says it too: tests/progs/highfd, pairs on 10 and
# 100 (and their dups on 12 and 102), max_fds 64.
need_prog highfd
SOCKMETER_LOG=$T/c.log SOCKMETER_FORMAT=json SOCKMETER_MAX_FDS=64 \
	sm "$PROGS/highfd" 10 100 >"$T/c.out" 2>"$T/c.err" ||
	fail "highfd failed: $(cat "$T/c.err")"
grep -q "pair fd=100 peer=101 dupfd=102 bytes=10100" "$T/c.out" ||
	fail "highfd: fd 100 moved less: $(cat "$T/c.out")"
expect_eq "highfd, max_fds 64: [bytes_out, bytes_in] (fds 10 to 12 only)" \
	"$(q "$T/c.log" "[E['totals']['bytes_out'], E['totals']['bytes_in']]")" "[10020, 10020]"
expect_eq "highfd, max_fds 64: warnings" "$(grep -c . "$T/c.err")" 1
grep -q "fd 100 is beyond the 64 fds metered" "$T/c.err" ||
	fail "highfd, max_fds 64: the warning does not name fd 100: $(cat "$T/c.err")"

# Each process tells of its own: a fork child (its parent had one beyond
# the table too), and an exec'ed child that dup2s an inherited socket,
# whose kind it has not learned yet, beyond the table.
cat >"$T/procs.py" <<'PYEOF'
import os, socket, subprocess, sys
if len(sys.argv) > 1:
    fd = int(sys.argv[1])
    os.dup2(fd, 120)
    os.write(120, b"e" * 200)
    sys.exit(0)
a, b = socket.socketpair()
os.dup2(a.fileno(), 100)
os.write(100, b"p" * 100)
assert len(b.recv(100)) == 100
pid = os.fork()
if pid == 0:
    os.dup2(a.fileno(), 110)
    os.write(110, b"c" * 150)
    os._exit(0)
os.waitpid(pid, 0)
assert len(b.recv(150)) == 150
subprocess.run([sys.executable, sys.argv[0], str(a.fileno())],
               pass_fds=[a.fileno()], check=True)
assert len(b.recv(200)) == 200
PYEOF
mkdir -p "$T/procs"
SOCKMETER_LOG=$T/procs/%p.log SOCKMETER_MAX_FDS=64 \
	sm "$PY" "$T/procs.py" >"$T/procs.out" 2>"$T/procs.err" ||
	fail "procs.py failed: $(cat "$T/procs.err")"
for fd in 100 110 120; do
	grep -q "fd $fd is beyond the 64 fds metered" "$T/procs.err" ||
		fail "no warning for fd $fd: $(cat "$T/procs.err")"
done
expect_eq "procs: warnings" "$(grep -c . "$T/procs.err")" 3
