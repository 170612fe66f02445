# Socket names that are hard to print stay readable, distinct and valid in
# every format.  A unix socket path with a byte that is not UTF-8: the
# Prometheus file stays valid (promtool; one such byte made node_exporter
# drop the whole file), the text log stays UTF-8 text (the byte is '?').
# Abstract names with NULs inside ("\0x\0one", "\0x\0two") read as ss
# reads them, not both as "@x"; a relative path "@x" is not taken for an
# abstract name.
. "$(dirname "$0")/lib.sh"

need socat promtool
p=$(printf '%s/s\377.sock' "$T")
for f in prometheus text; do
	bg_start socat -u "UNIX-LISTEN:$p" - >/dev/null
	wait_socket "$p" "$BG_PID" 10 || fail "socat did not listen"
	echo hello | SOCKMETER_FORMAT=$f SOCKMETER_LOG=$T/odd.$f \
		sm socat -u - "UNIX-CONNECT:$p" || fail "socat failed"
	bg_wait "$BG_PID" 10
done
promtool check metrics <"$T/odd.prometheus" >"$T/promtool.out" 2>&1 ||
	fail "promtool: $(cat "$T/promtool.out")"
grep -qF "peer=\"$(printf '%s/s\357\277\275.sock' "$T")\"" "$T/odd.prometheus" ||
	fail "the peer label: $(grep -a -m1 peer= "$T/odd.prometheus")"
"$PY" -c 'import sys; open(sys.argv[1], encoding="utf-8", errors="strict").read()' \
	"$T/odd.text" 2>"$T/utf8.err" || fail "the text log is not UTF-8: $(cat "$T/utf8.err")"
grep -qF " $T/s?.sock " "$T/odd.text" ||
	fail "the text log's peer: $(grep -a -m1 sock "$T/odd.text")"

cd "$T" || fail "cd $T"
SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/names.log sm "$PY" -c '
import socket
for name in ["@x", "\0x", "\0x\0one", "\0x\0two"]:
    l = socket.socket(socket.AF_UNIX)
    l.bind(name)
    l.listen(1)
    c = socket.socket(socket.AF_UNIX)
    c.connect(name)
    a, _ = l.accept()
    c.send(b"q" * 7)
    a.recv(9)
    for s in (c, a, l):
        s.close()
' || fail "python failed"
expect_eq "the names the clients connected to" \
	"$(q "$T/names.log" "sorted(set(f['peer'] for f in closes(kind='unix') if f['bytes_out'] == 7))")" \
	'["./@x", "@x", "@x@one", "@x@two"]'
exit 0
