# A recovery whose read of a dead process's state file fails leaves the
# file for a later try: before, it went on with what it had read (an exit
# record of a process with no closes and the ring's records missing,
# found by a reviewer with strace's fault injection) and removed the file.
#  - a churnrate killed 0.6 s in (its ring holds close records);
#  - sockmeter recover of a copy of its file, with the last read of that
#    file made to fail (EIO): nothing written, the file left under its
#    own name, the message says so; the same for a failed lseek, and for
#    a file whose settings are out of their ranges (its config page
#    zeroed: before, a division by zero);
#  - a second recover: the records, the same as a recovery of another
#    copy that nothing made fail (but each line's time).
. "$(dirname "$0")/lib.sh"

need strace
need_prog churnrate
rec=$SM_BUILD/sockmeter-recover
[ -x "$rec" ] || skip "no $rec"
mkdir -m 700 "$T/st"
mkdir "$T/log"
SOCKMETER_STATE=$T/st SOCKMETER_LOG="$T/log/v.%p.log" SOCKMETER_FORMAT=json \
	env LD_PRELOAD="$LIB" "$PROGS/churnrate" 25000 30 >/dev/null 2>&1 &
pid=$!
sleep 0.6
kill -KILL "$pid"
wait "$pid" 2>/dev/null
log=$T/log/v.$pid.log
[ -n "$(find "$T/st" -name '*.state')" ] || fail "no state file left by the kill"
# Three copies made alike (cp may lay holes out otherwise than the
# library did: the reads of each copy are the same).
cp -a "$T/st" "$T/copy"
cp -a "$T/st" "$T/count"
cp -a "$T/st" "$T/work"
cp "$log" "$T/orig.log"
# appended FILE - what recovery appended to the log since the kill, into
# FILE; the log is put back as it was.
appended() {
	tail -c +$(($(stat -c %s "$T/orig.log") + 1)) "$log" >"$1"
	cp "$T/orig.log" "$log"
}

# Which pread64 of a recovery is the last read of the state file (the
# ring's entries): counted in a recovery of a copy.
strace -f -o "$T/count.trace" -e trace=pread64,openat "$rec" -q "$T/count" >/dev/null 2>&1 ||
	fail "the counting recovery failed"
appended "$T/count.add"
sfd=$(grep -E 'openat\(.*\.state\.rec-[0-9]+", O_RDONLY' "$T/count.trace" | tail -n 1 |
	sed 's/.* = \([0-9]*\)$/\1/')
[ -n "$sfd" ] || fail "the state file's open not found: $(grep openat "$T/count.trace" | tail -n 5)"
nth=$(grep -E '^[0-9]+ +pread64\(' "$T/count.trace" |
	awk -v fd="$sfd" '{ n++ } index($0, "pread64(" fd ",") { last = n } END { print last }')
[ -n "$nth" ] || fail "no read of the state file traced"

strace -f -o /dev/null -e trace=pread64 -e inject=pread64:error=EIO:when="$nth" \
	"$rec" "$T/work" >"$T/fail.out" 2>"$T/fail.err" || :
grep -q 'read error; left for a later recovery' "$T/fail.err" ||
	fail "no message of the read error: $(cat "$T/fail.err")"
cmp -s "$log" "$T/orig.log" || fail "records written after the failed read: $(appended /dev/stdout)"
# Under its own name again: left claimed, no scan would take it while
# the recovering process lives (a reviewer: a daemon's ticker).
expect_eq "the state file, under its own name" \
	"$(cd "$T/work" && ls)" "$(cd "$T/st" && ls)"

# A failed lseek (the data's whereabouts): before, taken for the end of
# the data, an empty image recovered, whose zero settings divided by zero
# (SIGFPE: in an automatic scan, the host program's death).
cp -a "$T/st" "$T/seek"
strace -f -o /dev/null -e trace=lseek -e inject=lseek:error=EIO:when=2 \
	"$rec" "$T/seek" >"$T/seek.out" 2>"$T/seek.err"
rc=$?
expect_eq "recover's status after a failed lseek" "$rc" 0
grep -q 'read error; left for a later recovery' "$T/seek.err" ||
	fail "a failed lseek: $(cat "$T/seek.err")"
cmp -s "$log" "$T/orig.log" || fail "records written after the failed lseek: $(appended /dev/stdout)"
# Settings out of their ranges (a damaged file: the config page zeroed):
# refused, said, nothing written, no crash.
cp -a "$T/st" "$T/bad"
f=$(find "$T/bad" -name '*.state')
dd if=/dev/zero of="$f" bs=4096 seek=1 count=1 conv=notrunc status=none
"$rec" "$T/bad" >"$T/bad.out" 2>"$T/bad.err"
rc=$?
expect_eq "recover's status on a damaged file" "$rc" 0
grep -q 'its settings are out of their ranges (a damaged file); left for a later recovery' "$T/bad.err" ||
	fail "a damaged file: $(cat "$T/bad.err")"
expect_eq "a damaged file, under its own name" "$(cd "$T/bad" && ls)" "$(cd "$T/st" && ls)"
# A state directory whose own name holds the claim's suffix, beside a file
# of the name before it: the file goes back into its directory, the other
# is untouched (a reviewer: the name was cut in the directory's path, and
# the rename put the state file over that file).
mkdir -m 700 "$T/d.rec-1"
cp -a "$T/bad/." "$T/d.rec-1/"
echo precious >"$T/d"
"$rec" "$T/d.rec-1" >/dev/null 2>"$T/drec.err"
expect_eq "the file beside the directory" "$(cat "$T/d")" precious
expect_eq "the damaged file, in its directory" "$(cd "$T/d.rec-1" && ls)" "$(cd "$T/st" && ls)"
cmp -s "$log" "$T/orig.log" || fail "records written from a damaged file: $(appended /dev/stdout)"

"$rec" -q "$T/work" || fail "the second recovery failed"
appended "$T/retry.add"
"$rec" -q "$T/copy" || fail "the copy's recovery failed"
appended "$T/copy.add"
expect_eq "state files left" "$(find "$T/work" "$T/copy" -name '*.state*' | wc -l)" 0
grep -q '"end":"killed"' "$T/retry.add" || fail "no recovered exit record: $(head -c 300 "$T/retry.add")"
[ "$(grep -c '"type":"close"' "$T/retry.add")" -gt 0 ] || fail "no recovered close record"
strip() { sed 's/"ts":[0-9.]*,//' "$1"; }
expect_eq "records after the retry, and from an unfailed copy" \
	"$(strip "$T/retry.add" | md5sum)" "$(strip "$T/copy.add" | md5sum)"
exit 0
