# stdio on an fdopen'd socketpair: 28,000 bytes each way through fprintf,
# fputs, fwrite, fputc/putc and fflush(NULL) out, fgets, getline, fscanf, fread
# and getc/fgetc in; the parent's end carries exactly what the child (with
# plain read and write) received and sent.  The child ends with _exit,
# which writes its own exit record (issue 8): each process has its log.
. "$(dirname "$0")/lib.sh"

need_prog stdio_pair
SOCKMETER_LOG=$T/p.%p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/stdio_pair" >"$T/out" 2>"$T/err" ||
	fail "stdio_pair failed: $(cat "$T/err")"
fd=$(field fd "$T/out")
plog=
for f in "$T"/p.*.log; do
	[ "$(q "$f" "len([c for c in conns(fd=$fd) if c['bytes_out'] == 28000])")" = 1 ] &&
		plog=$f
done
[ -n "$plog" ] || fail "no log holds the parent's end: $(ls "$T")"
expect_eq "logs (parent, child)" "$(ls "$T"/p.*.log | wc -l)" 2
expect_eq "truth: child_in" "$(field child_in "$T/out")" 28000
expect_eq "truth: child_out" "$(field child_out "$T/out")" 28000
expect_eq "parent's stdio calls" \
	"$(field parent_in "$T/out"),$(field parent_out "$T/out")" 28000,28000
expect_eq "parent's end [kind, bytes_out, bytes_in]" \
	"$(q "$plog" "[[f['kind'], f['bytes_out'], f['bytes_in']] for f in conns(fd=$fd)]")" \
	'[["unix", 28000, 28000]]'
expect_eq "exit totals [bytes_out, bytes_in]" \
	"$(q "$plog" "[tot('bytes_out'), tot('bytes_in')]")" "[28000, 28000]"
# Counted as the kernel saw it: 28,000 bytes leave a 4 KiB buffer in a
# handful of flushes, not in 1,000 stdio calls.
check "$plog" "conns(fd=$fd)[0]['calls_out'] < 20" "calls_out"
exit 0
