#!/usr/bin/env python3
"""Service test: every endpoint of spec/kato.md section 6 on the real `tandem serve`, over loopback HTTP.

What: session life cycle (create, info, exists, config read/update with validation errors, extend, delete,
TTL expiry), observations (sorting, empty observations, every malformed field -> 4xx naming it), STM,
learn (KATO's pattern names: sha1 of Python's str(pattern_data), the 2-symbol minimum, the empty-STM 400),
auto-learn (CLEAR and ROLLING), observe-sequence (and that a bad observation changes nothing), predictions
(compared field by field with `tandem kato predict` on the same patterns, under a session configuration),
patterns by name, percept and cognition data, finalize-training, clear-stm, clear-all, node isolation
(separate knowledge bases; sessions of one node share patterns, not STMs), health/status/root, the body
size limit, the bearer token, random malformed requests (never a 5xx, never a crash), and a restart on the
same data directory (patterns kept, predictions identical, sessions gone).
"""

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service_common as sc  # noqa: E402

args = sc.parse_args(__doc__)
ck = sc.Checker()
data = sc.temp_dir("tandem-svc-api-")
srv = sc.Server(args.tandem, data, ["--max-body", "65536"]).start()
req = srv.request


def kato_name(events):
    return hashlib.sha1(str(events).encode("utf-8")).hexdigest()


def new_session(node, **kw):
    body = {"node_id": node}
    body.update(kw)
    st, js, text = req("POST", "/sessions", body)
    assert st == 200, text
    return js["session_id"]


def observe(sid, strings, **kw):
    body = {"strings": strings}
    body.update(kw)
    return req("POST", "/sessions/%s/observe" % sid, body)


def learn_events(sid, events, emotives=None):
    """Observes each event (emotives per event if given) and learns; returns the reply JSON."""
    for i, ev in enumerate(events):
        kw = {"emotives": emotives[i]} if emotives else {}
        st, js, text = observe(sid, ev, **kw)
        assert st == 200, text
    st, js, text = req("POST", "/sessions/%s/learn" % sid, {})
    assert st == 200, text
    return js


# ---- root, health, status ------------------------------------------------------------------------------------
st, js, _ = req("GET", "/")
ck.check(st == 200 and js["service"] == "tandem" and len(js["endpoints"]) >= 19, "root")
st, js, _ = req("GET", "/health")
ck.check(st == 200 and js["status"] == "healthy" and js["uptime_seconds"] >= 0 and "active_sessions" in js, "health", js)
st, js, _ = req("GET", "/status")
ck.check(st == 200 and js["patterns"] == 0 and js["nodes"] == 0 and js["store"]["data_dir"] == data, "status", js)
ck.status(req("GET", "/nope"), 404, "unknown path")
ck.status(req("GET", "/sessions"), 405, "GET /sessions")
ck.status(req("PUT", "/health"), 405, "PUT /health")

# ---- session creation and its errors --------------------------------------------------------------------------
ck.status(req("POST", "/sessions", raw=""), 422, "create: empty body")
ck.status(req("POST", "/sessions", raw="{not json"), 400, "create: malformed JSON")
ck.status(req("POST", "/sessions", body=[1, 2]), 422, "create: a list")
st, js, _ = req("POST", "/sessions", {"config": {}})
ck.check(st == 422 and "node_id" in js["detail"], "create: node_id missing named", js)
ck.status(req("POST", "/sessions", {"node_id": 5}), 422, "create: node_id not a string")
ck.status(req("POST", "/sessions", {"node_id": ""}), 422, "create: empty node_id")
ck.status(req("POST", "/sessions", {"node_id": "a", "ttl_seconds": 0}), 422, "create: ttl 0")
ck.status(req("POST", "/sessions", {"node_id": "a", "ttl_seconds": "x"}), 422, "create: ttl string")
ck.status(req("POST", "/sessions", {"node_id": "a", "metadata": [1]}), 422, "create: metadata list")
st, js, _ = req("POST", "/sessions", {"node_id": "a", "config": {"max_predictions": 0, "rank_sort_algo": "best"}})
ck.check(st == 400 and js["detail"]["error"] == "Configuration validation failed"
         and set(js["detail"]["validation_errors"]) == {"max_predictions", "rank_sort_algo"}, "create: bad config", js)

