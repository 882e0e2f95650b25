#!/usr/bin/env python3
"""Oracle test: `tandem kato learn` and `tandem kato predict` against a Python transcription of
spec/kato.md sections 1 and 3 (KATO v3.10.1's learning and prediction).

What: seeded random knowledge bases (small alphabets so that patterns overlap, multi-symbol events,
re-learned patterns, 1-symbol patterns that must not be stored, emotives and metadata) are learned by the
CLI; (1) every pattern name must equal Python's sha1(str(pattern_data)) (symbols include quotes,
backslashes, control and non-printable Unicode characters, so repr's quoting and escaping rules all run);
(2) random STMs (edited copies of learned patterns, unknown symbols, 1-symbol STMs for the fast path)
under random configurations (recall_threshold 0 to 1, max_predictions small enough that pruning to
3 x max_predictions runs, every rank_sort_algo, token and character mode, with and without an affinity
emotive) are predicted by the CLI and by the reference below, and every field of every prediction must
be equal: symbol lists exactly, every double bit for bit (the CLI prints 17 significant digits);
(3) random sessions (`tandem kato session`: observations with emotives and metadata, empty observations,
explicit learns, clears, auto-learn in CLEAR and ROLLING modes with max_pattern_length 0-4, unsorted
events) must give the same auto-learned and learned names, STM lengths, times and predictions;
(4) names of 3,000 patterns whose symbols are drawn from every Unicode plane must match Python's;
(5) bad CLI input must fail with a message naming the problem.

Why: a seeded random comparison covers the interactions (pruning order, ensemble-wide probabilities,
future groups, ties) that hand-picked cases miss. The reference is written from the spec's formulas, with
CPython's difflib (autojunk off) for the Ratcliff/Obershelp blocks and a textbook DP for the LCS; it
fixes the orders KATO leaves open exactly as docs/kato-compat.md says tandem does (candidates in name
order, sums left to right, set iterations in first-seen order, ties by name). Replay with --seed.
"""

import difflib
import hashlib
import json
import math
import os
import random
import subprocess
import unicodedata
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_common as oc  # noqa: E402

RANKS = ["potential", "similarity", "evidence", "confidence", "snr", "fragmentation", "frequency",
         "normalized_entropy", "global_normalized_entropy", "itfdf_similarity", "confluence",
         "predictive_information", "bayesian_posterior", "bayesian_prior", "bayesian_likelihood", "tfidf_score",
         "weighted_similarity", "weighted_evidence", "weighted_confidence", "weighted_snr"]


# ---- the knowledge base (spec 1.3, 1.4) --------------------------------------------------------------------

def average_emotives(dicts):
    acc = {}
    for d in dicts:
        for k, v in d.items():
            acc.setdefault(k, []).append(v)
    out = {}
    for k, vs in acc.items():
        s = 0.0
        for v in vs:
            s += v
        out[k] = s / len(vs)
    return out


class KB:
    def __init__(self):
        self.patterns = {}          # name -> dict(events, frequency, emotives, metadata)
        self.freq = Counter()
        self.pmf = Counter()
        self.aff = {}
        self.tpf = 0
        self.tspf = 0
        self.emokeys = set()

    def learn(self, events, emotives, metadata, persistence):
        flat = [s for e in events for s in e]
        if len(flat) <= 1:
            return ""
        name = hashlib.sha1(str(events).encode("utf-8")).hexdigest()
        for d in emotives:
            self.emokeys.update(d.keys())
        p = self.patterns.get(name)
        if p is None:
            p = self.patterns[name] = {"events": [list(e) for e in events], "frequency": 1,
                                       "emotives": list(emotives)[-persistence:], "metadata": {}}
            for s in dict.fromkeys(flat):
                self.pmf[s] += 1
        else:
            p["frequency"] += 1
            p["emotives"] = (p["emotives"] + list(emotives))[-persistence:]
        for d in metadata:
            for k, v in d.items():
                p["metadata"].setdefault(k, set()).add(v)
        for s in flat:
            self.freq[s] += 1
        avg = average_emotives(emotives)
        for s in dict.fromkeys(flat):
            a = self.aff.setdefault(s, {})
            for k, v in avg.items():
                a[k] = a.get(k, 0.0) + v
        self.tpf += 1          # tandem counts re-learns (KATO's documented behaviour)
        self.tspf += len(flat)
        return name


