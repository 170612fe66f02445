# close() releases what the program's close alone would: the ticker reads
# each tracked fd every interval through a copy of it (pidfd_getfd,
# core/progfd.c), and a listener closed while the copy was held kept its
# port bound after close() returned, so the program's next bind failed
# with EADDRINUSE.  tests/progs/rebind binds, listens and closes one port
# in a loop; strace slows it (and shows that the copies were made), which
# made about a dozen binds fail per run before the fix.
. "$(dirname "$0")/lib.sh"
need strace
port=$(free_port)
SOCKMETER_INTERVAL=0.1 SOCKMETER_LOG=$T/rb.log \
	sm strace -f -qq -e trace=pidfd_getfd -o "$T/strace.txt" \
	"$PROGS/rebind" "$port" 2 >"$T/out" || fail "rebind failed: $(cat "$T/out")"
copies=$(grep -c 'pidfd_getfd(.*) *= [0-9]' "$T/strace.txt")
[ "$copies" -ge 5 ] || fail "the ticker made $copies copies: nothing was tested"
grep -q ' failed=0$' "$T/out" || fail "binds failed after close: $(cat "$T/out") ($copies copies)"
exit 0
