#!/usr/bin/env bash
# tests/bench/churn.sh - the churn part of `make bench` (issue 9): short
# connections (one client/server pair, and two at once), fork under churn,
# the ticker's cost per close record, and a real server (nginx + ab).
# Configurations alternate round after round (one warm-up round, then
# CHURN_ROUNDS counted); prints a Markdown section with medians and
# per-round ratios against no preload, which run.sh adds to BENCHMARKS.md.
#
#   tests/bench/churn.sh [BUILD_DIR]
#
# Knobs: CHURN_ROUNDS=5, CHURN_SECONDS=2 (each churn and fork run),
# CHURN_AB_N=20000 (requests per ab round), CHURN_NGINX=1 (0 skips nginx).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
lib=$build/libsockmeter.so
gen=$build/bench/churngen
ROUNDS=${CHURN_ROUNDS:-5}
SECS=${CHURN_SECONDS:-2}
AB_N=${CHURN_AB_N:-20000}
NGINX=${CHURN_NGINX:-1}
PY=$(command -v python3)

for f in "$lib" "$gen" "$build/bench/syscost"; do
	[ -e "$f" ] || { echo "churn.sh: $f missing (make bench builds it)" >&2; exit 2; }
done
tmp=$(mktemp -d /tmp/sockmeter-churn.XXXXXX)
chmod 755 "$tmp"
# The state files where the default puts them, a tmpfs (/dev/shm): on
# /tmp's disk file system each first write to a page of the state file
# goes through the file system's page_mkwrite, a cost the defaults never
# pay.  /tmp only where there is no /dev/shm.
state=$(mktemp -d /dev/shm/sockmeter-churn-state.XXXXXX 2>/dev/null) ||
	state=$tmp/state
ngpid=
cleanup() {
	[ -n "$ngpid" ] && kill "$ngpid" 2>/dev/null && wait "$ngpid" 2>/dev/null
	rm -rf "$tmp" "$state"
}
trap cleanup EXIT
raw=$tmp/raw.tsv
: >"$raw"
mkdir -m 1777 "$tmp/log"
mkdir -p "$state"
chmod 1777 "$state"

# ini NAME LINES... : a config; the log in $tmp/log (any user may write
# there: nginx's workers run as nobody), one interval record an hour, the
# state files in a directory of the run's own ($state, on the tmpfs the
# default uses): a ticker that starts while dead processes' files wait in
# the default one recovers them (its CPU, not the library's cost per
# connection; docs/state.md).
ini() {
	local name=$1
	shift
	{
		printf '[log]\npath = %s/log/%s.%%n.%%p.log\ninterval = 3600\n' "$tmp" "$name"
		printf '%s\n' "$@"
		printf '[state]\ndir = %s/%%u\n' "$state"
	} >"$tmp/$name.ini"
	chmod 644 "$tmp/$name.ini"
}
ini off '[sockmeter]' 'enabled = false'
ini defaults
ini json 'format = json'
ini records-off 'close_records = off'
# The fewest system calls a metered connection can add (docs/performance.md).
ini lean '[stats]' 'tcp_info = false' 'peers = false'

# envs CONFIG: the environment of one configuration.
envs() {
	case $1 in
	none) echo "-u LD_PRELOAD" ;;
	*) echo "LD_PRELOAD=$lib SOCKMETER_CONFIG=$tmp/$1.ini" ;;
	esac
}

# dropped CONFIG: close records dropped, over the logs of CONFIG (then
# removed).
dropped() {
	local d
	d=$(cat "$tmp/log/$1".* 2>/dev/null |
		grep -o 'close_records_dropped[^0-9]*[0-9]*' |
		grep -o '[0-9]*$' | sort -n | tail -n 1)
	rm -f "$tmp/log/$1".*
	echo "${d:-0}"
}

# run ROUND WORKLOAD CONFIG: one churngen run, appended to $raw.
run_gen() {
	local round=$1 wl=$2 cfg=$3 line
	# shellcheck disable=SC2046
	line=$(env -u SOCKMETER -u SOCKMETER_CONFIG -u SOCKMETER_LOG \
		-u SOCKMETER_FORMAT $(envs "$cfg") "$gen" "$wl" "$SECS" |
		grep '^RESULT ') || { echo "churn.sh: $wl $cfg failed" >&2; exit 2; }
	printf '%s\t%s\t%s\t%s dropped=%s\n' "$round" "$wl" "$cfg" \
		"${line#RESULT }" "$(dropped "$cfg")" >>"$raw"
}

