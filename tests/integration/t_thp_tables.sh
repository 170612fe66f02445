# The library's tables get no transparent huge pages (MADV_NOHUGEPAGE),
# in the process and in a fork child whose tables stay private memory.
#
# Where THP is "always" (RHEL's and Fedora's default), the first touch of
# a table faulted in a whole 2 MiB page: a small C program under the
# preload was 2.0 MB larger in RSS than before for it (2.3 against
# 4.3 MB), 4 MB with [state] enabled = false (6.3 MB), and with the state
# off every fork child faulted in two huge pages (600 in 300 forks).
# Measured here by switching the machine's THP to "always" for a moment;
# a test does not change the machine, so it checks the mark itself: every
# anonymous mapping of the process marked out of core dumps (the tables:
# t_core_dump) is marked no-huge too ("nh" in /proc/PID/smaps' VmFlags),
# with the state on and off and in a fork child (but a child's state
# region while its file is to come, which the file backs: no private page
# of it written); and where THP is
# "always" already, python3 under the preload holds no huge page more
# than without it.
. "$(dirname "$0")/lib.sh"

[ -r /proc/self/smaps ] || skip "no /proc/PID/smaps"
export SOCKMETER_LOG=$T/%p.log

cat >"$T/tables.py" <<'PYEOF'
import os, socket, sys

def marks(tag):
    # "tag tables=N unmarked=M anon_huge=K": the anonymous mappings of at
    # least 1 MiB marked dd, how many of them lack nh, the AnonHugePages.
    tables = unmarked = huge = written = anon_kib = 0
    size = 0
    anon = False
    with open("/proc/self/smaps") as f:
        for line in f:
            first = line.split()[0]
            if "-" in first and not first.endswith(":"):
                fields = line.split()
                anon = len(fields) < 6
                lo, hi = (int(x, 16) for x in first.split("-"))
                size = hi - lo
            elif first == "AnonHugePages:":
                huge += int(line.split()[1])
            elif first == "Anonymous:":
                anon_kib = int(line.split()[1])
            elif first == "VmFlags:":
                flags = line.split()[1:]
                if anon and size >= 1 << 20 and "dd" in flags:
                    tables += 1
                    if "nh" not in flags:
                        unmarked += 1
                        written = max(written, anon_kib)
    print("%s tables=%d unmarked=%d written=%d anon_huge=%d" %
          (tag, tables, unmarked, written, huge), flush=True)

def traffic():
    a, b = socket.socketpair()
    socks = [socket.socket() for _ in range(20)]
    a.sendall(b"t" * 5000)
    got = 0
    while got < 5000:
        got += len(b.recv(65536))
    return a, b, socks

keep = traffic()
marks("process")
pid = os.fork()
if pid == 0:
    keep2 = traffic()
    marks("child")
    os._exit(0)
os.waitpid(pid, 0)
PYEOF

# value OUT TAG KEY
value() {
	sed -n "s/^$2 .*\\b$3=\\([0-9]*\\).*/\\1/p" "$1"
}

for state in on off; do
	if [ $state = on ]; then
		sm "$PY" "$T/tables.py" >"$T/$state.out" 2>"$T/$state.err"
	else
		SOCKMETER_STATE=off sm "$PY" "$T/tables.py" >"$T/$state.out" 2>"$T/$state.err"
	fi || fail "state $state: python failed: $(cat "$T/$state.err")"
	for who in process child; do
		n=$(value "$T/$state.out" $who tables)
		u=$(value "$T/$state.out" $who unmarked)
		echo "state $state, $who: $n tables, $u without the no-huge mark" >&2
		# (A child's state region is made again only over the span
		# its parent used: under 1 MiB here.)
		min=3
		[ $who = child ] && min=2
		[ "${n:-0}" -ge $min ] ||
			fail "state $state, $who: only ${n:-no} tables found (marked out of core dumps): the test proves nothing"
		# A fork child's state region, made again, is left unmarked
		# while its file is to come (a system call less per fork):
		# the file backs whatever is written, so no private page of
		# it is (but a page or two of its head).
		if [ $state = on ] && [ $who = child ]; then
			[ "$u" -le 1 ] || fail "state on, child: $u tables without the no-huge mark"
			w=$(value "$T/$state.out" $who written)
			[ "$w" -le 64 ] ||
				fail "state on, child: $w KiB written privately in a table without the no-huge mark"
		else
			expect_eq "state $state, $who: tables without the no-huge mark" "$u" 0
		fi
	done
done

# Where the machine's THP is "always": no huge page more than without.
if grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
	plain "$PY" "$T/tables.py" >"$T/plain.out" 2>&1 || fail "python failed"
	for who in process child; do
		p=$(value "$T/plain.out" $who anon_huge)
		m=$(value "$T/on.out" $who anon_huge)
		echo "THP always, $who: $p KiB of huge pages without the preload, $m with it" >&2
		[ "$m" -le "$p" ] || fail "THP always, $who: $m KiB of huge pages with the preload, $p without"
	done
else
	echo "THP is not \"always\" here: the huge pages themselves not compared" >&2
fi
exit 0
