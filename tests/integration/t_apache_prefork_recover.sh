# Real apache2, prefork MPM, started as root: its workers are fork
# children that become www-data (setgid, initgroups, setuid) before they
# accept a connection, and MaxConnectionsPerChild makes it fork new ones
# all along.  The log path is explicit: each worker's log is opened as
# root before the drop and kept (the ticker writes into it as www-data),
# so the worker's state file is made before the drop too, in root's
# directory ($T/state/%u), and marked at the drop (mode 0400): www-data
# could write its header since, so root's recovery writes a killed
# worker's record into the log the worker named before the drop (kept in
# the file's extended attribute), never into a path the header names (a
# compromised worker could name /etc/crontab).  A
# worker that ends cleanly cannot remove its file from root's 0700
# directory: it marks it final, and root's next recovery removes it
# without a second record.  (Made after the drop, in www-data's
# directory, for a day: a killed worker's numbers could then be
# recovered by nobody.)
#  - per worker, the close records' bytes out equal apache's access log
#    (%P %O), and the bytes in of all (%I) with those of the daemon's
#    internal dummy connections;
#  - one worker, killed (SIGKILL) after it served: `sockmeter recover` as
#    root writes its exit record, marked killed, with exactly its bytes,
#    into the worker's own log (not beside its state file);
#  - after apache2 -k stop and that recovery no state file is left, and
#    no other record was recovered.
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
apache_start prefork www-data '%P %O %I %{User-Agent}i' 'ServerName localhost
StartServers 6
MinSpareServers 4
MaxSpareServers 10
MaxConnectionsPerChild 7'
apache_ab "$N" 3
# While it runs: the workers' files are in root's directory.
root_files=$(find "$T/state/0" -name '*.state' 2>/dev/null | wc -l)
www_files=$(find "$T/state/$wuid" -name '*.state' 2>/dev/null | wc -l)
[ "$root_files" -ge 2 ] || fail "$root_files state files in root's directory while apache runs"
# The workers' marked at the drop (the daemon, which stays root, has one
# only if it used a connection itself: then not marked).
for f in "$T"/state/0/*.state; do
	p=$(basename "$f" | cut -d- -f1)
	want=400
	[ "$p" = "$daemon" ] && want=600
	expect_eq "mode of $(basename "$f")" "$(stat -c %a "$f")" "$want"
done
expect_eq "state files in www-data's directory" "$www_files" 0
# A worker that served and still runs, killed: one that served fewer than
# MaxConnectionsPerChild requests (one that served 7 is ending by itself).
victim=
for p in $(awk '{ n[$1]++ } END { for (p in n) if (n[p] < 7) print n[p], p }' \
	"$T/access.log" | sort -n | awk '{ print $2 }'); do
	kill -0 "$p" 2>/dev/null && [ "$p" != "$daemon" ] && victim=$p && break
done
[ -n "$victim" ] || fail "no worker that served is still running"
kill -9 "$victim"
wait_for 10 eval '! kill -0 '"$victim"' 2>/dev/null' || fail "worker $victim did not die"
timeout 20 /usr/sbin/apache2 -f "$T/apache.conf" -k stop >/dev/null 2>&1
wait_for 15 eval '! kill -0 '"$daemon"' 2>/dev/null' || fail "apache2 did not stop"
wait_for 10 eval '[ -z "$(pgrep -P '"$daemon"')" ]'
"$SM_TOP/build/sockmeter-recover" -q "$T/state/0" 2>"$T/recover.err" ||
	fail "recover: $(cat "$T/recover.err")"
# Into the worker's own log, the path it named as root (kept in its state
# file's extended attribute), never beside the state file any more.
rec=$(find "$T/state/0" -name "$victim-*.recovered.log")
[ -z "$rec" ] || fail "worker $victim's record went beside its state file: $rec"
grep -q '"end":"killed"' "$T/log/apache2.$victim.log" ||
	fail "no recovered record in worker $victim's log: $(cat "$T/recover.err")"
: >"$T/log/recovered.log"
left=$(find "$T/state" -name '*.state*' | sed "s|$T/||")
[ -z "$left" ] || fail "state files left after the stop and a recovery: $(echo $left | head -c 300)"
[ "$(grep -c ApacheBench "$T/access.log")" = "$N" ] ||
	fail "access log has $(grep -c ApacheBench "$T/access.log") of ab's requests"
cat "$T"/log/apache2.*.log "$T/log/recovered.log" >"$T/all.log"
# Per worker: bytes out (%O, of every request it served: the daemon's
# internal dummy connections too, when they are logged), bytes in of ab's
# requests (%I); the dummy requests' bytes in are what the daemon sent.
awk '{ o[$1] += $2; if ($0 ~ /ApacheBench/) i[$1] += $3; else i[$1] += 0 }
	END { for (p in o) print p, o[p], i[p] }' "$T/access.log" | sort >"$T/truth"
[ "$(wc -l <"$T/truth")" -ge 3 ] || fail "only $(wc -l <"$T/truth") workers served: MaxConnectionsPerChild did not apply"
cat >"$T/w.py" <<PYEOF
truth = {}
for line in open("$T/truth"):
    p, o, i = map(int, line.split())
    truth[p] = (o, i)
victim, daemon = $victim, $daemon
got = {}
for r in R:
    if r["pid"] == victim:
        continue  # its last close records may have died with it
    for f in r.get("fds", []):
        if f["kind"] == "tcp" and (f["bytes_in"] or f["bytes_out"]):
            o, i = got.get(r["pid"], (0, 0))
            got[r["pid"]] = (o + f["bytes_out"], i + f["bytes_in"])
# The daemon's own connections are the "internal dummy connections" it
# makes to wake workers up (not in the access log): what it sent, workers
# received.
dummy = got.pop(daemon, (0, 0))[0]
want = dict(truth)
del want[victim]
out = {p: v[0] for p, v in got.items()}
assert out == {p: v[0] for p, v in want.items()}, \
    "per worker bytes_out: log %r, apache's %%O %r" % (got, want)
assert sum(v[1] for v in got.values()) == sum(v[1] for v in want.values()) + dummy, \
    "bytes_in: log %d, apache's %%I %d and %d of dummy connections" % (
        sum(v[1] for v in got.values()), sum(v[1] for v in want.values()), dummy)
rec = [r for r in R if r.get("end")]
assert [r["pid"] for r in rec] == [victim], "recovered records: %r" % [(r["pid"], r["end"]) for r in rec]
t = rec[0]["totals"]
assert rec[0]["end"] == "killed", rec[0]["end"]
assert (t["bytes_out"], t["bytes_in"]) == truth[victim], \
    "killed worker: recovered %r, apache's %r" % ((t["bytes_out"], t["bytes_in"]), truth[victim])
PYEOF
check_py "$T/all.log" "$T/w.py" "workers' records vs apache's access log"
exit 0
