# A main thread with a small stack (ulimit -s): whatever runs without the
# preload runs with it.  The library's start-up (its constructor, before
# main) and its exit record (made by the thread that calls exit, on that
# thread's stack) once needed 6.5 and 11 KiB there: under `ulimit -s 16`
# /bin/true died of SIGSEGV in 14 of 20 starts with the preload, and at 20
# KiB half the curl downloads did (a helper's).
#
# Without address randomization (setarch -R: the kernel otherwise moves
# the stack's top by up to 8 KiB at random, so that a limit only has a
# rate of failure), the smallest limit in steps of 2 KiB at which curl
# and /bin/true run with a preload that does nothing is found: the
# loader's own mapping of a preload, and the environment at the top of
# the stack, take some of it (a bigger environment, a bigger limit).
# With the library they must run at 2 KiB more, every time, a download's
# bytes exact in its log.  The library of before needed 4 to 8 KiB more
# than the empty preload (a review's).
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

arch=$(uname -m)
if ! setarch "$arch" -R true 2>/dev/null; then
	echo "NOTE: setarch -R is refused here (a seccomp profile): the limits cannot be told apart without randomization; not tried"
	exit 0
fi

# small KIB PRELOAD CMD... - CMD without address randomization, the main
# thread's stack limited to KIB KiB and PRELOAD preloaded (none when
# empty); its exit status.
small() {
	local kib=$1 pre=$2
	shift 2
	timeout 30 setarch "$arch" -R bash -c 'ulimit -s "$1" || exit 99; shift
		if [ -n "$1" ]; then export LD_PRELOAD="$1"; fi; shift
		exec "$@"' small "$kib" "$pre" "$@" >/dev/null 2>>"$T/small.err"
}

export SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/cal.%p.log
limit=
for kib in $(seq 8 2 48); do
	if small "$kib" "" /bin/true && small "$kib" "$T/empty.so" /bin/true &&
		small "$kib" "$T/empty.so" curl -s --noproxy '*' -o /dev/null "$url"; then
		limit=$kib
		break
	fi
done
[ -n "$limit" ] || fail "curl fails with an empty preload at every limit up to 48 KiB"
limit=$((limit + 2))
echo "NOTE: the empty preload runs at $((limit - 2)) KiB; the library is tried at $limit"

for i in 1 2 3; do
	SOCKMETER_LOG=$T/true.$i.log small "$limit" "$LIB" /bin/true ||
		fail "/bin/true with the library at ulimit -s $limit (run $i): status $?"
	SOCKMETER_LOG=$T/curl.$i.log small "$limit" "$LIB" \
		curl -s --noproxy '*' -o "$T/got.$i" "$url" ||
		fail "curl with the library at ulimit -s $limit (run $i): status $?"
	cmp -s "$T/got.$i" "$T/www/data.bin" || fail "download $i differs"
	# The response's header and the body in, the request out: what the
	# close record and the exit record both say.
	check "$T/curl.$i.log" "len(closes(kind='tcp')) == 1 and closes(kind='tcp')[0]['bytes_in'] > $size" \
		"download $i: its close record"
	check "$T/curl.$i.log" "tot('bytes_in') == csum('bytes_in') and tot('bytes_out') == csum('bytes_out')" \
		"download $i: its exit record"
done
exit 0
