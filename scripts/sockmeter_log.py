"""sockmeter_log - reading sockmeter JSON Lines logs and formatting their
numbers: the one module that sockmeter-report and sockmeter-top share.

What is here, and why it is shared (two copies had drifted apart):
  - the record schema as the tools read it: check_record, counters,
    shortest_rate (one meaning), the head of a line read without parsing
    it (record_head, for filters that skip cheaply);
  - a log that is not JSON (text or Prometheus format): foreign_format;
  - rotated sets: PATH.N and PATH.N.gz read, oldest first, with PATH as
    one log (rotated_set, group_rotated, open_log);
  - a process's totals between its interval records (ProcessTotals): close
    records are lean and carry no totals since issue 13;
  - numbers for people: human_rate, human_bytes, utc.

Standard library only.  Installed beside libsockmeter.so
($(PREFIX)/lib/sockmeter/); the tools find it there or beside themselves.
"""
import gzip
import json
import math
import os
import re
import struct
import sys
import time

RECORD_TYPES = ("interval", "close", "exit", "exec")
COUNTER_KEYS = ("bytes_in", "bytes_out", "calls_in", "calls_out",
                "errors_in", "errors_out")


# ---------------------------------------------------------------- numbers

def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def human_rate(v):
    """Bytes per second for people: 999B/s, 12.3K/s (powers of 1024)."""
    if v is None:
        return "-"
    for unit in ("B", "K", "M", "G", "T"):
        if v < 1024 or unit == "T":
            return ("%dB/s" % round(v)) if unit == "B" else \
                "%.1f%s/s" % (v, unit)
        v /= 1024.0


def human_bytes(v):
    """An amount of bytes for people: 999, 12.3K, 4.5M (powers of 1024)."""
    if v is None:
        return "-"
    for unit in ("B", "K", "M", "G", "T"):
        if v < 1024 or unit == "T":
            return ("%d" % v) if unit == "B" else "%.1f%s" % (v, unit)
        v /= 1024.0


def utc(ts):
    """Unix seconds as 2026-11-30T01:37:40.144Z ("" for None)."""
    if ts is None:
        return ""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + \
        ".%03dZ" % int((ts % 1) * 1000)


# ---------------------------------------------------------------- records

def looks_like_text_log(line):
    """A text-format record starts "2026-11-30T01:37:40.144Z sockmeter "."""
    parts = line.split(" ", 2)
    return len(parts) >= 2 and parts[1] == "sockmeter" and \
        len(parts[0]) >= 20 and parts[0][4:5] == "-" and \
        parts[0][10:11] == "T"


def foreign_format(line):
    """What a log whose first lines look like line is, when it is not JSON
    Lines (None when it may be): the tools read JSON only."""
    if looks_like_text_log(line):
        return "a text-format log (format = text)"
    if line.startswith(("# HELP sockmeter", "# TYPE sockmeter")):
        return "a Prometheus textfile (format = prometheus)"
    return None


def check_record(r):
    """None when r is a usable record, else what is wrong with it.  Close
    records carry no totals (lean records); interval and exit records
    must."""
    if not isinstance(r, dict):
        return "not a JSON object"
    t = r.get("type")
    if t not in RECORD_TYPES:
        if t is None:
            return 'not a sockmeter record: no "type"'
        return 'unknown record type %s, skipped' % json.dumps(t)[:40]
    for k in ("ts", "start"):
        if not num(r.get(k)):
            return 'not a sockmeter record: "%s" is not a number' % k
    if not isinstance(r.get("pid"), int):
        return 'not a sockmeter record: "pid" is not an integer'
    tot = r.get("totals")
    if not isinstance(tot, dict) and (tot is not None or t != "close"):
        return 'not a sockmeter record: no "totals" object'
    fds = r.get("fds")
    if not isinstance(fds, list):
        return 'not a sockmeter record: "fds" is not a list of fd objects'
    for f in fds:
        if not isinstance(f, dict) or not isinstance(f.get("fd"), int):
            return 'not a sockmeter record: "fds" is not a list of fd ' \
                'objects'
    return None


def errsum(d):
    if isinstance(d, dict):
        return sum(v for v in d.values() if num(v))
    return 0


def counters(obj):
    """The counters of an fd entry or of a record's totals.  A field that
    the schema omits when zero (errors_*, sizes_*), or whose category was
    off, reads as 0."""
    g = obj.get
    return {
        "bytes_in": g("bytes_in", 0) or 0,
        "bytes_out": g("bytes_out", 0) or 0,
        "calls_in": g("calls_in", 0) or 0,
        "calls_out": g("calls_out", 0) or 0,
        "errors_in": errsum(g("errors_in")),
        "errors_out": errsum(g("errors_out")),
    }


