# Limits on memory (`ulimit -v`, `ulimit -d`): the library's reservations
# count against them, touched or not.
#  - A limit the library's start-up does not fit in: it runs as
#    pass-through, and gives back every mapping it made (it kept a 19 MB
#    reservation: a python that runs under `ulimit -v 50000` without the
#    preload failed with it, "Fatal Python error").
#  - A limit it fits in: the fd tables are bounded (as under strict
#    overcommit, and to an eighth of the limit), so the program keeps
#    most of its memory (a `ulimit -d 60000` python could allocate 28 MiB
#    of its 53 with the preload, 41 now) and is metered exactly; what it
#    reserves being more than an eighth of the limit, one line says so.
#  - A limit it fits in but takes more than a quarter of: given back, and
#    pass-through, said.  A python that runs under `ulimit -v` 22,000 to
#    34,000 KiB without the preload ran out of memory with it ("Fatal
#    Python error", SIGABRT) in two ranges of those, in silence.
. "$(dirname "$0")/lib.sh"

pybin=/usr/bin/python3
[ -x "$pybin" ] || pybin=$PY

# 1. Pass-through gives everything back.  The library fits under this
# limit with its own capacity; [track] max_fds makes it not fit: the
# first value (ascending) that makes it say "pass-through" is the case
# where its reservation was made and the rest failed (larger ones fail
# at the reservation, with nothing to give back).
(ulimit -v 50000 && "$pybin" -c 'print("ok")') >"$T/v0.out" 2>&1 ||
	skip "python does not start under ulimit -v 50000 even without the preload"
tried=
for m in 12000 16000 20000 24000 28000 32000 40000 48000; do
	(ulimit -v 50000 && SOCKMETER_MAX_FDS=$m SOCKMETER_LOG="$T/v.%p.log" \
		sm "$pybin" -c 'print("ok")') >"$T/v.out" 2>"$T/v.err"
	st=$?
	grep -q "running as pass-through" "$T/v.err" || continue
	tried=$m
	[ "$st" = 0 ] ||
		fail "max_fds $m: python failed under the preload's pass-through (kept memory?): $(head -n 3 "$T/v.err")"
	expect_eq "max_fds $m: python's output" "$(cat "$T/v.out")" ok
	break
done
[ -n "$tried" ] || skip "no max_fds made the library run as pass-through under ulimit -v 50000"
echo "pass-through at max_fds $tried under ulimit -v 50000" >&2

# 2. A limit the library fits in: metered, and most of it left.
cat >"$T/alloc.py" <<'PYEOF'
import socket
a, b = socket.socketpair()
a.sendall(b"x" * 12345)
got = b.recv(65536)
keep, n = [], 0
try:
    while n < 4096:
        keep.append(bytearray(1 << 20))
        n += 1
except MemoryError:
    pass
print("mib=%d" % n)
print("got=%d" % len(got))
PYEOF
(ulimit -d 60000 && plain "$pybin" "$T/alloc.py") >"$T/d0.out" 2>&1 ||
	skip "python does not run under ulimit -d 60000 without the preload"
(ulimit -d 60000 && SOCKMETER_LOG="$T/d.%p.log" SOCKMETER_FORMAT=json \
	sm "$pybin" "$T/alloc.py") >"$T/d.out" 2>"$T/d.err" ||
	fail "python under ulimit -d 60000 failed with the preload: $(head -n 3 "$T/d.err")"
expect_eq "stderr: one line" "$(wc -l <"$T/d.err")" 1
grep -q "^sockmeter: metering reserves [0-9]* KiB of the 60000 KiB memory limit" "$T/d.err" ||
	fail "stderr: $(head -n 3 "$T/d.err")"
without=$(field mib "$T/d0.out")
with=$(field mib "$T/d.out")
echo "ulimit -d 60000: $without MiB to allocate without the preload, $with with it" >&2
[ "$with" -ge $((without - 16)) ] ||
	fail "the preload took $((without - with)) MiB of the program's 60 MB (limit: 16)"
expect_eq "bytes received" "$(field got "$T/d.out")" 12345
log=$(one_log "$T/d.*.log")
expect_eq "bytes_out metered" "$(q "$log" "tot('bytes_out')")" 12345

# 3. Limits on the address space just above what python needs: it runs
# with the preload wherever it runs without it, and what the library did
# is said.
ran=0
for v in 22000 24000 28000 32000 34000 40000; do
	(ulimit -v "$v" && plain "$pybin" "$T/alloc.py") >/dev/null 2>&1 || continue
	ran=$((ran + 1))
	(ulimit -v "$v" && SOCKMETER_LOG="$T/v$v.%p.log" sm "$pybin" "$T/alloc.py") \
		>"$T/v$v.out" 2>"$T/v$v.err" ||
		fail "ulimit -v $v: python runs without the preload, failed with it: $(tail -n 2 "$T/v$v.err")"
	grep -q "^sockmeter: metering .* KiB of the $v KiB memory limit" "$T/v$v.err" ||
		fail "ulimit -v $v: nothing said: $(head -n 2 "$T/v$v.err")"
	expect_eq "ulimit -v $v: bytes received" "$(field got "$T/v$v.out")" 12345
done
[ "$ran" -gt 0 ] || skip "python runs under none of the ulimit -v values tried"
exit 0
