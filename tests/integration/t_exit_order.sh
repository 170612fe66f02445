# A metered process's end comes in the kernel's order: its fds close after
# its memory has gone, and its parent is told right after (tests/progs/
# endorder: the time from the end of file on a child's socket to its
# SIGCHLD, 20 children of 128 MB each, ended by exit() and by _exit()).
# The ticker keeps an fd table of its own, so before, the program's fds
# closed with the thread that called exit, and the process ended only once
# the ticker had died too, after tearing the address space down: 7 to
# 14 ms later in runs here (25 to 35 us without the preload, and since).
# vsftpd's session process took its error path in 45 of 50 sessions for
# it ("500 OOPS" to a client already gone), reading its child's end of
# file before its SIGCHLD (a helper's sweep); 5 of 50 since, 3 of 50
# without the library.  Every child still writes its exit record.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/logs"
export SOCKMETER_FORMAT=json
for how in exit _exit; do
	rm -f "$T"/logs/*
	out=$(SOCKMETER_LOG="$T/logs/%p.log" sm "$PROGS/endorder" 20 128 "$how") ||
		fail "endorder $how failed: $out"
	gap=$(printf '%s\n' "$out" | sed -n 's/^RESULT median_gap_us=\([0-9]*\) .*/\1/p')
	[ -n "$gap" ] || fail "endorder $how: no result: $out"
	[ "$gap" -lt 1000 ] ||
		fail "$how: the end of file came $gap us (median) before SIGCHLD"
	logs=$(ls "$T"/logs/*.log | wc -l)
	exits=$(cat "$T"/logs/*.log | grep -c '"type":"exit"')
	expect_eq "$how: logs" "$logs" 21
	expect_eq "$how: exit records" "$exits" 21
done
exit 0
