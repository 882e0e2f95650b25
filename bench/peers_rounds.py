"""peers_rounds.py: `peers.py rounds`, the interleaved rounds of the threshold-0.1 targets (bench/README.md).

The development VM drifts in speed by 1.5-2x over minutes, and `run-seq.sh` times tandem (bench_seq) minutes
before the peers (`peers.py run`), so the same code can score 19x in one run and 30x in the next. Here both
sides are timed in the same minutes: bench_seq_rounds (tandem's side, a child process that built the store
once) and this process (RapidFuzz built once, CPython's difflib) take turns, round after round, the first
side alternating; while one side works the other waits idle on a pipe. Each round yields the four ratios,
the verdict of each target is taken on the median over the rounds, and every RapidFuzz hit set is checked
against tandem's answer to the same query. The helpers (Rapid, check_hits, the difflib loops, digests) are
peers.py's; this file only drives the rounds. Run through peers.py (`peers.py rounds --help`).
"""
import json
import os
import statistics
import subprocess
import sys
import time

import peers as P

THR = 0.1
FULL_SIZE = 1000000

# (key, title, target ratio)
TARGETS = [
    ("lcs_batch", "lcs thr 0.1 query, batched", 20.0),
    ("lcs_single", "lcs thr 0.1 query, one at a time", 20.0),
    ("difflib_pair", "exact difflib per pair", 50.0),
    ("difflib_query", "difflib thr 0.1 query", 1000.0),
]


def fnv_u32(h, v):
    """bench_seq_rounds' FNV-1a step over one 32-bit value (little-endian bytes)."""
    for b in range(4):
        h ^= (v >> (8 * b)) & 0xFF
        h = (h * 0x100000001B3) & P.M64
    return h


FNV_SEED = 0xCBF29CE484222325


def rank(sym):
    return int(sym[1:]) if sym[:1] == "s" and sym[1:].isdigit() else -1


def stms_digest(stms):
    h = FNV_SEED
    for s in stms:
        h = fnv_u32(h, len(s))
        for sym in s:
            h = fnv_u32(h, rank(sym) & 0xFFFFFFFF)
    return format(h, "016x")


def pair_ids_digest(pairs):
    h = FNV_SEED
    for p in pairs:
        h = fnv_u32(h, p["pattern"])
    return format(h, "016x")


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def stamp():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ChildError(Exception):
    pass


class Child:
    """bench_seq_rounds on pipes: one command line in, one JSON line out."""

    def __init__(self, argv):
        self.argv = argv
        # Its diagnostics join this process's output (in order: it writes them while this process waits), so
        # that what run-seq.sh keeps as rounds.txt has them too.
        sys.stdout.flush()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stdout, text=True,
                                  bufsize=1)

    def read(self, what):
        line = self.p.stdout.readline()
        if not line:
            raise ChildError(f"bench_seq_rounds ended while {what} (exit status {self.p.wait()})")
        try:
            return json.loads(line)
        except ValueError:
            raise ChildError(f"bench_seq_rounds wrote something that is not JSON while {what}: {line[:200]!r}")

    def round(self):
        self.p.stdin.write("round\n")
        self.p.stdin.flush()
        return self.read("running a round")

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.close()
                self.p.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()
        return self.p.returncode


def mean_ms(runs):
    return sum(r[2] for r in runs) / len(runs) * 1e3


def peer_round(np, rf, stms, loops, npairs, B, S, batch, refs):
    """The peers' side of one round: RapidFuzz's two batched and two one-query configs, then CPython's two
    loops over the pair sample (one pass each). Every hit set is checked against tandem's (refs) as soon as
    its config has run, so that no config's answers are held while the next one is timed."""
    qb, qs = list(range(B)), list(range(S))
    configs = [
        ("cdist_encoded_batch", "batch", lambda: rf.cdist_batch(stms, qb, [THR], batch)),
        ("cdist_indel_batch", "batch", lambda: rf.cdist_indel_batch(stms, qb, [THR], batch)),
        ("cdist_encoded", "single", lambda: rf.cdist_single(stms, qs, [THR], True)),
        ("extract_indel", "single", lambda: rf.extract_indel(stms, qs, [THR])),
    ]
    out = {"start": stamp(), "start_unix": time.time(), "rapidfuzz": {}}
    bad = []
    for name, kind, fn in configs:
        runs = fn()
        checked, nbad, details = P.check_hits(np, runs, refs[kind])
        if checked != len(runs):  # a hit set with no answer of tandem's to compare with is a failure too
            nbad += len(runs) - checked
            details.append({"unchecked": len(runs) - checked})
        out["rapidfuzz"][name] = {"kind": kind, "queries": len(runs), "mean_ms": mean_ms(runs),
                                  "per_query_ms": [r[2] * 1e3 for r in runs], "checked": checked, "mismatches": nbad,
                                  "hits": [int(len(r[3])) for r in runs]}
        if nbad:
            bad.append((name, nbad, details[:5]))
        del runs
    abs_, groups = loops
    fresh, reuse = P.time_difflib_fresh(abs_), P.time_difflib_reuse(groups)
    out["cpython"] = {"pairs": npairs, "ns_per_pair": fresh / npairs * 1e9, "ns_per_pair_b_reused": reuse / npairs * 1e9}
    out["end"] = stamp()
    out["end_unix"] = time.time()
    return out, bad


