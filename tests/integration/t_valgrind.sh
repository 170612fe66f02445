# Under valgrind the library cannot work (valgrind turns the clone that
# writes the log into a fork, and knows no pidfd_open): it says so once
# and passes every call through.  Before, curl under valgrind wrote an
# empty log, left its state file behind, and ran ten times slower.
. "$(dirname "$0")/lib.sh"

need valgrind curl
mkdir -p "$T/www" "$T/state"
chmod 700 "$T/state"
make_file "$T/www/f.bin" 50000
start_http "$T/www"
LD_PRELOAD=$LIB SOCKMETER_STATE=$T/state SOCKMETER_LOG=$T/vg-%p.log \
	timeout 60 valgrind -q curl -s --noproxy '*' -o "$T/got" \
	"http://127.0.0.1:$HTTP_PORT/f.bin" 2>"$T/err" ||
	fail "curl under valgrind failed: $(cat "$T/err")"
cmp -s "$T/got" "$T/www/f.bin" || fail "the download differs"
expect_eq "stderr" "$(cat "$T/err")" \
	"sockmeter: running under valgrind, which cannot run what sockmeter needs (a clone sharing memory, pidfd_open): nothing is metered"
expect_eq "logs" "$(ls "$T"/vg-*.log 2>/dev/null | grep -c .)" 0
# valgrind's launcher, metered before it execs the tool, leaves its image's
# file marked final, which a recovery removes; nothing else is there.
"$SM_BUILD/sockmeter-recover" "$T/state" >"$T/rec.out" 2>&1 ||
	fail "recover: $(cat "$T/rec.out")"
expect_eq "state files after a recovery" "$(ls "$T/state" | grep -c .)" 0
grep -q ' 0 recovered' "$T/rec.out" || fail "recover found numbers: $(cat "$T/rec.out")"
exit 0
