# Real OpenSSH: sshd as root, metered, its privilege separation as shipped
# (a pre-authentication child per connection that chroots to an empty
# directory, becomes the sshd user, sets RLIMIT_NOFILE to 1 and installs a
# seccomp filter that kills for the system calls it does not expect), and
# a metered ssh client running a command that prints 1,000,000 bytes.
#  - the session works (the preload took no call the filter forbids);
#  - the server's processes together moved exactly what the client did,
#    each way: the pre-authentication child's share (the key exchange and
#    the authentication, a few KB) included, read from its own log;
#  - the pre-authentication child cannot write its exit record (OpenSSH
#    sets RLIMIT_FSIZE to 0 there: no file may grow), so its state file
#    keeps it and `sockmeter recover` writes it, marked "exit-recovered";
#    nothing is marked "killed".
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (sshd's privilege separation)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] ||
	fail "sshd missing (scripts/install-deps: openssh-server)"
command -v ssh >/dev/null || fail "ssh missing (scripts/install-deps: openssh-client)"
id sshd >/dev/null 2>&1 || fail "no user sshd (its privilege separation user)"
sshd=$(command -v sshd || echo /usr/sbin/sshd)
mkdir -p /run/sshd && chmod 755 /run/sshd
chmod 755 "$T"
mkdir -m 1777 "$T/log"
ssh-keygen -q -t ed25519 -N '' -f "$T/hostkey" || fail "ssh-keygen (host)"
ssh-keygen -q -t ed25519 -N '' -f "$T/userkey" || fail "ssh-keygen (user)"
cp "$T/userkey.pub" "$T/authorized_keys"
export SOCKMETER_FORMAT=json SOCKMETER_LOG="$T/log/%n.%p.log" \
	SOCKMETER_STATE="$T/state"
N=1000000
for try in 1 2 3; do
	port=$(free_port)
	cat >"$T/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $T/hostkey
PidFile $T/sshd.pid
AuthorizedKeysFile $T/authorized_keys
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
CONF
	bg_start env LD_PRELOAD="$LIB" "$sshd" -D -e -f "$T/sshd_config"
	server=$BG_PID
	wait_listen "$port" "$server" 10 2>"$T/sshd.err" && break
	kill "$server" 2>/dev/null
	server=
done
[ -n "$server" ] || fail "sshd did not start"
sm ssh -i "$T/userkey" -p "$port" -o BatchMode=yes -o StrictHostKeyChecking=no \
	-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1 \
	"head -c $N /dev/zero" >"$T/out" 2>"$T/ssh.err" ||
	fail "ssh failed: $(cat "$T/ssh.err")"
expect_eq "bytes the command printed" "$(wc -c <"$T/out")" "$N"
kill "$server"
bg_wait "$server" 10 >/dev/null || true
# The per-connection sshd ends by itself once the client has gone, maybe
# after ssh returned: its exit record is written then, and the recovery
# below leaves a live process's file alone.  Wait until no state file's
# process is alive.
state_owners_alive() {
	local f p
	for f in "$T"/state/*.state; do
		[ -e "$f" ] || continue
		p=${f##*/}
		p=${p%%-*}
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}
wait_for 10 eval '! state_owners_alive' ||
	fail "sshd's processes still running 10 s after the session: $(ls "$T/state")"

launcher=$SM_TOP/scripts/sockmeter
# (Another sshd process's own recovery scan may have written it first.)
"$launcher" recover "$T/state" 2>"$T/rec" || fail "recover: $(cat "$T/rec")"
cat "$T"/log/ssh.*.log >"$T/client.log" 2>/dev/null || fail "no ssh log"
cat "$T"/log/sshd.*.log >"$T/server.log" 2>/dev/null || fail "no sshd log"
# The client's one connection, and its local address: the server's
# records of it are those whose peer it is.
conn=$(q "$T/client.log" '[c for c in conns(kind="tcp") if c["peer"].endswith(":'"$port"'")]') ||
	fail "no TCP connection in the client's log"
cat >"$T/c.py" <<PYEOF
c = json.loads(r'''$conn''')
assert len(c) == 1, "client connections: %r" % c
c = c[0]
mine = [x for x in CL + [f for r in R if r["type"] == "exit" for f in r["fds"]]
        if x["kind"] == "tcp" and x["peer"] == c["local"]]
pids = {x.get("pid") for x in R if x["type"] == "exit"}
got_in = sum(x["bytes_in"] for x in mine)
got_out = sum(x["bytes_out"] for x in mine)
assert got_in == c["bytes_out"], "sshd read %d, ssh wrote %d" % (got_in, c["bytes_out"])
assert got_out == c["bytes_in"], "sshd wrote %d, ssh read %d" % (got_out, c["bytes_in"])
assert c["bytes_in"] >= $N, "ssh read %d" % c["bytes_in"]
holders = {x.get("pid") for x in R for y in ([x] if x["type"] == "close" else x.get("fds", []))
           if y.get("kind") == "tcp" and y.get("peer") == c["local"] and (y["bytes_in"] or y["bytes_out"])}
assert len(holders) >= 2, "the connection's bytes in %d sshd process(es): %r" % (len(holders), holders)
ends = [r.get("end") for r in R if r["type"] == "exit" and r.get("end")]
assert ends == ["exit-recovered"], "exit records marked: %r" % ends
PYEOF
check_py "$T/server.log" "$T/c.py" "sshd's processes vs the ssh client"
exit 0
