# Bad input, end to end under the preload: a table of malformed config
# files and environment values.  For every row pairxfer (50,000 bytes,
# exit status 5) must run exactly as without the preload - same stdout,
# same status - stderr must hold exactly the expected number of
# "sockmeter:" lines and nothing else, one of them containing the row's
# distinctive fragment, and metering must go on: the log (its path given
# by the rest of the config, or by SOCKMETER_LOG) has exactly 50,000 bytes
# out.  tests/unit/check_config.c covers the parser in detail; this proves
# the same under the preload, in a real process.
#
# Columns: NAME, expected "sockmeter:" lines, fragment ('' when none is
# expected), then how the input is given:
#   ini TEXT     TEXT (printf format, %% for %) after a first line setting
#                the log path and format: SOCKMETER_CONFIG names that file
#   cfg PATH     SOCKMETER_CONFIG=PATH as it is (made by the row's setup)
#   env VAR=VAL  in the environment (with a valid config file as for ini)
. "$(dirname "$0")/lib.sh"

need_prog pairxfer
plain "$PROGS/pairxfer" 50000 5 >"$T/plain.out" 2>&1
mkdir -p "$T/logs" "$T/cfg"
long200=$(head -c 200 /dev/zero | tr '\0' a)
long600=$(head -c 600 /dev/zero | tr '\0' b)
# a binary file of 30 lines: 20 messages, then one "the rest are not shown"
head -c 3000 /dev/urandom | tr '\n' '\001' | fold -b -w 99 | head -n 30 >"$T/cfg/x-binary30.ini"
printf '[log]\n' >"$T/cfg/x-big.ini"
head -c 70000 /dev/zero | tr '\0' ';' >>"$T/cfg/x-big.ini"
mkfifo "$T/cfg/x-fifo.ini"
ln -s "$T/cfg/x-nonexistent.ini" "$T/cfg/x-dangling.ini"
printf '[log]\ninterval = 5\n' >"$T/cfg/x-unreadable.ini"
chmod 000 "$T/cfg/x-unreadable.ini"
: >"$T/cfg/x-notdir"
HAVE_SETPRIV=0
setpriv --bounding-set -dac_override,-dac_read_search true 2>/dev/null && HAVE_SETPRIV=1

failures=()
rows=0

# row NAME LINES FRAGMENT KIND ARG
row() {
	local name=$1 want=$2 frag=$3 kind=$4 arg=$5 cfg log st got
	local -a envs=() pre=()
	rows=$((rows + 1))
	log=$T/logs/$name.log
	cfg=$T/cfg/$name.ini
	printf '[log]\npath = %s\nformat = json\n' "$log" >"$cfg"
	case $kind in
	ini) printf -- "$arg" >>"$cfg" ;;
	env) envs+=("$arg") ;;
	cfg) cfg=$arg
	     envs+=("SOCKMETER_LOG=$log" "SOCKMETER_FORMAT=json") ;;
	esac
	[ "$name" = unreadable ] && pre=(setpriv --bounding-set -dac_override,-dac_read_search)
	timeout 20 "${pre[@]}" env SOCKMETER_CONFIG="$cfg" "${envs[@]}" \
		LD_PRELOAD="$LIB" "$PROGS/pairxfer" 50000 5 \
		>"$T/$name.out" 2>"$T/$name.err"
	st=$?
	if [ "$st" != 5 ]; then
		failures+=("$name: exit status $st")
		return
	fi
	if ! cmp -s "$T/$name.out" "$T/plain.out"; then
		failures+=("$name: stdout differs")
		return
	fi
	got=$(sm_lines "$T/$name.err")
	if [ "$got" != "$want" ]; then
		failures+=("$name: $got sockmeter: lines, expected $want: $(head -c 300 "$T/$name.err" | tr '\n' '|')")
		return
	fi
	if [ "$(grep -avc '^sockmeter:' "$T/$name.err")" != 0 ]; then
		failures+=("$name: other lines on stderr: $(grep -av '^sockmeter:' "$T/$name.err" | head -n 2 | tr '\n' '|')")
		return
	fi
	if [ -n "$frag" ] && ! grep -aqF -- "$frag" "$T/$name.err"; then
		failures+=("$name: no message containing '$frag': $(head -c 300 "$T/$name.err" | tr '\n' '|')")
		return
	fi
	if [ "$kind" = ini ] && [ "$want" -gt 0 ] && ! grep -aqF "$cfg:" "$T/$name.err"; then
		failures+=("$name: the message does not name $cfg:LINE")
		return
	fi
	got=$("${LOGQ[@]}" "$log" "tot('bytes_out')" 2>&1)
	if [ "$got" != 50000 ]; then
		failures+=("$name: log: $got")
	fi
}

