# Libraries loaded with dlmopen into a namespace of their own
# (tests/progs/dlmopener): the preload is not in that namespace and their
# libc is another copy, so their calls are not metered, and that is said,
# once per process; the program runs as without the preload.
#  - key: that other libc's pthread keys share the threads' slots with the
#    main one's. The library used a key of its own (the main thread's
#    value: an address of ours), so a new key in the namespace read it
#    instead of NULL; libcurl loaded there (curl) had OpenSSL free it at
#    exit: "free(): invalid pointer", the program aborted.
#  - xfer: a connection made there moves its bytes, with no record.
. "$(dirname "$0")/lib.sh"

need_prog dlmopener
command -v socat >/dev/null || fail "socat is not installed"
lib=$PROGS/deep/libsmdeep.so
said="loaded with dlmopen into a namespace of its own: its calls are not metered"

# run NAME ARGS... : dlmopener without and with the preload: the same
# output and status; with it, the one warning naming what was loaded.
run() {
	local name=$1 st
	shift
	plain "$PROGS/dlmopener" "$@" >"$T/$name.plain" 2>&1
	st=$?
	[ "$st" = 0 ] || fail "$name fails without the preload ($st): $(cat "$T/$name.plain")"
	SOCKMETER_LOG=$T/$name.log SOCKMETER_FORMAT=json \
		sm "$PROGS/dlmopener" "$@" >"$T/$name.out" 2>"$T/$name.err"
	st=$?
	[ "$st" = 0 ] || fail "$name: status $st under the preload: $(head -n 3 "$T/$name.err")"
	diff "$T/$name.plain" "$T/$name.out" >/dev/null ||
		fail "$name: output differs: $(tr '\n' ' ' <"$T/$name.out") against $(tr '\n' ' ' <"$T/$name.plain")"
	expect_eq "$name: lines on stderr" "$(wc -l <"$T/$name.err")" 1
	grep -q "$said" "$T/$name.err" || fail "$name: $(cat "$T/$name.err")"
}

run key key "$lib"
expect_eq "a new key in the namespace reads NULL" "$(field fresh "$T/key.out")" 1

mkdir -p "$T/www"
make_file "$T/www/f.bin" 200000
start_http "$T/www"
run curl curl "http://127.0.0.1:$HTTP_PORT/f.bin"
expect_eq "curl in the namespace" "$(field rc "$T/curl.out")" 0

start_echo
port=$ECHO_PORT
run xfer xfer "$lib" "$port" 54321
expect_eq "bytes sent from the namespace" "$(field out "$T/xfer.out")" 54321
expect_eq "bytes received in the namespace" "$(field in "$T/xfer.out")" 54321
[ ! -e "$T/xfer.log" ] ||
	check "$T/xfer.log" "len(closes(kind='tcp')) == 0" "a connection of the namespace metered after all?"
exit 0
