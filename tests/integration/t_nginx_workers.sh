# A daemon that drops root: real nginx, master as root, 2 workers as
# nobody, the default log path.  The workers' records must continue in
# nobody's own default directory (/tmp/sockmeter-UID, created by the worker
# itself, 0700), and their close records must carry exactly the bytes
# nginx's own access log counts: $bytes_sent out, $request_length in, one
# record per request (ab, no keep-alive).  Each worker's log also has the
# listener it inherited and accepted on (learned at its first accept).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (nginx's master must start as root)"
command -v nginx >/dev/null || fail "nginx missing (scripts/install-deps)"
command -v ab >/dev/null || fail "ab missing (scripts/install-deps)"
id nobody >/dev/null 2>&1 || fail "no user nobody"
nuid=$(id -u nobody)
ngrp=$(id -gn nobody)
logdir=/tmp/sockmeter-$nuid
[ "$(id -u)" != "$nuid" ] || fail "running as nobody already"

# nobody reads the served file and walks into $T.
chmod 755 "$T"
mkdir -p "$T/www"
make_file "$T/www/f" 10000
chmod 644 "$T/www/f"
N=200
for try in 1 2 3; do
	port=$(free_port)
	cat >"$T/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 2;
user nobody $ngrp;
pid $T/nginx.pid;
error_log $T/error.log;
events { worker_connections 128; }
http {
	log_format bytes '\$bytes_sent \$request_length';
	access_log $T/access.log bytes;
	client_body_temp_path $T/cb;
	proxy_temp_path $T/px;
	fastcgi_temp_path $T/fc;
	uwsgi_temp_path $T/uw;
	scgi_temp_path $T/sc;
	server { listen 127.0.0.1:$port; root $T/www; }
}
CONF
	# The default log path: SOCKMETER_LOG stays unset.
	bg_start env LD_PRELOAD="$LIB" SOCKMETER_FORMAT=json \
		nginx -p "$T" -c "$T/nginx.conf" -e "$T/error.log"
	master=$BG_PID
	wait_listen "$port" "$master" 10 && break
	kill "$master" 2>/dev/null
	master=
done
[ -n "$master" ] || fail "nginx did not start: $(tail -n 3 "$T/error.log")"
# The listener is open before the master writes its pid file.
wait_for 10 test -s "$T/nginx.pid" || fail "nginx wrote no pid file"
mpid=$(cat "$T/nginx.pid")
workers=()
for i in $(seq 100); do
	mapfile -t workers < <(pgrep -P "$mpid")
	[ "${#workers[@]}" = 2 ] && break
	sleep 0.05
done
[ "${#workers[@]}" = 2 ] || fail "expected 2 workers of $mpid, found ${workers[*]}"
for w in "${workers[@]}"; do
	expect_eq "uid of worker $w" "$(awk '/^Uid:/ { print $3 }' /proc/"$w"/status)" "$nuid"
done
trap 'rm -f "$logdir"/nginx."$mpid".log "$logdir"/nginx."${workers[0]}".log \
	"$logdir"/nginx."${workers[1]}".log /tmp/sockmeter-0/nginx."$mpid".log; sm_cleanup' EXIT

ab -q -n "$N" -c 4 "http://127.0.0.1:$port/f" >"$T/ab.out" 2>&1 ||
	fail "ab failed: $(tail -n 2 "$T/ab.out")"
grep -q "^Failed requests: *0" "$T/ab.out" || fail "ab saw failed requests"
kill -QUIT "$mpid"
bg_wait "$master" 20 || fail "nginx did not quit"

[ "$(wc -l <"$T/access.log")" = "$N" ] || fail "access log has $(wc -l <"$T/access.log") lines"
sent=$(awk '{ s += $1 } END { print s }' "$T/access.log")
reqlen=$(awk '{ s += $2 } END { print s }' "$T/access.log")
logs=()
for w in "${workers[@]}"; do
	[ -f "$logdir/nginx.$w.log" ] && logs+=("$logdir/nginx.$w.log")
done
[ "${#logs[@]}" -ge 1 ] || fail "no worker log in $logdir: $(ls -la "$logdir" 2>&1)"
[ "$(stat -c '%u %a' "$logdir")" = "$nuid 700" ] ||
	fail "$logdir: $(stat -c '%u %a' "$logdir"), expected $nuid 700"
# Both workers' records, together.
cat "${logs[@]}" >"$T/workers.log"
cat >"$T/w.py" <<PYEOF
tcp = [f for f in CL if f["kind"] == "tcp" and (f["bytes_in"] or f["bytes_out"])]
assert len(tcp) == $N, "%d tcp close records with bytes, expected $N" % len(tcp)
assert sum(f["bytes_out"] for f in tcp) == $sent, \
    "bytes_out %d, nginx's \$bytes_sent %d" % (sum(f["bytes_out"] for f in tcp), $sent)
assert sum(f["bytes_in"] for f in tcp) == $reqlen, \
    "bytes_in %d, nginx's \$request_length %d" % (sum(f["bytes_in"] for f in tcp), $reqlen)
ex = [r for r in R if r["type"] == "exit"]
assert len(ex) == ${#logs[@]}, "%d exit records" % len(ex)
assert all("close_records_dropped" not in r["totals"] for r in ex), "drops"
PYEOF
check_py "$T/workers.log" "$T/w.py" "workers' records vs nginx's access log"
for l in "${logs[@]}"; do
	check "$l" "[f for f in conns(kind='tcp', local='127.0.0.1:$port') if not f.get('peer')]" \
		"the listener in $(basename "$l")"
done
exit 0
