# Odd fds: sockets on fd numbers far above the usual (tests/progs/highfd:
# dup2 a socketpair onto FD and FD+1, fcntl(F_DUPFD) above them, move bytes,
# close).  Each of the three fds gets exactly one close record with its
# bytes.  The library's table covers fds up to the RLIMIT_NOFILE hard limit
# at start-up, so the limit is raised before the program starts: fds above
# 65,536 (65536, 70000, 1048000 and 1048573, just below the 1,048,576
# maximum) when the hard limit can be raised that far (it needs
# CAP_SYS_RESOURCE), else - a note says SKIP - the highest fds the present
# hard limit allows.  And, when the program itself can raise its limit past
# the table (again CAP_SYS_RESOURCE), an fd beyond the table is passed
# through: traffic fine, nothing recorded, no crash, one warning.
. "$(dirname "$0")/lib.sh"

need_prog highfd
hard=$(ulimit -Hn)
if (ulimit -Hn 1048576 && ulimit -Sn 1048576) 2>/dev/null; then
	limit=1048576
	fds="65536 70000 1048000 1048573"
else
	limit=$hard
	[ "$limit" = unlimited ] && limit=1048576
	fds="1000 $((limit / 2)) $((limit - 3))"
	echo "SKIP fds above 65536: the hard limit ($hard) cannot be raised here (no CAP_SYS_RESOURCE); testing fds $fds"
fi
# Under strict overcommit the automatic capacity stops at 16,384
# (docs/config.md): the table is asked for up to the limit then.
cap=
[ "$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)" = 2 ] && cap=$limit
(
	ulimit -Hn "$limit" && ulimit -Sn "$limit" || exit 99
	SOCKMETER_LOG=$T/h.log SOCKMETER_FORMAT=json SOCKMETER_MAX_FDS=$cap \
		sm "$PROGS/highfd" $fds >"$T/out" 2>"$T/err"
) || fail "highfd $fds (limit $limit) failed: $(cat "$T/err")"
# The peer got the pair's bytes and the dup's 10.
want=$("$PY" - "$T/out" <<'PYEOF'
import re, sys
rows = []
for m in re.finditer(r"pair fd=(\d+) peer=(\d+) dupfd=(\d+) bytes=(\d+)", open(sys.argv[1]).read()):
    fd, peer, d, n = map(int, m.groups())
    rows += [(fd, 0, n), (peer, n + 10, 0), (d, 0, 10)]
print(" ".join("[%d, %d, %d]" % r for r in sorted(rows)))
PYEOF
)
hi=$(echo "$fds" | tr ' ' '\n' | sort -n | head -n 1)
got=$(q "$T/h.log" "' '.join('[%d, %s, %d]' % (f['fd'], f['bytes_in'], f['bytes_out']) for f in sorted(CL, key=lambda f: f['fd']) if f['fd'] >= $hi)")
expect_eq "close records of the high fds [fd, bytes_in, bytes_out]" "$got" "$want"
# the socketpair's original low fds, closed after each dup2, moved nothing
check "$T/h.log" "all(f['bytes_in'] + f['bytes_out'] == 0 for f in CL if f['fd'] < $hi)" "low fds"
expect_eq "exit bytes_out" "$(q "$T/h.log" "tot('bytes_out')")" \
	"$(q "$T/h.log" "sum(f['bytes_out'] for f in CL if f['fd'] >= $hi)")"

# Beyond the table: start with the hard limit at 4096 (the table's size),
# then raise it from inside the program and use fd 5000.
if (ulimit -Sn 4096 && ulimit -Hn 4096 && plain "$PROGS/highfd" raise 8192 5000 >/dev/null 2>&1); then
	(
		ulimit -Sn 4096 && ulimit -Hn 4096 || exit 99
		SOCKMETER_LOG=$T/b.log SOCKMETER_FORMAT=json \
			sm "$PROGS/highfd" raise 8192 100 5000 >"$T/b.out" 2>"$T/b.err"
	) || fail "highfd beyond the table failed: $(cat "$T/b.err")"
	expect_eq "beyond the table: recorded fds" \
		"$(q "$T/b.log" "sorted(set(f['fd'] for f in CL if f['bytes_in'] + f['bytes_out']))")" "[100, 101, 102]"
	# Not silently: one warning names the first fd beyond the table.
	grep -Eq "fd 500[0-9] is beyond the 4096 fds metered" "$T/b.err" ||
		fail "beyond the table: no warning naming fd 500x: $(cat "$T/b.err")"
else
	echo "SKIP fd beyond the table: a process cannot raise its own hard limit here (no CAP_SYS_RESOURCE)"
fi
exit 0
