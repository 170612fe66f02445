# A vfork() child, and a clone(CLONE_VM | CLONE_VFORK) child, share the
# parent's memory: their close(), dup2(), socket() and socketpair() before
# exec or _exit must not touch the parent's slots: the connection's one
# close record holds all 3000 bytes (1000 before the children, 2000
# after), and the parent's log has no other record.  A clone(CLONE_VFORK)
# child without CLONE_VM is a process of its own, metered in its own log,
# and so is a posix_spawn()ed program.  No close makes a getpid() system
# call (wrap_vfork.c marks the vfork child): checked with strace when it
# is installed.
. "$(dirname "$0")/lib.sh"

need_prog spawner
need_prog pairxfer
mkdir -p "$T/logs"
SOCKMETER_LOG=$T/logs/%n.%p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/spawner" "$PROGS/pairxfer" 5000 >"$T/out" 2>"$T/err" ||
	fail "spawner failed: $(cat "$T/out" "$T/err")"
sfd=$(field send_fd "$T/out")
rfd=$(field recv_fd "$T/out")
bytes=$(field bytes "$T/out")
kid=$(field spawned_pid "$T/out")
expect_eq "spawned program's status" "$(field spawned_status "$T/out")" 0
expect_eq "clone child's status" "$(field clone_status "$T/out")" 0
plog=$T/logs/spawner.$(field pid "$T/out").log
expect_eq "parent: close records of fd $sfd [bytes_out]" \
	"$(q "$plog" "[f['bytes_out'] for f in closes(fd=$sfd)]")" "[$bytes]"
expect_eq "parent: close records of fd $rfd [bytes_in]" \
	"$(q "$plog" "[f['bytes_in'] for f in closes(fd=$rfd)]")" "[$bytes]"
expect_eq "parent: exit bytes_out" "$(q "$plog" "tot('bytes_out')")" "$bytes"
expect_eq "parent: pids in its log" "$(q "$plog" "len(set(r['pid'] for r in R))")" 1
expect_eq "parent: close records" "$(q "$plog" "len(closes())")" 2
expect_eq "parent: fds closed" "$(q "$plog" "T['fds_closed']")" 2
own=$(field own_pid "$T/out")
expect_eq "clone(CLONE_VFORK) child's status" "$(field own_status "$T/out")" 0
olog=$T/logs/spawner.$own.log
[ -f "$olog" ] || fail "no log for the clone(CLONE_VFORK) child ($olog)"
expect_eq "clone(CLONE_VFORK) child: exit bytes_out" "$(q "$olog" "tot('bytes_out')")" 500
klog=$T/logs/pairxfer.$kid.log
[ -f "$klog" ] || fail "no log for the spawned pairxfer ($klog)"
expect_eq "spawned: exit bytes_out" "$(q "$klog" "tot('bytes_out')")" 5000
expect_eq "spawned: exit bytes_in" "$(q "$klog" "tot('bytes_in')")" 5000
# /bin/true, exec'd by the vfork child, tracked nothing.
n=$(find "$T/logs" -type f ! -name 'pairxfer.*' | wc -l)
expect_eq "logs besides pairxfer's (the parent's and its clone child's)" "$n" 2

# A vfork child that ends with exit(), not _exit: glibc runs the parent's
# exit handlers in it (ours among them), and used to leave the parent's
# own exit() with no record at all (its state file then said "killed").
# The parent's exit() now makes it: all 160 bytes, its own status, no
# state file left.  (A parent that returns from main instead reaches
# glibc's exit unseen, handlers gone: README, Limits.)
need_prog vforkexit
mkdir -p "$T/vlogs" "$T/vstate"
SOCKMETER_LOG=$T/vlogs/%p.log SOCKMETER_FORMAT=json SOCKMETER_STATE=$T/vstate \
	sm "$PROGS/vforkexit" 3 >"$T/vout" 2>"$T/verr"
expect_eq "vforkexit's status" "$?" 3
expect_eq "vforkexit: truth" "$(field sent "$T/vout")" 160
expect_eq "vforkexit: logs" "$(ls "$T/vlogs" | wc -l)" 1
vlog=$(echo "$T"/vlogs/*.log)
expect_eq "vforkexit: the parent's exit record [end, bytes_out, bytes_in]" \
	"$(q "$vlog" "[E.get('end'), T['bytes_out'], T['bytes_in']]")" "[null, 160, 160]"
expect_eq "vforkexit: state files left" "$(ls "$T/vstate" | wc -l)" 0

if command -v strace >/dev/null; then
	rm -rf "$T/logs"
	mkdir -p "$T/logs"
	SOCKMETER_LOG=$T/logs/%n.%p.log sm strace -qq -s 512 -o "$T/trace" \
		-e trace=getpid,close,write "$PROGS/spawner" "$PROGS/pairxfer" 10 \
		>"$T/out2" 2>"$T/err2" || fail "spawner under strace: $(cat "$T/err2")"
	# From the flushed "closing" to the close of the pair's second end.
	calls=$(awk -v fd="$rfd" '/^write\(1, .*closing/ { on = 1; next }
		on && /^getpid/ { print "getpid" }
		on && $0 ~ "^close\\(" fd "\\)" { exit }' "$T/trace")
	grep -q '^write(1, .*closing' "$T/trace" ||
		fail "strace saw no \"closing\": $(tail -5 "$T/trace")"
	grep -q "^close($rfd)" "$T/trace" || fail "strace saw no close($rfd): $(tail -5 "$T/trace")"
	expect_eq "getpid calls while closing after the children" "$calls" ""
else
	echo "SKIP the getpid check: strace is not installed"
fi
exit 0
