# t_exit_library_dtors - bytes that a program's own shared library sends
# after main has returned, from a C++ static object's destructor (a
# handler tied to the library, run by __cxa_finalize) and from a library
# destructor, are in the program's records.  glibc's _dl_fini finalizes
# the program's libraries after the preload (they were set up before it);
# the exit record was made when the preload was finalized, and these
# bytes were in no record: 5 of 4,005 (tests/progs/finsend; the reader it
# forks is the truth).
. "$(dirname "$0")/lib.sh"

need_prog finsend

SOCKMETER_LOG=$T/fs.%p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/finsend" >"$T/out" 2>"$T/err" || fail "finsend: $(cat "$T/err")"
# The reader prints once the program has ended (its end of the socket
# closed by the library).
for _ in $(seq 100); do
	grep -q '^read=' "$T/out" && break
	sleep 0.1
done
pid=$(field pid "$T/out")
read=$(field read "$T/out")
expect_eq "what the reader read (5 from main, 1,000 from the destructor, 3,000 from the static object)" \
	"$read" 4005
log=$T/fs.$pid.log
expect_eq "the exit record's bytes_out" "$(q "$log" "T['bytes_out']")" "$read"
expect_eq "the socket's close record: bytes_out" \
	"$(q "$log" "csum('bytes_out', kind='unix')")" "$read"
expect_eq "unix fds open at exit" "$(q "$log" "len(efds(kind='unix'))")" 0
expect_eq "stderr" "$(cat "$T/err")" ""
exit 0