ZERO_COUNTERS = counters({})


_SPAN_SECONDS = {}


def span_seconds(key):
    """A span's name ("1s", "0.5s", "60s") in seconds; inf if unreadable."""
    v = _SPAN_SECONDS.get(key)
    if v is None:
        try:
            v = float(str(key).rstrip("s"))
        except ValueError:
            v = math.inf
        if len(_SPAN_SECONDS) < 1000:
            _SPAN_SECONDS[key] = v
    return v


def shortest_rate(f):
    """The rate of an fd entry over its shortest span, as a tuple
    (span name, span seconds, bytes/s in, bytes/s out); None when the entry
    has no rates (windows off, or younger than one bucket)."""
    rates = f.get("rates")
    if not isinstance(rates, dict) or not rates:
        return None
    key = min(rates, key=span_seconds)
    v = rates[key]
    if not isinstance(v, dict):
        return None
    return (key, span_seconds(key), float(v.get("in", 0) or 0),
            float(v.get("out", 0) or 0))


# The start of every line the library writes; enough to filter on without
# parsing the line (a line that does not match is parsed in full).
_HEAD = re.compile(rb'\{"type":"(interval|close|exit)","ts":([0-9.]+),'
                   rb'"pid":(-?[0-9]+),"prog":"((?:[^"\\]|\\.)*)"')


def record_head(raw):
    """(type, ts, pid, prog) read from the start of a raw JSON line, or
    None when the line does not start the way the library writes it."""
    m = _HEAD.match(raw)
    if not m:
        return None
    prog = m.group(4)
    try:
        prog = json.loads(b'"' + prog + b'"') if b"\\" in prog \
            else prog.decode("utf-8")
    except ValueError:
        return None
    return (m.group(1).decode(), float(m.group(2)), int(m.group(3)), prog)


class ProcessTotals:
    """A process's lifetime totals as its records tell them.

    Interval and exit records carry the totals; a close record (lean) only
    its connection.  A connection closed after the latest totals adds what
    it moved since then (its counters at close minus its counters as last
    listed), so the totals stay right between two interval records, and
    exactly right when no record left fds out (fds_omitted = 0).  Counters
    are lists in COUNTER_KEYS order."""

    __slots__ = ("ts", "base", "extra", "fds_open", "fds_closed",
                 "dropped", "closed_after", "opened_after", "exec_closes")

    def __init__(self):
        self.ts = -math.inf
        self.base = [0] * 6
        self.extra = [0] * 6
        self.fds_open = self.fds_closed = self.dropped = 0
        self.closed_after = self.opened_after = self.exec_closes = 0

    def take(self, ts, tot):
        """An interval or exit record's totals, at ts; an older one than
        what we have is ignored."""
        if ts < self.ts:
            return
        self.ts = ts
        c = counters(tot)
        self.base = [c[k] for k in COUNTER_KEYS]
        self.extra = [0] * 6
        self.fds_open = tot.get("fds_open", 0) or 0
        self.fds_closed = tot.get("fds_closed", 0) or 0
        self.dropped = tot.get("close_records_dropped", 0) or 0
        # An exec record's open fds that the exec closes (close-on-exec):
        # closed, once it has replaced the image; a later record (the
        # exec failed) has none.
        self.exec_closes = tot.get("fds_close_on_exec", 0) or 0
        self.closed_after = self.opened_after = 0

    def closed(self, ts, before, after, opened_after):
        """A close record at ts: the connection's counters (dicts) as last
        listed (before) and at close (after); opened_after when it was
        opened after the latest totals."""
        if ts <= self.ts:
            return
        self.closed_list(ts, [max(0, after[k] - before[k])
                              for k in COUNTER_KEYS], opened_after)

    def closed_list(self, ts, moved, opened_after):
        """The same with what it moved since the latest totals as a list."""
        if ts <= self.ts:
            return
        # A close after an exec record: the exec failed, and closed
        # nothing.
        self.exec_closes = 0
        e = self.extra
        for i in range(6):
            e[i] += moved[i]
        self.closed_after += 1
        if opened_after:
            self.opened_after += 1

    def bytes(self):
        """(bytes_in, bytes_out)."""
        return (self.base[0] + self.extra[0], self.base[1] + self.extra[1])

    def value(self):
        """The counters (dict of COUNTER_KEYS)."""
        return {k: self.base[i] + self.extra[i]
                for i, k in enumerate(COUNTER_KEYS)}

    def fds(self):
        """(fds_open, fds_closed)."""
        return (max(0, self.fds_open + self.opened_after - self.closed_after -
                    self.exec_closes),
                self.fds_closed + self.closed_after + self.exec_closes)


