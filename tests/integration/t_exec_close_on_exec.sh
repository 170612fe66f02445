# An exec closes every fd marked close-on-exec (python's sockets are, by
# default: PEP 446), and the exec record says which: "close_on_exec":true
# on those fds and "fds_close_on_exec" in its totals (text: the same
# words).  sockmeter-report then shows them "closed by exec" and counts
# them closed, not open.  Before, the exec record listed them as open like
# the one fd the new image keeps, and the report showed the image's
# connections open for ever.
#  - python3 with three close-on-exec sockets (a listener and both ends of
#    a connection) and both ends of an inheritable connection execs
#    python3, which sends 5 bytes on one inherited end and reads them
#    from the other: only those two are unmarked; the new image's record
#    has them with their bytes;
#  - an exec that fails (a file that is there but not executable): the
#    image goes on, closes everything and exits; the report shows all
#    closed and none open;
#  - text format: the header and rows carry the same marks.
. "$(dirname "$0")/lib.sh"

export SOCKMETER_FORMAT=json
cat >"$T/img.py" <<'EOF'
import os, socket, sys
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
c = socket.create_connection(srv.getsockname())
a, _ = srv.accept()
c.sendall(b"x" * 1000)
assert len(a.recv(4096)) == 1000
keep = socket.create_connection(srv.getsockname())
peer, _ = srv.accept()
keep.set_inheritable(True)
peer.set_inheritable(True)
keep.sendall(b"y" * 10)
target = sys.argv[1]
code = """import os
os.write(%d, b"hello")
got = b""
while len(got) < 15:
    got += os.read(%d, 15 - len(got))
assert got == b"y" * 10 + b"hello", got
""" % (keep.fileno(), peer.fileno())
try:
    os.execv(target, [target, "-c", code])
except PermissionError:
    print("exec failed", flush=True)
for s in (c, a, keep, peer, srv):
    s.close()
EOF

# 1. The exec replaces the image.
SOCKMETER_LOG=$T/ok.%p.log sm /usr/bin/python3 "$T/img.py" /usr/bin/python3 ||
	fail "python3 failed"
ls "$T"/ok.*.log >/dev/null 2>&1 || fail "no log"
old=
for f in "$T"/ok.*.log; do
	[ "$("${LOGQ[@]}" "$f" 'len(X)')" = 1 ] && old=$f
done
[ -n "$old" ] || fail "no exec record: $(cat "$T"/ok.*.log)"
keep=$("${LOGQ[@]}" "$old" '[f["fd"] for f in X[0]["fds"] if f["bytes_out"] == 10][0]')
peer=$("${LOGQ[@]}" "$old" '[f["fd"] for f in X[0]["fds"] if f["fd"] > '"$keep"' and f["bytes_in"] == 0 and f["peer"]][0]')
"${LOGQ[@]}" check "$old" 'len(X[0]["fds"]) == 5' ||
	fail "the exec record lists 5 fds"
"${LOGQ[@]}" check "$old" \
	"sorted(f['fd'] for f in X[0]['fds'] if f.get('close_on_exec') is True) == sorted(f['fd'] for f in X[0]['fds'] if f['fd'] not in ($keep, $peer))" ||
	fail "every fd but $keep and $peer is marked close-on-exec: $("${LOGQ[@]}" dump "$old")"
"${LOGQ[@]}" check "$old" "all('close_on_exec' not in f for f in X[0]['fds'] if f['fd'] in ($keep, $peer))" ||
	fail "the inherited fds $keep and $peer are not marked"
expect_eq "fds_close_on_exec" "$("${LOGQ[@]}" "$old" 'X[0]["totals"]["fds_close_on_exec"]')" 3
expect_eq "fds_open" "$("${LOGQ[@]}" "$old" 'X[0]["totals"]["fds_open"]')" 5
# The new image (same pid, a new start) used the inherited fd.
new=$(grep -l '"type":"exit"' "$T"/ok.*.log | head -n 1)
[ -n "$new" ] || fail "the new image wrote no exit record: $(cat "$T"/ok.*.log)"
"${LOGQ[@]}" check "$new" "sum(f['bytes_out'] for f in conns(fd=$keep)) == 5 and sum(f['bytes_in'] for f in conns(fd=$peer)) == 15" ||
	fail "the new image's 5 bytes on fd $keep, 15 on $peer: $("${LOGQ[@]}" dump "$new")"

# The report: three closed by exec, two open, the process's counts so.
"$PY" "$SM_TOP/scripts/sockmeter-report" -f json "$old" >"$T/rep1.json" ||
	fail "sockmeter-report failed"
