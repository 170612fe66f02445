# A state directory on FUSE is refused, by the library and by any
# recovery: its owners and modes are its server's word.  A user's FUSE
# mount (allow_other, where /etc/fuse.conf allows it) on
# /dev/shm/sockmeter-0, claiming to be root's 0700, took root's state
# files, and fed root's recovery a state file whose header had it make a
# file in /etc/bash_completion.d (a reviewer's proof).  Here bindfs
# (FUSE) shows a directory of nobody's as root's 0700: a python3 program
# under the preload, with its state directory there, says the directory
# is refused and makes no state file in it; root's recovery of it leaves
# a state file put there (a killed process's, copied) alone and writes
# nothing.  Skipped where no FUSE file system can be mounted.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (mounts a FUSE file system)"
command -v bindfs >/dev/null || skip "no bindfs (scripts/install-deps installs it)"
mkdir -p "$T/under" "$T/fs" "$T/state"
chmod 755 "$T"
chown nobody "$T/under"
chmod 700 "$T/under"
bindfs --force-user=root --force-group=root --perms=0700 "$T/under" "$T/fs" 2>"$T/bindfs.err" ||
	skip "no FUSE file system can be mounted here: $(cat "$T/bindfs.err")"
trap 'fusermount -u "$T/fs" 2>/dev/null || umount "$T/fs" 2>/dev/null; sm_cleanup' EXIT
[ "$(stat -c '%u %a' "$T/fs")" = "0 700" ] || fail "bindfs shows $(stat -c '%u %a' "$T/fs"), not root's 0700"

killme_py "$T/killme.py"

# run STATE - the program under the preload, killed; prints its pid.
run() {
	env LD_PRELOAD="$LIB" SOCKMETER_INTERVAL=60 SOCKMETER_STATE="$1" \
		SOCKMETER_LOG="$T/x.%p.log" "$PY" "$T/killme.py" >/dev/null 2>"$T/prog.err" &
	local pid=$!
	wait "$pid" 2>/dev/null
	echo "$pid"
}

pid=$(run "$T/fs")
grep -q "on a FUSE file system" "$T/prog.err" ||
	fail "the library did not refuse the FUSE state directory: $(cat "$T/prog.err")"
[ -z "$(ls -A "$T/under")" ] || fail "state files made on FUSE: $(ls -A "$T/under")"

# A killed process's state file, put where the FUSE mount shows it as
# root's: root's recovery leaves it alone, writes nothing.
pid=$(run "$T/state")
sf=$(one_log "$T/state/$pid-*.state")
cp "$sf" "$T/under/"
chown nobody "$T/under/${sf##*/}"
"$SM_TOP/build/sockmeter-recover" "$T/fs" >"$T/recover.out" 2>&1 &&
	fail "root's recovery of the FUSE directory succeeded: $(cat "$T/recover.out")"
grep -q "on a FUSE file system, whose owners are its server's word; left alone" "$T/recover.out" ||
	fail "root's recovery said: $(cat "$T/recover.out")"
[ -e "$T/under/${sf##*/}" ] || fail "the state file on FUSE was taken"
[ -s "$T/x.$pid.log" ] && fail "records written from the state file on FUSE: $(cat "$T/x.$pid.log")"
exit 0
