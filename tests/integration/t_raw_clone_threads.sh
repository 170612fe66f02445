# A raw clone (syscall(SYS_clone, SIGCHLD): glibc runs nothing of its own in
# the child) of a process with threads of the program's own
# (tests/progs/rawclone_mt).  glibc's locks are as those threads left them
# at the clone, and its thread count is theirs:
#  - 150 children, each a socket and 5 bytes written, cloned while two
#    threads create threads without pause: none hangs (the library's
#    pthread_create for the child's ticker waited for good on the stack
#    cache's lock another thread's pthread_create held: 23 of 500 children
#    hung, SIGTERM blocked, found by a helper), and each child's exit
#    record has its 5 bytes;
#  - a child whose main thread calls pthread_exit and whose other thread
#    then makes syscall(SYS_exit, 5): the process ends with 5, as without
#    the preload (the ticker, waiting for a thread count that never fell,
#    ended it with the main thread's 0).
. "$(dirname "$0")/lib.sh"

need_prog rawclone_mt
mkdir -p "$T/log"
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/h.%p.log" \
	sm "$PROGS/rawclone_mt" hang 150 >"$T/hang.out" 2>"$T/hang.err" ||
	fail "rawclone_mt hang failed: $(cat "$T/hang.err")"
expect_eq "children hung" "$(field hung "$T/hang.out")" 0
expect_eq "bytes the parent got" "$(field got "$T/hang.out")" 750
# The children's exit records: one each, 5 bytes out, written at their
# _exit (no ticker in them).
expect_eq "children's exit records with their 5 bytes" \
	"$(cat "$T"/log/h.*.log | "$PY" -c '
import json, sys
n = 0
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "exit" and r["totals"]["bytes_out"] == 5 and not r.get("end"):
        n += 1
print(n)')" 150
plain=$("$PROGS/rawclone_mt" status) || fail "rawclone_mt status failed without the preload"
expect_eq "status without the preload" "$plain" "status=5"
SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/s.%p.log" \
	sm "$PROGS/rawclone_mt" status >"$T/status.out" 2>"$T/status.err" ||
	fail "rawclone_mt status failed: $(cat "$T/status.err")"
expect_eq "status with the preload" "$(cat "$T/status.out")" "$plain"
exit 0
