# bash's `printf ... >&3` on a /dev/tcp connection (fd 3): bash saves fd 1,
# dup2()s 3 onto it, printf writes on fd 1, and bash puts fd 1 back with
# another dup2, which closes fd 1's duplicate of the connection.  That
# close is seen (no "close_seen": false, a duration), each of fd 1's two
# records holds its printf's bytes, and the bytes add up to what socat
# (not preloaded) received.  Before, dup2's close was noticed only as a
# reused number.
. "$(dirname "$0")/lib.sh"

command -v socat >/dev/null || fail "socat is not installed"
A=$(head -c 3000 /dev/zero | tr '\0' a)
B=$(head -c 1234 /dev/zero | tr '\0' b)
for try in 1 2 3 4 5; do
	port=$(free_port)
	bg_start socat -u "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" \
		"OPEN:$T/got,creat,trunc" 2>"$T/socat.err"
	wait_listen "$port" "$BG_PID" 10 && break
	kill "$BG_PID" 2>/dev/null
done
spid=$BG_PID
SOCKMETER_FORMAT=json SOCKMETER_LOG=$T/bash.%p.log sm bash -c '
	exec 3<>"/dev/tcp/127.0.0.1/$1"
	printf "%s" "$2" >&3
	printf "%s" "$3" >&3
	exec 3>&-' _ "$port" "$A" "$B" 2>"$T/bash.err" ||
	fail "bash failed: $(cat "$T/bash.err")"
bg_wait "$spid" 20 || fail "socat failed: $(cat "$T/socat.err")"
expect_eq "bytes socat received" "$(wc -c <"$T/got")" $((3000 + 1234))
log=$(one_log "$T/bash.*.log")
expect_eq "fd 1's TCP close records: [bytes_out, close seen, has a duration]" \
	"$(q "$log" "[[f['bytes_out'], f.get('close_seen', True), 'duration' in f] for f in closes(fd=1) if f['kind'] == 'tcp']")" \
	"[[3000, true, true], [1234, true, true]]"
expect_eq "closes not seen" "$(q "$log" "len([f for f in closes() if f.get('close_seen') is False])")" 0
expect_eq "exit bytes_out" "$(q "$log" "tot('bytes_out')")" $((3000 + 1234))
exit 0
