# Root's recovery works only in a state directory that nobody but root can
# change or swap: it, and every directory on the way to it, root's and
# closed to others (or sticky), reached through no link but root's own.
# Everything in a recovery goes through paths under the directory (the
# claim's rename, the image, the file beside the state file that a
# refused log's records go to), and a directory on the way that a user
# owns (a user's /dev/shm/sockmeter-UID) could be swapped for a link to
# /etc/bash_completion.d between two of those steps (a reviewer's proof:
# root made a file there whose program name "$(...)" a root shell ran).
# A python3 program under the preload, as root, with its state directory
# in a directory of nobody's, moves 1,000 bytes and kills itself: root's
# recovery of that state directory says why it leaves it alone and
# writes nothing; once the directory on the way is root's again, the same
# recovery writes the killed record, with the bytes.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (root's recovery)"
umask 022
killme_py "$T/killme.py"
mkdir -p "$T/u/st"
chmod 700 "$T/u/st"
chown nobody "$T/u"
env LD_PRELOAD="$LIB" SOCKMETER_INTERVAL=60 SOCKMETER_STATE="$T/u/st" \
	SOCKMETER_LOG="$T/x.%p.log" "$PY" "$T/killme.py" >/dev/null 2>"$T/prog.err" &
pid=$!
wait "$pid" 2>/dev/null
sf=$(one_log "$T/u/st/$pid-*.state")

# recover DIR - root's sockmeter recover of DIR, its messages in
# $T/recover.out; its status.
recover() {
	"$SM_TOP/build/sockmeter-recover" "$1" >"$T/recover.out" 2>&1
}

recover "$T/u/st"
grep -q "someone other than root could change or swap" "$T/recover.out" ||
	fail "under a directory of nobody's, recover said: $(cat "$T/recover.out")"
[ -e "$sf" ] || fail "under a directory of nobody's, the state file was taken: $(ls "$T/u/st")"
[ -s "$T/x.$pid.log" ] && fail "under a directory of nobody's, records written: $(cat "$T/x.$pid.log")"
ls "$T/u/st" | grep -q recovered && fail "under a directory of nobody's, records beside the state file: $(ls "$T/u/st")"

# Through a link of nobody's, in a directory of nobody's, to a directory
# root holds: left alone too.
mkdir -p "$T/r"
chmod 755 "$T/r"
mv "$T/u/st" "$T/r/st"
ln -s "$T/r/st" "$T/u/ln"
chown -h nobody "$T/u/ln"
recover "$T/u/ln"
grep -q "someone other than root could change or swap" "$T/recover.out" ||
	fail "through a link of nobody's, recover said: $(cat "$T/recover.out")"
[ -e "$T/r/st/${sf##*/}" ] || fail "through a link of nobody's, the state file was taken"

# Reached through directories of root's only (relative, as a user may
# type it): recovered, with the bytes; a file of nobody's there is left
# for nobody's recover, as ever.
cp "$T/r/st/${sf##*/}" "$T/r/st/1-1.state"
chown nobody "$T/r/st/1-1.state"
(cd "$T/r" && "$SM_TOP/build/sockmeter-recover" st >"$T/recover.out" 2>&1)
grep -q "1-1.state: owned by uid $(id -u nobody); left for that user's sockmeter recover" "$T/recover.out" ||
	fail "in root's directory, nobody's file: $(cat "$T/recover.out")"
[ -e "$T/r/st/1-1.state" ] || fail "in root's directory, nobody's file was taken"
grep -q "exit end=killed .*pid=$pid " "$T/x.$pid.log" ||
	fail "in root's directory: no killed record: $(cat "$T/recover.out")"
expect_eq "recovered bytes out" "$(sed -n 's/^  totals: .* bytes_out=\([0-9]*\) .*/\1/p' "$T/x.$pid.log")" 1000
[ -e "$T/r/st/${sf##*/}" ] && fail "in root's directory: the state file is still there"

# A recoverer killed after writing beside the state file (its log not a
# sockmeter log), before removing its claim: the next recover takes the
# claim over and finds the records already there, under the same name
# (before, it looked for NAME.state.rec-PID.recovered.log and wrote them
# again: a reviewer's reading).
rm -f "$T/r/st/1-1.state"
echo "not a log" >"$T/notlog"
env LD_PRELOAD="$LIB" SOCKMETER_INTERVAL=60 SOCKMETER_STATE="$T/r/st" \
	SOCKMETER_LOG="$T/notlog" "$PY" "$T/killme.py" >/dev/null 2>"$T/prog.err" &
pid=$!
wait "$pid" 2>/dev/null
sf=$(one_log "$T/r/st/$pid-*.state")
# Its header's program name rewritten with terminal escapes (C0 and C1),
# as a process that dropped root unseen could: recover's messages show
# them as '?'.
"$PY" - "$sf" <<'PYEOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(104)
    f.write(b"e\x1b]0;PWN\x07\xc2\x9bX".ljust(64, b"\0"))
PYEOF
cp --preserve=all "$sf" "$T/saved.state"
recover "$T/r/st" || fail "beside: $(cat "$T/recover.out")"
LC_ALL=C grep -q $'\033\|\007\|\302\233' "$T/recover.out" &&
	fail "recover's messages carry a header's escapes: $(cat -v "$T/recover.out")"
grep -q 'e?\]0;PWN??X\[' "$T/recover.out" ||
	fail "recover's messages: the program's name not shown cleaned: $(cat -v "$T/recover.out")"
dead=$(sh -c 'echo $$')
mv "$T/saved.state" "$sf.rec-$dead"
recover "$T/r/st" || fail "beside, the claim taken over: $(cat "$T/recover.out")"
grep -q ': 0 recovered, 1 removed' "$T/recover.out" ||
	fail "beside, the claim taken over: $(cat "$T/recover.out")"
expect_eq "beside: files" "$(ls "$T/r/st")" "$(basename "${sf%.state}").recovered.log"
expect_eq "beside: exit records" "$(grep -c 'sockmeter exit' "${sf%.state}.recovered.log")" 1
exit 0