def ratios(t, p, n_patterns):
    """The four ratios of one round, with the peer figure each is taken against."""
    rf = p["rapidfuzz"]
    best_b = min((k for k in rf if rf[k]["kind"] == "batch"), key=lambda k: rf[k]["mean_ms"])
    best_s = min((k for k in rf if rf[k]["kind"] == "single"), key=lambda k: rf[k]["mean_ms"])
    c = p["cpython"]
    loop_ns = min(c["ns_per_pair"], c["ns_per_pair_b_reused"])
    loop_ms = loop_ns * 1e-6 * n_patterns
    loop_kind = "new matcher per pair" if c["ns_per_pair"] <= c["ns_per_pair_b_reused"] else "b set once per STM"
    return {
        "lcs_batch": {"tandem_ms": t["lcs_batch"]["ms_per_query"], "peer_ms": rf[best_b]["mean_ms"], "peer": best_b,
                      "ratio": rf[best_b]["mean_ms"] / t["lcs_batch"]["ms_per_query"]},
        "lcs_single": {"tandem_ms": t["lcs_single"]["mean_ms"], "peer_ms": rf[best_s]["mean_ms"], "peer": best_s,
                       "ratio": rf[best_s]["mean_ms"] / t["lcs_single"]["mean_ms"]},
        "difflib_pair": {"tandem_ns": t["difflib_pairs"]["ns_per_pair"], "peer_ns": c["ns_per_pair"],
                         "peer": "CPython, new matcher per pair",
                         "ratio": c["ns_per_pair"] / t["difflib_pairs"]["ns_per_pair"]},
        "difflib_query": {"tandem_ms": t["difflib_single"]["mean_ms"], "peer_ms": loop_ms,
                          "peer": f"CPython loop, {loop_kind}",
                          "ratio": loop_ms / t["difflib_single"]["mean_ms"]},
    }


def tandem_refs(t):
    """tandem's answers as check_hits takes them: batched ones for the batched configs, one-at-a-time ones
    for the one-query configs."""
    def ref(part):
        return {(q, THR): {"n": n, "digest": d} for q, (n, d) in enumerate(zip(part["hits"], part["digests"]))}
    return {"batch": ref(t["lcs_batch"]), "single": ref(t["lcs_single"])}


def answers_of(t):
    return {k: (t[k]["hits"], t[k]["digests"]) for k in ("lcs_batch", "lcs_single", "difflib_single")}


def fmt_ratio(x):
    return f"{x:.1f}x" if x < 100 else f"{x:.0f}x"


def round_line(i, R, first, la0, la1, t, p, rf):
    """One line per round: both sides' figures and the four ratios (rf: ratios())."""
    c = p["cpython"]
    def load(la):
        return f"{la[0]:.2f}" if la else "?"
    return (f"round {i}/{R} ({first} first; load {load(la0)} -> {load(la1)}): "
            f"tandem lcs {t['lcs_batch']['ms_per_query']:.3f} ms/q batched, {t['lcs_single']['mean_ms']:.2f} ms "
            f"one at a time; difflib {t['difflib_single']['mean_ms']:.2f} ms/query, "
            f"{t['difflib_pairs']['ns_per_pair']:.0f} ns/pair | peers lcs {rf['lcs_batch']['peer_ms']:.2f} ms/q "
            f"({rf['lcs_batch']['peer']}), {rf['lcs_single']['peer_ms']:.1f} ms ({rf['lcs_single']['peer']}); "
            f"CPython {c['ns_per_pair']:.0f} ns/pair new matcher, {c['ns_per_pair_b_reused']:.0f} b once, "
            f"faster loop {rf['difflib_query']['peer_ms'] / 1e3:.2f} s | ratios: lcs batched "
            f"{fmt_ratio(rf['lcs_batch']['ratio'])}, one at a time {fmt_ratio(rf['lcs_single']['ratio'])}, "
            f"difflib pair {fmt_ratio(rf['difflib_pair']['ratio'])}, query {fmt_ratio(rf['difflib_query']['ratio'])}")


