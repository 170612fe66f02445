# Secure-execution mode (setuid): the environment is ignored and nothing
# is written.  The dynamic loader honours LD_PRELOAD in a setuid program
# only for a bare library name found in a system directory and marked
# setuid itself, so for this test (as root) a setuid-root copy of the
# library goes into the multiarch system directory under a unique name
# (removed at the end, however the test ends), and a setuid-root copy of
# tests/progs/secprobe is run by user nobody with LD_PRELOAD naming it, a
# log path in a world-writable directory, a config file and a bad
# SOCKMETER_INTERVAL.  The probe must show the library mapped and
# AT_SECURE set, move its bytes, and leave no log (not in that directory,
# not in /tmp/sockmeter-UID of either uid) and no word on stderr.
# The control run - the same probe, not setuid, the library by path -
# shows that this test would see a log and the message if there were any.
# Skipped (SKIP) when not root or without setpriv.
. "$(dirname "$0")/lib.sh"

need_prog secprobe
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	skip "needs root and setpriv"
fi
arch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
sysdir=/usr/lib/$arch
[ -d "$sysdir" ] || sysdir=/usr/lib
name=libsockmeter-sectest-$$.so
SYSLIB=$sysdir/$name
D=$(mktemp -d /tmp/sockmeter-sectest.XXXXXX) || fail "mktemp"
cleanup_sec() {
	rm -f "$SYSLIB"
	rm -rf "$D"
	sm_cleanup
}
trap cleanup_sec EXIT

NOBODY=$(id -u nobody 2>/dev/null) || skip "no user nobody"
chmod 755 "$D"
mkdir -m 1777 "$D/logs"
install -o root -g root -m 4755 "$LIB" "$SYSLIB" || fail "cannot install $SYSLIB"
install -o root -g root -m 4755 "$PROGS/secprobe" "$D/secprobe-suid"
install -o root -g root -m 755 "$PROGS/secprobe" "$D/secprobe"
install -o root -g root -m 644 "$LIB" "$D/libsockmeter.so"
printf '[log]\nformat = json\ninterval = 0.1\n' >"$D/sm.ini"
chmod 644 "$D/sm.ini"
before=$(ls /tmp/sockmeter-0 /tmp/sockmeter-"$NOBODY" 2>/dev/null | grep -c '^secprobe')

# as_nobody LD_PRELOAD PROG - run PROG as nobody with the test environment
as_nobody() {
	timeout 20 setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups \
		env LD_PRELOAD="$1" SOCKMETER_CONFIG="$D/sm.ini" \
		SOCKMETER_LOG="$D/logs/%n.%p.log" SOCKMETER_INTERVAL=abc \
		SOCKMETER_FORMAT=json "$2"
}

# control: not setuid, the library by path - it meters and complains
as_nobody "$D/libsockmeter.so" "$D/secprobe" >"$T/ctl.out" 2>"$T/ctl.err" ||
	fail "control run failed: $(cat "$T/ctl.out" "$T/ctl.err")"
grep -q "^mapped=1 secure=0 ruid=$NOBODY euid=$NOBODY moved=5000$" "$T/ctl.out" ||
	fail "control run: $(cat "$T/ctl.out")"
grep -q 'environment SOCKMETER_INTERVAL: "abc"' "$T/ctl.err" ||
	fail "control run: no message about SOCKMETER_INTERVAL: $(cat "$T/ctl.err")"
ctl_log=$(one_log "$D/logs/secprobe.*.log")
expect_eq "control: exit bytes_out" "$(q "$ctl_log" "tot('bytes_out')")" 5000
rm -f "$D"/logs/*

# setuid: the library is loaded, AT_SECURE is set, nothing is written
as_nobody "$name" "$D/secprobe-suid" >"$T/suid.out" 2>"$T/suid.err" ||
	fail "setuid run failed: $(cat "$T/suid.out" "$T/suid.err")"
grep -q "^mapped=1 secure=1 ruid=$NOBODY euid=0 moved=5000$" "$T/suid.out" ||
	fail "setuid run: expected the library mapped and AT_SECURE: $(cat "$T/suid.out")"
[ -s "$T/suid.err" ] && fail "setuid run: stderr: $(head -n 3 "$T/suid.err")"
[ -z "$(ls -A "$D/logs")" ] || fail "setuid run wrote: $(ls "$D/logs")"
after=$(ls /tmp/sockmeter-0 /tmp/sockmeter-"$NOBODY" 2>/dev/null | grep -c '^secprobe')
expect_eq "setuid run: logs under /tmp/sockmeter-UID" "$after" "$before"
exit 0