st, js, _ = req("POST", "/sessions", {"node_id": "node-A", "metadata": {"user": "u1"}, "config": {"recall_threshold": 0.2}})
ck.check(st == 200 and re.fullmatch(r"session-[0-9a-f]{32}-\d+", js["session_id"] or ""), "create: id form", js)
ck.check(js["node_id"] == "node-A" and js["ttl_seconds"] == 3600 and js["metadata"] == {"user": "u1"}, "create: fields", js)
cfg = js["session_config"]
ck.check(cfg["recall_threshold"] == 0.2 and cfg["max_predictions"] == 100 and cfg["stm_mode"] == "CLEAR"
         and cfg["use_token_matching"] is True and cfg["persistence"] == 5 and cfg["rank_sort_algo"] == "potential",
         "create: effective config", cfg)
for k in ("created_at", "expires_at"):
    ck.check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", js[k]), "create: " + k, js[k])
A = js["session_id"]
st, js, _ = req("GET", "/sessions/" + A)
ck.check(st == 200 and js["session_id"] == A and 3590 <= js["ttl_seconds"] <= 3600, "get session", js)
st, js, _ = req("GET", "/sessions/" + A + "/exists")
ck.check(js == {"exists": True, "expired": False, "session_id": A}, "exists", js)
st, js, _ = req("GET", "/sessions/session-nope/exists")
ck.check(js["exists"] is False, "exists unknown", js)
for method, action in [("GET", ""), ("GET", "/stm"), ("POST", "/observe"), ("POST", "/learn"), ("GET", "/predictions"),
                       ("POST", "/clear-stm"), ("DELETE", ""), ("GET", "/config")]:
    st, js, _ = req(method, "/sessions/session-unknown" + action, {} if method == "POST" else None)
    ck.check(st == 404 and "not found" in js["detail"], "unknown session %s %s" % (method, action), js)
ck.status(req("GET", "/sessions/%s/bogus" % A), 404, "unknown action")
st, js, _ = req("GET", "/sessions/bad%FF%FEid%C3")  # percent-decoded to bytes that are not UTF-8
ck.check(st == 404 and js is not None and "bad\ufffd\ufffdid\ufffd" in js["detail"], "non-UTF-8 id echoed as valid JSON", js)
ck.status(req("GET", "/sessions/%s/observe" % A), 405, "GET observe")

# ---- configuration ---------------------------------------------------------------------------------------------
st, js, _ = req("POST", "/sessions/%s/config" % A, {"config": {"max_predictions": 7}})
ck.check(st == 200 and js == {"status": "okay", "message": "Configuration updated", "session_id": A}, "config update", js)
ck.status(req("POST", "/sessions/%s/config" % A, {"recall_threshold": 0.15}), 200, "config update (bare dict)")
st, js, _ = req("GET", "/sessions/%s/config" % A)
ck.check(js["config"]["max_predictions"] == 7 and js["config"]["recall_threshold"] == 0.15, "config read back", js)
st, js, _ = req("POST", "/sessions/%s/config" % A, {"use_token_matching": False})
st, js, _ = req("GET", "/sessions/%s/config" % A)
ck.check(js["config"]["sort_symbols"] is False, "use_token_matching alone sets sort_symbols", js["config"])
req("POST", "/sessions/%s/config" % A, {"use_token_matching": True})
for bad in [{"recall_threshold": 1.5}, {"recall_threshold": "high"}, {"persistence": 0}, {"stm_mode": "SOMETIMES"},
            {"sort_symbols": 1}, {"fuzzy_token_threshold": 0.5}, {"filter_pipeline": ["length"]}, {"colour": "red"},
            {"max_pattern_length": -1}]:
    st, js, _ = req("POST", "/sessions/%s/config" % A, {"config": bad})
    key = list(bad)[0]
    ck.check(st == 400 and key in js["detail"]["validation_errors"], "config rejects %s" % bad, js)
st, js, _ = req("GET", "/sessions/%s/config" % A)
ck.check(js["config"]["max_predictions"] == 7 and js["config"]["persistence"] == 5, "rejected config changed nothing", js)

# ---- observations and STM --------------------------------------------------------------------------------------
st, js, _ = observe(A, ["b", "a"])
ck.check(st == 200 and js["status"] == "okay" and js["stm_length"] == 1 and js["time"] == 1 and js["processor_id"] == "node-A"
         and re.fullmatch(r"obs-[0-9a-f]{32}", js["unique_id"]) and js["auto_learned_pattern"] is None, "observe", js)
