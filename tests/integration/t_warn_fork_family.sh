# A pre-fork server whose children all meet the same trouble says it once,
# not once per child.  Real mini_httpd, started as root, forks a child per
# request that drops to nobody; the log directory and the state directory
# are root's (0755, 0700), closed to nobody.  Every child's log and state
# file fail, each for its own %p path; before, each child said both lines
# (a line pair per request: 10 lines for 5 requests).  Now the first child
# that meets it says each line, its siblings do not repeat it (the same
# words, their own pid aside).  The master, which root's rights let write,
# has its log and its exit record.
# Then with -r: the master chroots into its document root (its log was
# opened before, and stays), and its children's logs, looked up inside
# the new root, cannot be made: one line, which says so, rather than
# "until it works" (it never will).
# Then -r with the log's directory present inside the new root too: the
# children's logs are written there, but their state directory is out of
# reach, so a kill would lose their numbers: one line says so (before,
# nothing did: a helper's nsd workers lost theirs to a kill -9 in
# silence), and the children's logs have their bytes.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (mini_httpd's children change user)"
[ -x /usr/sbin/mini_httpd ] || fail "mini_httpd missing (scripts/install-deps)"
chmod 755 "$T"
mkdir -p "$T/www" "$T/log"
chmod 755 "$T/log"
make_file "$T/www/f" 5000
chmod 644 "$T/www/f"
N=5
# serve ERR [MINI_HTTPD OPTIONS]: mini_httpd (metered) for N requests of
# /f, its stderr in ERR, then stopped.
serve() {
	local err=$1 try got i
	shift
	: >"$T/access.log"
	for try in 1 2 3; do
		port=$(free_port)
		SOCKMETER_LOG="$T/log/%n.%p.log" SOCKMETER_STATE="$T/state" SOCKMETER_FORMAT=json \
			bg_start env LD_PRELOAD="$LIB" /usr/sbin/mini_httpd -D -h 127.0.0.1 \
			-p "$port" -d "$T/www" -u nobody -l "$T/access.log" "$@" 2>"$err"
		srv=$BG_PID
		wait_for 10 is_listening "$port" && break
		kill "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
	done
	is_listening "$port" || fail "mini_httpd did not start: $(cat "$err")"
	got_total=0
	for i in $(seq $N); do
		got=$(curl -s -o /dev/null -w '%{size_download} %{size_header}' "http://127.0.0.1:$port/f") ||
			fail "request $i failed"
		expect_eq "request $i: bytes" "${got% *}" 5000
		got_total=$((got_total + ${got% *} + ${got#* }))
	done
	wait_for 10 test "$(grep -c '" 200 5000' "$T/access.log" 2>/dev/null)" = $N ||
		fail "mini_httpd's access log: $(cat "$T/access.log")"
	kill -TERM "$srv"
	wait "$srv" 2>/dev/null
}
serve "$T/err"
expect_eq "lines about the state directory" \
	"$(grep -c 'the state directory .* is not usable by uid' "$T/err")" 1
expect_eq "lines about a log nobody cannot write" \
	"$(grep -c "log $T/log/mini_httpd\.[0-9]*\.log: cannot write" "$T/err")" 1
expect_eq "sockmeter lines in all" "$(grep -c '^sockmeter' "$T/err")" 2
# The master (root) wrote its log; the line names a child's, never made.
expect_eq "logs made" "$(ls "$T/log" | wc -l)" 1
log=$(ls "$T"/log/mini_httpd.*.log)
child=$(sed -n "s|^sockmeter: log \($T/log/mini_httpd\.[0-9]*\.log\): cannot write.*|\1|p" "$T/err")
[ "$child" != "$log" ] || fail "the master said it could not write its log"
check "$log" "E['type'] == 'exit'" "the master's exit record"

rm -f "$T"/log/*
serve "$T/err2" -r
expect_eq "chroot: lines about a child's log" \
	"$(grep -c "log $T/log/mini_httpd\.[0-9]*\.log: cannot write: No such file or directory; metering goes on, records are lost (after a chroot, the path is looked up inside the new root)" "$T/err2")" 1
expect_eq "chroot: sockmeter lines in all" "$(grep -c '^sockmeter' "$T/err2")" 1
expect_eq "chroot: logs made (the master's)" "$(ls "$T/log" | wc -l)" 1
check "$(ls "$T"/log/mini_httpd.*.log)" "E['type'] == 'exit'" "chroot: the master's exit record"

rm -f "$T"/log/*
inner="$T/www$T/log" # the log's directory as the children see it
mkdir -p "$inner"
chmod 1777 "$inner"
serve "$T/err3" -r
expect_eq "chroot, log in reach: lines about the state directory" \
	"$(grep -c "the state directory $T/state is out of reach (after a chroot, the path is looked up inside the new root): its numbers have no state file, and a kill loses them" "$T/err3")" 1
expect_eq "chroot, log in reach: sockmeter lines in all" "$(grep -c '^sockmeter' "$T/err3")" 1
expect_eq "chroot, log in reach: children's logs" "$(ls "$inner" | wc -l)" $N
out=0
for f in "$inner"/*; do
	out=$((out + $(q "$f" "tot('bytes_out')")))
done
expect_eq "chroot, log in reach: bytes the children sent (curl's headers and bodies)" "$out" "$got_total"
exit 0
