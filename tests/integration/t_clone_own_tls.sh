# Children made by clone() as Chromium makes them (tests/progs/tlsclone.c)
# run as without the preload, metering on or off:
# - a child of its own by clone(), syscall(SYS_clone) or SYS_clone3 with
#   the library switched off (SOCKMETER=off, enabled = false, or the
#   program in [sockmeter] skip): the parent's fork handlers touched a
#   meter never set up (SIGSEGV in the parent; Chromium's user-namespace
#   probe under the kill switch);
# - a child on our memory with a zeroed TLS of its own
#   (CLONE_VM | CLONE_VFORK | CLONE_SETTLS, Chromium's chroot helper)
#   calling syscall(), dup2, close and _exit: each wrapper touched TLS
#   there (SIGSEGV in the child, and Chromium's zygote aborted);
# - the same child writing first on a socket its parent never looked at,
#   and failing a recv (EAGAIN): the first look and the error's class
#   read errno through libc's pointer, none there (SIGSEGV in the child).
. "$(dirname "$0")/lib.sh"
P=$PROGS/tlsclone
printf '[sockmeter]\nenabled = false\n' >"$T/off.ini"
printf '[sockmeter]\nskip = tlsclone\n' >"$T/skip.ini"
for mode in fork-clone fork-sysclone fork-clone3 settls settls-io; do
	plain "$P" "$mode" >"$T/plain.out" 2>&1 || fail "$mode fails without the preload: $(cat "$T/plain.out")"
	for how in on kill-switch enabled-false skip; do
		case $how in
		on) set -- ;;
		kill-switch) set -- SOCKMETER=off ;;
		enabled-false) set -- SOCKMETER_CONFIG="$T/off.ini" ;;
		skip) set -- SOCKMETER_CONFIG="$T/skip.ini" ;;
		esac
		st=0
		env "$@" SOCKMETER_LOG="$T/tc.%p.log" LD_PRELOAD="$LIB" \
			timeout 20 "$P" "$mode" >"$T/out" 2>&1 || st=$?
		[ "$st" = 0 ] && grep -qx "ok $mode" "$T/out" ||
			fail "$mode, metering $how: status $st: $(head -c 300 "$T/out")"
	done
done
exit 0
