# The positional calls (pread, pwrite, their vector and v2 forms,
# __pread_chk), copy_file_range, and libc's syscall() with the numbers of
# those and of sendfile, splice, tee, vmsplice and fcntl(F_DUPFD) are
# counted on each metered end, exactly (tests/progs/pio_xfer, which sums
# what each call returned).  Then real programs: coreutils' cat copies
# files with copy_file_range (cp, which may clone, reads and writes), and
# sqlite3 reads and writes its database
# and journal with pread64/pwrite64 (the truth: strace's record of those
# calls on those two files).  Files and pipes are metered only with
# [track] files / pipes = true.
. "$(dirname "$0")/lib.sh"

need_prog pio_xfer
need cp cat sqlite3 strace
printf '[track]\nfiles = true\npipes = true\n' >"$T/fp.ini"
mkdir "$T/d"
SOCKMETER_CONFIG=$T/fp.ini SOCKMETER_LOG=$T/p.log SOCKMETER_FORMAT=json \
	sm "$PROGS/pio_xfer" "$T/d" >"$T/p.out" 2>"$T/p.err" ||
	fail "pio_xfer failed: $(cat "$T/p.err")"
out=$T/p.out
# [bytes_in, bytes_out] of fd N's record; the program's sums.
rec() { q "$T/p.log" "[[f['bytes_in'], f['bytes_out']] for f in conns(fd=$(field "$1" "$out"))]"; }
for e in f:file g:file a:unix b:unix d:unix p0:pipe p1:pipe q0:pipe q1:pipe; do
	n=${e%%:*} kind=${e#*:}
	expect_eq "$n ($kind) kind" \
		"$(q "$T/p.log" "[f['kind'] for f in conns(fd=$(field "$n" "$out"))]")" \
		"[\"$kind\"]"
	in=$(sed -n "s/^${n}_in=//p" "$out") o=$(sed -n "s/^${n}_out=//p" "$out")
	expect_eq "$n ($kind): bytes in, out" "$(rec "$n")" "[[${in:-0}, ${o:-0}]]"
done
# The sums themselves are what the calls were asked to move (the program
# checks each call): this proves the comparison above compared something.
expect_eq "what pio_xfer moved" \
	"$(field f_out "$out") $(field f_in "$out") $(field g_out "$out") $(field b_in "$out")" \
	"6000 11600 5000 1350"
check "$T/p.log" "[f['errors_in']['other'] for f in conns(fd=$(field a "$out"))] == [1]" \
	"a pread on a socket (ESPIPE) is an error of the socket"

# Without [track] files, a file moves nothing into the log; the socket ends
# are still exact.
SOCKMETER_LOG=$T/n.log SOCKMETER_FORMAT=json sm "$PROGS/pio_xfer" "$T/d" \
	>"$T/n.out" 2>&1 || fail "pio_xfer failed: $(cat "$T/n.out")"
check "$T/n.log" "not [f for f in conns() if f['kind'] in ('file', 'pipe')]" \
	"files metered by default"
expect_eq "defaults: the sockets" \
	"$(q "$T/n.log" "[[f['bytes_in'], f['bytes_out']] for f in conns(kind='unix')]")" \
	"[[0, 50], [400, 1300], [1350, 400]]"

# cat copies files with copy_file_range, both ends counted; cp too, but on
# a file system that shares blocks (btrfs, XFS) it clones the file instead
# (FICLONE: no byte moves), so it is asked not to (then it reads and
# writes).
head -c 3000000 /dev/urandom >"$T/src"
size=$(stat -c %s "$T/src")
SOCKMETER_CONFIG=$T/fp.ini SOCKMETER_LOG=$T/cp.log SOCKMETER_FORMAT=json \
	sm cp --reflink=never "$T/src" "$T/dst" || fail "cp failed"
cmp -s "$T/src" "$T/dst" || fail "cp made a different copy"
expect_eq "cp: file bytes in, out" \
	"$(q "$T/cp.log" "[sum(f['bytes_in'] for f in conns(kind='file')), sum(f['bytes_out'] for f in conns(kind='file'))]")" \
	"[$size, $size]"
SOCKMETER_CONFIG=$T/fp.ini SOCKMETER_LOG=$T/cat.log SOCKMETER_FORMAT=json \
	sm cat "$T/src" >"$T/dst2" || fail "cat failed"
expect_eq "cat: file bytes in, out" \
	"$(q "$T/cat.log" "[sum(f['bytes_in'] for f in conns(kind='file')), sum(f['bytes_out'] for f in conns(kind='file'))]")" \
	"[$size, $size]"

# sqlite3: pread64/pwrite64 on its database and journal (and its answer
# written to a file).  strace follows only the program's thread (no -f),
# with each fd's path (-y).
db=$T/t.db
SOCKMETER_CONFIG=$T/fp.ini SOCKMETER_LOG=$T/sq.log SOCKMETER_FORMAT=json \
	timeout 60 strace -y -o "$T/sq.st" -e trace=pread64,pwrite64,read,write,readv,writev \
	env LD_PRELOAD="$LIB" sqlite3 "$db" \
	"create table t(x); insert into t values(randomblob(100000)); update t set x = randomblob(50000); select length(x) from t;" \
	>"$T/sq.out" 2>&1 || fail "sqlite3 failed: $(cat "$T/sq.out")"
[ "$(cat "$T/sq.out")" = 50000 ] || fail "sqlite3 said: $(cat "$T/sq.out")"
truth=$("$PY" - "$T/sq.st" "$db" "$T/sq.out" <<'PYEOF'
import re, sys
st, db, out = sys.argv[1], sys.argv[2], sys.argv[3]
tot = {"in": 0, "out": 0}
calls = 0
for line in open(st):
    m = re.match(r'(pread64|pwrite64|read|write|readv|writev)\(\d+<([^>]*)>.*\) = (\d+)$', line.strip())
    if not m or m.group(2) not in (db, db + "-journal", out):
        continue
    calls += m.group(1).startswith("p")
    tot["in" if "read" in m.group(1) else "out"] += int(m.group(3))
assert calls > 10, "sqlite3 made %d positional calls" % calls
print("[%d, %d]" % (tot["in"], tot["out"]))
PYEOF
) || fail "strace's record: $truth"
expect_eq "sqlite3: database and journal bytes in, out" \
	"$(q "$T/sq.log" "[sum(f['bytes_in'] for f in conns(kind='file')), sum(f['bytes_out'] for f in conns(kind='file'))]")" \
	"$truth"
exit 0
