# The log file and its directory are safe against other users:
#  - mode 0600 whatever the umask (000, 022, 077), for a path template
#    and for the default path (whose directory is made 0700);
#  - a symlink planted at the log path is not followed: its target (a
#    file with known contents) is untouched, the symlink stays, exactly one
#    warning; the same for a dangling symlink (no file appears at its
#    target); a FIFO at the log path does not block the program (one
#    warning);
#  - the default directory /tmp/sockmeter-UID is refused when it is a
#    symlink, owned by another user (root's, 0700; or another user's, 0777,
#    as an attacker would plant it), or writable by others (one warning,
#    nothing written into it), and made 0700 when missing.  These run as a
#    uid of their own (setpriv), so the real /tmp/sockmeter-0 of the other
#    tests is never touched; skipped (SKIP) without root or setpriv.
# In every case the program's output and exit status are unchanged.
#
# Regression: a refused default directory (a symlink, another owner,
# writable by others) was warned about but still written to; the sink now
# drops the records.
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
plain "$PROGS/pairxfer" 20000 4 >"$T/plain.out" 2>&1

# run NAME LOGPATH [PREFIX...] - pairxfer under the preload, status 4
run() {
	local name=$1 log=$2 st
	shift 2
	"$@" timeout 20 env LD_PRELOAD="$LIB" SOCKMETER_LOG="$log" SOCKMETER_FORMAT=json \
		"$PROGS/pairxfer" 20000 4 >"$T/$name.out" 2>"$T/$name.err"
	st=$?
	expect_eq "$name: exit status" "$st" 4
	cmp -s "$T/$name.out" "$T/plain.out" || fail "$name: stdout differs"
}

# mode 0600 whatever the umask
for m in 000 022 077; do
	(umask "$m" && run "umask$m" "$T/u$m.log")
	expect_eq "umask $m: log mode" "$(stat -c %a "$T/u$m.log")" 600
	expect_eq "umask $m: stderr" "$(cat "$T/umask$m.err")" ""
done

# a symlink planted at the log path
printf 'precious\n' >"$T/target"
touch -d '2001-01-01' "$T/target"
ln -s "$T/target" "$T/link.log"
run symlink "$T/link.log"
expect_eq "symlink: target contents" "$(cat "$T/target")" precious
expect_eq "symlink: target mtime" "$(stat -c %Y "$T/target")" "$(date -d 2001-01-01 +%s)"
[ -L "$T/link.log" ] || fail "symlink: the link was replaced"
expect_eq "symlink: sockmeter: lines" "$(sm_lines "$T/symlink.err")" 1
expect_eq "symlink: other stderr lines" "$(grep -vc '^sockmeter:' "$T/symlink.err")" 0
grep -qF "$T/link.log" "$T/symlink.err" || fail "symlink: warning does not name the log"

# a dangling symlink: nothing is created at its target
ln -s "$T/nowhere.log" "$T/dangling.log"
run dangling "$T/dangling.log"
[ -e "$T/nowhere.log" ] && fail "dangling: the symlink's target was created"
expect_eq "dangling: sockmeter: lines" "$(sm_lines "$T/dangling.err")" 1

# a FIFO nobody reads: never blocks (the test is bounded by timeout)
mkfifo "$T/fifo.log"
run fifo "$T/fifo.log"
expect_eq "fifo: sockmeter: lines" "$(sm_lines "$T/fifo.err")" 1

# the default directory, as a uid of its own
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP default directory checks: need root and setpriv"
	exit 0
fi
own_user 0

# missing: created 0700, the log in it 0600
run default_missing "" "${as_u[@]}"
[ -d "$DIR" ] && [ ! -L "$DIR" ] || fail "default: $DIR was not made"
expect_eq "default: directory mode" "$(stat -c %a "$DIR")" 700
expect_eq "default: directory owner" "$(stat -c %u "$DIR")" "$U"
f=$(one_log "$DIR/pairxfer.*.log")
expect_eq "default: log mode" "$(stat -c %a "$f")" 600
expect_eq "default: stderr" "$(cat "$T/default_missing.err")" ""
rm -rf "$DIR"

# The refusals below are collected, so one run shows all that fail.
refused=()

# refused: a symlink to a directory of the user's own
mkdir -m 700 "$T/elsewhere" && chown "$U" "$T/elsewhere"
ln -s "$T/elsewhere" "$DIR"
run default_symlink "" "${as_u[@]}"
[ -z "$(ls -A "$T/elsewhere")" ] ||
	refused+=("symlinked default directory: wrote $(ls "$T/elsewhere") through it")
expect_eq "default symlink: sockmeter: lines" "$(sm_lines "$T/default_symlink.err")" 1
rm -f "$DIR"

# refused: owned by another user (root)
mkdir -m 700 "$DIR"
run default_other_owner "" "${as_u[@]}"
[ -z "$(ls -A "$DIR")" ] ||
	refused+=("default directory owned by root: wrote $(ls "$DIR")")
expect_eq "default other owner: sockmeter: lines" "$(sm_lines "$T/default_other_owner.err")" 1
rm -rf "$DIR"

# refused: another user's, open to all (what an attacker would plant)
mkdir -m 777 "$DIR" && chown "$((U + 1))" "$DIR" && chmod 777 "$DIR"
run default_attacker "" "${as_u[@]}"
[ -z "$(ls -A "$DIR")" ] ||
	refused+=("default directory of another user, mode 777: wrote $(ls "$DIR")")
expect_eq "default attacker's: sockmeter: lines" "$(sm_lines "$T/default_attacker.err")" 1
rm -rf "$DIR"

# refused: the user's own, but writable by others
mkdir -m 777 "$DIR" && chown "$U" "$DIR" && chmod 777 "$DIR"
run default_world_writable "" "${as_u[@]}"
[ -z "$(ls -A "$DIR")" ] ||
	refused+=("world-writable default directory: wrote $(ls "$DIR")")
expect_eq "default world-writable: sockmeter: lines" "$(sm_lines "$T/default_world_writable.err")" 1
[ "${#refused[@]}" = 0 ] ||
	fail "refused default directory still written : $(printf '%s; ' "${refused[@]}")"
exit 0