st, js, _ = observe(A, [], emotives={"joy": 1.0})
ck.check(js["stm_length"] == 1 and js["time"] == 2, "empty observation: time only", js)
st, js, _ = req("GET", "/sessions/%s/stm" % A)
ck.check(js == {"stm": [["a", "b"]], "session_id": A, "length": 1}, "stm sorted", js)
for bad, field in [({"strings": "a"}, "strings"), ({"strings": ["a", 3]}, "strings[1]"), ({"emotives": {"joy": "x"}}, "emotives.joy"),
                   ({"emotives": [1]}, "emotives"), ({"metadata": {"k": [1, 2]}}, "metadata.k"), ({"vectors": [[0.5]]}, "vectors"),
                   ({"strings": ["a"], "unique_id": 5}, "unique_id")]:
    st, js, _ = req("POST", "/sessions/%s/observe" % A, bad)
    ck.check(st == 422 and field in js["detail"], "observe rejects %s" % bad, js)
ck.status(req("POST", "/sessions/%s/observe" % A, raw="[\"a\""), 400, "observe: truncated JSON")
ck.status(req("POST", "/sessions/%s/observe" % A, raw=b"{\"strings\": [\"\xff\"]}"), 400, "observe: invalid UTF-8")
st, js, _ = req("GET", "/sessions/%s/stm" % A)
ck.check(js["length"] == 1, "rejected observations changed nothing", js)
st, js, _ = req("GET", "/sessions/%s/percept-data" % A)
ck.check(st == 200 and js["percept_data"]["strings"] == [] and js["percept_data"]["emotives"] == {"joy": 1.0}
         and js["node_id"] == "node-A", "percept-data", js)

# ---- learn ----------------------------------------------------------------------------------------------------------
observe(A, ["c"])
st, js, _ = req("POST", "/sessions/%s/learn" % A, {})
name1 = kato_name([["a", "b"], ["c"]])
ck.check(st == 200 and js["status"] == "learned" and js["pattern_name"] == "PTRN|" + name1 and js["session_id"] == A, "learn", js)
st, js, _ = req("POST", "/sessions/%s/learn" % A, {})
ck.check(st == 400 and js["detail"] == "Cannot learn from empty STM", "learn empty STM", js)
observe(A, ["solo"])
st, js, _ = req("POST", "/sessions/%s/learn" % A, {})
ck.check(st == 200 and js["pattern_name"] == "", "1-symbol pattern not stored", js)
st, js, _ = req("GET", "/pattern/PTRN|%s?node_id=node-A" % name1)
ck.check(st == 200 and js["pattern"]["status"] == "okay" and js["pattern"]["pattern"]["pattern_data"] == [["a", "b"], ["c"]]
         and js["pattern"]["pattern"]["frequency"] == 1 and js["pattern"]["pattern"]["length"] == 3
         and js["pattern"]["pattern"]["emotives"] == [{"joy": 1.0}] and js["node_id"] == "node-A", "pattern by name", js)
st, js, _ = req("GET", "/pattern/%s" % name1, headers={"x-node-id": "node-A"})
ck.check(st == 200, "pattern by bare name and x-node-id header", js)
st, js, _ = req("GET", "/pattern/PTRN%%7C%s?node_id=node-B" % name1)
ck.check(st == 404, "pattern of another node: 404", js)
st, js, _ = req("GET", "/pattern/xyz?node_id=node-A")
ck.check(st == 400 and "40 lower-case hex" in js["detail"], "pattern: bad name", js)
learn_events(A, [["a", "b"], ["c"]])
st, js, _ = req("GET", "/pattern/PTRN|%s?node_id=node-A" % name1)
ck.check(js["pattern"]["pattern"]["frequency"] == 2, "re-learn counts frequency", js)

