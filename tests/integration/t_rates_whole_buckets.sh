# Rates come from whole buckets: a connection opened half-way through a
# bucket has no rates at the interval record that ends that bucket (its
# bytes there would read as a whole bucket's: 1000 B in 0.5 s shown as
# 1000 B/s), and has them from the next one, which it lived through
# (1000 bytes more in it: 1000 B/s); a span that reaches back to the first
# bucket divides by the time the connection lived.
. "$(dirname "$0")/lib.sh"
SOCKMETER_FORMAT=json SOCKMETER_INTERVAL=1 SOCKMETER_LOG=$T/r.log \
	sm "$PY" -c '
import socket, time
time.sleep(0.5)
a, b = socket.socketpair()
a.send(b"x" * 1000)
b.recv(1000)
time.sleep(1.0)
a.send(b"y" * 1000)
b.recv(1000)
time.sleep(1.2)
a.close(); b.close()' || fail "python failed"
"$PY" - "$T/r.log" <<'PYEOF' || fail "records: $(cat "$T/r.log")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
iv = [r for r in recs if r["type"] == "interval"]
assert len(iv) >= 2, recs
first = [f for f in iv[0]["fds"] if f.get("kind") == "unix"]
assert len(first) == 2 and all("rates" not in f for f in first), iv[0]
second = [f for f in iv[1]["fds"] if f.get("kind") == "unix"]
assert len(second) == 2 and all("rates" in f for f in second), iv[1]
# The second bucket, lived whole, holds the second 1000 bytes.
assert sorted(f["rates"]["1s"]["in"] + f["rates"]["1s"]["out"]
              for f in second) == [1000, 1000], second
# The 10 s span reaches back to the first bucket: 2000 bytes over the
# time lived, not over two whole buckets.
for f in second:
    lived = iv[1]["ts"] - f["opened"]
    r10 = f["rates"]["10s"]["in"] + f["rates"]["10s"]["out"]
    assert abs(r10 - 2000 / lived) < 0.02 * 2000 / lived, (r10, lived, f)
PYEOF
exit 0
