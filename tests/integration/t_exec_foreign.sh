# A 32-bit program on x86-64: its dynamic loader drops the 64-bit library
# ("wrong ELF class ... ignored"), so it goes unmetered whatever its
# environment.  That is said, as for a static program: once, before the
# exec, naming the file, by the library of a metered process that execs
# one, and by the launcher instead of naming a log that never comes.
# Before, only the loader's own line said anything, and the launcher
# named a log (a helper's 32-bit client moved 1,000,239 bytes that were in
# no log).  What such a program starts in 64 bits loads the library
# again: its numbers are exact.
#  - a metered shell execs a 32-bit client: the warning, the client's
#    output as without the preload, no record of its connection;
#  - the launcher, with and without -s, on a 32-bit dynamic and a 32-bit
#    static program: the note, no "log of pid" (the static one was taken
#    for dynamic: the launcher read 64-bit headers only);
#  - a 32-bit program that execs curl: curl's close record is exact.
# The 32-bit programs are built here (gcc-multilib, scripts/install-deps).
. "$(dirname "$0")/lib.sh"

if [ "$(uname -m)" != x86_64 ]; then
	echo "NOTE: not x86-64: no 32-bit programs to try"
	exit 0
fi
cc=${CC:-cc}
cat >"$T/client.c" <<'EOF'
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct sockaddr_in a = { 0 };
	static char buf[65536];
	char req[256];
	long out, in = 0, k;
	int s = socket(AF_INET, SOCK_STREAM, 0), n;

	if (argc < 3)
		return 2;
	a.sin_family = AF_INET;
	a.sin_port = htons(atoi(argv[1]));
	a.sin_addr.s_addr = htonl(0x7f000001);
	if (connect(s, (void *)&a, sizeof(a)))
		return 3;
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", argv[2]);
	out = send(s, req, n, 0);
	while ((k = recv(s, buf, sizeof(buf), 0)) > 0)
		in += k;
	close(s);
	printf("out=%ld in=%ld\n", out, in);
	return 0;
}
EOF
printf '#include <unistd.h>\nint main(int c, char **v) { (void)c; execv(v[1], v + 1); return 127; }\n' \
	>"$T/execer.c"
"$cc" -m32 -o "$T/client32" "$T/client.c" 2>"$T/cc.err" &&
	"$cc" -m32 -static -o "$T/client32s" "$T/client.c" 2>>"$T/cc.err" &&
	"$cc" -m32 -o "$T/execer32" "$T/execer.c" 2>>"$T/cc.err" ||
	fail "cannot build 32-bit programs (gcc-multilib, scripts/install-deps): $(head -n 3 "$T/cc.err")"

mkdir -p "$T/www"
size=200000
make_file "$T/www/data.bin" "$size"
start_http "$T/www"
export SOCKMETER_LOG=$T/%p.log SOCKMETER_FORMAT=json

plain "$T/client32" "$HTTP_PORT" /data.bin >"$T/truth.out" ||
	fail "the 32-bit client alone failed"
truth=$(cat "$T/truth.out")
case $truth in "out=26 in="*) ;; *) fail "the 32-bit client alone: $truth" ;; esac

# A metered shell (it tracks a socket first) execs the 32-bit client.
sm bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && exec 3>&- && exec "$2" "$1" /data.bin' \
	sh "$HTTP_PORT" "$T/client32" >"$T/out1" 2>"$T/err1" ||
	fail "metered exec of the 32-bit client: $(cat "$T/err1")"
expect_eq "the 32-bit client under a metered shell: output" "$(cat "$T/out1")" "$truth"
expect_eq "its warning" "$(grep '^sockmeter:' "$T/err1")" \
	"sockmeter: exec of $T/client32, a 32-bit program: its dynamic loader ignores this 64-bit library (\"wrong ELF class\"), so it is not metered (what it sends and receives, on its own sockets or on ones it inherits, is in no log; the 64-bit programs it starts are metered again)"
