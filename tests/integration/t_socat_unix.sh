# The same file transfer over a unix stream socket (UNIX-LISTEN /
# UNIX-CONNECT): kind "unix", bytes_in on the receiver and bytes_out on the
# sender equal the file size, and the socket's path is the receiver's
# local and the sender's peer address.
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
size=$((2 * 1048576 + 999))
make_file "$T/src.bin" "$size"
mkdir -p "$T/logs"
socat_send unix "$T/src.bin" "$T/dest.bin" \
	"LD_PRELOAD=$LIB SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/logs/recv.%p.log" \
	"LD_PRELOAD=$LIB SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/logs/send.%p.log"

recv=$(one_log "$T/logs/recv.*.log")
send=$(one_log "$T/logs/send.*.log")

expect_eq "receiver: unix connections with data" \
	"$(q "$recv" "len([f for f in conns(kind='unix') if f['bytes_in']])")" 1
expect_eq "receiver: bytes_in of the connection" \
	"$(q "$recv" "[f for f in conns(kind='unix') if f['bytes_in']][0]['bytes_in']")" "$size"
expect_eq "receiver: exit bytes_in" "$(q "$recv" "tot('bytes_in')")" "$size"
expect_eq "receiver: tcp fds" "$(q "$recv" "len(conns(kind='tcp'))")" 0
expect_eq "sender: unix connections with data" \
	"$(q "$send" "len([f for f in conns(kind='unix') if f['bytes_out']])")" 1
expect_eq "sender: bytes_out of the connection" \
	"$(q "$send" "[f for f in conns(kind='unix') if f['bytes_out']][0]['bytes_out']")" "$size"
expect_eq "receiver: local address of the connection" \
	"$(q "$recv" "[f for f in conns(kind='unix') if f['bytes_in']][0]['local']")" "$SOCAT_PATH"
expect_eq "sender: peer address of the connection" \
	"$(q "$send" "[f for f in conns(kind='unix') if f['bytes_out']][0]['peer']")" "$SOCAT_PATH"
expect_eq "sender: exit bytes_out" "$(q "$send" "tot('bytes_out')")" "$size"
exit 0
