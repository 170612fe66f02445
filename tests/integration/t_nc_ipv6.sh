# netcat (OpenBSD nc) moves a file over TCP on ::1, both sides preloaded:
# the receiver's connection has bytes_in == file size, the sender's
# bytes_out == file size, and the addresses are written as [::1]:PORT.
# (Falls back to 127.0.0.1 on a machine without IPv6 loopback.)
. "$(dirname "$0")/lib.sh"

command -v nc >/dev/null || fail "nc (netcat-openbsd) is not installed"
host=::1 fam=-6 shown='[::1]'
if ! grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null; then
	host=127.0.0.1 fam=-4 shown=127.0.0.1
fi
size=$((1048576 + 321))
make_file "$T/src.bin" "$size"
mkdir -p "$T/logs"
env="LD_PRELOAD=$LIB SOCKMETER_FORMAT=json"
for try in 1 2 3 4 5; do
	port=$("$PY" -c "import socket
s = socket.socket(socket.AF_INET6 if ':' in '$host' else socket.AF_INET)
s.bind(('$host', 0))
print(s.getsockname()[1])")
	# -d: never read stdin, so the listener ends at the sender's EOF.
	# shellcheck disable=SC2086
	bg_start env $env SOCKMETER_LOG="$T/logs/recv.%p.log" \
		nc $fam -d -l "$host" "$port" >"$T/dest.bin" 2>"$T/recv.err"
	rpid=$BG_PID
	wait_listen "$port" "$rpid" 10 && break
	kill "$rpid" 2>/dev/null
	rm -f "$T"/logs/recv.*
	rpid=
done
[ -n "$rpid" ] || fail "nc listener did not start: $(cat "$T/recv.err")"
# -N: shut the connection down for writing at the end of the file.
# shellcheck disable=SC2086
timeout 30 env $env SOCKMETER_LOG="$T/logs/send.%p.log" \
	nc $fam -N "$host" "$port" <"$T/src.bin" 2>"$T/send.err" ||
	fail "sending nc failed: $(cat "$T/send.err")"
bg_wait "$rpid" 20 || fail "receiving nc failed: $(cat "$T/recv.err")"
cmp -s "$T/src.bin" "$T/dest.bin" || fail "received file differs"

recv=$(one_log "$T/logs/recv.*.log")
send=$(one_log "$T/logs/send.*.log")
addr=$shown:$port
expect_eq "receiver: connections on $addr with data [bytes_in, bytes_out]" \
	"$(q "$recv" "[[f['bytes_in'], f['bytes_out']] for f in conns(kind='tcp', local='$addr') if f['peer']]")" \
	"[[$size, 0]]"
check "$recv" "[f for f in conns(kind='tcp') if f['peer']][0]['peer'].startswith('$shown:')" \
	"receiver: peer address"
expect_eq "receiver: exit bytes_in" "$(q "$recv" "tot('bytes_in')")" "$size"
expect_eq "sender: connections to $addr [bytes_in, bytes_out]" \
	"$(q "$send" "[[f['bytes_in'], f['bytes_out']] for f in conns(kind='tcp', peer='$addr')]")" \
	"[[0, $size]]"
expect_eq "sender: exit bytes_out" "$(q "$send" "tot('bytes_out')")" "$size"
exit 0
