# splice, tee and vmsplice are counted exactly on each metered end, like
# sendfile: 100 x 1,000 bytes spliced out of a socketpair into a pipe and
# 100 x 1,000 from a pipe into the socket.  Pipes are metered only with
# [track] pipes = true: then vmsplice counts in the pipe end's direction
# and tee counts on the pipe it fills (the pipe it copies from keeps the
# bytes: they are counted when read).
. "$(dirname "$0")/lib.sh"

need_prog splice_xfer
run() { # NAME INI
	printf '%b' "$2" >"$T/$1.ini"
	SOCKMETER_CONFIG=$T/$1.ini SOCKMETER_LOG=$T/$1.log SOCKMETER_FORMAT=json \
		sm "$PROGS/splice_xfer" >"$T/$1.out" 2>"$T/$1.err" ||
		fail "$1: splice_xfer failed: $(cat "$T/$1.err")"
	out=$T/$1.out
	expect_eq "$1: what the program moved" \
		"$(field spliced_in "$out") $(field spliced_out "$out") $(field vmspliced_in "$out") $(field vmspliced_out "$out") $(field teed "$out")" \
		"100000 100000 10000 10000 10000"
}
# [fd, kind, bytes_in, bytes_out] of each of the program's fds, by name.
ends() {
	local names=$1 expr="" n
	for n in $names; do
		expr="$expr[[f['fd'], f['kind'], f['bytes_in'], f['bytes_out']] for f in conns(fd=$(field "$n" "$out"))] + "
	done
	echo "${expr%+ }"
}

run defaults ""
expect_eq "defaults: socket ends" "$(q "$T/defaults.log" "$(ends "a b")")" \
	"[[$(field a "$out"), \"unix\", 100000, 100000], [$(field b "$out"), \"unix\", 100000, 100000]]"
check "$T/defaults.log" "not [f for f in conns() if f['kind'] == 'pipe']" \
	"defaults: pipes metered"
expect_eq "defaults: exit totals" \
	"$(q "$T/defaults.log" "[tot('bytes_in'), tot('bytes_out')]")" "[200000, 200000]"

run pipes '[track]\npipes = true\n'
p0=$(field p0 "$out") p1=$(field p1 "$out") q0=$(field q0 "$out") q1=$(field q1 "$out")
expect_eq "pipes: every end" "$(q "$T/pipes.log" "$(ends "a b p0 p1 q0 q1")")" \
	"[[$(field a "$out"), \"unix\", 100000, 100000], [$(field b "$out"), \"unix\", 100000, 100000], [$p0, \"pipe\", 210000, 0], [$p1, \"pipe\", 0, 210000], [$q0, \"pipe\", 10000, 0], [$q1, \"pipe\", 0, 10000]]"
exit 0
