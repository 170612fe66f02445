# Faults in the log destination, beyond a missing directory (that one is
# t_log_dir_missing.sh).  We run as root in CI, where permission bits stop
# nothing, so "unwritable" is made in ways that hold for root too:
#   notdir     the log path goes through a regular file (ENOTDIR)
#   rofs       the directory is a read-only tmpfs mount (EROFS)
#   immutable  the directory is chattr +i (EPERM)
#   full       a 64 KiB tmpfs with one page left free (ENOSPC midway)
#   fsize      RLIMIT_FSIZE of 2 KiB, set with ulimit -f (EFBIG, SIGXFSZ)
# In each case a program writing many records (slow_sender, interval
# records every 0.1 s) and one exiting with status 7 (pairxfer) run with
# stdout and exit status identical to a run without the preload, and
# stderr holds exactly one "sockmeter:" line, naming the log, and nothing
# else (where small batches still fit between failing ones, one such line
# per run of failures).  Where some records did get written (full, fsize), every complete
# line is a valid JSON record.  Under the size limit, a program that
# itself writes past it still dies of SIGXFSZ (status 153) after its
# traffic, exactly as without the preload.  A case whose mechanism is not
# available here (mount or chattr not permitted) prints SKIP and passes.
. "$(dirname "$0")/lib.sh"

need_prog slow_sender
need_prog pairxfer
need_prog xfsz
MNT=()
IMM=
cleanup_faults() {
	local m
	[ -n "$IMM" ] && chattr -i "$IMM" 2>/dev/null
	for m in "${MNT[@]}"; do
		umount "$m" 2>/dev/null
	done
	sm_cleanup
}
trap cleanup_faults EXIT

# The state file's warning under a file size limit below its size.
state_warn="^sockmeter: state directory .*: a state file of "

# run_case NAME LOGDIR [LIMIT_KB] - both programs, the checks above.
run_case() {
	local name=$1 dir=$2 lim=${3:-} st pst writes
	(
		[ -n "$lim" ] && ulimit -f "$lim"
		SOCKMETER_LOG=$dir/s.%p.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
			sm "$PROGS/slow_sender" 15 100 3000 "$T/$name.times" \
			>"$T/$name.s.out" 2>"$T/$name.s.err"
	)
	st=$?
	expect_eq "$name: slow_sender exit status" "$st" 0
	plain "$PROGS/slow_sender" 15 1 3000 "$T/plain.times" >"$T/plain.s.out" 2>&1
	cmp -s "$T/$name.s.out" "$T/plain.s.out" || fail "$name: slow_sender stdout differs"
	# A log that never takes a write gets one warning.  Where small
	# batches still fit between failing ones (full, fsize), each run of
	# failures after a success is reported once: one line per run.
	# Under a file size limit smaller than a state file (2 KiB here), the
	# state file cannot be made: said once, since a kill would lose the
	# numbers (a limit of 0 is left to the log's own warning).
	case $name in
	full | fsize)
		if [ "$name" = fsize ]; then
			expect_eq "$name: slow_sender: the state file's warning" \
				"$(grep -c "$state_warn[0-9]* bytes is over the file size limit (RLIMIT_FSIZE, 2048 bytes) (File too large); the final numbers are kept in private memory: they are lost if the process is killed$" "$T/$name.s.err")" 1
		fi
		writes=$(grep -c "^sockmeter: log $dir/s\..*: cannot write: " "$T/$name.s.err")
		[ "$writes" -ge 1 ] || fail "$name: slow_sender: no warning"
		[ "$writes" = "$(grep -vc "$state_warn" "$T/$name.s.err")" ] ||
			fail "$name: slow_sender: a warning other than cannot write: $(cat "$T/$name.s.err")"
		;;
	*)
		expect_eq "$name: slow_sender: sockmeter: lines" "$(sm_lines "$T/$name.s.err")" 1
		;;
	esac
	expect_eq "$name: slow_sender: other stderr lines" "$(grep -vc '^sockmeter:' "$T/$name.s.err")" 0
	grep -qF "$dir/s." "$T/$name.s.err" || fail "$name: the warning does not name the log: $(cat "$T/$name.s.err")"
	(
		[ -n "$lim" ] && ulimit -f "$lim"
		SOCKMETER_LOG=$dir/p.%p.log SOCKMETER_FORMAT=json \
			sm "$PROGS/pairxfer" 300000 7 >"$T/$name.p.out" 2>"$T/$name.p.err"
	)
	pst=$?
	expect_eq "$name: pairxfer exit status" "$pst" 7
	cmp -s "$T/$name.p.out" <(plain "$PROGS/pairxfer" 300000 7 2>&1) ||
		fail "$name: pairxfer stdout differs"
	# pairxfer's records fit in 2 KiB: under the size limit it may write
	# them all; elsewhere it gets the one warning.
	if [ -z "$lim" ]; then
		expect_eq "$name: pairxfer: sockmeter: lines" "$(sm_lines "$T/$name.p.err")" 1
	else
		[ "$(grep -v "$state_warn" "$T/$name.p.err" |
			grep -vc "^sockmeter: log $dir/p\..*: cannot write: ")" = 0 ] ||
			fail "$name: pairxfer: a warning other than cannot write: $(cat "$T/$name.p.err")"
	fi
	expect_eq "$name: pairxfer: other stderr lines" "$(grep -vc '^sockmeter:' "$T/$name.p.err")" 0
}

