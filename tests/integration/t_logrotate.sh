# External rotation with Debian's real logrotate (issue 13), the recipe of
# docs/log.md: `create` mode, no signal, no copytruncate.  While a program
# writes about 2000 close records a second (JSON, interval 0.1), logrotate
# -f rotates its log twice; each time the next batch goes to the new file
# (the library opens the path for every batch, in its own fd table).
# The set app.log, app.log.1, app.log.2 holds every record exactly once,
# whole, and the new files have the mode `create` gave them.
. "$(dirname "$0")/lib.sh"

command -v logrotate >/dev/null || fail "logrotate is not installed (scripts/install-deps)"
need_prog fdrules
log=$T/app.log
cat >"$T/lr.conf" <<CONF
$log {
    create 0640
    rotate 10
    missingok
    nocompress
}
CONF
chmod 0644 "$T/lr.conf"

# wait_bytes FILE N - until FILE exists with more than N bytes.
wait_bytes() {
	local i=0
	until [ -f "$1" ] && [ "$(stat -c %s "$1")" -gt "$2" ]; do
		i=$((i + 1))
		[ "$i" -gt 500 ] && fail "$1 did not grow past $2 bytes"
		sleep 0.01
	done
}

SOCKMETER_LOG=$log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
	bg_start env LD_PRELOAD="$LIB" "$PROGS/fdrules" closerange 3 1000 \
	>"$T/p.out" 2>"$T/p.err"
pid=$BG_PID
for round in 1 2; do
	wait_bytes "$log" 1000
	logrotate -s "$T/lr.state" -f "$T/lr.conf" 2>"$T/lr.$round.err" ||
		fail "logrotate failed: $(cat "$T/lr.$round.err")"
	[ -f "$log.$round" ] || fail "logrotate made no $log.$round"
done
wait_bytes "$log" 1000
bg_wait "$pid" 30 || fail "fdrules failed: $(cat "$T/p.err")"
expect_eq "warnings" "$(sm_lines "$T/p.err")" 0
[ -s "$log.1" ] && [ -s "$log.2" ] || fail "a rotated file is empty"
expect_eq "mode of the file logrotate created" "$(stat -c %a "$log")" 640
pairs=$(field pairs "$T/p.out")
check "$log*" "len(CL) == $((2 * pairs)) and T['fds_closed'] == $((2 * pairs))" "close records over the set"
check "$log*" "len(set((r['type'], r['ts'], json.dumps(r.get('fds'))) for r in R)) == len(R)" "no record twice"
exit 0
