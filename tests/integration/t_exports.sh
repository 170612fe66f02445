# libsockmeter.so exports exactly the interposed calls: nothing of its
# own (no ini_parse, no helpers) that a host could bind to.
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null || fail "nm (binutils) is not installed"
want="__read_chk __recv_chk __recvfrom_chk accept accept4 bind close
close_range closefrom connect dup dup2 dup3 fcntl fcntl64 read readv recv
_exit _Exit execve execv execvp execvpe execl execlp execle fexecve execveat
recvfrom recvmmsg recvmsg send sendfile sendfile64 sendmmsg sendmsg sendto
socket socketpair write writev"
want=$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | sort)
got=$(nm -D --defined-only "$LIB" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u)
[ -n "$got" ] || fail "nm -D found no symbols in $LIB"
extra=$(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')
missing=$(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' ')
[ -z "$extra" ] || fail "exported but not interposed: $extra"
[ -z "$missing" ] || fail "not exported: $missing"
exit 0
