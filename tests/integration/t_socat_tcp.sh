# Two socat processes, both preloaded, move a file over TCP on 127.0.0.1:
# the receiver's accepted connection has bytes_in == file size, the
# sender's connection bytes_out == file size, each on the right addresses,
# and each process's exit record agrees.
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
size=$((3 * 1048576 + 4321))
make_file "$T/src.bin" "$size"
mkdir -p "$T/logs"
socat_send tcp "$T/src.bin" "$T/dest.bin" \
	"LD_PRELOAD=$LIB SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/logs/recv.%p.log" \
	"LD_PRELOAD=$LIB SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/logs/send.%p.log"

recv=$(one_log "$T/logs/recv.*.log")
send=$(one_log "$T/logs/send.*.log")
addr=127.0.0.1:$SOCAT_PORT

# Receiver: the listening socket and the accepted connection.
expect_eq "receiver: tcp connections with local $addr and data" \
	"$(q "$recv" "len([f for f in conns(kind='tcp', local='$addr') if f['bytes_in']])")" 1
expect_eq "receiver: bytes_in of the connection" \
	"$(q "$recv" "[f for f in conns(kind='tcp') if f['bytes_in']][0]['bytes_in']")" "$size"
expect_eq "receiver: bytes_out" "$(q "$recv" "sum(f['bytes_out'] for f in conns())")" 0
expect_eq "receiver: exit bytes_in" "$(q "$recv" "tot('bytes_in')")" "$size"
expect_eq "receiver: exit bytes_out" "$(q "$recv" "tot('bytes_out')")" 0
check "$recv" "[f for f in conns(kind='tcp') if f['bytes_in']][0]['peer'].startswith('127.0.0.1:')" \
	"receiver: peer address"

# Sender.
expect_eq "sender: tcp connections to $addr" \
	"$(q "$send" "len(conns(kind='tcp', peer='$addr'))")" 1
expect_eq "sender: bytes_out of the connection" \
	"$(q "$send" "conns(kind='tcp', peer='$addr')[0]['bytes_out']")" "$size"
expect_eq "sender: bytes_in of the connection" \
	"$(q "$send" "conns(kind='tcp', peer='$addr')[0]['bytes_in']")" 0
expect_eq "sender: exit bytes_out" "$(q "$send" "tot('bytes_out')")" "$size"
check "$send" "E['prog'] == 'socat'" "sender: prog name"
exit 0
