"""prof_check.py: checks of the profiler's files shared by the profiler tests (standard library only).

check_trace(path) validates a Chrome trace as §6.5 of spec/lattice-and-runtime.md describes it and returns it
parsed; check_html_totals(html, trace) compares the report's summary table with the trace; both raise
AssertionError with a message naming the event at fault.
"""

import collections
import decimal
import html.parser
import json

X_ARGS = ("backend", "work", "h2d_bytes", "d2h_bytes", "mem_used", "route")


def _no_constants(name):
    raise AssertionError("trace holds the non-JSON constant %s" % name)


def us_to_ns(v):
    """A trace time (µs with three decimals, printed exactly) as integer ns."""
    d = decimal.Decimal(repr(v)) if isinstance(v, float) else decimal.Decimal(v)
    ns = d * 1000
    assert ns == ns.to_integral_value(), "time %r has more than three decimals" % v
    return int(ns)


def check_trace(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # Strict: NaN / Infinity are not JSON; times must keep their exact decimals.
    doc = json.loads(text, parse_constant=_no_constants, parse_float=decimal.Decimal)
    assert doc.get("displayTimeUnit") == "ns", "displayTimeUnit"
    other = doc["otherData"]
    for k in ("version", "device", "driver", "cpu", "dropped"):
        assert k in other, "otherData lacks %s" % k
    assert isinstance(other["dropped"], int) and other["dropped"] >= 0
    events = doc["traceEvents"]
    assert isinstance(events, list)
    named_tids = set()
    process_named = False
    spans = []
    for i, e in enumerate(events):
        ph = e.get("ph")
        assert ph in ("M", "X", "C", "i", "s", "f"), "event %d: phase %r" % (i, ph)
        assert isinstance(e.get("pid"), int), "event %d: pid" % i
        if ph == "M":
            if e["name"] == "process_name":
                process_named = True
            elif e["name"] == "thread_name":
                named_tids.add(e["tid"])
            continue
        assert isinstance(e.get("ts"), decimal.Decimal) or isinstance(e.get("ts"), int), "event %d: ts %r" % (i, e.get("ts"))
        if ph == "X":
            for k in ("name", "cat", "ts", "dur", "pid", "tid", "args"):
                assert k in e, "X event %d lacks %s" % (i, k)
            assert isinstance(e["dur"], (decimal.Decimal, int)) and e["dur"] >= 0, "X event %d: dur" % i
            assert isinstance(e["tid"], int), "X event %d: tid" % i
            for k in X_ARGS:
                assert k in e["args"], "X event %d: args lack %s" % (i, k)
            spans.append(e)
        elif ph == "i":
            assert e.get("s") == "t", "instant %d: scope %r" % (i, e.get("s"))
            assert isinstance(e.get("tid"), int)
        elif ph == "C":
            assert all(isinstance(v, int) for v in e["args"].values()), "counter %d: values" % i
    assert process_named, "no process_name event"
    for e in spans:
        assert e["tid"] in named_tids, "tid %d has no thread_name event" % e["tid"]
        if e["tid"] >= 1000000:
            assert e["cat"] in ("gpu", "h2d", "d2h"), "host category on a stream lane"
    check_nesting(spans)
    return doc


def check_nesting(spans):
    """Children lie within their parents; spans on one tid nest properly (no partial overlap)."""
    by_id = {}
    for e in spans:
        if e["args"].get("id"):
            by_id[e["args"]["id"]] = e
    for e in spans:
        p = e["args"].get("parent")
        if not p or p not in by_id or e["tid"] >= 1000000:
            continue
        q = by_id[p]
        s0, s1 = us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e["dur"])
        p0, p1 = us_to_ns(q["ts"]), us_to_ns(q["ts"]) + us_to_ns(q["dur"])
        assert q["tid"] == e["tid"], "span %s: parent on another thread" % e["name"]
        assert p0 <= s0 and s1 <= p1, "span %s [%d, %d] outside its parent %s [%d, %d]" % (e["name"], s0, s1, q["name"], p0, p1)
    lanes = collections.defaultdict(list)
    for e in spans:
        lanes[e["tid"]].append((us_to_ns(e["ts"]), -us_to_ns(e["dur"]), e["name"]))
    for tid, lst in lanes.items():
        lst.sort()
        stack = []
        for start, negdur, name in lst:
            end = start - negdur
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack:
                assert end <= stack[-1][0], "tid %d: %s [%d, %d] overlaps %s ending at %d" % (tid, name, start, end, stack[-1][1], stack[-1][0])
            stack.append((end, name))


def trace_totals(doc):
    """Total ns and calls per (name, backend, category) over the X events."""
    tot = collections.Counter()
    calls = collections.Counter()
    for e in doc["traceEvents"]:
        if e.get("ph") == "X":
            key = (e["name"], e["args"]["backend"], e["cat"])
            tot[key] += us_to_ns(e["dur"])
            calls[key] += 1
    return tot, calls


class _Rows(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows = []
        self.ids = set()
        self.tags = collections.Counter()
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] += 1
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("src", "href"):
            if k in a:
                self.external.append((tag, k, a[k]))
        if tag == "tr" and "data-total-ns" in a:
            self.rows.append(a)


def parse_html(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    p = _Rows()
    p.feed(text)
    p.text = text
    return p


def check_html_totals(h, doc):
    """Every summary row equals the trace's total and calls for its (name, backend, category), and every
    (name, backend, category) of the trace has its row."""
    tot, calls = trace_totals(doc)
    seen = set()
    for r in h.rows:
        key = (r["data-name"], r["data-backend"], r["data-cat"])
        assert key in tot, "HTML row %r not in the trace" % (key,)
        assert int(r["data-total-ns"]) == tot[key], "%r: HTML total %s ns, trace %d ns" % (key, r["data-total-ns"], tot[key])
        assert int(r["data-calls"]) == calls[key], "%r: HTML calls %s, trace %d" % (key, r["data-calls"], calls[key])
        seen.add(key)
    assert seen == set(tot), "trace ops missing from the HTML: %r" % (set(tot) - seen)


def check_self_contained(h):
    assert not h.external, "the report references external resources: %r" % h.external[:3]
    assert "<script" not in h.text.lower(), "the report contains a script"
    for bad in ("http://", "https://", "@import", "url("):
        assert bad not in h.text, "the report mentions %s" % bad