"$PY" - "$T/rep1.json" "$keep" "$peer" <<'EOF' || fail "report after the exec: $(cat "$T/rep1.json")"
import json, sys
r = json.load(open(sys.argv[1]))
kept = (int(sys.argv[2]), int(sys.argv[3]))
# Both images are in this log (one pid): the old one's row, and the new
# one's, which kept two of its fds open to its exit.
old = [p for p in r["processes"] if p["state"] == "exec"]
assert len(old) == 1 and len(r["processes"]) == 2, r["processes"]
assert (old[0]["fds_open"], old[0]["fds_closed"]) == (2, 3), old
rows = sorted((c["fd"], c["state"]) for c in r["by_bytes"])
want = sorted([(f, "open") for f in kept] +
              [(f, "open at exit") for f in kept] +
              [(c["fd"], "closed by exec") for c in r["by_bytes"]
               if c["fd"] not in kept])
assert rows == want and len(rows) == 7, rows
# The two kept connections' ends go on in the new image: one connection
# each in the kinds' count, not one per image (a helper's sweep: 7).
tcp = [k for k in r["kinds"] if k["kind"] == "tcp"][0]
assert tcp["connections"] == 5, r["kinds"]
EOF

# 2. An exec that fails: the marks do not outlive it.
printf 'not a program\n' >"$T/notexec"
chmod 644 "$T/notexec"
SOCKMETER_LOG=$T/fail.%p.log sm /usr/bin/python3 "$T/img.py" "$T/notexec" >"$T/out2" ||
	fail "python3 failed after a failed exec"
expect_eq "failed exec: the program went on" "$(cat "$T/out2")" "exec failed"
f2=$(echo "$T"/fail.*.log)
"${LOGQ[@]}" check "$f2" 'len(X) == 1 and X[0]["totals"]["fds_close_on_exec"] == 3' ||
	fail "failed exec: the exec record: $("${LOGQ[@]}" dump "$f2")"
"${LOGQ[@]}" check "$f2" 'len(CL) == 5 and T["fds_open"] == 0' ||
	fail "failed exec: five close records, none open: $("${LOGQ[@]}" dump "$f2")"
"$PY" "$SM_TOP/scripts/sockmeter-report" -f json "$f2" >"$T/rep2.json" ||
	fail "sockmeter-report failed (2)"
"$PY" - "$T/rep2.json" <<'EOF' || fail "report after a failed exec: $(cat "$T/rep2.json")"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["processes"][0]
assert p["state"] == "exited", p
assert (p["fds_open"], p["fds_closed"]) == (0, 5), p
assert {c["state"] for c in r["by_bytes"]} == {"closed"}, r["by_bytes"]
EOF

# 2b. The same, read while the image still runs after its failed exec:
# interval records list only active fds, and its idle connections were
# left "closed by exec" (the review).  python3 waits, its sockets idle,
# while records are written every 0.2 s; the report, made after the first
# one, shows
# its five connections open and none closed.
sed 's/^for s in (c, a, keep, peer, srv):$/open(sys.argv[2], "w").close()\nimport time\ntime.sleep(30)\n&/' \
	"$T/img.py" >"$T/img_wait.py"
grep -q 'time.sleep(30)' "$T/img_wait.py" || fail "img_wait.py"
SOCKMETER_INTERVAL=0.2 SOCKMETER_LOG=$T/live.%p.log \
	sm /usr/bin/python3 "$T/img_wait.py" "$T/notexec" "$T/ready" >/dev/null &
lpid=$!
wait_for 10 test -e "$T/ready" || fail "the image did not go on after its failed exec"
# Its first interval record after the exec record comes within a second.
wait_for 10 eval 'grep -q "\"type\":\"interval\"" "$T"/live.*.log' ||
	fail "no interval record after the failed exec"
"$PY" "$SM_TOP/scripts/sockmeter-report" -f json "$T"/live.*.log >"$T/rep2b.json" 2>"$T/rep2b.err" ||
	fail "sockmeter-report failed (2b)"
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
"$PY" - "$T/rep2b.json" >"$T/rep2b.check" 2>&1 <<'PYEOF' || fail "report while the image goes on: $(tail -n 1 "$T/rep2b.check")"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["processes"][0]
assert p["state"] == "no exit record", p
assert (p["fds_open"], p["fds_closed"]) == (5, 0), p
assert {c["state"] for c in r["by_bytes"]} == {"open"}, r["by_bytes"]
PYEOF
expect_eq "2b: the report's stderr" "$(cat "$T/rep2b.err")" ""

# 3. Text: the same marks in words.
SOCKMETER_FORMAT=text SOCKMETER_LOG=$T/text.%p.log sm /usr/bin/python3 "$T/img.py" /usr/bin/python3 ||
	fail "python3 failed (text)"
grep -h ' sockmeter exec ' "$T"/text.*.log | grep -q ' fds_open=5 fds_closed=0 fds_close_on_exec=3$' ||
	fail "text: the exec header: $(cat "$T"/text.*.log)"
expect_eq "text: rows marked" "$(cat "$T"/text.*.log | grep -c ' close_on_exec=yes$')" 3
