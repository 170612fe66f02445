# Signal handlers doing I/O while the main thread is inside wrapped calls
# (tests/progs/sigio): SIGALRM from setitimer (no SA_RESTART: interrupted
# calls fail with EINTR) and SIGUSR1 from pthread_kill (SA_RESTART), every
# few hundred microseconds, run a handler that sends on a socket with
# MSG_DONTWAIT - on the same fd the main thread is blocked in send() on,
# then on another fd while main is blocked in recv(), then on the very fd
# main is blocked in recv() on.  Bounded in time (no deadlock), and the
# exit record's numbers for all six fds equal exactly what the program's
# own calls did: bytes, calls, EINTR and EAGAIN counts, handler and main
# thread together.
. "$(dirname "$0")/lib.sh"

SOCKMETER_LOG=$T/s.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.2 \
	run_signal_prog sigio 300 400
# (tests/stress/check_sigio.py, shared with the sanitizer runs)
"$PY" "$HERE/../stress/check_sigio.py" "$T/out" "$T/s.log" >"$T/check.out" 2>&1 ||
	fail "$(tail -n 1 "$T/check.out")"
# the scenario really happened: EINTR on main's send and recv, EAGAIN in
# the handler on the full socket
check "$T/s.log" "sum(f['errors_out']['intr'] for f in E['fds']) > 0" "no EINTR on send"
check "$T/s.log" "sum(f['errors_in']['intr'] for f in E['fds']) > 0" "no EINTR on recv"
exit 0
