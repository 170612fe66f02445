# A TCP connection closed by fclose or freopen, with output still in the
# FILE's buffer: its close record carries the kernel's view like a close()
# (wrap_fds.c: tcp_last_word flushes first, through the counted path, then
# reads TCP_INFO, then lets libc close).  Before, such a record had no
# "tcp" view and no unseen counts: bytes a wide stream wrote (libc's
# internal write, which no wrapper sees) went unflagged, 400,000 of them in
# a helper's run (tnftp closes its sockets this way).  The program sees
# what it sees without the preload, a flush that fails in the close
# included (fclose -1, ECONNRESET).
. "$(dirname "$0")/lib.sh"
SM_UNSEEN_OK=1 # the wide case's bytes are the kernel's alone, on purpose
need strace
need_prog tcpfclose
P=$PROGS/tcpfclose
plain "$P" >"$T/plain.out" || fail "tcpfclose failed without the preload"
SOCKMETER_LOG=$T/tf.log SOCKMETER_FORMAT=json sm "$P" >"$T/pre.out" ||
	fail "tcpfclose failed under the preload"
# Same outcome, the reset's fclose result and errno included (ports differ).
strip() { sed 's/port=[0-9]* //' "$1"; }
[ "$(strip "$T/plain.out")" = "$(strip "$T/pre.out")" ] ||
	fail "another outcome: $(diff <(strip "$T/plain.out") <(strip "$T/pre.out"))"
for c in reset wreset; do
	grep -q "^$c fclose=-1 errno=" <(strip "$T/pre.out") ||
		fail "the $c case's close did not fail: $(cat "$T/pre.out")"
done
# One write of the wide buffer, as without the preload (a second one had
# made EPIPE of ECONNRESET, and a SIGPIPE).
SOCKMETER_LOG=$T/st.log sm strace -f -qq -e trace=write -o "$T/strace" "$P" >/dev/null ||
	fail "tcpfclose under strace failed"
expect_eq "writes of the wide reset case's buffer" \
	"$(grep -c 'write([0-9]*, "wreset' "$T/strace")" 1
# rec CASE KEY: KEY of the client's close record in CASE, as a list;
# sent: what the kernel's view says was written (sent once, or queued).
rec() {
	local port
	port=$(sed -n "s/^$1 port=\([0-9]*\).*/\1/p" "$T/pre.out")
	q "$T/tf.log" "[c['tcp']['bytes_sent'] - c['tcp']['bytes_retrans'] + c['tcp']['notsent'] if '$2' == 'sent' and 'tcp' in c else -1 if '$2' == 'sent' else c.get('$2', -1) for c in closes(local='127.0.0.1:$port')]"
}
for c in narrow big freopen; do
	read=$(sed -n "s/^$c port=[0-9]* read=\([0-9]*\)$/\1/p" "$T/pre.out")
	expect_eq "$c: bytes_out" "$(rec $c bytes_out)" "[$read]"
	expect_eq "$c: written, by the kernel's view" "$(rec $c sent)" "[$read]"
	expect_eq "$c: bytes_out_unseen" "$(rec $c bytes_out_unseen)" "[0]"
done
read=$(sed -n "s/^wide port=[0-9]* read=\([0-9]*\)$/\1/p" "$T/pre.out")
expect_eq "wide: bytes_out (libc's own write)" "$(rec wide bytes_out)" "[0]"
expect_eq "wide: bytes_out_unseen" "$(rec wide bytes_out_unseen)" "[$read]"
expect_eq "reset: bytes_out" "$(rec reset bytes_out)" "[0]"
expect_eq "reset: bytes_out_unseen" "$(rec reset bytes_out_unseen)" "[0]"
expect_eq "wreset: bytes_out_unseen" "$(rec wreset bytes_out_unseen)" "[0]"
exit 0
