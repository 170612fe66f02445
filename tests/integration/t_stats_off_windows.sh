# [stats] windows = false: no "rates" anywhere, bytes still exact.
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
printf '[stats]\nwindows = false\n' >"$T/cfg.ini"
size=$((1048576 + 78))
make_file "$T/src.bin" "$size"
mkdir -p "$T/logs"
env="LD_PRELOAD=$LIB SOCKMETER_CONFIG=$T/cfg.ini SOCKMETER_FORMAT=json"
socat_send tcp "$T/src.bin" "$T/dest.bin" \
	"$env SOCKMETER_LOG=$T/logs/recv.%p.log" "$env SOCKMETER_LOG=$T/logs/send.%p.log"
recv=$(one_log "$T/logs/recv.*.log")
send=$(one_log "$T/logs/send.*.log")
for log in "$recv" "$send"; do
	check "$log" "'rates' not in keys()" "rates in $(basename "$log")"
	check "$log" "{'bytes_in', 'sizes_in', 'errors_in', 'peer'} <= keys()" \
		"enabled categories in $(basename "$log")"
done
expect_eq "receiver: exit bytes_in" "$(q "$recv" "tot('bytes_in')")" "$size"
expect_eq "sender: exit bytes_out" "$(q "$send" "tot('bytes_out')")" "$size"
expect_eq "sender: connection bytes_out" \
	"$(q "$send" "[f['bytes_out'] for f in conns(kind='tcp', peer='127.0.0.1:$SOCAT_PORT')]")" "[$size]"
# The control: the same slow stream with windows on (the default) has rates
# once a whole bucket has passed, and with windows off has none.
need_prog slow_sender
for w in true false; do
	printf '[stats]\nwindows = %s\n' "$w" >"$T/w.ini"
	SOCKMETER_CONFIG=$T/w.ini SOCKMETER_LOG=$T/slow.$w.log SOCKMETER_FORMAT=json \
		SOCKMETER_INTERVAL=0.5 sm "$PROGS/slow_sender" 30 50 1000 "$T/times.$w" \
		>"$T/out.$w" 2>&1 || fail "slow_sender failed: $(cat "$T/out.$w")"
done
check "$T/slow.true.log" "'rates' in keys()" "rates with windows on"
check "$T/slow.false.log" "'rates' not in keys()" "no rates with windows off"
exit 0
