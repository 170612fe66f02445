# libsockmeter.so exports exactly the interposed calls: nothing of its
# own (no ini_parse, no helpers) that a host could bind to.  The list of
# interposed calls is SM_REAL_FUNCS itself (preload/preload.h).
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null || fail "nm (binutils) is not installed"
# The single list of wrapped calls: SM_REAL_FUNCS in preload/preload.h,
# made of the group headers preload/funcs_*.h (each group adds its own),
# through the preprocessor (lib.sh wrapped_calls); and the wrappers that
# reach libc through one of them, Y(name) in a group header (printf through
# vfprintf, getc through fgetc...).
# vfork (SM_EXIT_RAW_ONLY) is made in x86-64 assembly: not elsewhere.
want=$({ wrapped_calls; sed -n 's/^[[:space:]]*Y(\([A-Za-z_0-9]*\)).*/\1/p' \
	"$SM_TOP"/preload/funcs_*.h; } | sort -u |
	if [ "$(uname -m)" = x86_64 ]; then cat; else grep -vx '_*vfork'; fi)
[ "$(wc -l <<<"$want")" -ge 31 ] || fail "cannot read the wrapped calls from preload/preload.h"
grep -qx read <<<"$want" || fail "cannot read the wrapped calls from preload/preload.h"
got=$(nm -D --defined-only "$LIB" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u)
[ -n "$got" ] || fail "nm -D found no symbols in $LIB"
extra=$(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')
missing=$(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' ')
[ -z "$extra" ] || fail "exported but not interposed: $extra"
[ -z "$missing" ] || fail "not exported: $missing"
exit 0
