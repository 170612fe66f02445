# Two copies of the library in LD_PRELOAD (two paths, or the launcher's
# copy put before one the user already preloads) meter once: the first
# copy in the loader's order meters, the other passes calls through.
# Before, each wrapped the other: every connection had two close records,
# the process two exit records, and report counted its bytes twice.
. "$(dirname "$0")/lib.sh"

need curl
mkdir -p "$T/www"
make_file "$T/www/f.bin" 300000
start_http "$T/www"
cp "$LIB" "$T/copy.so"
# run NAME ENV... - curl once, preloaded as ENV says; one connection.
run() {
	local name=$1
	shift
	mkdir -p "$T/$name.state"
	env "$@" SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/$name-%p.log" \
		SOCKMETER_STATE="$T/$name.state" timeout 30 \
		curl -s --noproxy '*' -o "$T/$name.got" -w '%{size_header} %{size_download}\n' \
		"http://127.0.0.1:$HTTP_PORT/f.bin" >"$T/$name.out" 2>"$T/$name.err" ||
		fail "$name: curl failed: $(cat "$T/$name.err")"
	read -r hdr body <"$T/$name.out"
	expect_eq "$name: logs" "$(ls "$T/$name"-*.log | wc -l)" 1
	log=$(ls "$T/$name"-*.log)
	expect_eq "$name: [tcp close records, their bytes_in, exit records]" \
		"$(q "$log" "[len(closes(kind='tcp')), csum('bytes_in', kind='tcp'), len([r for r in R if r['type'] == 'exit'])]")" \
		"[1, $((hdr + body)), 1]"
	expect_eq "$name: state files left" "$(ls "$T/$name.state" | wc -l)" 0
}
run lib-then-copy LD_PRELOAD="$LIB $T/copy.so"
run copy-then-lib LD_PRELOAD="$T/copy.so $LIB"
# The launcher puts its copy first and keeps what LD_PRELOAD had.
mkdir -p "$T/launcher.state"
LD_PRELOAD=$T/copy.so SOCKMETER_LIB=$LIB SOCKMETER_STATE=$T/launcher.state \
	timeout 30 "$SM_TOP/scripts/sockmeter" -f json -o "$T/launcher-%p.log" -- \
	curl -s --noproxy '*' -o /dev/null "http://127.0.0.1:$HTTP_PORT/f.bin" ||
	fail "the launcher failed"
log=$(ls "$T"/launcher-*.log)
expect_eq "launcher: [tcp close records, exit records]" \
	"$(q "$log" "[len(closes(kind='tcp')), len([r for r in R if r['type'] == 'exit'])]")" \
	"[1, 1]"
exit 0
