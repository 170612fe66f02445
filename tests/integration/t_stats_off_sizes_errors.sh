# [stats] sizes = false, errors = false: no "sizes_*" or "errors_*" key in
# any record, while bytes and calls stay exact (socat over TCP).
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
printf '[stats]\nsizes = false\nerrors = false\n' >"$T/cfg.ini"
size=$((1048576 + 77))
make_file "$T/src.bin" "$size"
mkdir -p "$T/logs"
env="LD_PRELOAD=$LIB SOCKMETER_CONFIG=$T/cfg.ini SOCKMETER_FORMAT=json"
socat_send tcp "$T/src.bin" "$T/dest.bin" \
	"$env SOCKMETER_LOG=$T/logs/recv.%p.log" "$env SOCKMETER_LOG=$T/logs/send.%p.log"
recv=$(one_log "$T/logs/recv.*.log")
send=$(one_log "$T/logs/send.*.log")
[ -s "$T/socat-recv.err" ] && fail "receiver stderr: $(cat "$T/socat-recv.err")"
for log in "$recv" "$send"; do
	expect_eq "keys of a disabled category in $(basename "$log")" \
		"$(q "$log" "sorted(k for k in keys() if k.startswith(('sizes', 'errors')))")" "[]"
	check "$log" "{'bytes_in', 'bytes_out', 'calls_in', 'calls_out', 'peer'} <= keys()" \
		"enabled categories in $(basename "$log")"
done
expect_eq "receiver: exit bytes_in" "$(q "$recv" "tot('bytes_in')")" "$size"
expect_eq "sender: exit bytes_out" "$(q "$send" "tot('bytes_out')")" "$size"
expect_eq "sender: connection bytes_out" \
	"$(q "$send" "[f['bytes_out'] for f in conns(kind='tcp', peer='127.0.0.1:$SOCAT_PORT')]")" "[$size]"
exit 0
