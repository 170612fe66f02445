# make install DESTDIR=... PREFIX=/usr/local puts exactly the library, the
# three scripts, the tools' shared Python module, the two man pages and the example config in place, with
# the right modes; the installed launcher finds the installed library (it
# is what curl maps) and meters a real download (the log's bytes are
# curl's); the installed report and top read that log; make uninstall
# leaves no file behind.
. "$(dirname "$0")/lib.sh"
need curl make
dest=$T/root
mk=(make -s -C "$SM_TOP")
grep -q 'mk/install.mk' "$SM_TOP/Makefile" || mk+=(-f Makefile -f mk/install.mk)
"${mk[@]}" install DESTDIR="$dest" PREFIX=/usr/local >"$T/make.out" 2>&1 ||
	fail "make install: $(tail -3 "$T/make.out")"
p=$dest/usr/local
(cd "$dest" && find . -type f -printf '%m %p\n' | sort) >"$T/files"
cat >"$T/want" <<WANT
644 ./usr/local/lib/sockmeter/libsockmeter.so
644 ./usr/local/lib/sockmeter/sockmeter_log.py
755 ./usr/local/lib/sockmeter/sockmeter-recover
644 ./usr/local/share/doc/sockmeter/sockmeter.ini
644 ./usr/local/share/man/man1/sockmeter.1
644 ./usr/local/share/man/man5/sockmeter.ini.5
755 ./usr/local/bin/sockmeter
755 ./usr/local/bin/sockmeter-report
755 ./usr/local/bin/sockmeter-top
WANT
sort -o "$T/want" "$T/want"
diff "$T/want" "$T/files" >"$T/diff" || fail "installed files differ: $(cat "$T/diff")"
cmp -s "$SM_BUILD/libsockmeter.so" "$p/lib/sockmeter/libsockmeter.so" || fail "library differs"

mkdir -p "$T/www" "$T/logs"
head -c 300000 /dev/urandom >"$T/www/f.bin"
bg_start timeout 20 "$PY" "$HERE/serve.py" "$T/www" 1 "$T/port"
wait_for 10 test -s "$T/port" || fail "server did not start"
port=$(cat "$T/port")
"$p/bin/sockmeter" -f json -o "$T/logs/%n.%p.log" -- curl -s -o /dev/null \
	-w '%{size_download} %{size_header}\n' "http://127.0.0.1:$port/f.bin" \
	>"$T/curl.out" 2>"$T/launch.err" || fail "installed launcher: $(cat "$T/launch.err")"
log=$(sed -n 's/^sockmeter: log of pid [0-9]*: //p' "$T/launch.err")
[ -n "$log" ] && [ -s "$log" ] || fail "no log: $(cat "$T/launch.err")"
read -r body head <"$T/curl.out"
[ "$body" = 300000 ] || fail "curl got $body bytes"
export LOG=$log WANT_IN=$((body + head))
pycheck "installed launcher's log" <<'PY'
fd = [r["fds"][0] for _, r in records(os.environ["LOG"]) if r["type"] == "close" and r["fds"][0]["kind"] == "tcp"]
assert len(fd) == 1 and fd[0]["bytes_in"] == int(os.environ["WANT_IN"]), (fd, os.environ["WANT_IN"])
PY
maps=$("$p/bin/sockmeter" -o "$T/logs/maps.log" -- cat /proc/self/maps 2>/dev/null | grep -o '/[^ ]*libsockmeter.so' | sort -u)
[ "$maps" = "$p/lib/sockmeter/libsockmeter.so" ] || fail "the installed launcher preloaded '$maps'"
"$p/bin/sockmeter-report" --only by_bytes "$log" >"$T/rep" 2>&1 || fail "installed report: $(cat "$T/rep")"
grep -Eq "curl +[0-9]+ +[0-9]+ +tcp .*127\\.0\\.0\\.1:$port +$WANT_IN " "$T/rep" || fail "installed report: $(cat "$T/rep")"
"$p/bin/sockmeter" top --once "$log" >"$T/top" 2>&1 || fail "installed top: $(cat "$T/top")"
grep -q "127.0.0.1:$port" "$T/top" || fail "installed top: $(cat "$T/top")"
man -l "$p/share/man/man1/sockmeter.1" 2>/dev/null | grep -q "SOCKMETER(1)" || fail "installed man page"

"${mk[@]}" uninstall DESTDIR="$dest" PREFIX=/usr/local >"$T/make.out" 2>&1 ||
	fail "make uninstall: $(tail -3 "$T/make.out")"
left=$(cd "$dest" && find . -type f -o -type l)
[ -z "$left" ] || fail "left after uninstall: $left"
[ ! -d "$p/lib/sockmeter" ] && [ ! -d "$p/share/doc/sockmeter" ] ||
	fail "sockmeter's own directories left"
exit 0
