# docs/log.md's JSON examples have the shape of real records, and every
# field a real record carries is named in docs/log.md.  The truth: the
# records of the paced fixture (pace.py sending 600,000 bytes to socat,
# both metered, JSON, interval 0.2 s) and of the download fixture
# (python3's http.server and curl).  A field added to the records without
# its documentation, or an example left behind by a change of the format
# (the interval and close examples lacked the tcp block and
# bytes_*_unseen for a while), fails here.
. "$(dirname "$0")/lib.sh"
fixture_paced
fixture_download
pycheck "docs/log.md against real records" <<'PY'
doc = open(os.path.join(TOP, "docs", "log.md")).read()

def example(lead):
    """The JSON block after LEAD, its '...' lines (fds left out) cut."""
    i = doc.index(lead)
    i = doc.index("```json\n", i) + len("```json\n")
    block = doc[i:doc.index("```", i)]
    block = re.sub(r",\s*\.\.\.\s*\]", "]", block)
    return json.loads(block)

# Fields that a record or an fd entry leaves out when they are zero, off or
# not known (the field table says when each appears).
OPTIONAL = {"errors_in", "errors_out", "sizes_in", "sizes_out",
            "latency_ns_in", "latency_ns_out", "peer_name", "lookup_ms",
            "shared", "close_seen", "close_on_exec", "rates", "tcp",
            "bytes_in_unseen", "bytes_out_unseen", "duration", "avg_rate",
            "other_threads", "close_records_dropped", "end", "incomplete",
            "alive_until", "fds_close_on_exec"}

recs = [r for _, r in records(*files("paced/logs/*.log"), *files("dl/logs/*.log"))]
assert any(r["type"] == "interval" for r in recs), "no interval record"

def tcp_entries(kind):
    return [(r, f) for r in recs if r["type"] == kind
            for f in r["fds"] if f["kind"] == "tcp" and "tcp" in f]

# Every key of every real record, at any depth, is named in docs/log.md
# (the integration tests' reader collects them; a rates span's name, "1s"
# or "10s", is a value of the config, not a field).
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
from logq import all_keys
real = {k for k in all_keys(recs, set()) if not re.fullmatch(r"\d+s", k)}
undocumented = sorted(k for k in real if "`%s`" % k not in doc)
assert not undocumented, "fields of real records not in docs/log.md: %s" % undocumented

# In a tcp block, what is absent when there was none (log.md): a loaded
# machine gives the close fixture's connection a limit (the CI's finding).
TCP_OPTIONAL = {"limited_by"}

def same_shape(what, d, r, exact=False, optional=frozenset()):
    dk, rk = set(d) - optional, set(r) - optional
    if not exact:
        dk, rk = dk - OPTIONAL, rk - OPTIONAL
    assert dk == rk, "%s: the example has %s, a real record %s" % (
        what, sorted(dk - rk), sorted(rk - dk))

iv = example("This is a real interval record")
ivs = tcp_entries("interval")
assert ivs, "no interval record lists a TCP connection with its tcp block"
rec, ent = ivs[-1]
same_shape("interval record", iv, rec)
same_shape("interval totals", iv["totals"], rec["totals"], exact=True)
same_shape("interval fd entry", iv["fds"][0], ent)
assert "tcp" in iv["fds"][0], "the interval example's TCP fd has no tcp block"
same_shape("interval tcp block", iv["fds"][0]["tcp"], ent["tcp"], exact=True,
           optional=TCP_OPTIONAL)

cl = example("This is a real one (JSON, default settings")
cls = tcp_entries("close")
assert cls, "no close record of a TCP connection with its tcp block"
rec, ent = cls[-1]
same_shape("close record", cl, rec, exact=True)
same_shape("close fd entry", cl["fds"][0], ent)
for k in ("tcp", "bytes_in_unseen", "bytes_out_unseen", "duration", "avg_rate"):
    assert (k in cl["fds"][0]) == (k in ent), "close fd entry: %s in the example %s, in a real one %s" % (
        k, k in cl["fds"][0], k in ent)
same_shape("close tcp block", cl["fds"][0]["tcp"], ent["tcp"], exact=True,
           optional=TCP_OPTIONAL)
PY
