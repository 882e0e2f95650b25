#!/usr/bin/env python3
"""Service test: a commit that fails (the store is full) is never acknowledged and never served.

What: `tandem serve --map-size 16` (a 16 MiB store) takes learns of large patterns from four concurrent
clients (so that failed commits can hold several queued learns) until commits fail. Every failed learn
must answer 500 with a message that names the map size, its pattern must not be served afterwards (the
node went back to what the disk holds), every acknowledged pattern must be served, the server must keep
answering (predictions included), and a restart must load exactly the acknowledged patterns.
"""

import hashlib
import http.client
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service_common as sc  # noqa: E402

args = sc.parse_args(__doc__)
ck = sc.Checker()
data = sc.temp_dir("tandem-svc-full-")
srv = sc.Server(args.tandem, data, ["--map-size", "16"]).start()
acked, failed, other = [], [], []
lock = threading.Lock()


def name_of(events):
    return hashlib.sha1(str(events).encode()).hexdigest()


def client(t):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)

    def call(m, p, b):
        c.request(m, p, body=json.dumps(b), headers={"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, json.loads(r.read())

    st, js = call("POST", "/sessions", {"node_id": "full"})
    sid = js["session_id"]
    fails = 0
    for i in range(400):
        events = [["c%d-%d-%d-%s" % (t, i, k, "x" * 2000)] for k in range(40)]  # ~80 KB of symbols
        for ev in events:
            call("POST", "/sessions/%s/observe" % sid, {"strings": ev})
        st, js = call("POST", "/sessions/%s/learn" % sid, {})
        with lock:
            if st == 200:
                acked.append(name_of(events))
            elif st == 500:
                failed.append((name_of(events), js["detail"]))
            else:
                other.append((st, js))
        if st != 200:
            call("POST", "/sessions/%s/clear-stm" % sid, {})
            fails += 1
            if fails >= 3:
                return


threads = [threading.Thread(target=client, args=(t,)) for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ck.check(not other, "only 200 or 500 answers", other[:3])
ck.check(len(failed) >= 4 and len(acked) > 20, "the store filled up: %d acknowledged, %d failed" % (len(acked), len(failed)))
ck.check(all("map size" in d for _, d in failed), "failures name the map size", failed[:2])
ck.check(srv.alive(), "server alive")


def served(s, names):
    return sum(1 for n in names if s.request("GET", "/pattern/%s?node_id=full" % n)[0] == 200)


ck.check(served(srv, acked) == len(acked), "every acknowledged pattern is served")
ck.check(served(srv, [n for n, _ in failed]) == 0, "no failed learn is served")
st, js, _ = srv.request("GET", "/status")
ck.check(js["patterns"] == len(set(acked)), "served count = acknowledged (%d / %d)" % (js["patterns"], len(set(acked))))
st, js, _ = srv.request("POST", "/sessions", {"node_id": "full", "config": {"recall_threshold": 0.0}})
sid = js["session_id"]
srv.request("POST", "/sessions/%s/observe" % sid, {"strings": ["c0-0-0-" + "x" * 2000]})
srv.request("POST", "/sessions/%s/observe" % sid, {"strings": ["c0-0-1-" + "x" * 2000]})
st, js, _ = srv.request("GET", "/sessions/%s/predictions" % sid)
ck.check(st == 200 and js["count"] >= 1, "predictions still answer", js if st != 200 else js["count"])
ck.check(srv.stop() == 0, "clean stop")
srv = sc.Server(args.tandem, data, ["--map-size", "16"]).start()
st, js, _ = srv.request("GET", "/status")
ck.check(js["patterns"] == len(set(acked)), "restart loads exactly the acknowledged patterns (%d / %d)" % (js["patterns"], len(set(acked))))
ck.check(served(srv, acked) == len(acked) and served(srv, [n for n, _ in failed]) == 0, "restart: acknowledged served, failed not")
srv.stop()
sc.remove(data, args.keep)
ck.done()
