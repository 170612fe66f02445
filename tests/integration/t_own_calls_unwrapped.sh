# The library never calls its own wrappers: no dynamic relocation inside
# libsockmeter.so names a wrapped call (SM_REAL_FUNCS), so its own reading
# of the config file, its log writes and its ticker are never metered,
# whatever the order of start-up.  (config.c's read() and close() did.)
. "$(dirname "$0")/lib.sh"

command -v objdump >/dev/null || fail "objdump (binutils) is not installed"
# Every name the library interposes: the wrapped calls, and whatever else
# it exports (wrappers reaching libc through another real function).
wrapped=$({ wrapped_calls
	nm -D --defined-only "$LIB" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }'; } | sort -u)
grep -qx read <<<"$wrapped" || fail "no wrapped calls found in preload/preload.h"
# One known exception: inih's ini_parse_file (linked in with ini.o, never
# called: config.c reads through ini_parse_stream and its own reader)
# takes fgets' address as its reader, a GLOB_DAT relocation, not a call.
relocs=$(objdump -R "$LIB" |
	awk 'NF >= 3 { sub(/@.*/, "", $3); if (!($3 == "fgets" && $2 ~ /GLOB_DAT/)) print $3 }' |
	sort -u)
[ -n "$relocs" ] || fail "objdump -R found no relocations in $LIB"
own=$(comm -12 <(echo "$wrapped") <(echo "$relocs") | tr '\n' ' ')
[ -z "$own" ] || fail "the library calls its own wrappers: $own"
exit 0