def summarize_targets(rounds, full):
    out = []
    for key, title, need in TARGETS:
        rs = [r["ratios"][key]["ratio"] for r in rounds]
        med = statistics.median(rs)
        verdict = "met" if med >= need else "MISSED"
        if not full:
            verdict += " (smoke run, not the target size)"
        out.append({"target": key, "title": title, "needed": need, "ratios": rs, "median": med, "min": min(rs),
                    "max": max(rs), "rounds_met": sum(1 for x in rs if x >= need), "rounds": len(rs),
                    "verdict": verdict})
    return out


def print_tables(log, rounds, targets, n_patterns, B, S, D, batch, npairs):
    what = {
        "lcs_batch": (f"tandem: one tdm_seq_query_batch over the first {B} STMs; peer: the faster of cdist_encoded_batch "
                      f"and cdist_indel_batch (batches of {batch}); ms per query", "ms/q"),
        "lcs_single": (f"tandem: tdm_seq_query, mean over the first {S} STMs; peer: the faster of cdist_encoded and "
                       f"extract_indel over the same STMs; ms per query", "ms"),
        "difflib_pair": (f"{npairs} sampled pairs, both in process, a new matcher per pair; ns per pair", "ns"),
        "difflib_query": (f"tandem: mean over the first {D} STMs; peer: CPython's faster loop per pair x {n_patterns}; "
                          f"ms per query", "ms"),
    }
    for tg in targets:
        key = tg["target"]
        note, unit = what[key]
        log(f"\n{tg['title']}: target >= {tg['needed']:.0f}x ({note})")
        log(f"  {'round':>5}  {'first':<7} {'load':>5} {'tandem':>11} {'peer':>13}  {'peer config':<34} {'ratio':>8}")
        for r in rounds:
            x = r["ratios"][key]
            tv = x.get("tandem_ms", x.get("tandem_ns"))
            pv = x.get("peer_ms", x.get("peer_ns"))
            la = r["loadavg_start"][0] if r["loadavg_start"] else float("nan")
            log(f"  {r['round']:>5}  {r['first']:<7} {la:>5.2f} {tv:>11.3f} {pv:>13.3f}  {x['peer']:<34} "
                f"{fmt_ratio(x['ratio']):>8}{'' if x['ratio'] >= tg['needed'] else '  (below)'}")
        log(f"  median {fmt_ratio(tg['median'])}, min {fmt_ratio(tg['min'])}, max {fmt_ratio(tg['max'])}; "
            f"met in {tg['rounds_met']} of {tg['rounds']} rounds; verdict on the median: {tg['verdict']}")
    log("\n%-36s %9s %9s %9s %7s %7s  %s" % ("target (interleaved rounds)", "median", "min", "max", "needed", "met in",
                                            "verdict"))
    for tg in targets:
        log("%-36s %9s %9s %9s %6.0fx %3d of %d  %s" % (tg["title"], fmt_ratio(tg["median"]), fmt_ratio(tg["min"]),
                                                       fmt_ratio(tg["max"]), tg["needed"], tg["rounds_met"],
                                                       tg["rounds"], tg["verdict"]))


