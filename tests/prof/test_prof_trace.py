#!/usr/bin/env python3
"""Profiler files: the Chrome trace and the HTML report, from the driver and from the tandem command.

What:
  1. prof_driver (three threads recording nested scopes, device spans on two stream lanes, memory samples
     with pressure, routing decisions with predictions, a fallback, an init span): the trace is strictly
     valid JSON in §6.5's shape (displayTimeUnit, otherData with version/device/driver/cpu/dropped; every X
     event with numeric ts/dur/pid/tid and args backend/work/h2d_bytes/d2h_bytes/mem_used/route; M events
     naming the process and every lane; i events with s "t"); children lie within their parents and spans
     on one tid nest; names with quotes and backslashes survive; every thread's records are there; the
     HTML's summary totals and calls equal the trace's per (name, backend, category); the report is one
     file without scripts or external references and has every chart.
  2. The same with 1,024 records of capacity: dropped = recorded - kept, kept <= capacity, and the report
     states the dropped count.
  3. The tandem command: `seq gen`, `seq build`, `seq query` with --profile/--profile-html (both spellings,
     before or after the subcommand) print exactly what they print without them; the trace holds the
     engine's spans and routing decisions; HTML totals equal trace totals; `info` and `version` take the
     options too; TANDEM_PROFILE=1 with TANDEM_PROFILE_OUT writes both files at exit; a missing value is a
     usage error (exit 2).
Why: §6.5's contract (trace parses, X fields numeric, nesting, totals agree, results unchanged) as a reader
of the files sees it, independent of the C code that wrote them.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prof_check as pc  # noqa: E402

CHARTS = ("summary-table", "init-table", "chart-split", "chart-pct", "chart-memory", "routing-table", "chart-scatter",
          "prediction-table", "chart-timeline")


def prediction_error(doc, op):
    """Median |predicted - measured| / measured over op's decisions, from the trace's route events."""
    errs = []
    for e in doc["traceEvents"]:
        if e.get("ph") == "i" and e["name"] == "route" and e["args"]["op"] == op and e["args"]["measured_ns"]:
            a = e["args"]
            pred = a["predicted_cpu_ns"] if a["backend"] == "cpu" else a["predicted_gpu_ns"]
            errs.append(abs(pred - a["measured_ns"]) / a["measured_ns"])
    errs.sort()
    n = len(errs)
    return len(errs), (errs[n // 2] if n % 2 else 0.5 * (errs[n // 2 - 1] + errs[n // 2]))


def run(cmd, env=None, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != expect:
        sys.exit("FAIL: %s exited %d (expected %d)\nstdout: %s\nstderr: %s" % (" ".join(cmd), p.returncode, expect, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def counts(doc):
    ev = doc["traceEvents"]
    return (sum(e["ph"] == "X" for e in ev), sum(e["ph"] == "i" for e in ev),
            sum(e["ph"] == "C" and e["name"] == "device memory" for e in ev))


def driver_full(driver, tmp):
    prefix = os.path.join(tmp, "full")
    out = json.loads(run([driver, prefix, "262144", "200"]).stdout)
    doc = pc.check_trace(prefix + ".trace.json")
    h = pc.parse_html(prefix + ".html")
    pc.check_html_totals(h, doc)
    pc.check_self_contained(h)
    for c in CHARTS:
        assert c in h.ids, "report lacks %s" % c
    assert h.tags["svg"] >= 5, "report has %d svg elements" % h.tags["svg"]
    other = doc["otherData"]
    assert other["dropped"] == 0 and other["recorded"] == out["recorded"], other
    assert other["device"] == "synthetic device"
    ev = doc["traceEvents"]
    x = [e for e in ev if e["ph"] == "X"]
    host_tids = {e["tid"] for e in x if e["tid"] < 1000000}
    assert len(host_tids) == 4, "spans on %d host threads, expected 4" % len(host_tids)
    assert {e["tid"] for e in x if e["tid"] >= 1000000} == {1000000, 1000001}
    names = {e["name"] for e in x}
    assert 'driver.middle "quoted" \\ name' in names, names
    assert "driver.odd\ufffd\ufffd<b>&" in names, names  # control character and invalid UTF-8 as U+FFFD
    assert "driver.odd\ufffd\ufffd&lt;b&gt;&amp;" in h.text, "odd name not escaped in the HTML"
    per_thread = [sum(e["tid"] == t and e["name"] == "driver.outer" for e in x) for t in host_tids]
    assert sorted(per_thread) == [0, 200, 200, 200], per_thread
    inner = [e for e in x if e["name"] == "driver.inner"]
    assert all(e["args"]["parent"] for e in inner)
    routes = [e for e in ev if e["ph"] == "i" and e["name"] == "route"]
    assert len(routes) == 60 and all(r["args"]["measured_ns"] > 0 for r in routes), "route events"
    assert sum(e["ph"] == "i" and e["name"] == "fallback" for e in ev) == 1
    n, med = prediction_error(doc, "driver.routed")
    row = "<tr><td>driver.routed</td><td>%d</td><td>%.1f%%</td>" % (n, 100 * med)
    assert row in h.text, "prediction table lacks %s" % row
    assert any(e["ph"] == "X" and e["cat"] == "init" for e in ev), "no init span"
    h2d = sum(e["args"]["h2d_bytes"] for e in x if e["cat"] == "h2d")
    assert h2d == 40 * 4096, h2d
    press = [e for e in ev if e["ph"] == "C" and e["name"] == "pressure"]
    assert len(press) == 40 and max(e["args"]["level"] for e in press) == 3
    print("driver: %d events, %d spans on %d threads and 2 streams: ok" % (len(ev), len(x), len(host_tids)))


def driver_overflow(driver, tmp):
    prefix = os.path.join(tmp, "small")
    out = json.loads(run([driver, prefix, "1024", "200"]).stdout)
    doc = pc.check_trace(prefix + ".trace.json")
    h = pc.parse_html(prefix + ".html")
    pc.check_html_totals(h, doc)
    other = doc["otherData"]
    nx, ni, nc = counts(doc)
    assert other["recorded"] == out["recorded"] and other["dropped"] == out["dropped"]
    assert other["dropped"] > 0, "nothing dropped at capacity 1024"
    assert other["kept"] <= 1024 and other["dropped"] == other["recorded"] - other["kept"], other
    assert nx + ni + nc <= other["kept"], (nx, ni, nc, other)
    assert '<span id="dropped">%d</span>' % other["dropped"] in h.text
    print("overflow: %d recorded, %d kept, %d dropped: ok" % (other["recorded"], other["kept"], other["dropped"]))


def driver_timeline_cap(driver, tmp):
    """More than 20,000 spans: the timeline draws exactly the 20,000 longest and says so; the trace has all."""
    prefix = os.path.join(tmp, "many")
    run([driver, prefix, "262144", "2500"])
    doc = pc.check_trace(prefix + ".trace.json")
    h = pc.parse_html(prefix + ".html")
    pc.check_html_totals(h, doc)
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(spans) > 20000, len(spans)
    assert "20000 of %d spans drawn (the longest)" % len(spans) in h.text
    tl = h.text[h.text.index('id="chart-timeline"'):]
    tl = tl[:tl.index("</svg>")]
    assert tl.count("<rect ") == 20000, tl.count("<rect ")
    durs = sorted((pc.us_to_ns(e["dur"]) for e in spans), reverse=True)
    # Titles read "<name> <ms with 3 decimals> ms": the shortest drawn is the 20,000th longest (to 0.5 µs).
    drawn = [float(t.split("</title>")[0].rsplit(" ", 2)[-2]) for t in tl.split("<title>")[1:]]
    assert len(drawn) == 20000
    assert abs(min(drawn) * 1e6 - durs[19999]) <= 500, (min(drawn), durs[19999])
    print("timeline cap: %d spans, 20000 drawn: ok" % len(spans))


def cli(tandem, tmp):
    pats = os.path.join(tmp, "p.jsonl")
    store = os.path.join(tmp, "p.store")
    stm = os.path.join(tmp, "stm.jsonl")
    tr, ht = os.path.join(tmp, "cli.trace.json"), os.path.join(tmp, "cli.html")
    run([tandem, "seq", "gen", "--patterns", "3000", "--seed", "5", "--vocab", "300", "--out", pats, "--quiet",
         "--profile", tr])
    pc.check_trace(tr)
    run([tandem, "--profile=" + tr, "seq", "build", "--input", pats, "--out", store, "--quiet"])
    pc.check_trace(tr)
    with open(pats) as f:
        lines = [next(f) for _ in range(6)]
    with open(stm, "w") as f:
        f.writelines(lines)
    base = [tandem, "seq", "query", "--store", store, "--metric", "lcs", "--threshold", "0.3", "--stm", stm]
    plain = run(base).stdout
    prof = run(base + ["--profile", tr, "--profile-html", ht]).stdout
    assert plain == prof and plain.count("\n") == 6, "results differ with profiling on"
    top = run(base[:-4] + ["--top", "5", "--stm", stm]).stdout
    assert top == run([tandem, "--profile-html", ht] + base[1:-4] + ["--top", "5", "--stm", stm]).stdout
    prof = run(base + ["--profile", tr, "--profile-html", ht]).stdout
    doc = pc.check_trace(tr)
    h = pc.parse_html(ht)
    pc.check_html_totals(h, doc)
    pc.check_self_contained(h)
    names = {e["name"] for e in doc["traceEvents"] if e["ph"] == "X"}
    # The engine answers on the CPU (a batch span; each query a scan of its own, or answered with others
    # in a lanes span) or on the GPU (a query span per query, its recent tier scanned on the CPU).
    assert names & {"seq.query_batch", "seq.query"} and names & {"seq.scan", "seq.lanes"}, "trace lacks query spans: %s" % sorted(names)
    routes = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["name"] == "route"]
    assert routes and all(r["args"]["op"] == "seq.lcs" for r in routes), routes[:2]
    for cmd in (["info"], ["version"]):
        run([tandem] + cmd + ["--profile", tr, "--profile-html", ht])
        pc.check_trace(tr)
        pc.check_html_totals(pc.parse_html(ht), pc.check_trace(tr))
    env = dict(os.environ, TANDEM_PROFILE="1", TANDEM_PROFILE_OUT=os.path.join(tmp, "env"))
    assert run(base, env=env).stdout == plain
    doc = pc.check_trace(os.path.join(tmp, "env.trace.json"))
    pc.check_html_totals(pc.parse_html(os.path.join(tmp, "env.html")), doc)
    assert any(e["ph"] == "X" and e["name"] in ("seq.scan", "seq.lanes") for e in doc["traceEvents"])
    env = dict(os.environ, TANDEM_NVTX="1")  # NVTX ranges without a tool attached: no effect on results
    assert run(base + ["--profile", tr], env=env).stdout == plain
    pc.check_trace(tr)
    run([tandem, "info", "--profile"], expect=2)
    print("cli: results unchanged, trace and report consistent: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tandem", required=True)
    ap.add_argument("--driver", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        driver_full(a.driver, tmp)
        driver_overflow(a.driver, tmp)
        driver_timeline_cap(a.driver, tmp)
        cli(a.tandem, tmp)
    print("PASS")


if __name__ == "__main__":
    main()
