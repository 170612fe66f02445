#!/usr/bin/env bash
# demo.sh - meter a real download: curl fetches a 5 MiB file from a local
# python3 http.server, under sockmeter, and the log is shown.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/sockmeter-demo.XXXXXX")
server=""
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

head -c $((5 * 1024 * 1024)) /dev/urandom >"$dir/payload.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$dir" >/dev/null 2>&1 &
server=$!
for _ in $(seq 1 100); do
	curl -s -o /dev/null "http://127.0.0.1:$port/" && break
	sleep 0.1
done

echo "== curl http://127.0.0.1:$port/payload.bin under sockmeter (5 MiB = 5242880 bytes of body)"
exec 2>&1
"$top/scripts/sockmeter" -s -o "$dir/%n.%p.log" -- \
	curl -s -o "$dir/copy.bin" \
	-w 'curl says: body %{size_download} + headers %{size_header} bytes in, request %{size_request} bytes out\n' \
	"http://127.0.0.1:$port/payload.bin"
cmp -s "$dir/payload.bin" "$dir/copy.bin" && echo "== the download is byte-identical"