# run_gen2 ROUND CONFIG: two churngen churn runs at once (both cores busy:
# one client/server pair leaves the machine half idle, waiting on its own
# wake-ups), appended to $raw as workload churn2 with their sums.
run_gen2() {
	local round=$1 cfg=$2 pa k sum
	# shellcheck disable=SC2046
	env -u SOCKMETER -u SOCKMETER_CONFIG -u SOCKMETER_LOG \
		-u SOCKMETER_FORMAT $(envs "$cfg") "$gen" churn "$SECS" \
		>"$tmp/gen2.a" &
	pa=$!
	# shellcheck disable=SC2046
	env -u SOCKMETER -u SOCKMETER_CONFIG -u SOCKMETER_LOG \
		-u SOCKMETER_FORMAT $(envs "$cfg") "$gen" churn "$SECS" \
		>"$tmp/gen2.b" || { echo "churn.sh: churn2 $cfg failed" >&2; exit 2; }
	wait "$pa" || { echo "churn.sh: churn2 $cfg failed" >&2; exit 2; }
	sum="workload=churn2"
	for k in conns conns_per_s cpu_s ticker_cpu_s closes; do
		sum+=" $k=$(cat "$tmp/gen2.a" "$tmp/gen2.b" | grep '^RESULT ' |
			grep -o " $k=[0-9.]*" | cut -d= -f2 |
			awk '{ s += $1 } END { print s + 0 }')"
	done
	printf '%s\tchurn2\t%s\t%s dropped=%s\n' "$round" "$cfg" "$sum" \
		"$(dropped "$cfg")" >>"$raw"
}

nginx_conf() {
	local port=$1
	mkdir -p "$tmp/www"
	head -c 10240 /dev/urandom >"$tmp/www/f"
	chmod -R a+rX "$tmp/www"
	cat >"$tmp/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $tmp/cb;
	proxy_temp_path $tmp/px;
	fastcgi_temp_path $tmp/fc;
	uwsgi_temp_path $tmp/uw;
	scgi_temp_path $tmp/sc;
	server { listen 127.0.0.1:$port; root $tmp/www; }
}
CONF
}

# run_nginx ROUND CONFIG: nginx (1 worker) under CONFIG, ab -c 10.
run_nginx() {
	local round=$1 cfg=$2 port rps i
	port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	nginx_conf "$port"
	# shellcheck disable=SC2046
	env -u SOCKMETER -u SOCKMETER_CONFIG -u SOCKMETER_LOG $(envs "$cfg") \
		nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/error.log" &
	ngpid=$!
	for i in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.05
	done
	rps=$(ab -q -n "$AB_N" -c 10 "http://127.0.0.1:$port/f" 2>/dev/null |
		awk '/^Requests per second/ { print $4 }')
	kill -QUIT "$(cat "$tmp/nginx.pid")"
	wait "$ngpid" || true
	ngpid=
	printf '%s\tnginx\t%s\treqs_per_s=%s dropped=%s\n' "$round" "$cfg" \
		"${rps:-0}" "$(dropped "$cfg")" >>"$raw"
}

have_nginx=0
if [ "$NGINX" = 1 ] && command -v nginx >/dev/null && command -v ab >/dev/null; then
	have_nginx=1
fi
echo "churn: $ROUNDS rounds + warm-up, ${SECS}s runs" >&2
for ((r = 0; r <= ROUNDS; r++)); do
	printf 'round %s/%s ' "$r" "$ROUNDS" >&2
	for cfg in none off defaults; do run_gen "$r" churn "$cfg"; done
	printf '.' >&2
	for cfg in none defaults; do run_gen "$r" forks "$cfg"; done
	printf '.' >&2
	for cfg in json records-off lean; do run_gen "$r" churn "$cfg"; done
	printf '.' >&2
	for cfg in none defaults; do run_gen2 "$r" "$cfg"; done
	printf '.' >&2
	# What a system call costs here (a metered connection adds some).
	if [ "$r" -gt 0 ] && line=$("$build/bench/syscost" | grep '^RESULT '); then
		printf '%s\tsyscost\tnone\t%s\n' "$r" "${line#RESULT }" >>"$raw"
	fi
	if [ "$have_nginx" = 1 ]; then
		for cfg in none defaults; do run_nginx "$r" "$cfg"; done
		printf '.' >&2
	fi
	echo >&2
done
# Where perf can count them (root, tracepoints): how many system calls a
# connection makes in each configuration, one run each.
if perf stat -x, -e raw_syscalls:sys_enter true >/dev/null 2>&1; then
	for cfg in none defaults lean; do
		# Only the workload preloaded, not perf.
		# shellcheck disable=SC2046
		line=$(perf stat -x, -e raw_syscalls:sys_enter -o "$tmp/perf.out" \
			env -u SOCKMETER -u SOCKMETER_CONFIG -u SOCKMETER_LOG \
			-u SOCKMETER_FORMAT $(envs "$cfg") "$gen" churn 1 |
			grep '^RESULT ') || continue
		n=$(grep raw_syscalls "$tmp/perf.out" | cut -d, -f1) || true
		# "<not counted>" and the like: no figure.
		[[ $n =~ ^[0-9]+$ ]] || continue
		printf '1\tsyscalls\t%s\t%s syscalls=%s\n' "$cfg" \
			"${line#RESULT }" "${n:-0}" >>"$raw"
		rm -f "$tmp/log/$cfg".*
	done
fi
cp "$raw" "$build/bench/last-churn.tsv"
"$PY" "$here/churn_report.py" "$raw" "$ROUNDS" "$SECS" "$AB_N" "$have_nginx"
