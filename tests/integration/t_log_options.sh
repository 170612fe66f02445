# Log options: the path template's escapes (%n %u %t %p %%), the "stderr"
# destination (records on fd 2, stdout untouched), [sockmeter] skip (a
# listed program writes nothing), [stats] latency = true (latency_ns_*
# fields, > 0), and the sizes histogram (exact bucket counts for known
# transfer sizes).
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
mkdir -p "$T/tpl"
t0=$(date +%s)
SOCKMETER_LOG="$T/tpl/%n-%u-%t-%p-%%.log" SOCKMETER_FORMAT=json \
	sm "$PROGS/pairxfer" 100 >"$T/out" 2>"$T/err" || fail "pairxfer failed"
t1=$(date +%s)
f=$(cd "$T/tpl" && ls)
[[ $f =~ ^pairxfer-$(id -u)-([0-9]+)-([0-9]+)-%\.log$ ]] ||
	fail "template made '$f'"
t=${BASH_REMATCH[1]} pid=${BASH_REMATCH[2]}
if [ "$t" -lt "$t0" ] || [ "$t" -gt "$t1" ]; then
	fail "%t gave $t, not in [$t0, $t1]"
fi
expect_eq "%p is the pid in the records" "$(q "$T/tpl/$f" "E['pid']")" "$pid"

SOCKMETER_LOG=stderr SOCKMETER_FORMAT=json \
	sm "$PROGS/pairxfer" 4096 >"$T/out" 2>"$T/err.log" || fail "pairxfer failed"
expect_eq "stdout with SOCKMETER_LOG=stderr" "$(cat "$T/out")" \
	"$(plain "$PROGS/pairxfer" 4096 2>&1)"
expect_eq "stderr: exit bytes_out" "$(q "$T/err.log" "tot('bytes_out')")" 4096

printf '[sockmeter]\nskip = foo, pairxfer bar\n' >"$T/skip.ini"
SOCKMETER_CONFIG=$T/skip.ini SOCKMETER_LOG=$T/skip.log \
	sm "$PROGS/pairxfer" 100 >"$T/out" 2>"$T/err" || fail "pairxfer failed"
[ -e "$T/skip.log" ] && fail "a skipped program wrote $T/skip.log"
[ -s "$T/err" ] && fail "skip: stderr: $(cat "$T/err")"

printf '[stats]\nlatency = true\n' >"$T/lat.ini"
SOCKMETER_CONFIG=$T/lat.ini SOCKMETER_LOG=$T/lat.log SOCKMETER_FORMAT=json \
	sm "$PROGS/pairxfer" 100000 >"$T/out" 2>"$T/err" || fail "pairxfer failed"
check "$T/lat.log" "tot('latency_ns_in') > 0 and tot('latency_ns_out') > 0" "latency totals"
check "$T/lat.log" "all(f['latency_ns_out'] > 0 for f in CL if f['bytes_out'])" "latency per fd"
# pairxfer writes 100000 bytes as 24 x 4096 + 1696 and reads them back the
# same way: bucket i counts sizes in [2^(i-1), 2^i).
want="[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"
expect_eq "sizes_out" "$(q "$T/lat.log" "tot('sizes_out')")" "$want"
expect_eq "sizes_in" "$(q "$T/lat.log" "tot('sizes_in')")" "$want"
# latency is off by default.
check "$T/err.log" "not [k for k in keys() if k.startswith('latency')]" "latency fields by default"
exit 0
