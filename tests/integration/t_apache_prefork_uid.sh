# Real apache2, prefork MPM, started as root: its workers are fork
# children that become www-data (setgid, initgroups, setuid) before they
# accept a connection, and MaxConnectionsPerChild makes it fork new ones
# all along.  The log path is explicit (a worker keeps writing the file
# opened before the drop) and the state directory names the uid
# ($T/state/%u).  Each worker used to look at its fds before the drop,
# and that made its state file in root's 0700 directory, which it could
# no longer remove: 61 of 61 workers' files stayed there after a clean
# stop (marked final, removed by root's next recovery).  Now:
#  - while it runs, root's directory holds the daemon's file only, and
#    the workers' files are in www-data's;
#  - after apache2 -k stop no state file is left anywhere;
#  - per worker, the close records' bytes equal apache's access log
#    (%P %O %I), and nothing was recovered.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (apache's workers change user)"
[ -x /usr/sbin/apache2 ] || fail "apache2 missing (scripts/install-deps)"
[ -f /usr/lib/apache2/modules/mod_mpm_prefork.so ] || fail "no mod_mpm_prefork"
command -v ab >/dev/null || fail "ab missing (scripts/install-deps)"
wuid=$(id -u www-data 2>/dev/null) || fail "no user www-data (apache2's package makes it)"
chmod 755 "$T"
mkdir -p "$T/www"
mkdir -m 1777 "$T/log" "$T/state"
make_file "$T/www/f" 10000
chmod 644 "$T/www/f"
N=120
export SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/%n.%p.log" SOCKMETER_STATE="$T/state/%u"
for try in 1 2 3; do
	port=$(free_port)
	cat >"$T/apache.conf" <<CONF
ServerRoot /etc/apache2
LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
$(ls /etc/apache2/mods-enabled/*.load /etc/apache2/mods-enabled/*.conf 2>/dev/null |
	grep -v 'mpm_' | sed 's/^/Include /')
Listen 127.0.0.1:$port
ServerName localhost
PidFile $T/apache.pid
ErrorLog $T/error.log
Mutex file:$T default
DefaultRuntimeDir $T
User www-data
Group www-data
StartServers 4
MinSpareServers 4
MaxSpareServers 10
MaxConnectionsPerChild 7
DocumentRoot $T/www
<Directory $T/www>
	Require all granted
</Directory>
LogFormat "%P %O %I" bytes
CustomLog $T/access.log bytes
CONF
	timeout 20 env LD_PRELOAD="$LIB" /usr/sbin/apache2 -f "$T/apache.conf" -k start \
		>"$T/start.out" 2>&1 || fail "apache2 -k start: $(cat "$T/start.out")"
	wait_for 10 is_listening "$port" && wait_for 10 test -s "$T/apache.pid" &&
		break
	[ -f "$T/apache.pid" ] && kill "$(cat "$T/apache.pid")" 2>/dev/null
done
[ -f "$T/apache.pid" ] || fail "apache2 did not start: $(tail -n 3 "$T/error.log")"
daemon=$(cat "$T/apache.pid")
trap 'kill -9 $(pgrep -P "$daemon") "$daemon" 2>/dev/null; sm_cleanup' EXIT
timeout 60 ab -q -n "$N" -c 3 "http://127.0.0.1:$port/f" >"$T/ab.out" 2>&1 ||
	fail "ab failed: $(tail -n 3 "$T/ab.out")"
grep -q "^Complete requests: *$N" "$T/ab.out" || fail "ab: $(grep -i requests "$T/ab.out")"
grep -q "^Failed requests: *0" "$T/ab.out" || fail "ab saw failed requests"
# While it runs (workers that served are alive, with a file each).
root_files=$(find "$T/state/0" -name '*.state' 2>/dev/null | wc -l)
www_files=$(find "$T/state/$wuid" -name '*.state' 2>/dev/null | wc -l)
expect_eq "state files in root's directory while apache runs (the daemon's)" "$root_files" 1
[ "$www_files" -ge 1 ] || fail "no worker has a state file in www-data's directory"
echo "while running: $root_files file in root's directory, $www_files in www-data's" >&2
timeout 20 /usr/sbin/apache2 -f "$T/apache.conf" -k stop >/dev/null 2>&1
wait_for 15 eval '! kill -0 '"$daemon"' 2>/dev/null' || fail "apache2 did not stop"
wait_for 10 eval '[ -z "$(pgrep -P '"$daemon"')" ]'
left=$(find "$T/state" -name '*.state' | sed "s|$T/||")
[ -z "$left" ] || fail "state files left after a clean stop: $(echo $left | head -c 300)"
[ "$(wc -l <"$T/access.log")" = "$N" ] || fail "access log has $(wc -l <"$T/access.log") lines"
cat "$T"/log/apache2.*.log >"$T/all.log"
awk '{ o[$1] += $2; i[$1] += $3 } END { for (p in o) print p, o[p], i[p] }' \
	"$T/access.log" | sort >"$T/truth"
[ "$(wc -l <"$T/truth")" -ge 3 ] || fail "only $(wc -l <"$T/truth") workers served: MaxConnectionsPerChild did not apply"
cat >"$T/w.py" <<PYEOF
truth = {}
for line in open("$T/truth"):
    p, o, i = map(int, line.split())
    truth[p] = (o, i)
got = {}
for r in R:
    for f in r.get("fds", []):
        if f["kind"] == "tcp" and (f["bytes_in"] or f["bytes_out"]):
            o, i = got.get(r["pid"], (0, 0))
            got[r["pid"]] = (o + f["bytes_out"], i + f["bytes_in"])
assert got == truth, "per worker (bytes_out, bytes_in): log %r, apache's %r" % (got, truth)
assert not [r for r in R if r.get("end")], "recovered records"
PYEOF
check_py "$T/all.log" "$T/w.py" "workers' records vs apache's access log"
exit 0
