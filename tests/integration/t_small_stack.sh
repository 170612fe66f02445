# A main thread with a small stack (ulimit -s): whatever runs without the
# preload runs with it.  The library's start-up (its constructor, before
# main) and its exit record (made by the thread that calls exit, on that
# thread's stack) once needed 6.5 and 11 KiB there: under `ulimit -s 16`
# /bin/true died of SIGSEGV in 14 of 20 starts with the preload, and at 20
# KiB half the curl downloads did (a helper's).
#
# The smallest limit tried is the first of 20, 24 and 28 KiB at which
# curl and /bin/true never fail with a preload that does nothing (the
# loader's own mapping of a preload, and the environment at the top of
# the stack, take some of it; a machine with a bigger environment gets a
# bigger limit).  There, with the preload: no failure in 20 runs of
# /bin/true and 10 downloads, each download's bytes exact in its log.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || fail "curl is not installed"
command -v "${CC:-cc}" >/dev/null || fail "no C compiler for the empty preload"
printf 'int sm_test_empty_preload;\n' >"$T/empty.c"
"${CC:-cc}" -shared -fPIC -o "$T/empty.so" "$T/empty.c" ||
	fail "cannot build the empty preload"
mkdir -p "$T/www"
size=300000
make_file "$T/www/data.bin" "$size"
start_http "$T/www"
url=http://127.0.0.1:$HTTP_PORT/data.bin

# small KIB PRELOAD CMD... - CMD with the main thread's stack limited to
# KIB KiB and PRELOAD preloaded (none when empty); its exit status.
small() {
	local kib=$1 pre=$2
	shift 2
	timeout 30 bash -c 'ulimit -s "$1" || exit 99; shift
		if [ -n "$1" ]; then export LD_PRELOAD="$1"; fi; shift
		exec "$@"' small "$kib" "$pre" "$@" >/dev/null 2>>"$T/small.err"
}

limit=
for kib in 20 24 28; do
	ok=1
	for i in 1 2 3 4 5 6 7 8 9 10; do
		small "$kib" "" /bin/true && small "$kib" "$T/empty.so" /bin/true &&
			small "$kib" "$T/empty.so" curl -s --noproxy '*' -o /dev/null "$url" ||
			{ ok=0; break; }
	done
	if [ "$ok" = 1 ]; then
		limit=$kib
		break
	fi
done
[ -n "$limit" ] || fail "curl fails even without sockmeter at every limit tried (20 to 28 KiB)"
[ "$limit" = 20 ] || echo "NOTE: the smallest workable limit here is $limit KiB, not 20"

export SOCKMETER_FORMAT=json
fails=0
for i in $(seq 20); do
	SOCKMETER_LOG=$T/true.$i.log small "$limit" "$LIB" /bin/true ||
		fails=$((fails + 1))
done
expect_eq "/bin/true failures in 20 runs at ulimit -s $limit (with the preload)" "$fails" 0
fails=0
for i in $(seq 10); do
	if ! SOCKMETER_LOG=$T/curl.$i.log small "$limit" "$LIB" \
		curl -s --noproxy '*' -o "$T/got.$i" "$url"; then
		fails=$((fails + 1))
		continue
	fi
	cmp -s "$T/got.$i" "$T/www/data.bin" || fail "download $i differs"
	# The response's header and the body in, the request out: what the
	# close record and the exit record both say.
	check "$T/curl.$i.log" "len(closes(kind='tcp')) == 1 and closes(kind='tcp')[0]['bytes_in'] > $size" \
		"download $i: its close record"
	check "$T/curl.$i.log" "tot('bytes_in') == csum('bytes_in') and tot('bytes_out') == csum('bytes_out')" \
		"download $i: its exit record"
done
expect_eq "curl failures in 10 downloads at ulimit -s $limit (with the preload)" "$fails" 0
exit 0
