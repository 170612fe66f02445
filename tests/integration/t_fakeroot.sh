# fakeroot (its TCP flavour: every stat is a message to faked over a
# socket) with the library preloaded: the programs under it run as without
# it, and curl's download is exact.  Before, the library's own fstat
# reached fakeroot's, whose message went through our write wrapper, which
# classified the socket with fstat: fakeroot's again, under its own lock.
# cat, ls and curl hung for good.
. "$(dirname "$0")/lib.sh"

need fakeroot-tcp curl
mkdir -p "$T/www"
make_file "$T/www/f.bin" 200000
start_http "$T/www"
out=$(SOCKMETER_LOG=$T/cat-%p.log timeout -s KILL 20 env LD_PRELOAD="$LIB" \
	fakeroot-tcp -- cat /etc/hostname) || fail "fakeroot-tcp -- cat: status $? (137: it hung)"
expect_eq "what cat printed" "$out" "$(cat /etc/hostname)"
out=$(SOCKMETER_LOG=$T/ls-%p.log timeout -s KILL 20 env LD_PRELOAD="$LIB" \
	fakeroot-tcp -- stat -c %u "$T/www/f.bin") || fail "fakeroot-tcp -- stat: status $?"
expect_eq "the owner fakeroot shows" "$out" 0
SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/curl-%p.log timeout -s KILL 20 \
	env LD_PRELOAD="$LIB" fakeroot-tcp -- curl -s --noproxy '*' -o "$T/got" \
	-w '%{size_header} %{size_download}\n' "http://127.0.0.1:$HTTP_PORT/f.bin" \
	>"$T/curl.out" || fail "fakeroot-tcp -- curl: status $? (137: it hung)"
read -r hdr body <"$T/curl.out"
log=$(grep -l '"prog":"curl"' "$T"/curl-*.log | head -n 1) || fail "no curl log"
expect_eq "curl's connection to the server [bytes_in]" \
	"$(q "$log" "[f['bytes_in'] for f in conns(kind='tcp', peer='127.0.0.1:$HTTP_PORT')]")" \
	"[$((hdr + body))]"
exit 0