def cmd_rounds(args):
    import numpy as np
    import rapidfuzz
    log = P.log
    for opt in ("rounds", "patterns", "threads", "batch_queries", "single_queries", "difflib_queries", "batch"):
        if getattr(args, opt) < 1:
            sys.exit(f"peers.py rounds: --{opt.replace('_', '-')} must be at least 1, not {getattr(args, opt)}")
    if args.pool < 0 or args.seed < 0:
        sys.exit("peers.py rounds: --pool and --seed cannot be negative")
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"peers.py rounds: {args.bin} is not an executable (build bench_seq_rounds first)")
    stms = P.read_jsonl(os.path.join(args.dump, "stms.jsonl"))
    pairs = P.read_jsonl(os.path.join(args.dump, "pairs.jsonl"))
    nq = len(stms)
    if not nq or not pairs or len(pairs) % nq or any(p["stm"] != k // (len(pairs) // nq) for k, p in enumerate(pairs)):
        sys.exit(f"peers.py rounds: {args.dump} holds {nq} STMs and {len(pairs)} pairs, not a whole number of "
                 "pairs per STM in STM order (was it written by bench_seq --dump-dir?)")
    per = len(pairs) // nq
    B, S, D = min(args.batch_queries, nq), min(args.single_queries, nq), min(args.difflib_queries, nq)
    pool = args.pool if args.pool else (2000 if args.quick else 10000)
    full = args.patterns == FULL_SIZE
    argv = [args.bin, "--patterns", str(args.patterns), "--pool", str(pool), "--queries", str(nq), "--pairs-per",
            str(per), "--seed", str(args.seed), "--threads", str(args.threads), "--batch-queries", str(B),
            "--single-queries", str(S), "--difflib-queries", str(D)]
    out = {"tool": "peers.py rounds", "python": sys.version.split()[0], "rapidfuzz_version": rapidfuzz.__version__,
           "numpy": np.__version__, "online_cores": os.cpu_count(), "date": stamp(), "quick": args.quick,
           "patterns": args.patterns, "seed": args.seed, "pool": pool, "threads": args.threads, "stms": nq,
           "pairs": len(pairs), "batch_queries": B, "single_queries": S, "difflib_queries": D, "batch": args.batch,
           "threshold": THR, "child_argv": argv, "loadavg_at_start": loadavg(), "rounds": []}
    log(f"rounds: {args.rounds} interleaved rounds at {args.patterns} patterns, threshold {THR}; tandem: "
        f"{' '.join(argv)}")

    # The child builds its store while this process loads the data and prepares RapidFuzz: nothing is timed
    # before both are ready.
    t_setup = time.perf_counter()
    child = Child(argv)
    try:
        return run_rounds(args, out, child, stms, pairs, per, B, S, D, full, np, log, t_setup)
    except ChildError as e:
        log(f"rounds: {e}")
        return 1
    finally:
        rc = child.close()
        if rc:
            log(f"rounds: bench_seq_rounds exited with status {rc}")


def run_rounds(args, out, child, stms, pairs, per, B, S, D, full, np, log, t_setup):
    t0 = time.perf_counter()
    pats = P.load_patterns(args.data, args.patterns)
    out["load_s"] = time.perf_counter() - t0
    problems = []
    misaligned = P.misaligned_pairs(pats, pairs)
    if misaligned:
        problems.append(f"{misaligned} sampled pairs do not match the data file (different seed or size?)")
    t0 = time.perf_counter()
    rf = P.Rapid(pats, args.quick)
    out["rapidfuzz_prep_s"] = time.perf_counter() - t0
    loops = P.difflib_loops(pairs)
    # Untimed warm-ups of the peers (as tandem's side warms up in each round): KATO's acceptance tables for
    # these STMs, RapidFuzz's worker pool, CPython's difflib (this pass also checks its ratios).
    for q in range(B):
        rf.need(len(stms[q]), THR)
    rf.cdist_single(stms, [0], [THR], True)
    bad_ratios = P.difflib_ratio_mismatches(pairs)
    if bad_ratios:
        problems.append(f"{bad_ratios} of {len(pairs)} CPython difflib ratios differ from the pairs file's")

    ready = child.read("building its store")
    out["tandem_setup"] = ready
    ratio_sum = 0.0
    for p in pairs:
        ratio_sum += p["ratio"]
    expect = {"patterns": args.patterns, "queries": len(stms), "pairs": len(pairs),
              "stms_digest": stms_digest(stms), "pair_ids_digest": pair_ids_digest(pairs), "ratio_sum": ratio_sum}
    for k, v in expect.items():
        if ready.get(k) != v:
            problems.append(f"the child's {k} is {ready.get(k)!r}, the dump's {v!r}: the two samples differ "
                            "(seed, --pool or sizes not bench_seq's?)")
    out["setup_s"] = time.perf_counter() - t_setup
    log(f"rounds: ready in {out['setup_s']:.1f} s (patterns loaded in {out['load_s']:.1f} s, RapidFuzz prepared in "
        f"{out['rapidfuzz_prep_s']:.1f} s; tandem's store built in {ready.get('build_s', 0):.1f} s); same STMs, pair "
        f"sample and ratio sum ({ratio_sum:.6f}) on both sides: {'no' if problems else 'yes'}")
    if problems:
        for m in problems:
            log(f"rounds: MISMATCH: {m}")
        out["mismatches"] = problems
        write_json(args.json, out)
        return 1

    log(f"each round: tandem (lcs thr {THR}: a batch of the first {B} STMs, then the first {S} one at a time; difflib "
        f"thr {THR}: the first {D} one at a time; difflib per pair: {len(pairs)} pairs, median of 3 passes) and the "
        f"peers (cdist_encoded_batch, cdist_indel_batch over the first {B} in batches of {args.batch}; cdist_encoded, "
        f"extract_indel over the first {S}; CPython's two loops over the pairs, one pass each), the first side "
        "alternating")
    first_answers = None
    refs = None
    for i in range(1, args.rounds + 1):
        order = ["tandem", "peers"] if i % 2 else ["peers", "tandem"]
        rec = {"round": i, "first": order[0], "start": stamp(), "loadavg_start": loadavg()}
        t = p = None
        bad = []
        for side in order:
            if side == "tandem":
                t0 = time.time()
                t = child.round()
                t["start_unix"], t["end_unix"] = t0, time.time()
                if first_answers is None:  # round 1 runs tandem first: every peer check has tandem's answers
                    first_answers, refs = answers_of(t), tandem_refs(t)
                elif answers_of(t) != first_answers:
                    bad.append(("tandem", 1, ["tandem's answers differ from its first round's"]))
                if t["difflib_pairs"]["ratio_sum"] != ratio_sum:
                    bad.append(("tandem", 1, ["tandem's ratio sum differs from the pairs file's"]))
            else:
                p, pbad = peer_round(np, rf, stms, loops, len(pairs), B, S, args.batch, refs)
                bad += pbad
            if side == order[0]:
                rec["loadavg_between"] = loadavg()
        rec["end"] = stamp()
        rec["loadavg_end"] = loadavg()
        rec["tandem"], rec["peers"] = t, p
        rec["ratios"] = ratios(t, p, args.patterns)
        out["rounds"].append(rec)
        log(round_line(i, args.rounds, order[0], rec["loadavg_start"], rec["loadavg_end"], t, p, rec["ratios"]))
        if bad:
            for who, n, details in bad:
                log(f"rounds: MISMATCH in round {i}: {who}: {n} hit sets differ from tandem's: {details}")
            out["mismatches"] = [{"round": i, "who": w, "count": n, "details": d} for w, n, d in bad]
            write_json(args.json, out)
            log(f"rounds: the peers and tandem disagree: these figures must not be used (see {args.json})")
            return 1

    out["targets"] = summarize_targets(out["rounds"], full)
    out["loadavg_at_end"] = loadavg()
    nchecked = sum(v["checked"] for r in out["rounds"] for v in r["peers"]["rapidfuzz"].values())
    log(f"\nexactness: 0 mismatches ({nchecked} RapidFuzz hit sets compared with tandem's, same queries; tandem's "
        f"answers identical in every round; STMs and {len(pairs)} pair ratios the same on both sides)")
    if not full:
        log(f"NOTE: {args.patterns} patterns, not the {FULL_SIZE} of the targets: a smoke run; the verdicts are not "
            "the targets'.")
    print_tables(log, out["rounds"], out["targets"], args.patterns, B, S, D, args.batch, len(pairs))
    write_json(args.json, out)
    return 0


def write_json(path, out):
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


def add_arguments(r):
    r.add_argument("--bin", required=True, help="the bench_seq_rounds program (build-bench/bench/bench_seq_rounds)")
    r.add_argument("--data", required=True, help="the JSON-lines data file bench_seq's data came from")
    r.add_argument("--patterns", type=int, required=True, help="store size (the data's first N patterns)")
    r.add_argument("--dump", required=True, help="bench_seq's --dump-dir (stms.jsonl, pairs.jsonl)")
    r.add_argument("--rounds", type=int, required=True, help="rounds to run (at least 1)")
    r.add_argument("--json", required=True, help="where to write every figure of every round")
    r.add_argument("--quick", action="store_true", help="smoke run (the pool defaults to 2000)")
    r.add_argument("--seed", type=int, default=42, help="data seed, as bench_seq's (42)")
    r.add_argument("--pool", type=int, default=0,
                   help="bench_seq's smallest size, where the near STMs come from (10000; 2000 with --quick)")
    r.add_argument("--threads", type=int, default=2, help="tandem's query threads (2)")
    r.add_argument("--batch-queries", type=int, default=64, help="STMs of the batched configs (64)")
    r.add_argument("--single-queries", type=int, default=8, help="STMs of the one-query configs (8)")
    r.add_argument("--difflib-queries", type=int, default=32, help="STMs of tandem's difflib query (32)")
    r.add_argument("--batch", type=int, default=32, help="queries per batched cdist call (32)")
