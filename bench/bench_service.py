#!/usr/bin/env python3
"""Benchmark of `tandem serve` over loopback HTTP (issue 4): startup, request latency, wrk throughput.

For each store size N (default 10K, 100K, 1M patterns of the shared generator distribution: Zipf over
50,000 symbols, lengths 2-60, mean 20; one symbol per event):
  1. `tandem store import` builds node "bench" in a fresh data directory (timed);
  2. `tandem serve` starts on it: startup = spawn to the listening line, and the load time it reports;
  3. one keep-alive client (python3 http.client) times, one request at a time: observe (1 symbol), learn
     (after 3 observations; committed to disk before the reply), predictions (STMs of 5-20 symbols cut from
     stored patterns with one symbol replaced, recall_threshold 0.1, max_predictions 100), and GET /health
     as the floor of the HTTP path (the peer in the same run); p50 / p99 / mean in ms; and durable learns
     per second on one node with 1, 16 and 64 concurrent clients (group commit);
  4. wrk, 64 connections over 64 sessions (round-robin, bench/service_wrk.lua), for GET predictions,
     POST observe and GET /health: requests/s, p50 / p99, non-2xx and socket errors.
Prints a summary and writes everything to --out (JSON). No figure is asserted; RESULTS.md records them.
"""

import argparse
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))] if xs else float("nan")


def summary(xs):
    return {"n": len(xs), "p50_ms": pct(xs, 50), "p99_ms": pct(xs, 99), "mean_ms": sum(xs) / len(xs) if xs else float("nan")}


class Client:
    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def call(self, method, path, body=None):
        t0 = time.perf_counter()
        self.c.request(method, path, body=json.dumps(body) if body is not None else None,
                       headers={"Content-Type": "application/json"})
        r = self.c.getresponse()
        data = r.read()
        dt = (time.perf_counter() - t0) * 1e3
        if r.status != 200:
            raise RuntimeError("%s %s -> %d %s" % (method, path, r.status, data[:200]))
        return json.loads(data), dt


