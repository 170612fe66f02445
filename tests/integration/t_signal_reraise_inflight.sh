# A handler that ends the process with a signal after cutting a data call
# short (PHP's: a php-fpm child cut short in a write by its master's
# SIGQUIT or SIGTERM sets the signal back to its default action, unblocks
# it and raises it again).  The call had moved bytes the wrapper never
# counts; the process dies of the signal, so its record is the one a
# recovery makes from its state file, which must hold them.
# tests/progs/sigexit, a forked peer printing what really moved; the
# handler dies:
#  - raise: in raise(), the signal unblocked first;
#  - unblock, pthread: raised while blocked, then in sigprocmask /
#    pthread_sigmask as they unblock it;
#  - kill: in kill(getpid(), SIGTERM) (SIGTERM's default action);
#  - sigreturn: raised while blocked, as the handler returns (the kernel's
#    sigreturn unblocks it);
#  - sigqueue, and tgkill through syscall(): as raise;
#    rawmask: as unblock, through syscall(SYS_rt_sigprocmask) (Go-style
#    and sanitizer runtimes make them raw);
#  - sigsuspend: raised while blocked, then sigsuspend with an empty mask;
#  - efault: a bad set given to the raw rt_sigprocmask and rt_sigsuspend
#    is the kernel's EFAULT (the library reads it without faulting), then
#    as raise;
#  - abort: dies of SIGABRT in abort(); abort_handled: the same with a
#    handler of SIGABRT that returns (glibc then sets the default action
#    and raises it again);
#  - chain: php-fpm's own sequence, SIGQUIT then SIGTERM: the first
#    handler returns with SIGTERM pending, which is delivered at the same
#    place, and SIGTERM's handler (all signals blocked) sets it back to
#    its default action, unblocks it and sends it to its own process.
# The exit status is the signal's, as without the preload.  And where the
# process lives on after all, the call is counted once: a pid namespace's
# init (a container's pid 1) is never sent a signal it raises with the
# default action (survive: the handler raises it and returns; the program
# then exits 3 and its own exit record must equal what moved, not that
# plus the call counted twice).
. "$(dirname "$0")/lib.sh"

need_prog sigexit
launcher=$(cd "$(dirname "$0")/../.." && pwd)/scripts/sockmeter
for m in "send plain raise" "write info unblock" "recv info pthread" \
	"sendmsg signal kill" "send info sigreturn" "recv plain raise" \
	"write plain chain" "recv info chain" "send plain sigqueue" \
	"recv info sigqueue" "write info tgkill" "send plain rawmask" \
	"recv plain sigsuspend" "send info abort" "recv plain abort" \
	"write plain abort_handled" "recv info abort_handled" "send plain efault" \
	"send plain suspend_die" "recv plain suspend_die" "write info suspend_ign"; do
	# shellcheck disable=SC2086
	set -- $m
	n=$1-$2-$3
	mkdir -p "$T/$n.state"
	SOCKMETER_LOG=$T/$n.%p.log SOCKMETER_FORMAT=json \
		SOCKMETER_STATE=$T/$n.state \
		sm "$PROGS/sigexit" "$@" >"$T/$n.out" 2>"$T/$n.err"
	st=$?
	want_st=142 # SIGALRM
	case $3 in
	kill | chain | suspend_*) want_st=143 ;; # SIGTERM
	abort*) want_st=134 ;;       # SIGABRT
	esac
	expect_eq "$n: exit status (the signal's)" "$st" "$want_st"
	sigexit_peer "$T/$n.out"
	moved=$(field moved "$T/$n.out")
	pid=$(field pid "$T/$n.out")
	[ "$moved" -gt 0 ] || fail "$n: nothing moved"
	# The peer, metered too, may have started recovering the dead
	# parent's file itself (its ticker's automatic scan) and ended
	# meanwhile: its claim is taken over once it is gone.
	for _ in $(seq 50); do
		SOCKMETER_LIB=$LIB "$launcher" recover "$T/$n.state" 2>"$T/$n.rec" ||
			fail "$n: recover: $(cat "$T/$n.rec")"
		grep -q '"type":"exit"' "$T/$n.$pid.log" && break
		sleep 0.1
	done
	log=$(one_log "$T/$n.$pid.log")
	expect_eq "$n: the recovered record's end" "$(q "$log" "E['end']")" killed
	expect_moved "$n: recovered record" "$log" "$1" "$moved"
done

# Survived, and counted once: SIGABRT's handler jumps back into the
# handler that cut the call short, which returns to it (abort_jump); a
# sigsuspend whose first delivery is a handled signal, whose mask blocks
# the fatal one behind it, which the mask from before keeps blocked
# (suspend_survive; suspend_shared: the handled one sent to the thread,
# the fatal one, of a lower number, to the process: the kernel takes the
# thread's first).  And sigsuspend's deaths (main loop): a handled signal
# delivered first whose handler blocks nothing (suspend_die), an ignored
# one (suspend_ign).
for m in "recv info abort_jump" "send plain abort_jump" \
	"recv plain suspend_survive" "write info suspend_survive" \
	"send plain suspend_shared" "recv info suspend_shared"; do
	# shellcheck disable=SC2086
	sigexit_ends_3 "lives on" $m
done

if unshare -fp --mount-proc true 2>/dev/null; then
	for m in "send plain survive" "recv info survive"; do
		# shellcheck disable=SC2086
		set -- $m
		n=ns-$1-$2-$3
		SOCKMETER_LOG=$T/$n.%p.log SOCKMETER_FORMAT=json timeout 30 \
			unshare -fp --mount-proc env LD_PRELOAD="$LIB" \
			"$PROGS/sigexit" "$@" >"$T/$n.out" 2>"$T/$n.err"
		st=$?
		expect_eq "$n: exit status (pid 1 lives on)" "$st" 3
		moved=$(field moved "$T/$n.out")
		[ "$moved" -gt 0 ] || fail "$n: nothing moved"
		expect_moved "$n: exit record" "$T/$n.1.log" "$1" "$moved"
	done
else
	echo "no pid namespaces here: the survive cases not run" >&2
fi
exit 0
