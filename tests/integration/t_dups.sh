# dup, dup2, dup3 and fcntl(F_DUPFD/F_DUPFD_CLOEXEC) (tests/progs/dups):
# each duplicate is metered as its own entry with the bytes sent through
# it; dup2(fd, fd) changes nothing; dup2 over a tracked fd closes its old
# connection (a close record with its 500 bytes) and the fd then carries
# the new one (700 bytes); dup2 of an unmetered fd (/dev/null) over a
# tracked one closes the connection too (a close record with its 321
# bytes), and what is written to /dev/null afterwards is not counted.
# Both closes by dup2 are seen closes (no "close_seen": false, a
# duration): before, they were retired later as reused numbers.
# Totals exact.
. "$(dirname "$0")/lib.sh"

need_prog dups
SOCKMETER_LOG=$T/d.log SOCKMETER_FORMAT=json \
	sm "$PROGS/dups" >"$T/out" 2>"$T/err" ||
	fail "dups failed: $(cat "$T/out" "$T/err")"
log=$T/d.log
for n in p0 d f g h; do
	fd=$(field "${n}_fd" "$T/out")
	b=$(field "${n}_bytes" "$T/out")
	expect_eq "$n (fd $fd): close records [kind, bytes_out]" \
		"$(q "$log" "[[f['kind'], f['bytes_out']] for f in closes(fd=$fd)]")" \
		"[[\"unix\", $b]]"
done
q0=$(field q0_fd "$T/out")
old=$(field q0_old_bytes "$T/out")
new=$(field q0_new_bytes "$T/out")
expect_eq "q0 (fd $q0): close records' bytes_out, in order" \
	"$(q "$log" "[f['bytes_out'] for f in closes(fd=$q0)]")" "[$old, $new]"
expect_eq "q0 (fd $q0): [close seen, has a duration], in order" \
	"$(q "$log" "[[f.get('close_seen', True), 'duration' in f] for f in closes(fd=$q0)]")" \
	"[[true, true], [true, true]]"
expect_eq "p1 bytes_in" \
	"$(q "$log" "[f['bytes_in'] for f in closes(fd=$(field p1_fd "$T/out"))]")" \
	"[$(field p1_bytes "$T/out")]"
expect_eq "q1 bytes_in" \
	"$(q "$log" "[f['bytes_in'] for f in closes(fd=$(field q1_fd "$T/out"))]")" \
	"[$(field q1_bytes "$T/out")]"
r0=$(field r0_fd "$T/out")
expect_eq "r0 (fd $r0): close records [kind, bytes_out]" \
	"$(q "$log" "[[f['kind'], f['bytes_out']] for f in closes(fd=$r0)]")" \
	"[[\"unix\", $(field r0_bytes "$T/out")]]"
expect_eq "r0 (fd $r0): [close seen, has a duration]" \
	"$(q "$log" "[[f.get('close_seen', True), 'duration' in f] for f in closes(fd=$r0)]")" \
	"[[true, true]]"
total=$(field total_bytes "$T/out")
expect_eq "exit bytes_out" "$(q "$log" "tot('bytes_out')")" "$total"
expect_eq "exit bytes_in" "$(q "$log" "tot('bytes_in')")" "$total"
expect_eq "exit fds_open" "$(q "$log" "tot('fds_open')")" 0
expect_eq "close records" "$(q "$log" "len(CL)")" 11
expect_eq "exit fds_closed" "$(q "$log" "tot('fds_closed')")" 11
exit 0