# --- config files ----------------------------------------------------------
row empty_file        0 ''                                   ini ''
row garbage           1 'syntax error: expected "key = value"' ini 'hello world\n'
row garbage_section   1 'syntax error'                       ini '[log\ninterval = 1\n'
row binary_line       1 'binary or control characters, line ignored' ini '\001\002\377\376\n'
row nul_bytes         1 'binary or control characters'       ini 'top = 1\000\000\n'
row binary_file       21 'more than 20 problems, the rest are not shown' cfg "$T/cfg/x-binary30.ini"
row huge_number       1 '"99999999999999999999999999" is out of range' ini 'interval = 99999999999999999999999999\n'
row overflow_u64      1 '"18446744073709551616" is out of range' ini 'top = 18446744073709551616\n'
row overflow_double   1 '"1e999" is out of range'            ini 'interval = 1e999\n'
row negative_top      1 '"-5" is out of range'               ini 'top = -5\n'
row negative_interval 1 '"-0.5" is out of range'             ini 'interval = -0.5\n'
row too_small         1 '"0.01" is out of range'             ini 'interval = 0.01\n'
row hex               1 '"0x10" is not a number'             ini 'top = 0x10\n'
row inf               1 '"inf" is not a number'              ini 'interval = inf\n'
row nan               1 '"nan" is not a number'              ini 'interval = nan\n'
row plus_sign         1 '"+1" is not a number'               ini 'interval = +1\n'
row units             1 '"10s" is not a number'              ini 'interval = 10s\n'
row fraction_count    1 '"2.5" is not a whole number'        ini 'top = 2.5\n'
row empty_value       1 'empty value'                        ini 'interval =\n'
row not_boolean       1 '"maybe" is not a boolean'           ini '[stats]\nsizes = maybe\n'
row bad_format        1 '"xml" is not a known format'        ini 'format = xml\n'
row dup_keys          0 ''                                   ini 'format = text\nformat = json\ninterval = 5\ninterval = 6\n'
row dup_sections      0 ''                                   ini '[stats]\nbytes = true\n[log]\nformat = json\n[stats]\ncalls = true\n'
row long_line         1 'line longer than 199 bytes, ignored' ini "[stats]\ncalls = true ;$long200\n"
row unknown_section   1 'unknown section [foo]'              ini '[foo]\nbar = 1\nbaz = 2\n'
row unknown_key       1 '[log] colour: unknown key'          ini 'colour = red\n'
row before_section    1 'key "top" before any [section]'     cfg "$(printf 'top = 5\n[log]\npath = %s\nformat = json\n' "$T/logs/before_section.log" >"$T/cfg/x-bs.ini"; echo "$T/cfg/x-bs.ini")"
row bad_escape        1 'uses unknown escape %q'            ini 'path = /tmp/%%q.log\n'
row lone_percent      1 'ends with a lone %'                ini 'path = /tmp/50%%\n'
row spans_misfit      1 '[window] spans: 60 s is longer than the ring' ini '[window]\nbuckets = 30\nspans = 1, 10, 60\n'
row spans_order       1 'spans are not in ascending order'   ini '[window]\nspans = 10, 1\n'
row crlf_bom          0 ''                                   cfg "$(printf '\357\273\277[log]\r\npath = %s\r\nformat = json\r\n' "$T/logs/crlf_bom.log" >"$T/cfg/x-crlf.ini"; echo "$T/cfg/x-crlf.ini")"
row too_large         1 'larger than 65536 bytes'            cfg "$T/cfg/x-big.ini"
row directory         1 'Is a directory'                     cfg "$T/cfg"
row fifo              1 'not a regular file'                 cfg "$T/cfg/x-fifo.ini"
row dangling_symlink  1 'No such file or directory'          cfg "$T/cfg/x-dangling.ini"
row not_a_dir         1 'Not a directory'                    cfg "$T/cfg/x-notdir/x.ini"
if [ "$HAVE_SETPRIV" = 1 ]; then
	row unreadable    1 'Permission denied'                  cfg "$T/cfg/x-unreadable.ini"
else
	echo "SKIP unreadable: setpriv cannot drop CAP_DAC_OVERRIDE here"
fi

# --- environment values ----------------------------------------------------
row env_garbage       1 'environment SOCKMETER_INTERVAL: "abc" is not a number' env 'SOCKMETER_INTERVAL=abc'
row env_negative      1 'environment SOCKMETER_INTERVAL: "-1" is out of range' env 'SOCKMETER_INTERVAL=-1'
row env_overflow      1 'environment SOCKMETER_INTERVAL: "1e999" is out of range' env 'SOCKMETER_INTERVAL=1e999'
row env_huge_top      1 'environment SOCKMETER_TOP: "99999999999999999999" is out of range' env 'SOCKMETER_TOP=99999999999999999999'
row env_negative_top  1 'environment SOCKMETER_TOP: "-3" is out of range' env 'SOCKMETER_TOP=-3'
row env_valgrind_junk 1 'environment SOCKMETER_VALGRIND: "junk" is not meter; ignored' env 'SOCKMETER_VALGRIND=junk'
row env_format        1 'environment SOCKMETER_FORMAT: "xml" is not a known format' env 'SOCKMETER_FORMAT=xml'
row env_binary        1 'environment SOCKMETER_FORMAT: "'      env "SOCKMETER_FORMAT=$(printf '\001\377\376j')"
row env_switch        1 'environment SOCKMETER: "maybe" is not a boolean' env 'SOCKMETER=maybe'
row env_log_long      1 'environment SOCKMETER_LOG: value longer than 512 bytes' env "SOCKMETER_LOG=/tmp/$long600"
row env_log_escape    1 'environment SOCKMETER_LOG: "/tmp/%x" uses unknown escape %x' env 'SOCKMETER_LOG=/tmp/%x'
row env_empty         0 ''                                   env 'SOCKMETER_INTERVAL='
row env_blank         0 ''                                   env 'SOCKMETER_TOP=   '
row env_padded        0 ''                                   env 'SOCKMETER_INTERVAL= 0.5 '
row env_config_empty  0 ''                                   cfg ''

[ "${#failures[@]}" = 0 ] ||
	fail "${#failures[@]} of $rows rows failed: $(printf '%s; ' "${failures[@]}")"
echo "$rows rows passed"
exit 0
