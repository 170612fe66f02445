# A data call cut short by a handler that leaves by longjmp, its fd then
# closed: perl with PERL_SIGNALS=unsafe, whose ALRM handler dies out of a
# blocked syswrite (eval), then close and a normal exit.  The partial
# write had moved bytes the wrapper never counted; its note waited for the
# next handler or the exit, by which time the slot held nothing: the
# close record and the totals were short of what the receiver got (by
# 0.4 to 1 MB a run).  Now the close counts it first
# (wrap_signals.c: sm_settle_left).
. "$(dirname "$0")/lib.sh"
need perl
perl -MIO::Socket::INET -e 1 2>/dev/null || skip "perl has no IO::Socket::INET"
port=$(free_port)
# The receiver reads nothing for 2 s (the sender blocks with its buffers
# full, the alarm cuts its write short), then everything.
bg_start "$PY" -c '
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
c, _ = l.accept(); time.sleep(2); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    n += len(b)
open(sys.argv[2], "w").write("%d\n" % n)' "$port" "$T/got"
wait_listen "$port" "$BG_PID" 10 || fail "the receiver did not start"
rpid=$BG_PID
PERL_SIGNALS=unsafe SOCKMETER_LOG=$T/perl.%p.log SOCKMETER_FORMAT=json sm perl -MIO::Socket::INET -e '
my $s = IO::Socket::INET->new("127.0.0.1:'"$port"'") or die "connect: $!";
my $b = "x" x (1 << 20);
eval { local $SIG{ALRM} = sub { die "timeout\n" }; alarm 1;
       while (1) { defined(syswrite($s, $b)) or die "write: $!" } };
$@ eq "timeout\n" or die "left the loop with: $@";
close $s; exit 0' 2>"$T/perl.err" || fail "perl failed: $(cat "$T/perl.err")"
wait "$rpid" 2>/dev/null
got=$(cat "$T/got")
log=$(one_log "$T/perl.*.log")
[ "$got" -gt 1048576 ] || fail "the receiver got only $got bytes"
[ $((got % 1048576)) != 0 ] || skip "no write was cut short this time (got $got)"
expect_eq "close record's bytes_out" "$(q "$log" "csum('bytes_out', kind='tcp')")" "$got"
expect_eq "exit totals' bytes_out" "$(q "$log" "tot('bytes_out')")" "$got"
exit 0
