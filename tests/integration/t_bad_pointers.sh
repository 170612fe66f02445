# Calls given bad pointers, as a buggy or hostile caller makes them, fail
# as they do without the preload (EFAULT; EAGAIN for an accept with
# nothing to accept), where the library's own read of the pointer killed
# the program with SIGSEGV before (a helper's sweep): accept's and
# accept4's length, execve's, execv's, execveat's and posix_spawn's path,
# execve's, fexecve's and posix_spawn's environment and one of its
# strings, clone3's arguments.  Each with a pointer into the first page
# (NULL and a member's offset).  A pointer into a PROT_NONE page of the
# user range is told apart only where the kernel is asked anyway: an exec's
# path (faccessat), accept's length (a futex wait that cannot wait: also
# on a bad fd, a file, a socket that does not listen, a listener with a
# connection waiting, and a page made PROT_NONE after an accept that
# succeeded there; a helper's stress-ng sweep found SIGSEGV where the
# call said EBADF, ENOTSOCK or EINVAL) and sendfile's offset (the
# program's own sendfile of 0 bytes); the others are read as they look
# like pointers (a system call on each, which a filter the program
# inherited may punish: the review; README, Limits).
. "$(dirname "$0")/lib.sh"

need_prog badptrs
export SOCKMETER_LOG=$T/%p.log
for m in LOW NONE; do
	for c in accept accept4 accept-badfd accept-file accept-unlistened \
		accept-pending accept-stale sendfile-off execve-path execve-env execve-envelem execv-path \
		execveat fexecve-env posix_spawn-path posix_spawn-env clone3; do
		case $m/$c in NONE/*env* | NONE/clone3) continue ;; esac
		want=$(plain "$PROGS/badptrs" "$c" "$m" 2>&1; echo "status $?")
		got=$(sm "$PROGS/badptrs" "$c" "$m" 2>&1; echo "status $?")
		expect_eq "$c with a $m pointer" "$got" "$want"
		case $want in *"status 0") ;; *) fail "$c $m: without the preload: $want" ;; esac
	done
done

exit 0
