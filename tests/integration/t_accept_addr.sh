# accept's peer address comes from accept itself (preload/wrappers.c,
# accept_common), not from one more getpeername.  Through libc's own
# accept/accept4 (python3's ctypes, so that the address arguments can be
# NULL or short): a TCP listener given no buffer (the preload passes one of
# its own), an IPv6 peer in a buffer too short for it (the caller's buffer
# and length are exactly what the kernel left: the rest of it untouched;
# the log's peer from getpeername), a buffer that holds it, and a unix
# listener given no buffer.  Each accepted connection's close record has the
# local and peer addresses python saw and the exact bytes.
. "$(dirname "$0")/lib.sh"

cat >"$T/acc.py" <<'PYEOF'
import ctypes, json, socket, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.accept.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
libc.accept4.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.c_int]
truth = []

def show(fam, a):
    if fam == socket.AF_INET6:
        return "[%s]:%d" % (a[0], a[1])
    if fam == socket.AF_INET:
        return "%s:%d" % a
    return a or ""

def one(fam, bind, how, n_in, n_out):
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.bind(bind)
    ls.listen(1)
    c = socket.socket(fam, socket.SOCK_STREAM)
    c.connect(ls.getsockname())
    if how == "null":
        fd = libc.accept(ls.fileno(), None, None)
    else:
        cap = 16 if how == "short" else 128
        buf = ctypes.create_string_buffer(b"\xaa" * 160, 160)
        ln = ctypes.c_uint32(cap)
        fd = libc.accept4(ls.fileno(), buf, ctypes.byref(ln), 0)
        real = 28 if fam == socket.AF_INET6 else 16
        assert ln.value == real, "%s: len %d, expected %d" % (how, ln.value, real)
        assert buf.raw[cap:] == b"\xaa" * (160 - cap), \
            "%s: accept wrote past the caller's length" % how
        assert buf.raw[:2] != b"\xaa\xaa", "%s: no family written" % how
    assert fd >= 0, "accept failed: errno %d" % ctypes.get_errno()
    s = socket.socket(fileno=fd)
    c.sendall(b"q" * n_in)
    got = 0
    while got < n_in:
        got += len(s.recv(65536))
    s.sendall(b"r" * n_out)
    got = 0
    while got < n_out:
        got += len(c.recv(65536))
    truth.append({"fd": fd, "how": how,
                  "local": show(fam, s.getsockname()),
                  "peer": show(fam, c.getsockname()) if fam != socket.AF_UNIX
                  else "",
                  "in": n_in, "out": n_out})
    s.close(); c.close(); ls.close()

one(socket.AF_INET, ("127.0.0.1", 0), "null", 1001, 2002)
one(socket.AF_INET6, ("::1", 0), "short", 3003, 4004)
one(socket.AF_INET6, ("::1", 0), "whole", 5005, 6006)
one(socket.AF_INET, ("127.0.0.1", 0), "whole", 7007, 8008)
one(socket.AF_UNIX, sys.argv[1], "null", 9009, 1111)
print(json.dumps(truth))
PYEOF
SOCKMETER_LOG=$T/a.log SOCKMETER_FORMAT=json \
	sm "$PY" "$T/acc.py" "$T/u.sock" >"$T/out" 2>"$T/err" ||
	fail "acc.py failed: $(tail -n 3 "$T/err")"
cat >"$T/check.py" <<PYEOF
truth = json.load(open("$T/out"))
assert len(truth) == 5
for t in truth:
    got = [f for f in CL if f["fd"] == t["fd"] and f["bytes_in"] == t["in"]]
    assert len(got) == 1, "%s: %d close records with fd %d and %d bytes in" % (
        t["how"], len(got), t["fd"], t["in"])
    f = got[0]
    assert (f["bytes_in"], f["bytes_out"]) == (t["in"], t["out"]), \
        "%s: bytes %s/%s, expected %s/%s" % (t["how"], f["bytes_in"],
                                             f["bytes_out"], t["in"], t["out"])
    assert (f.get("local", ""), f.get("peer", "")) == (t["local"], t["peer"]), \
        "%s: local/peer %r %r, python saw %r %r" % (
            t["how"], f.get("local"), f.get("peer"), t["local"], t["peer"])
PYEOF
check_py "$T/a.log" "$T/check.py" "accepted connections"
exit 0
