# names category: a connection to a host name looked up through
# getaddrinfo carries peer_name and the lookup time in its records; one to
# a literal address carries none; names = false leaves them out.
#
# curl (7.78 and later) answers "localhost" itself without asking the
# resolver (RFC 6761), so curl is pointed at the machine's own host name
# from /etc/hosts, and "localhost" is looked up by Python's urllib, which
# asks getaddrinfo.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || fail "curl is not installed"
mkdir -p "$T/www"
echo hello >"$T/www/index.html"
start_http "$T/www"

# 1. localhost through getaddrinfo (Python's urllib).
sm env SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/py.log" "$PY" -c "
import urllib.request
urllib.request.urlopen('http://localhost:$HTTP_PORT/').read()" ||
	fail "urllib failed"
expect_eq "urllib: peer_name" \
	"$(q "$T/py.log" "[f['peer_name'] for f in closes(kind='tcp') if f['bytes_in']][0]")" localhost
check "$T/py.log" "0 < [f for f in closes(kind='tcp') if f['bytes_in']][0]['lookup_ms'] < 10000" \
	"urllib: lookup time"

# 2. curl to a name of this machine that /etc/hosts maps to loopback.
host=$(hostname)
addr=$(getent ahostsv4 "$host" | awk 'NR == 1 { print $1 }')
case $addr in
127.*)
	sm env SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/curl.log" \
		curl -s -o /dev/null "http://$host:$HTTP_PORT/" ||
		fail "curl http://$host:$HTTP_PORT/ failed"
	expect_eq "curl: peer_name" \
		"$(q "$T/curl.log" "[f['peer_name'] for f in closes(kind='tcp') if f['bytes_in']][0]")" "$host"
	check "$T/curl.log" "[f for f in closes(kind='tcp') if f['bytes_in']][0]['lookup_ms'] > 0" \
		"curl: lookup time"
	;;
*)
	echo "note: $host does not resolve to loopback; curl by name skipped"
	;;
esac

# 3. A literal address: no name.
sm env SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/lit.log" \
	curl -s -o /dev/null "http://127.0.0.1:$HTTP_PORT/" || fail "curl failed"
check "$T/lit.log" "len([f for f in closes(kind='tcp') if f['bytes_in']]) == 1" \
	"literal: one connection"
check "$T/lit.log" "'peer_name' not in keys() and 'lookup_ms' not in keys()" \
	"literal: no peer_name"

# 4. Text records, and names = false.
sm env SOCKMETER_LOG="$T/py.txt" "$PY" -c "
import urllib.request
urllib.request.urlopen('http://localhost:$HTTP_PORT/').read()" ||
	fail "urllib (text) failed"
grep -q "kind=tcp .* peer_name=localhost lookup=[0-9.]*ms" "$T/py.txt" ||
	fail "text: no peer_name: $(cat "$T/py.txt")"
sm env SOCKMETER_FORMAT=json SOCKMETER_NAMES=off SOCKMETER_LOG="$T/off.log" \
	"$PY" -c "
import urllib.request
urllib.request.urlopen('http://localhost:$HTTP_PORT/').read()" ||
	fail "urllib (names off) failed"
check "$T/off.log" "'peer_name' not in keys()" "names off: no peer_name"

# 5. Prometheus: the name is the peer label.
sm env SOCKMETER_FORMAT=prometheus SOCKMETER_LOG="$T/py.prom" "$PY" -c "
import urllib.request
urllib.request.urlopen('http://localhost:$HTTP_PORT/').read()" ||
	fail "urllib (prometheus) failed"
grep -q '^sockmeter_peer_bytes_total{.*peer="localhost",direction="in"} [1-9]' "$T/py.prom" ||
	fail "prometheus: no peer=\"localhost\": $(grep peer_bytes "$T/py.prom")"
exit 0
