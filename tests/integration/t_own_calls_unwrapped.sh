# The library never calls its own wrappers: no dynamic relocation inside
# libsockmeter.so names a wrapped call (SM_REAL_FUNCS) or another name it
# exports, so its own reading of the config file, its log writes and its
# ticker are never metered, whatever the order of start-up.  (config.c's
# read() and close() did.)
#
# Known and allowed: inih's ini.o comes whole with ini_parse and
# ini_parse_file, which config.c never calls (it reads through
# ini_parse_stream and its own reader); they call fopen/fclose and take
# fgets' address.  A name is allowed only when every call to it in the
# library is made from those two functions (fgets: an address, GLOB_DAT).
. "$(dirname "$0")/lib.sh"

command -v objdump >/dev/null || fail "objdump (binutils) is not installed"
# Every name the library interposes: the wrapped calls, and whatever else
# it exports (wrappers reaching libc through another real function).
wrapped=$({ wrapped_calls
	nm -D --defined-only "$LIB" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }'; } | sort -u)
grep -qx read <<<"$wrapped" || fail "no wrapped calls found in preload/preload.h"
objdump -R "$LIB" >"$T/relocs" || fail "objdump -R failed on $LIB"
relocs=$(awk 'NF >= 3 { sub(/@.*/, "", $3); if (!($3 == "fgets" && $2 ~ /GLOB_DAT/)) print $3 }' \
	"$T/relocs" | sort -u)
[ -n "$relocs" ] || fail "objdump -R found no relocations in $LIB"
objdump -d "$LIB" >"$T/disasm" || fail "objdump -d failed on $LIB"
own=
for name in $(comm -12 <(echo "$wrapped") <(echo "$relocs")); do
	callers=$(awk -v n="<$name@plt>" '/^[0-9a-f]+ <.*>:$/ { fn = $2 }
		index($0, "call") && index($0, n) { print fn }' "$T/disasm" | sort -u)
	if [ -z "$callers" ] || grep -qvE '^<ini_parse(_file)?>:$' <<<"$callers"; then
		own="$own$name ($(tr '\n' ' ' <<<"$callers"| sed 's/ $//')) "
	fi
done
[ -z "$own" ] || fail "the library calls its own wrappers: $own"
exit 0