# A close record as the library writes it, read without a JSON parser
# (half the cost): the fields the tools use in their fixed order, each
# category's fields optional, the histograms and rates skipped.  A field
# this does not know (one added later) is skipped where it may appear, as
# long as it is not one of the fields read here.  A line it does not match
# (a name with an escape, say) is parsed as JSON instead, with the same
# result.
_VALUE = (r'(?:-?[0-9.eE+]++|null|true|false|"[^"\\]*+"'
          r'|\{[^{}]*+(?:\{[^{}]*+\}[^{}]*+)*+\}|\[[^\[\]]*+\])')
_OTHER = (r'(?:,"(?!(?:bytes|calls|errors)_(?:in|out)"|opened"|closed"'
          r'|duration")[a-z0-9_]++":' + _VALUE + r')*+')
CLOSE_LINE = re.compile(
    r'\{"type":"close","ts":([0-9.]++),"pid":(-?[0-9]++),"prog":"([^"\\]*+)",'
    r'"start":([0-9.]++),"fds":\[\{"fd":(-?[0-9]++),"kind":"([a-z_]++)"'
    r'(?:,"local":"([^"\\]*+)","peer":"([^"\\]*+)")?' + _OTHER +
    r'(?:,"bytes_in":([0-9]++))?(?:,"calls_in":([0-9]++))?'
    r'(?:,"bytes_out":([0-9]++))?(?:,"calls_out":([0-9]++))?'
    r'(?:,"errors_in":\{"again":([0-9]++),"intr":([0-9]++),'
    r'"other":([0-9]++)\})?'
    r'(?:,"errors_out":\{"again":([0-9]++),"intr":([0-9]++),'
    r'"other":([0-9]++)\})?' + _OTHER +
    r',"opened":([0-9.]++|null)' + _OTHER + r',"closed":([0-9.]++|null)'
    r'(?:,"duration":([0-9.]++))?' + _OTHER + r'\}\]\}\n?$').match
# The index of each field in the groups() of a CLOSE_LINE match.
(CL_TS, CL_PID, CL_PROG, CL_START, CL_FD, CL_KIND, CL_LOCAL, CL_PEER,
 CL_BYTES_IN, CL_CALLS_IN, CL_BYTES_OUT, CL_CALLS_OUT, CL_EIN, CL_EIN2,
 CL_EIN3, CL_EOUT, CL_EOUT2, CL_EOUT3, CL_OPENED, CL_CLOSED,
 CL_DURATION) = range(21)


# ---------------------------------------------------------------- display

# Control characters (C0, DEL, C1) and the lone surrogates that stand for
# bytes that were not UTF-8 (a file name read back): one '?' each.
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def shown(s):
    """s as a table or a terminal may show it: each control character (a
    newline or an escape sequence in a program's or a unix socket's name)
    and each byte that was not UTF-8 as one '?', so that a name makes no
    extra row and sends nothing to the terminal, as the library's text
    format does."""
    return _UNSHOWN.sub("?", s) if isinstance(s, str) else s


# ---------------------------------------------------------------- files

_MEMBER = re.compile(r"^(.*)\.([0-9]+)(\.gz)?$")
# logrotate's dateext: base-20261205, base-1764921600 (dateformat -%s),
# base-2026-12-05, maybe .gz.
_DATE = re.compile(r"^([0-9][0-9_-]*[0-9]|[0-9])(\.gz)?$")


def rotated_member(path):
    """(base, N) when path is a rotated file of base (base.N, base.N.gz),
    else None."""
    m = _MEMBER.match(path)
    if not m or not m.group(1):
        return None
    return m.group(1), int(m.group(2))


def dated_date(name, base):
    """DATE when name is a file that logrotate's dateext rotated from base
    (base-DATE, base-DATE.gz: 6 digits or more, maybe with - or _), else
    None.  A date has 6 digits or more: web-2 is another log."""
    if not base or not name.startswith(base + "-"):
        return None
    m = _DATE.match(name[len(base) + 1:])
    if not m or sum(c.isdigit() for c in m.group(1)) < 6:
        return None
    return m.group(1)


