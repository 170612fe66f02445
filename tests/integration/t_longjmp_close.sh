# A data call cut short by a handler that leaves by longjmp, its fd then
# closed: perl with PERL_SIGNALS=unsafe, whose ALRM handler dies out of a
# blocked syswrite (eval), then close and a normal exit.  The partial
# write had moved bytes the wrapper never counted; its note waited for the
# next handler or the exit, by which time the slot held nothing: the
# close record and the totals were short of what the receiver got (by
# 0.4 to 1 MB a run).  Now the close counts it first
# (wrap_signals.c: sm_settle_left).  Then the same twice, the first on a
# full buffer: the second's bytes were lost to the first's stale note.
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

# Twice, the first time on a full buffer (the syswrite had moved nothing:
# the kernel was to restart it) and the second after the reader began:
# the second cut-short syswrite, made from the same place, lost its bytes
# to the first one's stale note (233,155 counted of 1,512,195 read).
PERL_SIGNALS=unsafe SOCKMETER_LOG=$T/twice.%p.log SOCKMETER_FORMAT=json sm perl -e '
use strict; use Socket; use Fcntl;
socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
my $pid = fork() // die "fork: $!";
if (!$pid) {
	close $a; select(undef, undef, undef, 1.6);
	my ($t, $buf, $n) = (0);
	while (($n = sysread($b, $buf, 65536)) > 0) { $t += $n; select(undef, undef, undef, 0.02) }
	print "read=$t\n"; exit 0;
}
close $b;
my $fl = fcntl($a, F_GETFL, 0);
fcntl($a, F_SETFL, $fl | O_NONBLOCK);
1 while defined syswrite($a, "x" x 65536);
fcntl($a, F_SETFL, $fl);
$SIG{ALRM} = sub { die "timeout\n" };
for (1, 2) {
	eval { alarm 1; syswrite($a, "y" x (8 << 20)); alarm 0 };
	$@ eq "timeout\n" or die "syswrite $_ ended with: $@";
}
close $a; waitpid($pid, 0); exit 0' >"$T/twice.out" 2>"$T/twice.err" ||
	fail "perl (twice) failed: $(cat "$T/twice.err")"
got=$(field read "$T/twice.out")
[ "$got" -gt 0 ] || fail "twice: the reader read nothing"
n=0
for f in "$T"/twice.*.log; do
	if [ "$(q "$f" "tot('calls_out')")" != 0 ]; then
		log=$f
		n=$((n + 1))
	fi
done
expect_eq "twice: logs with a write" "$n" 1
expect_eq "twice: the writer's bytes_out vs what the reader read" \
	"$(q "$log" "tot('bytes_out')")" "$got"
exit 0
