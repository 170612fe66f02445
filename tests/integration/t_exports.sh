# libsockmeter.so exports exactly the interposed calls: nothing of its
# own (no ini_parse, no helpers) that a host could bind to.
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null || fail "nm (binutils) is not installed"
# The single list of wrapped calls: X(name, ...) in preload/preload.h and
# the group headers preload/funcs_*.h (each group adds its own), and the
# wrappers that reach libc through one of them, Y(name) in a group header
# (printf through vfprintf, getc through fgetc...).
src=$HERE/../../preload
want=$(cat "$src/preload.h" "$src"/funcs_*.h |
	sed -n 's/^[[:space:]]*X(\([A-Za-z_0-9]*\),.*/\1/p
		s/^[[:space:]]*Y(\([A-Za-z_0-9]*\)).*/\1/p' | sort -u)
[ "$(wc -l <<<"$want")" -ge 31 ] || fail "cannot read the wrapped calls from $src"
grep -qx read <<<"$want" || fail "cannot read the wrapped calls from $src"
got=$(nm -D --defined-only "$LIB" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u)
[ -n "$got" ] || fail "nm -D found no symbols in $LIB"
extra=$(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')
missing=$(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' ')
[ -z "$extra" ] || fail "exported but not interposed: $extra"
[ -z "$missing" ] || fail "not exported: $missing"
exit 0
