#!/usr/bin/env python3
"""Service test: `tandem store import` builds a node that `tandem serve` then serves as if it had learned it.

What: 3000 generated patterns (`tandem seq gen`, flat lists = one symbol per event) and a few event lists
with emotives and metadata are imported into node "imported" (in batches, synced at the end);
`tandem store info` lists the node with its pattern count; the server loads them (status counts), a pattern
reads back by name with its emotives, and predictions for STMs equal `tandem kato predict` on the same
patterns field by field. A second import appends to the node. Importing into a directory a running server
holds is refused.
"""

import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import service_common as sc  # noqa: E402

args = sc.parse_args(__doc__)
ck = sc.Checker()
tmp = sc.temp_dir("tandem-svc-import-")
data = os.path.join(tmp, "data")
gen = os.path.join(tmp, "gen.jsonl")
extra = os.path.join(tmp, "extra.jsonl")
events_file = os.path.join(tmp, "events.jsonl")
run = lambda *a: subprocess.run([args.tandem] + list(a), capture_output=True, text=True)  # noqa: E731

r = run("seq", "gen", "--patterns", "3000", "--seed", "5", "--vocab", "300", "--max-len", "12", "--mean-len", "5",
        "--out", gen, "--quiet")
ck.check(r.returncode == 0, "seq gen", r.stderr)
extras = [{"events": [["s1", "s2"], ["s3"]], "emotives": [{"joy": 0.5}], "metadata": [{"src": "import"}]},
          [["s1"], ["s2", "s9"]]]
with open(extra, "w") as f:
    for e in extras:
        f.write(json.dumps(e) + "\n")
r = run("store", "import", "--data", data, "--node", "imported", "--patterns", gen, "--quiet")
ck.check(r.returncode == 0 and "imported 3000 learns" in r.stdout, "import", r.stdout + r.stderr)
r = run("store", "import", "--data", data, "--node", "imported", "--patterns", extra, "--quiet")
ck.check(r.returncode == 0 and "imported 2 learns" in r.stdout, "second import appends", r.stdout + r.stderr)
# the same patterns as event lists for `tandem kato predict`
with open(gen) as f, open(events_file, "w") as out:
    for line in f:
        out.write(json.dumps([[s] for s in json.loads(line)]) + "\n")
    for e in extras:
        out.write(json.dumps(e) + "\n")
learn = run("kato", "learn", "--patterns", events_file)
npat = len(set(x for x in learn.stdout.split("\n") if x))
r = run("store", "info", "--data", data)
ck.check(r.returncode == 0 and "imported_kato (node_id imported): %d patterns" % npat in r.stdout, "store info", r.stdout)

srv = sc.Server(args.tandem, data).start()
r = run("store", "import", "--data", data, "--node", "imported", "--patterns", extra, "--quiet")
ck.check(r.returncode != 0 and "in use" in r.stderr, "import refused while the server holds the directory", r.stderr)
st, js, _ = srv.request("GET", "/status")
ck.check(js["patterns"] == npat and js["store"]["loaded_patterns"] == npat, "server loaded the import", js)
name = hashlib.sha1(str([["s1", "s2"], ["s3"]]).encode()).hexdigest()
st, js, _ = srv.request("GET", "/pattern/PTRN|%s?node_id=imported" % name)
ck.check(st == 200 and js["pattern"]["pattern"]["emotives"] == [{"joy": 0.5}]
         and js["pattern"]["pattern"]["metadata"] == {"src": ["import"]}, "imported pattern by name", js)
st, js, _ = srv.request("POST", "/sessions", {"node_id": "imported"})
sid = js["session_id"]
for stm in ([["s1"], ["s2"], ["s3"]], [["s0"], ["s4"], ["s1"], ["s7"]], [["s2"]]):
    srv.request("POST", "/sessions/%s/clear-stm" % sid, {})
    for ev in stm:
        srv.request("POST", "/sessions/%s/observe" % sid, {"strings": ev})
    st, got, text = srv.request("GET", "/sessions/%s/predictions" % sid)
    r = run("kato", "predict", "--patterns", events_file, "--stm", json.dumps(stm), "--json")
    want = json.loads(r.stdout)
    ck.check(got["count"] > 0 and got["predictions"] == want["predictions"] and got["future_potentials"] == want["future_potentials"],
             "predictions after import equal the CLI's for %s" % stm, "(%s / %s)" % (text[:200], r.stdout[:200]))
srv.stop()
sc.remove(tmp, args.keep)
ck.done()
