#!/usr/bin/env python3
"""Service test: kill -9 in the middle of a stream of learns loses no acknowledged learn.

What: four client threads learn distinct patterns as fast as the server answers (observe, observe,
observe, learn on one keep-alive connection each), a fifth re-learns one pattern over and over; after a
few hundred acknowledged learns the server gets SIGKILL while requests are in flight. The restarted
server (same data directory) must hold every acknowledged pattern with the events that were sent, the
re-learned pattern's frequency must be at least its acknowledged count and at most one more (the one in
flight), and the stored count must lie between the acknowledged count and that plus the learns that were
in flight: nothing acknowledged is lost, nothing half-written appears. Two kill rounds, the second on the
store the first crash left, then a clean restart that must load everything again.
"""

import hashlib
import http.client
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service_common as sc  # noqa: E402

args = sc.parse_args(__doc__)
ck = sc.Checker()
data = sc.temp_dir("tandem-svc-crash-")
WRITERS = 4
TARGET = 250  # acknowledged learns per round before the kill


def kato_name(events):
    return hashlib.sha1(str(events).encode("utf-8")).hexdigest()


class Client:
    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)

    def post(self, path, body):
        self.c.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = self.c.getresponse()
        return r.status, json.loads(r.read() or b"null")


acked = {}          # name -> events, every acknowledged distinct learn
acked_lock = threading.Lock()
relearn_acks = [0]
RELEARN = [["again"], ["and"], ["again"]]


def writer(port, tag, round_no, stop):
    try:
        c = Client(port)
        st, js = c.post("/sessions", {"node_id": "crash-node"})
        sid = js["session_id"]
        i = 0
        while not stop.is_set():
            events = [["r%d" % round_no, "w%s" % tag], ["n%d" % i], ["x y %d" % (i % 7)]] if tag != "re" else RELEARN
            for ev in events:
                st, js = c.post("/sessions/%s/observe" % sid, {"strings": ev})
                if st != 200:
                    raise RuntimeError("observe %s: %s" % (st, js))
            st, js = c.post("/sessions/%s/learn" % sid, {})
            if st != 200:
                raise RuntimeError("learn %s: %s" % (st, js))
            # acknowledged: the reply came back
            stored = [sorted(ev) for ev in events]
            with acked_lock:
                if tag == "re":
                    relearn_acks[0] += 1
                else:
                    assert js["pattern_name"] == "PTRN|" + kato_name(stored)
                    acked[kato_name(stored)] = stored
            i += 1
    except (OSError, http.client.HTTPException, ValueError, RuntimeError):
        pass  # the server was killed under us


def round_trip(round_no):
    srv = sc.Server(args.tandem, data).start()
    stop = threading.Event()
    threads = [threading.Thread(target=writer, args=(srv.port, str(t), round_no, stop)) for t in range(WRITERS)]
    threads.append(threading.Thread(target=writer, args=(srv.port, "re", round_no, stop)))
    start = len(acked)
    for t in threads:
        t.start()
    ok = sc.wait_until(lambda: len(acked) - start >= TARGET, 60)
    ck.check(ok, "round %d: %d learns acknowledged before the kill" % (round_no, len(acked) - start))
    srv.stop(signal.SIGKILL)  # requests are in flight: the writers never stop on their own
    stop.set()
    for t in threads:
        t.join()
    return len(acked) - start


def check_store(label):
    srv = sc.Server(args.tandem, data).start()
    st, js, _ = srv.request("GET", "/status")
    stored = js["patterns"]
    # each writer may have had one learn committed whose reply never arrived; the re-learner adds none
    ck.check(len(acked) + 1 <= stored <= len(acked) + 1 + WRITERS,
             "%s: stored %d patterns, acknowledged %d distinct + the re-learned one" % (label, stored, len(acked)))
    missing = bad = 0
    for name, events in acked.items():
        st, js, _ = srv.request("GET", "/pattern/PTRN|%s?node_id=crash-node" % name)
        if st != 200:
            missing += 1
        elif js["pattern"]["pattern"]["pattern_data"] != events or js["pattern"]["pattern"]["frequency"] != 1:
            bad += 1
    ck.check(missing == 0, "%s: every acknowledged pattern is there (%d missing of %d)" % (label, missing, len(acked)))
    ck.check(bad == 0, "%s: stored patterns hold the events sent (%d differ)" % (label, bad))
    st, js, _ = srv.request("GET", "/pattern/PTRN|%s?node_id=crash-node" % kato_name(RELEARN))
    freq = js["pattern"]["pattern"]["frequency"] if st == 200 else 0
    ck.check(relearn_acks[0] <= freq <= relearn_acks[0] + 1,
             "%s: re-learned pattern frequency %d for %d acknowledged re-learns" % (label, freq, relearn_acks[0]))
    # the restarted node answers predictions from what it loaded
    st, js, _ = srv.request("POST", "/sessions", {"node_id": "crash-node"})
    sid = js["session_id"]
    some = next(iter(acked.values()))
    for ev in some:
        srv.request("POST", "/sessions/%s/observe" % sid, {"strings": ev})
    st, js, _ = srv.request("GET", "/sessions/%s/predictions" % sid)
    ck.check(st == 200 and js["predictions"] and js["predictions"][0]["name"] == kato_name(some),
             "%s: predictions find an acknowledged pattern first" % label, js["predictions"][0]["name"] if js["predictions"] else js)
    return srv


t0 = time.time()
for rnd in (1, 2):
    n = round_trip(rnd)
    print("round %d: %d acknowledged learns, %d re-learns so far, killed" % (rnd, n, relearn_acks[0]), flush=True)
    srv = check_store("after kill %d" % rnd)
    srv.stop()
srv = check_store("after a clean stop")
ck.check(srv.stop() == 0, "clean stop")
print("%.1f s" % (time.time() - t0))
sc.remove(data, args.keep)
ck.done()