# ---- predictions against `tandem kato predict` on the same patterns ----------------------------------------------
rng = random.Random(4)
P = sc.temp_dir("tandem-svc-pat-")
patfile = os.path.join(P, "patterns.jsonl")
lines = [{"events": [["a", "b"], ["c"]], "emotives": [{"joy": 1.0}]}, {"events": [["a", "b"], ["c"]], "emotives": [{"joy": 1.0}]}]
req("POST", "/sessions/%s/clear-stm" % A, {})
alphabet = ["red", "green", "blue", "it's", "ü", "x y", "a", "b", "c"]
for i in range(40):
    events = [sorted(rng.sample(alphabet, rng.randint(1, 2))) for _ in range(rng.randint(2, 4))]
    emos = [{"joy": rng.randint(0, 9) / 4.0} for _ in events] if i % 3 == 0 else None
    learn_events(A, events, emos)
    req("POST", "/sessions/%s/clear-stm" % A, {})  # accumulators empty again: one CLI line = one learn
    lines.append({"events": events, "emotives": emos or []})
with open(patfile, "w") as f:
    for ln in lines:
        f.write(json.dumps(ln) + "\n")
for stm, thr, maxp in [([["red"], ["green", "blue"]], 0.15, 7), ([["a"]], 0.1, 100), ([["c"], ["x y"], ["ü", "red"]], 0.0, 100),
                       ([["b", "a"], ["c"]], 0.5, 3)]:
    req("POST", "/sessions/%s/config" % A, {"recall_threshold": thr, "max_predictions": maxp})
    req("POST", "/sessions/%s/clear-stm" % A, {})
    for ev in stm:
        observe(A, ev)
    st, got, text = req("GET", "/sessions/%s/predictions" % A)
    sorted_stm = [sorted(ev) for ev in stm]  # the session sorts each event (sort_symbols); the CLI takes events as given
    out = subprocess.run([args.tandem, "kato", "predict", "--patterns", patfile, "--stm", json.dumps(sorted_stm), "--json",
                          "--threshold", repr(thr), "--max-predictions", str(maxp)], capture_output=True, text=True)
    want = json.loads(out.stdout)
    ok = st == 200 and got["predictions"] == want["predictions"] and got["future_potentials"] == want["future_potentials"] \
        and got["count"] == want["count"] and got["session_id"] == A
    ck.check(ok, "predictions equal the CLI's for STM %s" % stm, "(service %s, CLI %s)" % (text[:300], out.stdout[:300]))
    ck.check(want["count"] > 0 or thr >= 0.5, "predictions not trivially empty for %s" % stm)
st, js, _ = req("GET", "/sessions/%s/cognition-data" % A)
cd = js["cognition_data"]
ck.check(st == 200 and len(cd["predictions"]) == got["count"] and cd["short_term_memory"] == [["a", "b"], ["c"]]
         and cd["time"] == 2, "cognition-data", js)
st, js, _ = req("POST", "/sessions/%s/finalize-training" % A, {})
ck.check(st == 200 and js["status"] == "completed" and js["patterns_processed"] == 41, "finalize-training", js)

# ---- node isolation and shared knowledge within a node -------------------------------------------------------------
B = new_session("node-B")
A2 = new_session("node-A")
for sid in (B, A2):
    observe(sid, ["red"])
    observe(sid, ["green", "blue"])
st, jb, _ = req("GET", "/sessions/%s/predictions" % B)
st2, ja, _ = req("GET", "/sessions/%s/predictions" % A2)
ck.check(jb["count"] == 0 and jb["predictions"] == [], "node-B sees none of node-A's patterns", jb)
ck.check(ja["count"] > 0, "a second session of node-A sees its patterns", ja)
st, js, _ = req("GET", "/sessions/%s/stm" % A2)
ck.check(js["length"] == 2, "sessions of one node keep their own STM", js)
learn_events(B, [["only"], ["in"], ["B"]])
st, js, _ = req("GET", "/pattern/PTRN|%s?node_id=node-A" % kato_name([["only"], ["in"], ["B"]]))
ck.check(st == 404, "node-B's pattern is not in node-A", js)

# ---- auto-learn and observe-sequence -------------------------------------------------------------------------------
C = new_session("node-C", config={"max_pattern_length": 2})
observe(C, ["x"])
st, js, _ = observe(C, ["y"])
ck.check(js["auto_learned_pattern"] == "PTRN|" + kato_name([["x"], ["y"]]) and js["stm_length"] == 0, "auto-learn CLEAR", js)
req("POST", "/sessions/%s/config" % C, {"stm_mode": "ROLLING", "max_pattern_length": 3})
for s in ("p", "q"):
    observe(C, [s])
