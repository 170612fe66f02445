# Real apache2, event MPM, Debian's enabled modules, started as a daemon
# (apache2 -k start: it looks its host name up (no ServerName), forks to
# detach, unloads and reloads its modules, then forks its workers, which
# run as nobody).  Under the preload glibc ran our fork handlers twice in
# the daemon's forks, and the second lock of the name table (set up by the
# host name lookup) by the same thread waited for good: the daemon never
# made a worker.  Now:
#  - it serves: 40 requests (ab, no keep-alive) for a 10,000-byte file;
#  - the workers' close records carry exactly what apache's own access
#    log counts (mod_logio: %O bytes sent, %I bytes received), one record
#    a request; it stops cleanly with apache2 -k stop.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (apache's workers change user)"
[ -x /usr/sbin/apache2 ] || fail "apache2 missing (scripts/install-deps)"
[ -f /usr/lib/apache2/modules/mod_mpm_event.so ] || fail "no mod_mpm_event"
command -v ab >/dev/null || fail "ab missing (scripts/install-deps)"
chmod 755 "$T"
mkdir -p "$T/www"
mkdir -m 1777 "$T/log"
make_file "$T/www/f" 10000
chmod 644 "$T/www/f"
N=40
export SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/%n.%p.log" SOCKMETER_STATE="$T/state"
apache_start event nobody '%O %I'
apache_ab "$N" 2
timeout 20 /usr/sbin/apache2 -f "$T/apache.conf" -k stop >/dev/null 2>&1
wait_for 15 eval '! kill -0 '"$daemon"' 2>/dev/null' || fail "apache2 did not stop"
# The workers' records (and the daemon's), together.
cat "$T"/log/apache2.*.log >"$T/all.log"
[ "$(wc -l <"$T/access.log")" = "$N" ] || fail "access log has $(wc -l <"$T/access.log") lines"
sent=$(awk '{ s += $1 } END { print s }' "$T/access.log")
got=$(awk '{ s += $2 } END { print s }' "$T/access.log")
cat >"$T/w.py" <<PYEOF
tcp = [f for f in CL if f["kind"] == "tcp" and (f["bytes_in"] or f["bytes_out"])]
assert len(tcp) == $N, "%d tcp close records with bytes, expected $N" % len(tcp)
assert sum(f["bytes_out"] for f in tcp) == $sent, \\
    "bytes_out %d, apache's %%O %d" % (sum(f["bytes_out"] for f in tcp), $sent)
assert sum(f["bytes_in"] for f in tcp) == $got, \\
    "bytes_in %d, apache's %%I %d" % (sum(f["bytes_in"] for f in tcp), $got)
assert not [r for r in R if r.get("end")], "recovered records"
PYEOF
check_py "$T/all.log" "$T/w.py" "workers' records vs apache's access log"
exit 0
