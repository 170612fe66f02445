# libc's syscall() gets what the named wrappers get (tests/progs/rawcalls:
# every number the preload treats, through syscall()): the same return
# values and errno with and without the preload, six arguments passed on
# untouched; and the log has each connection's close record with exactly
# the bytes and calls made through syscall(), a MSG_PEEK counted as
# nothing, a close_range(CLOSE_RANGE_CLOEXEC) closing nothing, and a TCP
# socket closed by SYS_close_range retired before the kernel closed it (its
# record has the kernel's view).
. "$(dirname "$0")/lib.sh"

need_prog rawcalls
plain "$PROGS/rawcalls" >"$T/plain.out" 2>&1 ||
	fail "rawcalls fails even without the preload: $(grep FAIL "$T/plain.out" | head -n 3)"
SOCKMETER_LOG=$T/r.log SOCKMETER_FORMAT=json \
	sm "$PROGS/rawcalls" >"$T/out" 2>"$T/err" ||
	fail "rawcalls fails under the preload: $(grep FAIL "$T/out" | head -n 3)"
grep -v '^fd_' "$T/plain.out" >"$T/plain.cmp"
grep -v '^fd_' "$T/out" >"$T/out.cmp"
diff "$T/plain.cmp" "$T/out.cmp" >"$T/diff" ||
	fail "results differ with the preload: $(head -n 4 "$T/diff")"
cat >"$T/r.py" <<PYEOF
def one(fd, kind):
    got = [f for f in CL if f["fd"] == fd and f["kind"] == kind]
    assert got, "no %s close record for fd %d" % (kind, fd)
    return got[-1]
o = one($(field fd_out "$T/out"), "unix")
assert (o["bytes_out"], o["calls_out"]) == ($(field pair_out "$T/out"), 6), \
    "sender: %d bytes in %d calls" % (o["bytes_out"], o["calls_out"])
i = one($(field fd_in "$T/out"), "unix")
assert (i["bytes_in"], i["calls_in"]) == ($(field pair_in "$T/out"), 7), \
    "receiver: %d bytes in %d calls (a MSG_PEEK counted?)" % (
        i["bytes_in"], i["calls_in"])
d = one($(field fd_dup3 "$T/out"), "unix")
assert d["bytes_out"] == $(field dup_out "$T/out"), "dup3: %d" % d["bytes_out"]
c = one($(field fd_tcp_client "$T/out"), "tcp")
a = one($(field fd_tcp_accepted "$T/out"), "tcp")
assert c["bytes_out"] == a["bytes_in"] == $(field tcp_bytes "$T/out"), "tcp"
assert c["peer"] == a["local"] and c["local"] == a["peer"], "tcp addresses"
# Both ends retired while their sockets were open (SYS_close_range as
# SYS_close): the kernel's last word is in each record.
for end, f in (("client (SYS_close_range)", c), ("accepted (SYS_close)", a)):
    assert "tcp" in f and f["tcp"]["bytes_acked"] + f["tcp"]["bytes_received"] >= $(field tcp_bytes "$T/out"), \
        "%s: no kernel's view in its close record: %s" % (end, f)
u = one($(field fd_udp "$T/out"), "udp")
assert u["bytes_out"] == 77 and u["errors_out"]["other"] == 1, "udp: %s" % u
# Each close was one the wrapper saw (syscall(SYS_close) and friends), not
# one the ticker noticed later with the same numbers.
unseen = [f["fd"] for f in CL if f.get("close_seen", True) is not True]
assert not unseen, "closes not seen: fds %s" % unseen
assert T["fds_open"] == 0 and T["fds_closed"] == len(CL), \
    "fds_open %d, fds_closed %d, %d records" % (T["fds_open"], T["fds_closed"], len(CL))
PYEOF
check_py "$T/r.log" "$T/r.py"

# An exec made through syscall(SYS_execve) or syscall(SYS_execveat) writes
# the exec record, as execve() does, and leaves no state file of the old
# image behind (it had none: the old image's numbers came back later as a
# process "killed", or never).
cat >"$T/sysexec.py" <<'PYEOF'
import ctypes, os, socket, sys
a, b = socket.socketpair()
a.sendall(b"y" * 60)
assert len(b.recv(100)) == 60
libc = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": {"execve": 59, "execveat": 322},
      "aarch64": {"execve": 221, "execveat": 281}}[os.uname().machine][sys.argv[1]]
argv = (ctypes.c_char_p * 2)(b"/bin/true", None)
envp = ctypes.c_void_p.in_dll(libc, "environ")
if sys.argv[1] == "execve":
    libc.syscall(nr, b"/bin/true", argv, envp)
else:
    libc.syscall(nr, -100, b"/bin/true", argv, envp, 0)  # AT_FDCWD
sys.exit("exec failed: errno %d" % ctypes.get_errno())
PYEOF
for how in execve execveat; do
	mkdir -m 700 "$T/st-$how"
	SOCKMETER_LOG=$T/x-$how.%p.log SOCKMETER_FORMAT=json \
		SOCKMETER_STATE=$T/st-$how sm "$PY" "$T/sysexec.py" "$how" \
		>"$T/x-$how.out" 2>&1 || fail "$how: $(tail -n 2 "$T/x-$how.out")"
	log=$(one_log "$T/x-$how.*.log")
	expect_eq "$how: exec record [bytes_out, bytes_in]" \
		"$(q "$log" "[X[0]['totals']['bytes_out'], X[0]['totals']['bytes_in']]")" \
		"[60, 60]"
	left=$(find "$T/st-$how" -name '*.state' | wc -l)
	expect_eq "$how: state files left" "$left" 0
done
# syscall(SYS_setrlimit) and syscall(SYS_prlimit64) pass through: their
# return value is no fd (a review found them taken for a dup of fd
# <resource> onto fd 0: a file on stdin was counted as a unix socket).
cat >"$T/rlim.py" <<'PYEOF'
import ctypes, os, resource, socket
a, b = socket.socketpair()  # fds 3 and 4: RLIMIT_CORE is 4
libc = ctypes.CDLL(None, use_errno=True)
class RL(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_uint64), ("max", ctypes.c_uint64)]
nr = {"x86_64": (160, 302), "aarch64": (164, 261)}[os.uname().machine]
rl = RL(*resource.getrlimit(resource.RLIMIT_CORE))
assert libc.syscall(nr[0], resource.RLIMIT_CORE, ctypes.byref(rl)) == 0
assert libc.syscall(nr[1], 0, resource.RLIMIT_CORE, ctypes.byref(rl), None) == 0
assert libc.syscall(nr[1], os.getppid(), resource.RLIMIT_CORE, None, ctypes.byref(rl)) == 0
print("read=%d" % len(os.read(0, 1000)))
a.sendall(b"z" * 10)
PYEOF
head -c 500 /dev/zero >"$T/in.bin"
SOCKMETER_LOG=$T/rl.%p.log SOCKMETER_FORMAT=json \
	sm "$PY" "$T/rlim.py" <"$T/in.bin" >"$T/rl.out" 2>&1 || fail "rlim: $(tail -n 2 "$T/rl.out")"
expect_eq "rlim: stdin read" "$(field read "$T/rl.out")" 500
log=$(one_log "$T/rl.*.log")
check "$log" "not [f for f in conns(fd=0) if f['kind'] in ('unix', 'tcp', 'udp')]" \
	"rlim: fd 0 (a file) taken for a socket"
expect_eq "rlim: unix bytes_out" "$(q "$log" "sum(f['bytes_out'] for f in conns(kind='unix'))")" 10
exit 0