# The shell's one connection is in its exec record; the client's is in
# no log (what the warning says).
log=$(one_log "$T/[0-9]*.log")
expect_eq "records of a connection with the client's bytes" \
	"$(q "$log" "len([c for c in closes(kind='tcp') if c['bytes_in'] > $size])")" 0

# The 32-bit loader run by hand drops the library as its programs' does
# (it was taken for the 64-bit one, which preloads as ever).
loader32=
for f in /lib/ld-linux.so.2 /usr/lib32/ld-linux.so.2; do
	[ -x "$f" ] && { loader32=$f; break; }
done
[ -n "$loader32" ] || fail "no 32-bit dynamic loader (gcc-multilib installs one)"
sm bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && exec 3>&- && exec "$2" "$3" "$1" /data.bin' \
	sh "$HTTP_PORT" "$loader32" "$T/client32" >"$T/out4" 2>"$T/err4" ||
	fail "metered exec of the 32-bit loader: $(cat "$T/err4")"
expect_eq "the 32-bit loader run by hand: output" "$(cat "$T/out4")" "$truth"
grep -qF "sockmeter: exec of $loader32, a 32-bit program: its dynamic loader ignores this 64-bit library" "$T/err4" ||
	fail "the 32-bit loader run by hand: not said: $(cat "$T/err4")"
# Preloaded through $LIB, a 32-bit copy of the library may be there for
# the 32-bit program (none here: the loader says so): not said.
mkdir -p "$T/dst/lib/x86_64-linux-gnu"
cp "$LIB" "$T/dst/lib/x86_64-linux-gnu/libsockmeter.so"
timeout 30 env LD_PRELOAD="$T/dst/\$LIB/libsockmeter.so" bash -c \
	'exec 3<>"/dev/tcp/127.0.0.1/$1" && exec 3>&- && exec "$2" "$1" /data.bin' \
	sh "$HTTP_PORT" "$T/client32" >"$T/out5" 2>"$T/err5" ||
	fail "a \$LIB preload: $(cat "$T/err5")"
expect_eq "a \$LIB preload: sockmeter's lines" "$(grep -c '^sockmeter:' "$T/err5")" 0

# The launcher: a note instead of a log's name, with -s and without.
launcher=$SM_TOP/scripts/sockmeter
for prog in client32 client32s; do
	for opt in "" -s; do
		SOCKMETER_LIB=$LIB "$launcher" $opt -o "$T/l.%p.log" -- "$T/$prog" \
			"$HTTP_PORT" /data.bin >"$T/out2" 2>"$T/err2" ||
			fail "launcher $opt $prog: $(cat "$T/err2")"
		expect_eq "launcher $opt $prog: output" "$(cat "$T/out2")" "$truth"
		case $prog in
		client32) want="sockmeter: $T/$prog is a 32-bit program: its dynamic loader ignores the 64-bit library (\"wrong ELF class\"), so it is not metered" ;;
		*) want="sockmeter: $T/$prog is statically linked: no preload reaches it, so it is not metered" ;;
		esac
		grep -qF "$want" "$T/err2" || fail "launcher $opt $prog: not said: $(cat "$T/err2")"
		! grep -q "log of pid" "$T/err2" ||
			fail "launcher $opt $prog named a log: $(cat "$T/err2")"
	done
done

# A 32-bit program that execs a 64-bit one: that one is metered, exactly.
rm -f "$T"/[0-9]*.log
sm "$T/execer32" "$(type -P curl)" -s --noproxy '*' -o "$T/got.bin" \
	-w '%{size_header} %{size_download} %{size_request}\n' \
	"http://127.0.0.1:$HTTP_PORT/data.bin" >"$T/out3" 2>"$T/err3" ||
	fail "curl under a 32-bit program: $(cat "$T/err3")"
read -r hdr body req <"$T/out3"
expect_eq "curl's download" "$body" "$size"
log=$(one_log "$T/[0-9]*.log")
expect_eq "curl's close record: bytes in" \
	"$(q "$log" "closes(kind='tcp')[0]['bytes_in']")" $((hdr + body))
expect_eq "curl's close record: bytes out" \
	"$(q "$log" "closes(kind='tcp')[0]['bytes_out']")" "$req"
exit 0
