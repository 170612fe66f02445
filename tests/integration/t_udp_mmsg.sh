# UDP with sendmmsg/recvmmsg (tests/progs/udp_mmsg): the sending fd, kind
# "udp", has bytes_out == the sum of the datagram sizes and calls_out ==
# the number of sendmmsg calls; the receiving fd has bytes_in == the same
# sum and calls_in == the number of recvmmsg calls.
. "$(dirname "$0")/lib.sh"

need_prog udp_mmsg
SOCKMETER_LOG=$T/udp.log SOCKMETER_FORMAT=json \
	sm "$PROGS/udp_mmsg" 300 8 >"$T/out" 2>"$T/err" ||
	fail "udp_mmsg failed: $(cat "$T/out" "$T/err")"
log=$T/udp.log
sfd=$(field send_fd "$T/out")
rfd=$(field recv_fd "$T/out")
rport=$(field recv_port "$T/out")
sport=$(field send_port "$T/out")
sent=$(field sent_bytes "$T/out")
scalls=$(field sendmmsg_calls "$T/out")
got=$(field recv_bytes "$T/out")
rcalls=$(field recvmmsg_calls "$T/out")
expect_eq "program: received == sent" "$got" "$sent"

s="closes(kind='udp', fd=$sfd)"
r="closes(kind='udp', fd=$rfd)"
expect_eq "close records of the sender fd $sfd" "$(q "$log" "len($s)")" 1
expect_eq "close records of the receiver fd $rfd" "$(q "$log" "len($r)")" 1
expect_eq "sender bytes_out" "$(q "$log" "${s}[0]['bytes_out']")" "$sent"
expect_eq "sender calls_out (sendmmsg calls)" "$(q "$log" "${s}[0]['calls_out']")" "$scalls"
expect_eq "sender bytes_in" "$(q "$log" "${s}[0]['bytes_in']")" 0
expect_eq "sender peer" "$(q "$log" "${s}[0]['peer']")" "127.0.0.1:$rport"
expect_eq "sender local" "$(q "$log" "${s}[0]['local']")" "127.0.0.1:$sport"
expect_eq "receiver bytes_in" "$(q "$log" "${r}[0]['bytes_in']")" "$sent"
expect_eq "receiver calls_in (recvmmsg calls)" "$(q "$log" "${r}[0]['calls_in']")" "$rcalls"
expect_eq "receiver bytes_out" "$(q "$log" "${r}[0]['bytes_out']")" 0
expect_eq "receiver local" "$(q "$log" "${r}[0]['local']")" "127.0.0.1:$rport"
expect_eq "exit bytes_out" "$(q "$log" "tot('bytes_out')")" "$sent"
expect_eq "exit bytes_in" "$(q "$log" "tot('bytes_in')")" "$sent"
exit 0
