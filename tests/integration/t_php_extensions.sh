# Real PHP (php-cli), whose extensions are loaded with RTLD_DEEPBIND: the
# traffic of ext/sockets (socket_* calls in the extension) and of ext/curl
# (in the libcurl it loads) is metered, each connection's close record
# exactly what PHP itself says it moved (socket_write/socket_read's counts;
# curl's header, body and request sizes).  Before preload/wrap_dlopen.c
# neither had a record at all.
. "$(dirname "$0")/lib.sh"

command -v php >/dev/null || fail "php (php-cli) is not installed"
command -v socat >/dev/null || fail "socat is not installed"
mods=$(php -m 2>/dev/null)
grep -qx sockets <<<"$mods" || fail "php has no sockets extension"
grep -qx curl <<<"$mods" || fail "php has no curl extension (php-curl)"
php -r 'exit(extension_loaded("sockets") && !function_exists("socket_create") ? 1 : 0);' ||
	fail "php's sockets functions are missing"

start_echo
port=$ECHO_PORT
mkdir -p "$T/www"
size=$((700000 + 4321))
make_file "$T/www/data.bin" "$size"
start_http "$T/www"

cat >"$T/t.php" <<'PHPEOF'
<?php
[$_, $port, $n, $url] = $argv;
$s = socket_create(AF_INET, SOCK_STREAM, SOL_TCP);
socket_connect($s, "127.0.0.1", (int)$port) or exit(1);
$data = str_repeat("p", (int)$n);
$out = 0;
while ($out < strlen($data)) {
	$w = socket_write($s, substr($data, $out));
	if ($w === false) exit(1);
	$out += $w;
}
socket_shutdown($s, 1);
$in = 0;
while (($b = socket_read($s, 65536)) !== false && $b !== "")
	$in += strlen($b);
socket_close($s);
echo "out=$out\nin=$in\n";
$c = curl_init($url);
curl_setopt($c, CURLOPT_RETURNTRANSFER, true);
curl_setopt($c, CURLOPT_PROXY, "");
$body = curl_exec($c);
if ($body === false) exit(1);
echo "hdr=", curl_getinfo($c, CURLINFO_HEADER_SIZE), "\n";
echo "body=", strlen($body), "\n";
echo "req=", curl_getinfo($c, CURLINFO_REQUEST_SIZE), "\n";
echo "code=", curl_getinfo($c, CURLINFO_RESPONSE_CODE), "\n";
curl_close($c);
PHPEOF

n=$((250000 + 77))
log=$T/php.log
SOCKMETER_LOG=$log SOCKMETER_FORMAT=json \
	sm php "$T/t.php" "$port" "$n" "http://127.0.0.1:$HTTP_PORT/data.bin" \
	>"$T/out" 2>"$T/err" || fail "php failed: $(cat "$T/err" "$T/out" | head -n 5)"
[ -s "$T/err" ] && fail "stderr: $(head -n 3 "$T/err")"
expect_eq "php sent" "$(field out "$T/out")" "$n"
expect_eq "php received" "$(field in "$T/out")" "$n"
expect_eq "http status" "$(field code "$T/out")" 200
expect_eq "body" "$(field body "$T/out")" "$size"

echo_peer=127.0.0.1:$port
http_peer=127.0.0.1:$HTTP_PORT
expect_eq "ext/sockets: close records" "$(q "$log" "len(closes(kind='tcp', peer='$echo_peer'))")" 1
expect_eq "ext/sockets: bytes_out" "$(q "$log" "closes(kind='tcp', peer='$echo_peer')[0]['bytes_out']")" "$n"
expect_eq "ext/sockets: bytes_in" "$(q "$log" "closes(kind='tcp', peer='$echo_peer')[0]['bytes_in']")" "$n"
hdr=$(field hdr "$T/out")
expect_eq "ext/curl: close records" "$(q "$log" "len(closes(kind='tcp', peer='$http_peer'))")" 1
expect_eq "ext/curl: bytes_in (header $hdr + body $size)" \
	"$(q "$log" "closes(kind='tcp', peer='$http_peer')[0]['bytes_in']")" $((hdr + size))
expect_eq "ext/curl: bytes_out (curl's request size)" \
	"$(q "$log" "closes(kind='tcp', peer='$http_peer')[0]['bytes_out']")" "$(field req "$T/out")"
check "$log" "T['fds_open'] == 0" "fds open at exit"
exit 0
