# Calls given bad pointers, as a buggy or hostile caller makes them, fail
# as they do without the preload (EFAULT; EAGAIN for an accept with
# nothing to accept), where the library's own read of the pointer killed
# the program with SIGSEGV before (a helper's sweep): accept's and
# accept4's length, execve's, execv's, execveat's and posix_spawn's path,
# execve's, fexecve's and posix_spawn's environment and one of its
# strings, clone3's arguments.  Each with a pointer into the first page
# (NULL and a member's offset) and into a PROT_NONE page of the user
# range, but accept's length: the library reads it before the call (to
# know whether the kernel cut the address short) when it looks like a
# pointer, and a PROT_NONE page cannot be told apart without a system
# call on every accept (README, Limits).
. "$(dirname "$0")/lib.sh"

need_prog badptrs
export SOCKMETER_LOG=$T/%p.log
for m in LOW NONE; do
	for c in accept accept4 execve-path execve-env execve-envelem execv-path \
		execveat fexecve-env posix_spawn-path posix_spawn-env clone3; do
		case $m/$c in NONE/accept*) continue ;; esac
		want=$(plain "$PROGS/badptrs" "$c" "$m" 2>&1; echo "status $?")
		got=$(sm "$PROGS/badptrs" "$c" "$m" 2>&1; echo "status $?")
		expect_eq "$c with a $m pointer" "$got" "$want"
		case $want in *"status 0") ;; *) fail "$c $m: without the preload: $want" ;; esac
	done
done
