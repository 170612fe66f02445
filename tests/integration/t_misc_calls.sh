# The rest of the data calls, from python3: writev/readv, sendmsg/recvmsg,
# send/recv_into and socket.sendfile (sendfile(2) from a file), and
# accept4 (socket.accept) on a TCP listener: exact bytes and calls per fd.
. "$(dirname "$0")/lib.sh"

make_file "$T/sf.bin" 150001
cat >"$T/misc.py" <<'PYEOF'
import os, socket, sys
a, b = socket.socketpair()
out = inn = 0
out += os.writev(a.fileno(), [b"a" * 100, b"b" * 200, b"c" * 300])
inn += os.readv(b.fileno(), [bytearray(250), bytearray(400)])
out += a.sendmsg([b"x" * 1000, b"y" * 24])
inn += len(b.recvmsg(4096)[0])
out += a.send(b"z" * 5000)
inn += b.recv_into(bytearray(8192))
with open(sys.argv[1], "rb") as f:
    sf = a.sendfile(f)
out += sf
while inn < out:
    inn += len(b.recv(65536))
print("pair_fds=%d,%d" % (a.fileno(), b.fileno()))
print("pair_bytes=%d" % out)
a.close(); b.close()

# TCP: accept (accept4 in glibc) on 127.0.0.1, both ends in this process.
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
c = socket.create_connection(ls.getsockname())
s, peer = ls.accept()
c.sendall(b"t" * 70000)
got = 0
while got < 70000:
    got += len(s.recv(65536))
s.sendall(b"r" * 333)
back = 0
while back < 333:
    back += len(c.recv(1000))
print("tcp_client_fd=%d\ntcp_server_fd=%d" % (c.fileno(), s.fileno()))
print("tcp_port=%d\nclient_port=%d" % (ls.getsockname()[1], c.getsockname()[1]))
c.close(); s.close(); ls.close()
PYEOF
SOCKMETER_LOG=$T/m.log SOCKMETER_FORMAT=json \
	sm "$PY" "$T/misc.py" "$T/sf.bin" >"$T/out" 2>"$T/err" ||
	fail "misc.py failed: $(cat "$T/err")"
log=$T/m.log
fds=$(field pair_fds "$T/out")
n=$(field pair_bytes "$T/out")
expect_eq "pair: bytes python counted" "$n" $((600 + 1024 + 5000 + 150001))
expect_eq "pair: first end [bytes_out, bytes_in]" \
	"$(q "$log" "[[f['bytes_out'], f['bytes_in']] for f in closes(fd=${fds%,*}, kind='unix')]")" "[[$n, 0]]"
expect_eq "pair: second end [bytes_in, bytes_out]" \
	"$(q "$log" "[[f['bytes_in'], f['bytes_out']] for f in closes(fd=${fds#*,}, kind='unix')]")" "[[$n, 0]]"
# writev, sendmsg, send and at least one sendfile call; readv, recvmsg,
# recv_into and at least one recv.
check "$log" "closes(fd=${fds%,*})[0]['calls_out'] >= 4" "pair: calls_out"
check "$log" "closes(fd=${fds#*,})[0]['calls_in'] >= 4" "pair: calls_in"
port=$(field tcp_port "$T/out")
cport=$(field client_port "$T/out")
cfd=$(field tcp_client_fd "$T/out")
sfd=$(field tcp_server_fd "$T/out")
expect_eq "tcp client [peer, bytes_out, bytes_in]" \
	"$(q "$log" "[[f['peer'], f['bytes_out'], f['bytes_in']] for f in closes(fd=$cfd, kind='tcp')]")" \
	"[[\"127.0.0.1:$port\", 70000, 333]]"
expect_eq "tcp accepted [local, peer, bytes_in, bytes_out]" \
	"$(q "$log" "[[f['local'], f['peer'], f['bytes_in'], f['bytes_out']] for f in closes(fd=$sfd, kind='tcp')]")" \
	"[[\"127.0.0.1:$port\", \"127.0.0.1:$cport\", 70000, 333]]"
exit 0