def rotated_set(path):
    """The files of the log at path, oldest first: path.K(.gz), ...,
    path.1(.gz), then path itself (when it exists).  A rotated file is
    one whose name is path, a dot, a number and maybe .gz; or (logrotate's
    dateext) path, a dash, a date of digits and maybe .gz, read oldest
    date first, before any numbered one."""
    d = os.path.dirname(path) or "."
    base = os.path.basename(path)
    members = []
    try:
        names = os.listdir(d)
    except OSError:
        names = []
    dated = []
    for name in names:
        date = dated_date(name, base)
        if date is not None:
            dated.append((len(date), date, not name.endswith(".gz"), name))
            continue
        if not name.startswith(base + "."):
            continue
        m = rotated_member(name)
        if m and m[0] == base:
            members.append((m[1], name.endswith(".gz"), name))
    # the oldest is the highest number; of path.N and path.N.gz (a
    # rotation caught while compressing) the .gz is the older copy
    members.sort(key=lambda m: (-m[0], not m[1]))
    # dated: the oldest date first (a date format's width is fixed), then
    # the numbered ones, which a set holds only when its naming changed
    dated.sort()
    out = [os.path.join(d, name) if os.path.dirname(path) else name
           for name in [m[3] for m in dated] + [m[2] for m in members]]
    if os.path.exists(path) or not out:
        out.append(path)
    return out


def group_rotated(paths):
    """Fold the given names into logs: [(log name, [files oldest first])].
    A log name brings its whole rotated set; a rotated file given beside
    its log (a shell glob, LOG*) is read as part of that log, once; one
    given alone is read alone."""
    logs, order = {}, []
    given = set(paths)
    for p in paths:
        base = p
        m = rotated_member(p) if p != "-" else None
        if m and m[0] in given:
            base = m[0]
        elif p != "-" and "-" in p:
            # base-DATE beside base: the longest base given
            for k in range(len(p) - 1, 0, -1):
                if p[k] == "-" and p[:k] in given and \
                        dated_date(p, p[:k]) is not None:
                    base = p[:k]
                    break
        if base not in logs:
            logs[base] = None
            order.append(base)
    out = []
    for base in order:
        if base == "-" or os.path.isdir(base):
            out.append((base, [base]))
        else:
            out.append((base, rotated_set(base)))
    return out


def open_log(path):
    """A binary file object for path ("-": stdin; *.gz: decompressed)."""
    if path == "-":
        return sys.stdin.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb", buffering=1 << 20)


# ---------------------------------------------------------------- state files

# The state file of a metered process (docs/state.md): the header's own
# fields are fixed by the layout version; everything else is found through
# the offsets the header gives.
STATE_MAGIC = b"SOCKMST\n"
STATE_HEAD = struct.Struct("=8sIIIIqQQQII40s64s640s")
STATE_LAYOUT_AT = 808
STATE_LAYOUT_U64 = ("file_size config_off config_size ticker_off ticker_size "
                    "queue_off queue_size ring_off ring_count entry_size "
                    "ring_chunk slots_off slot_count slot_size "
                    "slot_chunk").split()
STATE_LAYOUT_U32 = ("slot_kind slot_seq slot_gen slot_opened slot_hot "
                    "slot_local slot_peer hot_bytes hot_calls hot_latency "
                    "hot_errors hot_sizes entry_state entry_closed_ns "
                    "entry_snapshot snap_fd snap_kind snap_opened "
                    "snap_counters counters_size snapshot_size ctr_bytes "
                    "ctr_calls ctr_errors ctr_sizes ctr_latency tick_active "
                    "tick_buf closed_size closed_upto closed_n closed_c "
                    "q_head q_tail q_pushed q_dropped q_dropped_c "
                    "q_dropped_n dirs errs size_buckets kinds "
                    "closed_unseen q_spills_used spills spill_size "
                    "spill_next_kind spill_next_n spill_next spill_sum_n "
                    "spill_sum").split()
KIND_NAMES = (None, None, "tcp", "udp", "unix", "unix_dgram", "socket",
              "pipe", "file", "tty")
ERR_NAMES = ("again", "intr", "other")


class StateError(Exception):
    pass


