# [stats] peers = false: no "local" or "peer" anywhere, bytes still exact.
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
printf '[stats]\npeers = false\n' >"$T/cfg.ini"
size=$((1048576 + 79))
make_file "$T/src.bin" "$size"
mkdir -p "$T/logs"
env="LD_PRELOAD=$LIB SOCKMETER_CONFIG=$T/cfg.ini SOCKMETER_FORMAT=json"
socat_send tcp "$T/src.bin" "$T/dest.bin" \
	"$env SOCKMETER_LOG=$T/logs/recv.%p.log" "$env SOCKMETER_LOG=$T/logs/send.%p.log"
recv=$(one_log "$T/logs/recv.*.log")
send=$(one_log "$T/logs/send.*.log")
for log in "$recv" "$send"; do
	check "$log" "not {'local', 'peer'} & keys()" "addresses in $(basename "$log")"
	check "$log" "{'bytes_in', 'sizes_in', 'errors_in'} <= keys()" \
		"enabled categories in $(basename "$log")"
done
expect_eq "receiver: exit bytes_in" "$(q "$recv" "tot('bytes_in')")" "$size"
expect_eq "receiver: tcp connection bytes_in" \
	"$(q "$recv" "sorted(f['bytes_in'] for f in conns(kind='tcp'))")" "[0, $size]"
expect_eq "sender: exit bytes_out" "$(q "$send" "tot('bytes_out')")" "$size"
expect_eq "sender: tcp connection bytes_out" \
	"$(q "$send" "[f['bytes_out'] for f in conns(kind='tcp')]")" "[$size]"
exit 0