# complete_lines_valid NAME FILE... - every newline-terminated line of the
# (partly written) logs is one valid JSON record.
complete_lines_valid() {
	local name=$1
	shift
	"$PY" - "$@" <<'PYEOF' || fail "$name: $(cat "$T/valid.out")"
import json, sys
for name in sys.argv[1:]:
    data = open(name, "rb").read()
    for no, line in enumerate(data.split(b"\n")[:-1], 1):
        r = json.loads(line)
        assert r["type"] in ("interval", "close", "exit"), (name, no)
PYEOF
}

# notdir
: >"$T/afile"
run_case notdir "$T/afile/logs"
grep -q "Not a directory" "$T/notdir.s.err" || fail "notdir: $(cat "$T/notdir.s.err")"

# rofs
mkdir -p "$T/ro"
if mount -t tmpfs -o ro,size=64k tmpfs "$T/ro" 2>/dev/null; then
	MNT+=("$T/ro")
	run_case rofs "$T/ro"
	grep -q "Read-only file system" "$T/rofs.s.err" || fail "rofs: $(cat "$T/rofs.s.err")"
	[ -z "$(ls -A "$T/ro")" ] || fail "rofs: files appeared"
else
	echo "SKIP rofs: mount not permitted"
fi

# immutable
mkdir -p "$T/imm"
if chattr +i "$T/imm" 2>/dev/null; then
	IMM=$T/imm
	run_case immutable "$T/imm"
	grep -q "Operation not permitted" "$T/immutable.s.err" || fail "immutable: $(cat "$T/immutable.s.err")"
	chattr -i "$T/imm"
	IMM=
else
	echo "SKIP immutable: chattr +i not supported here"
fi

# full: a 64 KiB tmpfs, filled but for one 4 KiB page
mkdir -p "$T/full"
if mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	MNT+=("$T/full")
	head -c $((60 * 1024)) /dev/zero >"$T/full/filler" 2>/dev/null
	run_case full "$T/full"
	grep -q "No space left on device" "$T/full.s.err" || fail "full: $(cat "$T/full.s.err")"
	complete_lines_valid full "$T"/full/s.*.log
	cp "$T"/full/s.*.log "$T/full.s.log" 2>/dev/null
else
	echo "SKIP full: mount not permitted"
fi

# fsize: ulimit -f 2 (KiB) for the program
mkdir -p "$T/fsz"
run_case fsize "$T/fsz" 2
grep -q "^sockmeter: log .*: cannot write: File too large" "$T/fsize.s.err" || fail "fsize: $(cat "$T/fsize.s.err")"
complete_lines_valid fsize "$T"/fsz/s.*.log
# the program's own write past the limit still kills it
(ulimit -f 2; plain "$PROGS/xfsz" 100000 300 "$T/big1" 100000 >"$T/x.plain" 2>"$T/x.plain.err")
a=$?
(ulimit -f 2; SOCKMETER_LOG=$T/fsz/x.log SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=0.1 \
	sm "$PROGS/xfsz" 100000 300 "$T/big2" 100000 >"$T/x.out" 2>"$T/x.err")
b=$?
expect_eq "xfsz: exit status without the preload" "$a" 153
expect_eq "xfsz: exit status with the preload" "$b" 153
cmp -s "$T/x.plain" "$T/x.out" || fail "xfsz: stdout differs"
exit 0