def _ts(ns):
    """Nanoseconds as records write them: seconds, 6 decimals, truncated
    (so a state record and its log's records name the same start)."""
    return float("%d.%06d" % (ns // 10**9, ns % 10**9 // 1000)) if ns else None


def _cstr(b):
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


_PID_NS_INIT = 0xEFFFFFFC  # the initial pid namespace's inode
_USER_NS_INIT = 0xEFFFFFFD  # the initial user namespace's inode


def outer_uid(uid=None):
    """The uid (default: the effective one) as the parent user namespace
    knows it: what the library's %u names (core/procns.h).  In a user
    namespace (unshare -r, a rootless container) a fake root's default
    directories are its real user's, /tmp/sockmeter-1000, not
    /tmp/sockmeter-0; uid itself in the initial namespace, without a
    readable /proc, or when the map does not hold it."""
    if uid is None:
        uid = os.geteuid()
    try:
        if os.stat("/proc/self/ns/user").st_ino == _USER_NS_INIT:
            return uid
        with open("/proc/self/uid_map") as fh:
            for line in fh:
                f = line.split()
                if len(f) == 3 and int(f[0]) <= uid < int(f[0]) + int(f[2]):
                    return int(f[1]) + uid - int(f[0])
    except (OSError, ValueError):
        pass
    return uid


def _pid_view():
    """The tag of this process's view of pids, as core/state.h has it: 0
    for /proc numbering processes in the initial pid namespace (or no
    /proc), the namespace's inode for another, None when it cannot tell."""
    try:
        ino = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0
    try:
        if int(os.readlink("/proc/self")) != os.getpid():
            ino = os.stat("/proc/1/ns/pid").st_ino
    except (OSError, ValueError):
        return None
    return 0 if ino == _PID_NS_INIT else ino


def _state_alive(path, proc_start):
    """Whether the process of the state file at path runs: by the pid and
    start time in its name (/proc's numbering), when its pid namespace tag
    ("-nsINODE") is this view's; one of another namespace cannot be told
    from here and counts as running."""
    name = os.path.basename(path)
    m = re.match(r"(\d+)-\d+(?:-ns(\d+))?", name)
    if not m:
        return False
    if int(m.group(2) or 0) != _pid_view():
        return True
    seen = _proc_start(int(m.group(1)))
    if seen is None or not proc_start:
        return False
    # The files' start times are the initial time namespace's; /proc
    # shows this reader's, shifted by its boottime offset (core/state.c's
    # stat_start: a negative offset larger than the start wraps); up to
    # two ticks apart when read in two namespaces (state_starts_match).
    off = _boot_offset_ticks()
    if off < 0 and seen >= _TICK_WRAP // 2:
        seen -= _TICK_WRAP
    return abs(seen - off - proc_start) <= 2


# 2^64 ns in /proc's 10 ms ticks, rounded up (core/state.c).
_TICK_WRAP = 1844674407371


def _boot_offset_ticks():
    """The boottime offset of this process's time namespace, in clock
    ticks (0 in the initial one): what /proc adds to the start times it
    shows this process."""
    try:
        if os.stat("/proc/self/ns/time").st_ino == 0xEFFFFFFA:
            return 0
        with open("/proc/self/timens_offsets") as fh:
            for line in fh:
                f = line.split()
                if len(f) == 3 and f[0] == "boottime":
                    ns = int(f[1]) * 1000000000 + int(f[2])
                    return ns // 10000000
    except (OSError, ValueError):
        pass
    return 0


def _proc_start(pid):
    """Field 22 of /proc/PID/stat, or None when gone or a zombie (the
    state is the main thread's: a zombie main thread with other threads
    running is a live process)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            s = fh.read()
    except OSError:
        return None
    rest = s[s.rfind(b")") + 2:].split()
    if len(rest) < 20:
        return None
    if rest[0] in (b"Z", b"X") and int(rest[17]) < 2:
        return None
    return int(rest[19])


def _addr(b):
    """A slot's address (family u16, then sockaddr_in/in6) as records
    write it."""
    import socket as so
    fam = struct.unpack_from("=H", b, 0)[0]
    if fam == so.AF_INET:
        port = struct.unpack_from("!H", b, 2)[0]
        return "%s:%d" % (so.inet_ntop(so.AF_INET, b[4:8]), port)
    if fam == so.AF_INET6:
        port = struct.unpack_from("!H", b, 2)[0]
        return "[%s]:%d" % (so.inet_ntop(so.AF_INET6, b[8:24]), port)
    return ""


def read_state(path):
    """The numbers of a metered process as its state file holds them, as a
    record: "type" "exit" and "end" "unrecovered" when its process is gone,
    "interval" (its counters now) while it runs; None for a file whose
    last record was written (status final).  Raises StateError when the
    file is not a state file this reader knows."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise StateError("cannot read: %s" % (e.strerror or e))
    try:
        return _read_state(fd, path)
    finally:
        os.close(fd)


def _data_ranges(fd, start, end):
    """The allocated ranges of [start, end) of a sparse file (its holes
    read as zeros and are skipped: reading them whole would cost the
    memory of a table sized for a million fds)."""
    pos = start
    while pos < end:
        try:
            a = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError:
            return
        if a >= end:
            return
        try:
            b = min(os.lseek(fd, a, os.SEEK_HOLE), end)
        except OSError:
            b = end
        yield a, b
        pos = b


def _read_state(fd, path):
    data = os.pread(fd, 1 << 16, 0)
    nu32 = len(STATE_LAYOUT_U32)
    if len(data) < STATE_LAYOUT_AT + 8 * 15 + 4 * nu32:
        raise StateError("too short for a state file")
    (magic, version, hsize, order, status, pid, proc_start, start_real, _,
     _, _, boot, prog, logp) = STATE_HEAD.unpack_from(data, 0)
    if magic != STATE_MAGIC or version != 5 or order != 0x01020304:
        raise StateError("not a version 5 state file of this byte order")
    u64 = struct.unpack_from("=15Q", data, STATE_LAYOUT_AT)
    u32 = struct.unpack_from("=%dI" % nu32, data, STATE_LAYOUT_AT + 8 * 15)
    L = dict(zip(STATE_LAYOUT_U64, u64))
    L.update(zip(STATE_LAYOUT_U32, u32))
    if status == 2:
        return None
    if os.fstat(fd).st_size < L["file_size"] or \
            (L["dirs"], L["errs"], L["size_buckets"]) != (2, 3, 24):
        raise StateError("a layout this reader does not know")
    # The small regions before the ring (header, config, ticker, queue).
    data = os.pread(fd, L["ring_off"], 0)
    nsz = L["size_buckets"]

    def ctr(off, buf=None):
        """A struct fd_counters at off of buf (default: data): [in, out] of
        bytes, calls, errors (3 each), sizes (24 each)."""
        buf = data if buf is None else buf
        q = lambda o, n: struct.unpack_from("=%dQ" % n, buf, off + o)
        return (q(L["ctr_bytes"], 2), q(L["ctr_calls"], 2),
                q(L["ctr_errors"], 6), q(L["ctr_sizes"], 2 * nsz))

    tot = [[0, 0], [0, 0], [0] * 6, [0] * (2 * nsz)]

    def add(c):
        for a, b in zip(tot, c):
            for i, v in enumerate(b):
                a[i] += v

    def entry(fd, kind, opened, c):
        b, ca, e, z = c
        f = dict(fd=fd, kind=KIND_NAMES[kind] if kind < 10 else "unknown",
                 opened=_ts(opened))
        for d, dn in enumerate(("in", "out")):
            f["bytes_" + dn] = b[d]
            f["errors_" + dn] = dict(zip(ERR_NAMES, e[3 * d:3 * d + 3]))
            f["sizes_" + dn] = list(z[nsz * d:nsz * d + nsz])
            # Calls are derived from sizes and errors when both are on.
            f["calls_" + dn] = max(ca[d], sum(e[3 * d:3 * d + 3]) +
                                   sum(z[nsz * d:nsz * d + nsz]))
        return f

    # What the ticker drained, and the close records it lost.
    tk = L["ticker_off"]
    active = struct.unpack_from("=I", data, tk + L["tick_active"])[0] & 1
    whole = tk + L["tick_buf"] + active * L["closed_size"]
    upto = struct.unpack_from("=Q", data, whole + L["closed_upto"])[0]
    kinds = L["kinds"]
    closed = 0  # the closes in these totals, as the library counts them
    for k in range(kinds):
        add(ctr(whole + L["closed_c"] + k * L["counters_size"]))
        add(ctr(L["queue_off"] + L["q_dropped_c"] + k * L["counters_size"]))
        closed += struct.unpack_from("=Q", data, whole + L["closed_n"] +
                                     8 * k)[0]
        closed += struct.unpack_from("=Q", data, L["queue_off"] +
                                     L["q_dropped_n"] + 8 * k)[0]
    head = struct.unpack_from("=Q", data, L["queue_off"] + L["q_head"])[0]
    words = L["counters_size"] // 8
    claims, spilled = [], []

    def claim(ent, into):
        sn = L["entry_snapshot"]
        into.append(dict(
            bound=struct.unpack_from("=I", ent, L["entry_state"] + 4)[0],
            fd=struct.unpack_from("=i", ent, sn + L["snap_fd"])[0],
            kind=struct.unpack_from("=I", ent, sn + L["snap_kind"])[0],
            gen=struct.unpack_from("=I", ent, sn + L["snap_kind"] + 4)[0],
            w=list(struct.unpack_from("=%dQ" % words, ent,
                                      sn + L["snap_counters"]))))

    # The spills (closes that found the ring full: core/closeq.h), those
    # ever used: their sums are dropped records' numbers; one folding
    # (state 5) has its next to be copied into sum[next_kind], as
    # recovery redoes it; one claimed (3) is joined with its slot below,
    # after the ring's claims (closeq_rescue's order).
    used = struct.unpack_from("=I", data, L["queue_off"] +
                              L["q_spills_used"])[0]
    for j in range(L["spills"]):
        if not used & (1 << j):
            continue
        sp = os.pread(fd, L["spill_size"], L["ring_off"] + L["ring_count"] *
                      L["entry_size"] + j * L["spill_size"])
        if len(sp) < L["spill_size"]:
            continue
        st = struct.unpack_from("=I", sp, L["entry_state"])[0]
        nk = struct.unpack_from("=I", sp, L["spill_next_kind"])[0]
        for k in range(kinds):
            if st == 5 and k == nk:
                add(ctr(L["spill_next"], sp))
                closed += struct.unpack_from("=Q", sp, L["spill_next_n"])[0]
                continue
            add(ctr(L["spill_sum"] + k * L["counters_size"], sp))
            closed += struct.unpack_from("=Q", sp, L["spill_sum_n"] +
                                         8 * k)[0]
        if st == 3:
            claim(sp, spilled)
    # When the process was last seen alive: its ticker's latest tick
    # (struct state_ticker's alive_real_ns, the word before buf), raised
    # below to its own closes and opens, as recovery does (core/recover.c,
    # last_seen).
    seen = max(start_real, struct.unpack_from(
        "=Q", data, tk + L["tick_buf"] - 8)[0] if L["tick_buf"] >= 24 else 0)
    # Closes not drained yet (state 2), and those a kill stopped half-way
    # (3: claimed; `bound`, the u32 after `state`, and the snapshot's
    # `gen`, the u32 after `kind`, as docs/state.md says), joined below
    # with their slots as recovery joins them (core/closeq.c's
    # closeq_rescue, core/fdtab.c's fdtab_rescue).
    size_of_slot = L["slot_size"]
    for pos in range(upto, min(head, upto + L["ring_count"])):
        ent = os.pread(fd, L["entry_size"], L["ring_off"] +
                       (pos % L["ring_count"]) * L["entry_size"])
        if len(ent) < L["entry_size"]:
            continue
        st = struct.unpack_from("=I", ent, L["entry_state"])[0]
        if st == 3:
            claim(ent, claims)
        if st == 3 or st == 2:
            seen = max(seen, struct.unpack_from("=Q", ent,
                                                L["entry_closed_ns"])[0])
        if st != 2:
            continue
        add(ctr(L["entry_snapshot"] + L["snap_counters"], ent))
        closed += 1
    claims += spilled

    def words_ctr(w):
        """Counter words (struct fd_counters' order) as ctr gives them."""
        g = lambda o, n: tuple(w[L[o] // 8:L[o] // 8 + n])
        return (g("ctr_bytes", 2), g("ctr_calls", 2), g("ctr_errors", 6),
                g("ctr_sizes", 2 * nsz))

    # The slots the claims name (each read once, as recovery's copy of
    # the table): [kind, gen, counter words].  A slot's kind with bit
    # 0x80 set is busy: held by a lifecycle call, its low bits the kind
    # its connection has meanwhile (core/fdtab.h, fd_kind_held).
    named = {}
    for c in claims:
        n = c["fd"]
        if 0 <= n < L["slot_count"] and n not in named:
            at = L["slots_off"] + n * size_of_slot
            b = os.pread(fd, size_of_slot, at)
            if len(b) == size_of_slot:
                named[n] = [b[L["slot_kind"]],
                            struct.unpack_from("=I", b, L["slot_gen"])[0],
                            list(struct.unpack_from("=%dQ" % words, b,
                                                    L["slot_hot"]))]
    tracked = lambda k: 2 <= k < len(KIND_NAMES)
    for bound_pass in (True, False):
        for c in claims:
            if (c["bound"] != 0) != bound_pass:
                continue
            sl = named.get(c["fd"])
            kind = c["kind"]
            busy = sl is not None and sl[0] >= 0 and sl[0] & 0x80
            if not bound_pass and busy and tracked(sl[0] & 0x7f):
                kind = sl[0] & 0x7f
            joins = tracked(kind) and sl is not None and \
                sl[1] == c["gen"] and (bound_pass or busy)
            if not joins and not bound_pass:
                continue
            w = c["w"]
            if joins:
                moved = c["bound"] - 1 if c["bound"] else 0
                w = [a + b if i < moved else max(a, b)
                     for i, (a, b) in enumerate(zip(w, sl[2]))]
                # The slot emptied (taken: -1), one generation on.
                sl[0], sl[1], sl[2] = -1, (sl[1] + 1) & 0xffffffff, \
                    [0] * words
            add(words_ctr(w))
            closed += 1
    # The fds open now: every tracked slot.
    fds = []
    hot = lambda s, o, n, t: struct.unpack_from("=%d%s" % (n, t), data,
                                                s + L["slot_hot"] + o)
    size = L["slot_size"]
    end = L["slots_off"] + L["slot_count"] * size
    for a, b in _data_ranges(fd, L["slots_off"], end):
        data = os.pread(fd, b - a, a)
        first = (a - L["slots_off"] + size - 1) // size
        for n in range(first, (b - L["slots_off"]) // size):
            at = n * size + L["slots_off"] - a
            if n in named and named[n][0] == -1:
                continue  # joined with a close above
            kind = data[at + L["slot_kind"]]
            hot0 = at + L["slot_hot"]
            # A slot left busy by a lifecycle call the kill stopped
            # holds the connection of the kind in its low bits, if any
            # (recovery's fdtab_unbusy).
            busy = kind & 0x80
            if busy:
                kind &= 0x7f
                if not tracked(kind):
                    kind = 0
            if kind < 2 and any(data[hot0:hot0 + 8 * words]):
                # Counts in a slot that holds no connection: strays of
                # the closed totals (a data call that ended after its
                # fd's close took the counts), as recovery's sweep makes
                # them.
                add(words_ctr(list(struct.unpack_from(
                    "=%dQ" % words, data, hot0))))
                continue
            f = _slot(data, at, n, L, hot, entry, kind, busy)
            if f:
                add(f.pop("_c"))
                seen = max(seen, f.pop("_opened_ns"))
                fds.append(f)
    totals = entry(-1, 2, 0, tot)
    for k in ("fd", "kind", "opened"):
        del totals[k]
    totals["fds_open"] = len(fds)
    totals["fds_closed"] = closed
    alive = _state_alive(path, proc_start) and status != 3
    r = dict(type="interval" if alive else "exit", ts=time.time(), pid=pid,
             prog=_cstr(prog), start=_ts(start_real), totals=totals,
             fds=fds, fds_omitted=0, log=_cstr(logp), state_file=path)
    if not alive:
        # A dead process's record does not age: its life ends when it
        # was last seen, as a recovered record's does (before, every
        # reading made it longer and its connections' rates lower).
        r["end"] = "unrecovered"
        r["alive_until"] = _ts(seen)
    return r


def _slot(data, s, fd, L, hot, entry, kind, busy):
    """Slot fd at offset s of data, of kind kind (busy: left held by a
    lifecycle call), as an fds entry (its counters under "_c"), or None
    when it holds no tracked connection."""
    if kind < 2 or kind >= len(KIND_NAMES):
        return None
    nsz = L["size_buckets"]
    h = lambda o, n, t: struct.unpack_from("=%d%s" % (n, t), data,
                                           s + L["slot_hot"] + o)
    c = (h(L["hot_bytes"], 2, "Q"), h(L["hot_calls"], 2, "Q"),
         h(L["hot_errors"], 6, "Q"), h(L["hot_sizes"], 2 * nsz, "Q"))
    opened = struct.unpack_from("=Q", data, s + L["slot_opened"])[0]
    f = entry(fd, kind, opened, c)
    f["_opened_ns"] = opened
    f["local"] = _addr(data[s + L["slot_local"]:s + L["slot_local"] + 28])
    f["peer"] = _addr(data[s + L["slot_peer"]:s + L["slot_peer"] + 28])
    # Busy at an odd sequence: an address may be half-written (recovery
    # leaves both unknown).
    if busy and struct.unpack_from("=I", data, s + L["slot_seq"])[0] & 1:
        f["local"] = f["peer"] = _addr(bytes(28))
    f["_c"] = c
    return f


def state_files(d):
    """The state files in directory d (claimed ones left out)."""
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return []
    return [os.path.join(d, n) for n in names
            if n.endswith(".state") and not n.startswith(".")]
