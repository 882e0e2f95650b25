#!/usr/bin/env python3
"""Service test: many clients at once on shared sessions and nodes, without a crash, a hang or a 5xx.

What: eight threads for a few seconds pick random operations on four shared sessions over two nodes:
observe, learn, predictions, STM, config updates, clear-stm, the occasional clear-all, deleting and
recreating a session, and auto-learn (one session has max_pattern_length 3). Every reply must be one an
API user can get (200; 400 for learning an empty STM; 404 for a session another thread just deleted),
the server must stay up and answer quickly afterwards, and a restart on the data directory must load the
same number of patterns the server reported before it stopped.
"""

import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service_common as sc  # noqa: E402

args = sc.parse_args(__doc__)
ck = sc.Checker()
data = sc.temp_dir("tandem-svc-conc-")
srv = sc.Server(args.tandem, data).start()
sessions = []
lock = threading.Lock()
for i in range(4):
    cfg = {"max_pattern_length": 3} if i == 3 else {}
    st, js, _ = srv.request("POST", "/sessions", {"node_id": "node-%d" % (i % 2), "config": cfg})
    sessions.append(js["session_id"])
bad = []
counts = {}


def worker(seed, seconds):
    rng = random.Random(seed)
    end = time.time() + seconds
    while time.time() < end:
        with lock:
            k = rng.randrange(len(sessions))
            sid = sessions[k]
        op = rng.choices(["observe", "learn", "predict", "stm", "config", "clear", "clearall", "recreate"],
                         [40, 12, 12, 8, 6, 5, 1, 2])[0]
        ok = (200,)
        if op == "observe":
            r = srv.request("POST", "/sessions/%s/observe" % sid, {"strings": ["s%d" % rng.randrange(12) for _ in range(rng.randint(1, 3))],
                                                                    "emotives": {"e": rng.random()}})
        elif op == "learn":
            r, ok = srv.request("POST", "/sessions/%s/learn" % sid, {}), (200, 400)
        elif op == "predict":
            r = srv.request("GET", "/sessions/%s/predictions" % sid)
        elif op == "stm":
            r = srv.request("GET", "/sessions/%s/stm" % sid)
        elif op == "config":
            r = srv.request("POST", "/sessions/%s/config" % sid, {"recall_threshold": rng.choice([0.0, 0.1, 0.5])})
        elif op == "clear":
            r = srv.request("POST", "/sessions/%s/clear-stm" % sid, {})
        elif op == "clearall":
            r = srv.request("POST", "/sessions/%s/clear-all" % sid, {})
        else:
            r = srv.request("DELETE", "/sessions/" + sid)
            st, js, _ = srv.request("POST", "/sessions", {"node_id": "node-%d" % (k % 2),
                                                          "config": {"max_pattern_length": 3} if k == 3 else {}})
            with lock:
                sessions[k] = js["session_id"]
        if r[0] not in ok and r[0] != 404:
            bad.append((op, r[0], r[2][:200]))
        with lock:
            counts[op] = counts.get(op, 0) + 1


threads = [threading.Thread(target=worker, args=(s, 4.0)) for s in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join(60)
ck.check(not any(t.is_alive() for t in threads), "every client finished (no hang)")
ck.check(not bad, "every reply was 200/400/404", bad[:5])
print("operations:", counts)
ck.check(srv.alive(), "server alive")
t0 = time.time()
st, before, _ = srv.request("GET", "/status")
ck.check(st == 200 and time.time() - t0 < 5, "status answers after the storm")
ck.check(srv.stop() == 0, "clean stop")
srv = sc.Server(args.tandem, data).start()
st, after, _ = srv.request("GET", "/status")
ck.check(after["patterns"] == before["patterns"], "restart loads the patterns the server held (%d / %d)" % (after["patterns"], before["patterns"]))
srv.stop()
sc.remove(data, args.keep)
ck.done()
