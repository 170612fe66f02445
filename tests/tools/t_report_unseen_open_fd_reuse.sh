# cat reads the same file three times, each time on fd 3, with files
# metered: three close records whose open the library did not see
# ("opened": null, as for files, pipes, inherited fds and sockets received
# with SCM_RIGHTS: dovecot's imap processes get every client so).  The
# report kept only the first (it took the others, same fd and same null,
# for late records of a finished connection): 100,000 of 300,000 bytes in
# its kinds and rankings.  Each must count.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/logs"
head -c 100000 /dev/urandom >"$T/f"
printf '[log]\nformat = json\n[track]\nfiles = true\n' >"$T/files.ini"
SOCKMETER_CONFIG=$T/files.ini SOCKMETER_LOG="$T/logs/%n.%p.log" \
	sm cat "$T/f" "$T/f" "$T/f" >/dev/null || fail "cat failed"
export T
pycheck "null-opened fd reuse" <<'PY'
import os
log, = files(os.environ["T"] + "/logs/cat.*.log")
fs = [f for f in close_fds(log) if f["kind"] == "file" and f["bytes_in"] == 100000]
assert len(fs) == 3 and len({f["fd"] for f in fs}) == 1 and \
    all(f["opened"] is None for f in fs), \
    "precondition: three reads of the file on one fd, opened null: %s" % fs
rep = report(log)
kinds = {k["kind"]: k for k in rep["kinds"]}
assert kinds["file"]["connections"] >= 3 and kinds["file"]["bytes_in"] >= 300000, \
    "kinds: %s" % kinds["file"]
rows = [r for r in rep["by_bytes"] if r["kind"] == "file" and r["bytes_in"] == 100000]
assert len(rows) == 3, "by_bytes: %d rows of the file" % len(rows)
PY
exit 0