st, js, _ = observe(C, ["r"])
ck.check(js["auto_learned_pattern"] == "PTRN|" + kato_name([["p"], ["q"], ["r"]]) and js["stm_length"] == 2, "auto-learn ROLLING", js)
D = new_session("node-C")
seq = {"observations": [{"strings": ["s1"]}, {"strings": ["s2"], "unique_id": "mine"}, {"strings": ["s3"]}], "learn_at_end": True}
st, js, _ = req("POST", "/sessions/%s/observe-sequence" % D, seq)
ck.check(st == 200 and js["status"] == "completed" and js["observations_processed"] == 3 and js["initial_stm_length"] == 0
         and js["final_stm_length"] == 0 and js["final_learned_pattern"] == "PTRN|" + kato_name([["s1"], ["s2"], ["s3"]])
         and [r["sequence_position"] for r in js["results"]] == [0, 1, 2] and js["results"][1]["unique_id"] == "mine"
         and js["isolated"] is False, "observe-sequence", js)
observe(D, ["keep"])
st, js, _ = req("POST", "/sessions/%s/observe-sequence" % D, {"observations": [{"strings": ["t1"]}, {"strings": [7]}]})
ck.check(st == 422 and "observations[1]" in js["detail"], "observe-sequence names the bad observation", js)
st, js, _ = req("GET", "/sessions/%s/stm" % D)
ck.check(js["stm"] == [["keep"]], "a rejected sequence changed nothing", js)
st, js, _ = req("POST", "/sessions/%s/observe-sequence" % D,
                {"observations": [{"strings": ["u1"]}, {"strings": ["u2"]}], "learn_after_each": True})
ck.check(st == 200 and js["results"][0]["learned_pattern"] == "PTRN|" + kato_name([["keep"], ["u1"]])
         and js["results"][1]["learned_pattern"] is None, "observe-sequence learn_after_each (1 symbol: nothing)", js)
ck.status(req("POST", "/sessions/%s/observe-sequence" % D, {"observations": 3}), 422, "observe-sequence: not a list")
ck.status(req("POST", "/sessions/%s/observe-sequence" % D, {"observations": [], "learn_at_end": "yes"}), 422, "observe-sequence: flag type")

# ---- extend, TTL, delete -------------------------------------------------------------------------------------------
ck.status(req("POST", "/sessions/%s/extend?ttl_seconds=abc" % D, {}), 422, "extend: bad ttl")
st, js, _ = req("POST", "/sessions/%s/extend?ttl_seconds=100" % D, {})
ck.check(st == 200 and js == {"status": "extended", "session_id": D, "ttl_seconds": 100}, "extend", js)
st, js, _ = req("GET", "/sessions/" + D)
ck.check(95 <= js["ttl_seconds"] <= 100, "extended TTL", js)
T = new_session("node-C", ttl_seconds=1)
observe(T, ["t"])
time.sleep(1.3)
st, js, _ = req("GET", "/sessions/%s/exists" % T)
ck.check(js == {"exists": False, "expired": True, "session_id": T}, "TTL expiry: exists says expired", js)
st, js, _ = req("GET", "/sessions/%s/stm" % T)
ck.check(st == 404 and "not found or expired" in js["detail"], "TTL expiry: 404", js)
st, js, _ = req("DELETE", "/sessions/" + B)
ck.check(st == 200 and js == {"status": "deleted", "session_id": B}, "delete", js)
ck.status(req("GET", "/sessions/" + B), 404, "deleted session")
ck.status(req("DELETE", "/sessions/" + B), 404, "delete twice")

# ---- limits, malformed requests, authentication --------------------------------------------------------------------
st, js, _ = req("POST", "/sessions/%s/observe" % A, {"strings": ["x" * 70000]})
ck.check(st == 413 and "limit" in js["detail"], "body over --max-body: 413", js)
fz = random.Random(7)
bodies = ["", "{", "}", "[]", "null", "0", "\"s\"", "{\"strings\": {}}", "{\"strings\": [null]}", "[" * 5000 + "]" * 5000,
          "{\"strings\": [\"a\"], \"emotives\": {\"e\": 1e999}}", "{\"node_id\": \"n\", \"ttl_seconds\": 1e30}",
          "{\"config\": {\"max_predictions\": 1e10}}", "{\"observations\": [null]}", "\x00\x01\x02"]
