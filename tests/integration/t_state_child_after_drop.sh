# A process that drops root (seteuid, or setresuid for good) and then
# forks (danted's children, a daemon's workers forked after the drop): the
# child makes its state file at its first connection, as the new user.
#  - [state] dir fixed (no %u) and root's (0700): the child cannot use it.
#    Its numbers have no state file, which must be said, once, naming the
#    directory and the uid (before: silently; a kill lost everything).
#    Its records are exact all the same when it ends by itself.
#  - [state] dir with %u: the child's file is in nobody's directory, no
#    warning.
#  - [state] dir with %u in a directory closed to nobody (root's, 0755):
#    nobody's directory cannot be made; said once too (before: silently,
#    the missing directory taken for one out of reach, as after a chroot).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (to change uid)"
nuid=$(id -u nobody) || fail "no user nobody"
pybin=/usr/bin/python3
[ -x "$pybin" ] || pybin=$PY
chmod 755 "$T"
mkdir -m 1777 "$T/log"
cat >"$T/drop.py" <<'PYEOF'
import os, socket, sys
how, nuid = sys.argv[1], int(sys.argv[2])
if how == "seteuid":
    os.setegid(65534)
    os.seteuid(nuid)
else:
    os.setresgid(65534, 65534, 65534)
    os.setresuid(nuid, nuid, nuid)
pid = os.fork()
if pid == 0:
    a, b = socket.socketpair()
    a.sendall(b"x" * 1000)
    b.recv(2000)
    b.sendall(b"y" * 3000)
    n = 0
    while n < 3000:
        n += len(a.recv(4000))
    print("child=%d" % os.getpid(), flush=True)
    os._exit(0)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
PYEOF
mkdir -m 700 "$T/fixed"
mkdir -m 1777 "$T/pu" # nobody makes its own directory in it
mkdir -m 755 "$T/closed" # nobody cannot
for how in seteuid setresuid; do
	for dir in fixed pu closed; do
		n=$how-$dir
		sdir=$T/fixed
		said="state directory $T/fixed .* not usable by uid $nuid"
		[ "$dir" = pu ] && sdir=$T/pu/%u
		if [ "$dir" = closed ]; then
			sdir=$T/closed/%u
			said="state directory $T/closed/$nuid cannot be used by uid $nuid"
		fi
		SOCKMETER_LOG="$T/log/$n.%p.log" SOCKMETER_FORMAT=json \
			SOCKMETER_STATE=$sdir sm "$pybin" "$T/drop.py" "$how" "$nuid" \
			>"$T/$n.out" 2>"$T/$n.err" || fail "$n: $(tail -n 3 "$T/$n.err")"
		child=$(field child "$T/$n.out")
		log=$(one_log "$T/log/$n.$child.log")
		expect_eq "$n: child's [bytes_out, bytes_in]" \
			"$(q "$log" "[T['bytes_out'], T['bytes_in']]")" "[4000, 4000]"
		warned=$(grep -c "$said" "$T/$n.err")
		others=$(grep -vc "$said" "$T/$n.err")
		if [ "$dir" != pu ]; then
			expect_eq "$n: warnings about the state directory" "$warned" 1
		else
			expect_eq "$n: warnings about the state directory" "$warned" 0
			[ -d "$T/pu/$nuid" ] || fail "$n: no state directory of nobody's"
		fi
		expect_eq "$n: other lines on stderr" "$others" 0
	done
done
exit 0
