# A process killed right after its exit record reached the log, before
# its state file said so (strace sends SIGKILL at the system call that
# follows the write): the recovery finds that record in the log and does
# not write a second one ("end":"killed") after it, text and JSON.  A
# process killed before its record was written still gets it from the
# recovery.  The state file says STATE_ENDING while the record is written.
. "$(dirname "$0")/lib.sh"
need strace
launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
# victim: a socketpair, 100 bytes each way, _exit.
cat >"$T/victim.py" <<'PYEOF'
import os, socket
a, b = socket.socketpair()
a.send(b"x" * 100)
b.recv(100)
os._exit(0)
PYEOF
for fmt in text json; do
	for when in 2 1; do
		d=$T/$fmt.$when
		mkdir -p "$d/state"
		# Named after the process (%p): run as root, the recovery
		# appends to an empty or torn log only when it is (see
		# docs/state.md: what root's recovery writes to).
		SOCKMETER_FORMAT=$fmt SOCKMETER_STATE=$d/state SOCKMETER_LOG=$d/v.%p.log \
			timeout 30 strace -f -o /dev/null -e trace=rt_sigpending \
			-e inject=rt_sigpending:signal=KILL:when=$when \
			env LD_PRELOAD="$LIB" "$PY" "$T/victim.py" >/dev/null 2>&1
		"$launcher" recover "$d/state" 2>"$d/rec" || fail "recover: $(cat "$d/rec")"
		log=$(one_log "$d/v.*.log")
		n=$(grep -c '^{"type":"exit"\| sockmeter exit ' "$log" 2>/dev/null)
		expect_eq "$fmt, kill at write $when: exit records" "$n" 1
		grep -q 'bytes_in.\{1,3\}100[^0-9]' "$log" || fail "$fmt: totals: $(cat "$log")"
		expect_eq "$fmt, kill at write $when: state files left" "$(ls "$d/state" | wc -l)" 0
	done
done
exit 0