bodies += [bytes(fz.getrandbits(8) for _ in range(fz.randint(1, 200))) for _ in range(60)]
paths = ["/sessions", "/sessions/%s/observe" % A, "/sessions/%s/config" % A, "/sessions/%s/observe-sequence" % A,
         "/sessions/%s/learn" % C, "/sessions/%s/extend?ttl_seconds=-5" % A]
fivexx = 0
for b in bodies:
    for p in paths:
        st, js, text = req("POST", p, raw=b)
        if st >= 500 or js is None or "detail" not in js and st >= 400:
            fivexx += 1
            print("  malformed %r to %s -> %s %s" % (b[:40], p, st, text[:200]))
ck.check(fivexx == 0, "malformed requests all answered 2xx/4xx with a detail")
ck.check(srv.alive() and req("GET", "/health")[0] == 200, "alive after malformed requests")

tok_dir = sc.temp_dir("tandem-svc-tok-")
tsrv = sc.Server(args.tandem, tok_dir, env={"TANDEM_API_TOKEN": "s3cret"}).start()
st, js, _ = tsrv.request("POST", "/sessions", {"node_id": "n"})
ck.check(st == 401 and "Not authenticated" in js["detail"], "token: missing -> 401", js)
ck.status(tsrv.request("POST", "/sessions", {"node_id": "n"}, headers={"Authorization": "Bearer wrong"}), 401, "token: wrong")
ck.status(tsrv.request("POST", "/sessions", {"node_id": "n"}, headers={"Authorization": "Bearer s3cret"}), 200, "token: right")
ck.status(tsrv.request("GET", "/health"), 200, "token: /health stays open")
ck.status(tsrv.request("GET", "/status"), 401, "token: /status needs it")
tsrv.stop()
sc.remove(tok_dir)

# ---- clear-all ----------------------------------------------------------------------------------------------------
E = new_session("node-E")
learn_events(E, [["e1"], ["e2"]])
st, js, _ = req("POST", "/sessions/%s/clear-all" % E, {})
ck.check(st == 200 and js == {"status": "cleared", "session_id": E, "scope": "all"}, "clear-all", js)
ck.status(req("GET", "/pattern/PTRN|%s?node_id=node-E" % kato_name([["e1"], ["e2"]])), 404, "clear-all removed the pattern")
st, js, _ = req("GET", "/pattern/PTRN|%s?node_id=node-A" % name1)
ck.check(st == 200, "clear-all of node-E left node-A alone", js)

# ---- restart on the same data directory ----------------------------------------------------------------------------
req("POST", "/sessions/%s/clear-stm" % A2, {})
observe(A2, ["red"])
observe(A2, ["green", "blue"])
before = req("GET", "/sessions/%s/predictions" % A2)[1]
status_before = req("GET", "/status")[1]
ck.check(srv.stop() == 0, "SIGTERM stops the server cleanly")
srv = sc.Server(args.tandem, data).start()
req = srv.request
st, js, _ = req("GET", "/status")
ck.check(js["patterns"] == status_before["patterns"] and js["store"]["loaded_patterns"] == status_before["patterns"]
         and js["nodes"] == status_before["nodes"] - 1, "restart: every pattern loaded (the cleared node-E is gone)",
         (js, status_before))
ck.status(req("GET", "/sessions/" + A2), 404, "restart: sessions are not kept")
st, js, _ = req("GET", "/pattern/PTRN|%s?node_id=node-A" % name1)
ck.check(st == 200 and js["pattern"]["pattern"]["frequency"] == 2 and js["pattern"]["pattern"]["emotives"] == [{"joy": 1.0}, {"joy": 1.0}],
         "restart: pattern with frequency and emotives", js)
ck.status(req("GET", "/pattern/PTRN|%s?node_id=node-E" % kato_name([["e1"], ["e2"]])), 404, "restart: cleared node stays cleared")
R = new_session("node-A")
observe(R, ["red"])
observe(R, ["green", "blue"])
after = req("GET", "/sessions/%s/predictions" % R)[1]
ck.check(before["predictions"] == after["predictions"] and before["count"] > 0, "restart: identical predictions")
srv.stop()
sc.remove(data, args.keep)
sc.remove(P)
ck.done()
