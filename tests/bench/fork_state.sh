#!/usr/bin/env bash
# fork_state.sh - what durable state costs a process that forks: forks per
# second of tests/bench/forkrate (each child writes a byte and _exits)
# without the preload, with it and [state] enabled = false, and with it
# and the state file on /dev/shm (the default).  Medians of 5 runs of
# 2000 forks, side by side.
#   tests/bench/fork_state.sh BUILD_DIR
set -eu
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
bin=$build/bench/forkrate
lib=$build/libsockmeter.so
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
export SOCKMETER_LOG=$t/%p.log

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

run() { # NAME ENV...
	local name=$1 i
	shift
	for i in 1 2 3 4 5; do
		env "$@" "$bin" 2000 | sed -n 's/^forks_per_s=//p'
		rm -f "$t"/*.log
	done | median >"$t/$name"
}

run none
run state_off LD_PRELOAD="$lib" SOCKMETER_STATE=off
run state_on LD_PRELOAD="$lib" SOCKMETER_STATE=/dev/shm/sockmeter-bench-$$
rm -rf "/dev/shm/sockmeter-bench-$$"
none=$(cat "$t/none") off=$(cat "$t/state_off") on=$(cat "$t/state_on")
printf 'forks per second (median of 5 x 2000 forks; child writes 1 byte, _exit)\n'
printf '%-28s %10s %8s\n' configuration forks/s ratio
printf '%-28s %10s %8s\n' "no preload" "$none" 1.00
printf '%-28s %10s %8.2f\n' "preload, state off" "$off" "$(echo "$off / $none" | bc -l)"
printf '%-28s %10s %8.2f\n' "preload, state on (tmpfs)" "$on" "$(echo "$on / $none" | bc -l)"
printf '%-28s %10s %8.2f\n' "state on / state off" "" "$(echo "$on / $off" | bc -l)"

# A fork by itself (forkrate bare: the child only _exits; an idle thread
# in the parent, as the ticker makes one): no preload and the preload
# (state files on) alternated round after round, medians of 7 x 2000
# forks of the time per fork and of each side's CPU per fork.
state=/dev/shm/sockmeter-bench-bare-$$
for i in 1 2 3 4 5 6 7; do
	"$bin" 2000 bare | sed 's/^/none /'
	env LD_PRELOAD="$lib" SOCKMETER_STATE="$state" "$bin" 2000 bare |
		sed 's/^/preload /'
	rm -f "$t"/*.log
done >"$t/bare"
rm -rf "$state"
printf '\nbare forks (median of 7 x 2000, alternated; child only _exits)\n'
printf '%-12s %10s %12s %14s %14s %10s\n' configuration forks/s us/fork \
	parent_cpu_us child_cpu_us child_flt
for cfg in none preload; do
	for k in forks_per_s us_per_fork parent_cpu_us child_cpu_us child_minflt; do
		sed -n "s/^$cfg .*$k=\([0-9.]*\).*/\1/p" "$t/bare" | median
	done | paste -sd' ' | awk -v c="$cfg" \
		'{ printf "%-12s %10s %12s %14s %14s %10s\n", c, $1, $2, $3, $4, $5 }'
done
