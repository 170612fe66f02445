# A seek outside a FILE's buffer refills it from inside fseek: glibc reads
# the block the new position falls in.  readelf (binutils) reads an ELF
# file that way; with [track] files = true, the bytes the log says it read
# from the file are exactly what strace saw its reads return on that path
# (before the fix, 49,936 of 209,680 bytes of git's binary went missing).
. "$(dirname "$0")/lib.sh"

need readelf strace
printf '[track]\nfiles = true\n' >"$T/f.ini"
cp "$LIB" "$T/elf.bin"
SOCKMETER_CONFIG=$T/f.ini SOCKMETER_LOG=$T/r.log SOCKMETER_FORMAT=json \
	timeout 60 strace -y -o "$T/r.st" -e trace=read,pread64 \
	env LD_PRELOAD="$LIB" readelf -a -W "$T/elf.bin" >"$T/r.out" 2>&1 ||
	fail "readelf failed: $(tail -n 3 "$T/r.out")"
truth=$("$PY" - "$T/r.st" "$T/elf.bin" <<'PYEOF'
import re, sys
st, path = sys.argv[1], sys.argv[2]
n = calls = 0
for line in open(st):
    m = re.match(r'(read|pread64)\(\d+<([^>]*)>.*\) = (\d+)$', line.strip())
    if m and m.group(2) == path:
        n += int(m.group(3))
        calls += 1
assert calls > 5, "readelf made %d reads of the file" % calls
print(n)
PYEOF
) || fail "strace's record: $truth"
expect_eq "bytes readelf read from the file" \
	"$(q "$T/r.log" "sum(f['bytes_in'] for f in conns(kind='file'))")" "$truth"
exit 0