def learn_throughput(port, clients, seconds, tag):
    """Durable learns per second on one node with `clients` concurrent keep-alive clients (one session
    each; observe 2 symbols, learn; distinct patterns): shows what group commit gives."""
    import threading
    done = [0]
    lock = threading.Lock()
    end = time.time() + seconds

    def work(t):
        c = Client(port)
        sid = c.call("POST", "/sessions", {"node_id": "bench"})[0]["session_id"]
        i = 0
        while time.time() < end:
            c.call("POST", "/sessions/%s/observe" % sid, {"strings": ["lt-%s-%d-%d" % (tag, t, i), "x"]})
            c.call("POST", "/sessions/%s/learn" % sid, {})
            i += 1
            with lock:
                done[0] += 1

    ts = [threading.Thread(target=work, args=(t,)) for t in range(clients)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return done[0] / seconds


def drain(c):
    """wrk stops with requests still queued in the server (slow predictions): wait until a request on the
    wrk sessions' node answers quickly again, so the next run does not measure the last one's backlog."""
    for _ in range(600):
        c.call("POST", "/sessions", {"node_id": "bench"})
        t0 = time.perf_counter()
        c.call("GET", "/status")
        if time.perf_counter() - t0 < 0.05:
            time.sleep(1.0)
            return
        time.sleep(0.5)


def run_wrk(port, paths_file, method, body, seconds, threads):
    env = dict(os.environ, WRK_PATHS=paths_file, WRK_METHOD=method, WRK_BODY=body or "")
    cmd = ["wrk", "-t%d" % threads, "-c64", "-d%ds" % seconds, "--timeout", "60s", "--latency", "-s", os.path.join(HERE, "service_wrk.lua"),
           "http://127.0.0.1:%d" % port]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env).stdout
    res = {"command": " ".join(cmd), "raw": out}
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    res["rps"] = float(m.group(1)) if m else None
    for p in ("50", "99"):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)" % p, out, re.M)
        if m:
            v = float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
            res["p%s_ms" % p] = v
    m = re.search(r"(\d+) requests in", out)
    res["requests"] = int(m.group(1)) if m else None
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    res["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    res["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default="build/tandem")
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--requests", type=int, default=300, help="timed requests per kind (predictions: fewer at 1M)")
    ap.add_argument("--wrk-seconds", type=int, default=10)
    ap.add_argument("--wrk-threads", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="server threads (0 = its default)")
    ap.add_argument("--work", default=None, help="directory for data (default: a temporary one, removed)")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="tandem-bench-svc-")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(a.seed)
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "command": " ".join(sys.argv), "sizes": {}}
    for n in [int(x) for x in a.sizes.split(",")]:
        r = {}
        gen = os.path.join(work, "gen-%d.jsonl" % n)
        if not os.path.exists(gen):
            subprocess.run([a.tandem, "seq", "gen", "--patterns", str(n), "--seed", str(a.seed), "--out", gen, "--quiet"], check=True)
        data = os.path.join(work, "data-%d" % n)
        shutil.rmtree(data, ignore_errors=True)
        t0 = time.time()
        out = subprocess.run([a.tandem, "store", "import", "--data", data, "--node", "bench", "--patterns", gen, "--quiet"],
                             capture_output=True, text=True, check=True).stdout
        r["import_s"] = time.time() - t0
        r["import_line"] = out.strip()
        r["store_bytes"] = sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data))
        with open(gen) as f:
            pats = [json.loads(line) for line in f]
        cmd = [a.tandem, "serve", "--listen", "127.0.0.1:0", "--data", data, "--quiet"] + (["--threads", str(a.threads)] if a.threads else [])
        t0 = time.time()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = proc.stdout.readline()
        r["startup_s"] = time.time() - t0
        r["listening_line"] = line.strip()
        port = int(re.search(r":(\d+) \(", line).group(1))
        m = re.search(r"loaded in ([\d.]+) s", line)
        r["load_s"] = float(m.group(1)) if m else None
        try:
            c = Client(port)
            sid = c.call("POST", "/sessions", {"node_id": "bench"})[0]["session_id"]
            lat = {"health": [], "observe": [], "learn": [], "predictions": []}
            for _ in range(a.requests):
                lat["health"].append(c.call("GET", "/health")[1])
            for i in range(a.requests):
                if i % 20 == 0:
                    c.call("POST", "/sessions/%s/clear-stm" % sid, {})
                lat["observe"].append(c.call("POST", "/sessions/%s/observe" % sid, {"strings": ["s%d" % rng.randrange(50000)]})[1])
            for i in range(a.requests):
                for k in range(3):
                    c.call("POST", "/sessions/%s/observe" % sid, {"strings": ["learn%d" % rng.randrange(10 ** 9)]})
                lat["learn"].append(c.call("POST", "/sessions/%s/learn" % sid, {})[1])
            npred = a.requests if n <= 100000 else max(20, a.requests // 10)
            counts = []

            def set_stm(s):
                p = rng.choice([q for q in (rng.choice(pats) for _ in range(20)) if len(q) >= 5] or [pats[0]])
                k = rng.randint(5, min(20, len(p)))
                start = rng.randrange(len(p) - k + 1)
                stm = list(p[start:start + k])
                stm[rng.randrange(k)] = "s%d" % rng.randrange(50000)
                c.call("POST", "/sessions/%s/clear-stm" % s, {})
                for sym in stm:
                    c.call("POST", "/sessions/%s/observe" % s, {"strings": [sym]})

            for i in range(npred):
                set_stm(sid)
                js, dt = c.call("GET", "/sessions/%s/predictions" % sid)
                lat["predictions"].append(dt)
                counts.append(js["count"])
            r["latency"] = {k: summary(v) for k, v in lat.items()}
            r["learns_per_s"] = {str(k): learn_throughput(port, k, 5.0, "%d-%d" % (n, k)) for k in (1, 16, 64)}
            r["predictions_mean_count"] = sum(counts) / len(counts)
            # 64 sessions for wrk, each with an STM of 5-20 symbols
            paths = []
            for _ in range(64):
                s = c.call("POST", "/sessions", {"node_id": "bench"})[0]["session_id"]
                set_stm(s)
                paths.append(s)
            pf = os.path.join(work, "paths-%d.txt" % n)
            with open(pf, "w") as f:
                f.write("".join("/sessions/%s/predictions\n" % s for s in paths))
            r["wrk_predictions"] = run_wrk(port, pf, "GET", None, a.wrk_seconds, a.wrk_threads)
            drain(c)
            paths = [c.call("POST", "/sessions", {"node_id": "bench"})[0]["session_id"] for _ in range(64)]
            with open(pf, "w") as f:
                f.write("".join("/sessions/%s/observe\n" % s for s in paths))
            r["wrk_observe"] = run_wrk(port, pf, "POST", json.dumps({"strings": ["s1", "s2"]}), a.wrk_seconds, a.wrk_threads)
            drain(c)
            with open(pf, "w") as f:
                f.write("/health\n")
            r["wrk_health"] = run_wrk(port, pf, "GET", None, a.wrk_seconds, a.wrk_threads)
        finally:
            proc.terminate()
            proc.wait()
        results["sizes"][str(n)] = r
        L = r["latency"]
        print("N=%d: import %.1f s, store %.0f MB, startup %.2f s (load %.2f s)" % (n, r["import_s"], r["store_bytes"] / 1e6,
                                                                                  r["startup_s"], r["load_s"]))
        for k in ("health", "observe", "learn", "predictions"):
            print("  %-12s p50 %8.3f ms  p99 %8.3f ms  mean %8.3f ms  (%d requests)" % (k, L[k]["p50_ms"], L[k]["p99_ms"],
                                                                                   L[k]["mean_ms"], L[k]["n"]))
        print("  predictions: mean %.1f returned" % r["predictions_mean_count"])
        print("  durable learns/s on one node: " + ", ".join("%s clients %.0f" % kv for kv in r["learns_per_s"].items()))
        for k in ("wrk_predictions", "wrk_observe", "wrk_health"):
            w = r[k]
            print("  %-16s %9.1f req/s  p50 %s ms  p99 %s ms  non-2xx %d  socket errors %d  (%s requests)" % (
                k, w["rps"] or 0, w.get("p50_ms"), w.get("p99_ms"), w["non2xx"], w["socket_errors"], w["requests"]))
        sys.stdout.flush()
        if a.out:
            with open(a.out, "w") as f:
                json.dump(results, f, indent=1)
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