# ---- similarity ------------------------------------------------------------------------------------------

def lcs(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def token_score(P, S):
    L = lcs(P, S)
    return (2.0 * L / (len(S) + len(P))) * 100.0


def char_score(P, S):
    A, B = " ".join(S), " ".join(P)
    T = len(A) + len(B)
    if T == 0:
        return 100.0
    L = lcs(list(A), list(B))
    return (1.0 - (T - 2 * L) / T) * 100.0


def blocks(a, b):
    return [tuple(x) for x in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()[:-1]]


# ---- predictions (spec 3) --------------------------------------------------------------------------------

def weight_fn(kb, emotive):
    def w(t):
        aff = kb.aff.get(t, {}).get(emotive, 0.0)
        f = kb.freq.get(t, 0)
        if not f or aff == 0.0:
            return 0.01
        return abs(aff) / f + 0.01
    return w


def extract(kb, name, S, stm, thr, w):
    p = kb.patterns[name]
    E = p["events"]
    P = [s for e in E for s in e]
    bl = blocks(P, S)
    if not bl and thr > 0:
        return None
    matches = [S[j + k] for (i, j, n) in bl for k in range(n)]
    if bl:
        i0 = bl[0][0]
        past_flat, present_flat = P[:i0], P[i0:bl[-1][0] + bl[-1][2]]
    else:
        past_flat, present_flat = [], P
    extras_flat = len(S) - sum(n for (_, _, n) in blocks(present_flat, S)) if present_flat else 0
    c = {"name": name, "P": P, "E": E, "frequency": p["frequency"], "matches": matches, "nb": len(bl)}
    c["evidence"] = len(matches) / len(P) if P else 0.0
    den = 2.0 * len(matches) + extras_flat
    c["snr"] = (2.0 * len(matches) - extras_flat) / den if den > 0 else 0.0
    c1, c2, ev = len(past_flat), 0, 0
    while c2 < c1:
        c2 += len(E[ev])
        ev += 1
    e1 = ev
    c1 += len(present_flat)
    while c2 < c1:
        c2 += len(E[ev])
        ev += 1
    past, present, future = E[:e1], E[e1:ev], E[ev:]
    if past and matches[0] in past[-1]:
        present = [past[-1]] + present
        past = past[:-1]
    c["past"], c["present"], c["future"] = past, present, future
    c["missing"] = [[s for s in e if s not in matches] for e in present]
    fp = [s for e in present for s in e]
    c["extras"] = [[s for s in e if s not in fp] for e in stm]
    plen = len(fp)
    c["confidence"] = len(matches) / plen if plen > 0 else 0.0
    c["fragmentation"] = float(len(bl) - 1)
    c["weighted_similarity"] = None
    if w:
        wm = sum_seq(w(t) for t in matches)
        ws = sum_seq(w(t) for t in S)
        wp = sum_seq(w(t) for t in P)
        if ws + wp != 0.0:
            c["weighted_similarity"] = 2.0 * wm / (ws + wp)
    return c


def sum_seq(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def frag_term(c):
    return 0.0 if c["fragmentation"] == -1 else 1.0 / (c["fragmentation"] + 1.0)


def rank_value(c, key):
    v = c.get(key)
    if v is None:
        return -math.inf
    return float(v)


def predict(kb, stm, cfg):
    S = [s for e in stm for s in e]
    thr, maxp = cfg["recall_threshold"], cfg["max_predictions"]
    emotive = cfg.get("affinity_emotive")
    w = weight_fn(kb, emotive) if emotive else None
    if not S:
        return [], []
    if len(S) == 1:
        return fast_path(kb, S[0], cfg, w), None
    C = []
    for name in sorted(kb.patterns):
        P = [s for e in kb.patterns[name]["events"] for s in e]
        r = token_score(P, S) if cfg["use_token_matching"] else char_score(P, S)
        if not r >= thr * 100 - 1e-6:
            continue
        sim = r / 100.0
        if not sim >= thr:
            continue
        c = extract(kb, name, S, stm, thr, w)
        if c is not None:
            c["similarity"] = sim
            C.append(c)
    if len(C) > 3 * maxp:
        for c in C:
            c["_pre_potential"] = (c["evidence"] + c["confidence"]) * c["snr"] + frag_term(c)
        C = sorted(C, key=lambda c: c["_pre_potential"], reverse=True)[:3 * maxp]
    for c in C:
        fp = [s for e in c["present"] for s in e]
        if w:
            wm = sum_seq(w(t) for t in c["matches"])
            wpat = sum_seq(w(t) for t in c["P"])
            wpres = sum_seq(w(t) for t in fp)
            wx = sum_seq(w(t) for e in c["extras"] for t in e)
            c["weighted_evidence"] = wm / wpat if wpat != 0.0 else 0.0
            c["weighted_confidence"] = wm / wpres if wpres != 0.0 else 0.0
            c["weighted_snr"] = wm / (wm + wx) if wm + wx != 0.0 else 0.0
        else:
            c["weighted_evidence"] = c["weighted_confidence"] = c["weighted_snr"] = None
    tpf, tup, nsym = kb.tpf, len(kb.patterns), sum(1 for s in kb.pmf if kb.pmf[s] > 0)
    F = sum(c["frequency"] for c in C)
    cache = set()
    for c in C:
        cache.update(c["matches"])
        cache.update(s for e in c["missing"] for s in e)

    def prob(s):
        return kb.pmf[s] / tup if s in cache and tup else 0.0

    Scount = Counter(S)
    for c in C:
        f = c["frequency"]
        fp = [s for e in c["present"] for s in e]
        pc = Counter(fp)
        D = sorted(set(fp) | set(S))
        a = [prob(s) * Scount.get(s, 0) for s in D]
        b = [prob(s) * pc.get(s, 0) for s in D]
        if all(x == 0 for x in a) or all(x == 0 for x in b):
            dist = 1.0
        else:
            dot = sum_seq(x * y for x, y in zip(a, b))
            na, nb = math.sqrt(sum_seq(x * x for x in a)), math.sqrt(sum_seq(y * y for y in b))
            dist = 1.0 if na == 0 or nb == 0 else 1 - dot / (na * nb)
        c["itfdf_similarity"] = 1 - dist * f / F if F > 0 else 0.0
        if fp and tpf:
            ls = 0.0
            for x in fp:
                pr = prob(x)
                ls += math.log10(pr if pr > 0 else 1e-10)
            c["confluence"] = f / tpf * (1 - 10 ** ls)
        else:
            c["confluence"] = 0.0
        L = len(fp)
        ent = nent = gent = tf = 0.0
        for x, k in pc.items():
            q = k / L
            ent += -(q * math.log(q, 2))
            if nsym > 1:
                nent += -q * math.log(q, nsym)
            pr = prob(x)
            if nsym > 1 and pr > 0:
                gent += -pr * math.log(pr, nsym)
            if tup:
                n_x = max(int(pr * tup) if x in kb.pmf else 1, 1)
                tf += q * (math.log2(tup / n_x) + 1)
        c["entropy"], c["normalized_entropy"], c["global_normalized_entropy"] = ent, nent, gent
        c["tfidf_score"] = tf / len(pc) if L and tup else 0.0
    groups = {}
    for c in C:
        if not c["future"]:
            continue
        key = tuple(tuple(sorted(e)) for e in c["future"])
        g = groups.setdefault(key, {"future": c["future"], "w": 0.0, "n": 0})
        g["w"] += c["frequency"] * c["similarity"]
        g["n"] += 1
    wtotal = sum_seq(g["w"] for g in groups.values())
    post_total = 0.0
    for c in C:
        c["pattern_probability"] = c["frequency"] / F
        c["weighted_strength"] = c["similarity"] * c["pattern_probability"]
        agg = 0.0
        if c["future"] and wtotal > 0:
            agg = groups[tuple(tuple(sorted(e)) for e in c["future"])]["w"] / wtotal
        c["predictive_information"] = c["weighted_strength"] / agg if agg > 0 else 0.0
        c["bayesian_prior"] = c["frequency"] / F
        c["bayesian_likelihood"] = c["similarity"]
        post_total += c["similarity"] * c["bayesian_prior"]
    for c in C:
        c["bayesian_posterior"] = c["similarity"] * c["bayesian_prior"] / post_total if post_total > 0 else 0.0
        if w:
            c["potential"] = (c["weighted_evidence"] + c["weighted_confidence"]) * c["weighted_snr"] + c["itfdf_similarity"] + frag_term(c)
        else:
            c["potential"] = (c["evidence"] + c["confidence"]) * c["snr"] + c["itfdf_similarity"] + frag_term(c)
    key = cfg["rank_sort_algo"]
    C = sorted(C, key=lambda c: (-rank_value(c, key), c["name"]))[:maxp]
    fut = [{"future": g["future"], "aggregate_potential": g["w"] / wtotal if wtotal > 0 else 0.0,
            "supporting_patterns": g["n"], "total_weighted_frequency": g["w"]} for g in groups.values()]
    fut = sorted(fut, key=lambda g: g["aggregate_potential"], reverse=True)
    return [output(kb, c, True) for c in C], fut


def fast_path(kb, s, cfg, w):
    C = []
    for name in sorted(kb.patterns):
        E = kb.patterns[name]["events"]
        P = [x for e in E for x in e]
        if not E[0] or P[0] != s:
            continue
        sim = 2.0 * 1 / (len(P) + 1) if cfg["use_token_matching"] else char_score(P, [s]) / 100.0
        c = {"name": name, "P": P, "E": E, "frequency": kb.patterns[name]["frequency"], "matches": [s],
             "past": [], "present": [s], "future": P[1:], "missing": [], "extras": [], "similarity": sim,
             "evidence": 1 / len(P), "confidence": 1.0, "snr": 1.0, "fragmentation": 0.0,
             "weighted_similarity": None, "weighted_evidence": None, "weighted_confidence": None, "weighted_snr": None}
        if w:
            c["weighted_similarity"] = 2.0 * w(s) / (w(s) + sum_seq(w(t) for t in P))
        c["potential"] = (c["evidence"] + c["confidence"]) * c["snr"] + frag_term(c)
        C.append(c)
    C = sorted(C, key=lambda c: (-c["potential"], c["name"]))[:cfg["max_predictions"]]
    return [output(kb, c, False) for c in C]


FIELDS_FAST = ["name", "frequency", "emotives", "matches", "past", "present", "future", "missing", "extras",
               "similarity", "evidence", "confidence", "snr", "fragmentation", "potential", "weighted_similarity",
               "weighted_evidence", "weighted_confidence", "weighted_snr"]
FIELDS_FULL = FIELDS_FAST + ["type", "confluence", "predictive_information", "sequence", "entropy",
                             "normalized_entropy", "global_normalized_entropy", "itfdf_similarity", "tfidf_score",
                             "pattern_probability", "weighted_strength", "bayesian_posterior", "bayesian_prior",
                             "bayesian_likelihood"]


def output(kb, c, full):
    o = {k: c.get(k) for k in (FIELDS_FULL if full else FIELDS_FAST)}
    o["emotives"] = average_emotives(kb.patterns[c["name"]]["emotives"])
    o["anomalies"] = []
    if not full:
        o["pattern_data"] = c["E"]
        o["length"] = len(c["P"])
    if full:
        o["type"] = "prototypical"
        o["sequence"] = c["E"]
        if "_pre_potential" in c:
            o["_pre_potential"] = c["_pre_potential"]
    return o


# ---- random inputs -------------------------------------------------------------------------------------

ODD = ["it's", 'say "hi"', "a\\b", "tab\there", "nl\nx", "\x7f", "\x01", "\u00fc", "\u00a0", "\u2028",
       "\U0001F600", "\u05d0", "", "\ufeff", "\U000e0001", "'\"", "\u0378"]


def rand_symbol(rng, alpha):
    if rng.random() < 0.04:
        return rng.choice(ODD)
    return "s%d" % rng.randrange(alpha)


def rand_events(rng, alpha, max_events=5, max_event=3):
    return [sorted(rand_symbol(rng, alpha) for _ in range(rng.randint(1, max_event)))
            for _ in range(rng.randint(1, max_events))]


def rand_kb_lines(rng):
    alpha = rng.choice([3, 5, 8, 15])
    lines, seen = [], []
    for _ in range(rng.randint(5, 45)):
        if seen and rng.random() < 0.15:
            ev = rng.choice(seen)            # a re-learn
        elif rng.random() < 0.05:
            ev = [[rand_symbol(rng, alpha)]]  # one symbol: not stored
        else:
            ev = rand_events(rng, alpha)
            seen.append(ev)
        emo = [{k: round(rng.uniform(-2, 2), rng.choice([0, 1, 3])) for k in rng.sample(["joy", "fear", "e3"], rng.randint(1, 2))}
               for _ in range(rng.randint(0, 7))]
        meta = [{"src": rng.choice(["a", "b", "c"]), "n": rng.randint(0, 3)} for _ in range(rng.randint(0, 2))]
        lines.append({"events": ev, "emotives": emo, "metadata": meta})
    return alpha, lines, seen


def rand_stm(rng, alpha, seen):
    r = rng.random()
    if r < 0.12:
        return [[rand_symbol(rng, alpha)]] if rng.random() < 0.8 else [[rng.choice(seen)[0][0]]]
    if r < 0.55 and seen:
        flat = [s for e in rng.choice(seen) for s in e]
        k = rng.randint(0, len(flat) - 1)
        flat = flat[k:k + rng.randint(1, 6)]
        flat = [("zz%d" % rng.randrange(3)) if rng.random() < 0.1 else s for s in flat]
        if rng.random() < 0.4:
            flat.append(rand_symbol(rng, alpha))
        ev, i = [], 0
        while i < len(flat):
            n = rng.randint(1, 2)
            ev.append(sorted(flat[i:i + n]))
            i += n
        return ev
    return rand_events(rng, alpha + 2, 4, 2)


def rand_cfg(rng):
    return {"recall_threshold": rng.choice([0.0, 0.1, 0.1, 0.2, 0.3, 0.5, 2 / 3, 0.6666666666666665, 1.0, rng.random()]),
            "max_predictions": rng.choice([1, 2, 3, 5, 100]),
            "use_token_matching": rng.random() < 0.75,
            "rank_sort_algo": rng.choice(RANKS + ["potential"] * 10),
            "affinity_emotive": rng.choice([None, None, None, "joy", "nope"])}


# ---- comparison -----------------------------------------------------------------------------------------

def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def diff(want, got):
    """First differing path, for the failure message."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in set(want) | set(got):
            if k not in want or k not in got:
                return "%s: only on one side" % k
            d = diff(want[k], got[k])
            if not d and k == "emotives" and list(want[k]) != list(got[k]):
                d = ": key order %r vs %r" % (list(want[k]), list(got[k]))
            if d:
                return "%s.%s" % (k, d) if not d.startswith("[") else k + d
        return None
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return ": lengths %d (want) vs %d (got)" % (len(want), len(got))
        for i, (x, y) in enumerate(zip(want, got)):
            d = diff(x, y)
            if d:
                return "[%d]%s" % (i, d if d.startswith("[") or d.startswith(":") else "." + d)
        return None
    return None if same(want, got) else ": want %r, got %r" % (want, got)


# ---- sessions (spec 1.1, 1.2): observe, auto-learn, learn, clear -------------------------------------------

def run_session(kb, lines, opts):
    """The expected output line for each observation line."""
    events, emo, meta, time = [], [], [], 0
    mpl, out = opts["mpl"], []
    for l in lines:
        if l.get("clear"):
            events, emo, meta, time = [], [], [], 0
            out.append({"auto_learned": None, "learned": None, "stm_length": 0, "time": 0, "predictions": None})
            continue
        strings = l.get("strings", [])
        if strings:
            events.append(sorted(strings) if opts["sort"] else list(strings))
        if l.get("emotives"):
            emo.append(l["emotives"])
        if l.get("metadata"):
            meta.append({k: str(v) for k, v in l["metadata"].items()})
        time += 1
        auto = None
        if strings and mpl > 0 and len(events) >= mpl:
            keep = []
            if len(events) > 1 and opts["rolling"]:
                w = mpl - 1
                keep = (events[-w:] if w else []) if len(events) > w else events[1:]
            auto = kb.learn(events, emo, meta, opts["persistence"]) or None
            events = keep
        learned = None
        if l.get("learn"):
            learned = kb.learn(events, emo, meta, opts["persistence"])
            events = []
        preds = None
        if l.get("predict"):
            cfg = opts["cfg"]
            p, fut = predict(kb, events, cfg)
            preds = {"predictions": p, "future_potentials": fut, "count": len(p)}
        out.append({"auto_learned": auto, "learned": learned, "stm_length": len(events), "time": time, "predictions": preds})
    return out


def rand_session(rng):
    alpha = rng.choice([3, 4, 6])
    opts = {"mpl": rng.choice([0, 0, 1, 2, 3, 4]), "rolling": rng.random() < 0.5, "sort": rng.random() < 0.8,
            "persistence": rng.choice([1, 2, 5]), "cfg": rand_cfg(rng)}
    lines, nevents = [], 0
    for _ in range(rng.randint(10, 40)):
        r = rng.random()
        if r < 0.03:
            lines.append({"clear": True})
            nevents = 0
            continue
        l = {"strings": [] if r < 0.08 else [rand_symbol(rng, alpha) for _ in range(rng.randint(1, 3))]}
        if rng.random() < 0.4:
            l["emotives"] = {k: rng.randint(-3, 3) / 2 for k in rng.sample(["joy", "fear"], rng.randint(1, 2))}
        if rng.random() < 0.2:
            l["metadata"] = {"k": rng.choice(["x", 1, 2.5, True, None])}
        if l["strings"]:  # the STM length after this observation, auto-learn included
            nevents += 1
            if opts["mpl"] and nevents >= opts["mpl"]:
                nevents = opts["mpl"] - 1 if opts["rolling"] and nevents > 1 else 0
        if rng.random() < 0.15 and nevents:
            l["learn"] = True
            nevents = 0
        if rng.random() < 0.4:
            l["predict"] = True
        lines.append(l)
    return opts, lines


def session_argv(opts):
    cfg = opts["cfg"]
    argv = ["--max-pattern-length", str(opts["mpl"]), "--persistence", str(opts["persistence"]),
            "--threshold", repr(cfg["recall_threshold"]), "--max-predictions", str(cfg["max_predictions"]),
            "--rank", cfg["rank_sort_algo"]]
    if opts["rolling"]:
        argv.append("--rolling")
    if not opts["sort"]:
        argv.append("--no-sort")
    if not cfg["use_token_matching"]:
        argv.append("--char")
    if cfg["affinity_emotive"]:
        argv += ["--affinity", cfg["affinity_emotive"]]
    return argv


def check_sessions(tandem, tmp, rng, n, shown):
    passed = failed = 0
    for si in range(n):
        opts, lines = rand_session(rng)
        ofile = os.path.join(tmp, "s%d.jsonl" % si)
        with open(ofile, "w", encoding="utf-8") as f:
            for l in lines:
                f.write(json.dumps(l) + "\n")
        out = subprocess.run([tandem, "kato", "session", "--observations", ofile] + session_argv(opts),
                             capture_output=True, text=True)
        want = run_session(KB(), lines, opts)
        if out.returncode != 0:
            failed += 1
            print("FAIL session %d: CLI exit %d: %s" % (si, out.returncode, out.stderr.strip()))
            continue
        got = [json.loads(x) for x in out.stdout.split("\n")[:-1]]
        d = diff(want, got)
        if d is None:
            passed += 1
            continue
        failed += 1
        if shown < oc.MAX_SHOWN:
            shown += 1
            print("FAIL session %d: lines%s\n  options %s\n  observations %s" % (si, d, " ".join(session_argv(opts)), ofile))
    return passed, failed


def check_names(tandem, tmp, rng, n):
    """Pattern names of symbols drawn from every Unicode plane (printable, non-printable, unassigned, quotes,
    backslashes, controls): the C repr must agree with CPython's for each code point class."""
    def rand_cp():
        r = rng.random()
        if r < 0.3:
            return chr(rng.randrange(0x20, 0x7f))
        if r < 0.4:
            return rng.choice("'\"\\\t\n\r\x00\x7f")
        if r < 0.7:
            cp = rng.randrange(0x80, 0x3400)
        elif r < 0.9:
            cp = rng.randrange(0x3400, 0x10000)
        else:
            cp = rng.randrange(0x10000, 0x110000)
        if 0xD800 <= cp < 0xE000:
            cp = 0xE000
        c = chr(cp)
        # tandem reproduces CPython 3.11's repr (Unicode 14.0). Under another Python, a code point assigned
        # after 14.0 prints differently (U+0ECE is unassigned in 14.0, a mark in 15.0), so only code points
        # that both databases must agree on are drawn: assigned by Unicode 3.2, or unassigned here too.
        if unicodedata.unidata_version != "14.0.0" and unicodedata.category(c) != "Cn" \
                and unicodedata.ucd_3_2_0.category(c) == "Cn":
            return "?"
        return c
    lines = []
    for _ in range(n):
        ev = [["".join(rand_cp() for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 3))]
              for _ in range(rng.randint(1, 3))]
        if sum(len(e) for e in ev) < 2:
            ev.append(["x"])
        lines.append(ev)
    pfile = os.path.join(tmp, "names.jsonl")
    with open(pfile, "w", encoding="utf-8") as f:
        for ev in lines:
            f.write(json.dumps(ev, ensure_ascii=bool(rng.getrandbits(1))) + "\n")
    out = subprocess.run([tandem, "kato", "learn", "--patterns", pfile], capture_output=True, text=True)
    got = out.stdout.split("\n")[:-1]
    bad = 0
    if out.returncode != 0 or len(got) != len(lines):
        print("FAIL names: CLI exit %d: %s" % (out.returncode, out.stderr.strip()))
        return 0, 1
    for ev, name in zip(lines, got):
        want = hashlib.sha1(str(ev).encode("utf-8")).hexdigest()
        if name != want:
            bad += 1
            if bad <= oc.MAX_SHOWN:
                print("FAIL name of %s: want %s (repr %s), got %s" % (ascii(ev), want, ascii(str(ev)), name))
    return len(lines) - bad, bad


def check_cli_errors(tandem, tmp):
    """Bad input to the CLI: a non-zero exit and a message naming the problem (and the line). Returns the
    number of failures."""
    pfile = os.path.join(tmp, "bad_patterns.jsonl")
    with open(pfile, "w") as f:
        f.write('[["a"], ["b"]]\n[["a"], "b"]\n')
    qfile = os.path.join(tmp, "bad_queries.jsonl")
    with open(qfile, "w") as f:
        f.write('{"stm": [["a"], ["b"]], "config": {"recall_treshold": 0.2}}\n')
    good = os.path.join(tmp, "good_patterns.jsonl")
    with open(good, "w") as f:
        f.write('[["a"], ["b"]]\n')
    cases = [
        (["kato", "learn", "--patterns", pfile], "line 2"),
        (["kato", "predict", "--patterns", good, "--queries", qfile, "--json"], "recall_treshold"),
        (["kato", "predict", "--patterns", good, "--stm", "[[\"a\"]", "--json"], "--stm"),
        (["kato", "predict", "--patterns", good, "--stm", "[[\"a\"]]", "--threshold", "1.5"], "--threshold"),
        (["kato", "predict", "--patterns", good, "--stm", "[[\"a\"]]", "--rank", "potentail"], "rank_sort_algo"),
        (["kato", "predict", "--patterns", good], "--stm"),
    ]
    bad = 0
    for argv, want in cases:
        out = subprocess.run([tandem] + argv, capture_output=True, text=True)
        if out.returncode == 0 or want not in out.stderr:
            bad += 1
            print("FAIL cli %s: exit %d, stderr %r (want a message with %r)" % (" ".join(argv[1:3]), out.returncode, out.stderr, want))
    out = subprocess.run([tandem, "kato", "predict", "--help"], capture_output=True, text=True)
    if out.returncode != 0 or "usage: tandem kato predict" not in out.stdout:
        bad += 1
        print("FAIL cli: kato predict --help")
    return bad


def main():
    args = oc.parse_args(__doc__, lambda p: p.add_argument("--kbs", type=int, default=24, help="random knowledge bases"))
    rng = random.Random(args.seed)
    nkb = max(1, int(args.kbs * args.scale))
    passed = failed = shown = 0
    cover = Counter()  # what the compared queries exercised, printed so a weak run is visible
    tmp = tempfile.mkdtemp(prefix="kato-oracle-")
    for kbi in range(nkb):
        alpha, lines, seen = rand_kb_lines(rng)
        if not seen:
            continue
        kb = KB()
        names = [kb.learn(l["events"], l["emotives"], [{k: str(v) for k, v in m.items()} for m in l["metadata"]], 5) for l in lines]
        pfile = os.path.join(tmp, "p%d.jsonl" % kbi)
        with open(pfile, "w", encoding="utf-8") as f:
            for l in lines:
                f.write(json.dumps(l, ensure_ascii=bool(rng.getrandbits(1))) + "\n")
        out = subprocess.run([args.tandem, "kato", "learn", "--patterns", pfile], capture_output=True, text=True)
        got_names = out.stdout.split("\n")[:-1] if out.returncode == 0 else None
        if got_names != names:
            failed += 1
            print("FAIL kb %d names: %s\n  want %s\n  got  %s" % (kbi, out.stderr.strip(), names[:5], (got_names or [])[:5]))
            continue
        passed += 1
        queries = []
        for _ in range(rng.randint(8, 20)):
            queries.append((rand_stm(rng, alpha, seen), rand_cfg(rng)))
        qfile = os.path.join(tmp, "q%d.jsonl" % kbi)
        with open(qfile, "w", encoding="utf-8") as f:
            for stm, cfg in queries:
                f.write(json.dumps({"stm": stm, "config": cfg}) + "\n")
        out = subprocess.run([args.tandem, "kato", "predict", "--patterns", pfile, "--queries", qfile, "--json"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            failed += 1
            print("FAIL kb %d: CLI exit %d: %s" % (kbi, out.returncode, out.stderr.strip()))
            continue
        results = out.stdout.split("\n")[:-1]
        for qi, ((stm, cfg), line) in enumerate(zip(queries, results)):
            got = json.loads(line)
            want_preds, want_fut = predict(kb, stm, cfg)
            d = diff(want_preds, got["predictions"])
            if d is None and want_fut is not None:
                d = diff(want_fut, got["future_potentials"])
            if d is None:
                passed += 1
                S = [x for e in stm for x in e]
                cover["fast path" if len(S) == 1 else "full path"] += 1
                cover["non-empty"] += bool(want_preds)
                cover["pruned"] += any("_pre_potential" in p for p in want_preds)
                cover["affinity"] += any(p["weighted_evidence"] is not None or p["weighted_similarity"] is not None for p in want_preds)
                cover["char mode"] += not cfg["use_token_matching"] and bool(want_preds)
                cover["threshold 0"] += cfg["recall_threshold"] == 0.0 and bool(want_preds)
                cover["fragmentation -1"] += any(p["fragmentation"] == -1 for p in want_preds)
                cover["truncated"] += len(want_preds) == cfg["max_predictions"]
                continue
            failed += 1
            if shown < oc.MAX_SHOWN:
                shown += 1
                print("FAIL kb %d query %d: predictions%s\n  stm %s\n  config %s\n  patterns %s" %
                      (kbi, qi, d, json.dumps(stm), json.dumps(cfg), pfile))
    sp, sf = check_sessions(args.tandem, tmp, rng, max(1, int(12 * args.scale)), shown)
    passed, failed = passed + sp, failed + sf
    cover["sessions"] += sp
    npass, nfail = check_names(args.tandem, tmp, rng, max(1, int(3000 * args.scale)))
    passed, failed = passed + npass, failed + nfail
    cover["unicode names"] += npass
    failed += check_cli_errors(args.tandem, tmp)
    print("covered: " + ", ".join("%s %d" % kv for kv in sorted(cover.items())))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
