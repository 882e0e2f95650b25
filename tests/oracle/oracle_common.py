"""Shared helpers for the oracle tests in this directory (not a test itself: CTest only picks up test_*.py).

Every oracle script compares `tandem seq score` against a Python reference (CPython's difflib, or a plain
dynamic-programming LCS with KATO's exact double formulas). This module holds what they share:

  * argument parsing: --tandem PATH, --seed N (else env TANDEM_TEST_SEED, else a fresh random seed, which
    is printed so any run can be replayed), --scale F (multiply the random pair counts), --python-only
    (run and time the Python reference alone, no binary needed), --no-shrink, --keep DIR;
  * running the CLI once on a whole file of pairs (not once per pair), robust to the CLI rejecting a line:
    the rejected line is reported as a failure and the run repeated without it, so one bad line does not
    hide the results of all the others;
  * comparing outputs exactly: the ratio by float equality after parsing the printed text and by
    repr() text, the "blocks" key (present only for difflib) element by element;
  * printing the first few failing cases in full (input, expected, got), shrinking the first failure to a
    small reproducer (one CLI call per candidate, only when something failed), and the final summary line
    `N passed, M failed`.
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

MAX_SHOWN = 5  # failing cases printed in full


def parse_args(doc, extra=None):
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tandem", help="path of the tandem CLI binary (required unless --python-only)")
    p.add_argument("--seed", type=int, default=None,
                   help="random seed (default: env TANDEM_TEST_SEED, else a fresh random seed)")
    p.add_argument("--scale", type=float, default=1.0, help="multiply the number of random pairs")
    p.add_argument("--python-only", action="store_true",
                   help="only generate the pairs and run the Python reference (self-check, timing)")
    p.add_argument("--no-shrink", action="store_true", help="do not shrink the first failing case")
    p.add_argument("--keep", metavar="DIR", help="write the input files into DIR and keep them")
    if extra:
        extra(p)
    args = p.parse_args()
    if args.seed is None:
        env = os.environ.get("TANDEM_TEST_SEED", "").strip()
        args.seed = int(env) if env else random.SystemRandom().randrange(1, 2**63)
    if not args.python_only and not args.tandem:
        p.error("--tandem PATH is required (or --python-only)")
    print("seed: %d (replay with --seed %d or TANDEM_TEST_SEED=%d)" % (args.seed, args.seed, args.seed),
          flush=True)
    return args


def dumps_line(pair, rng=None):
    """One input line. With rng, half the lines use \\u escapes (surrogate pairs for astral code points),
    the other half raw UTF-8, so both spellings of a string go through the CLI's JSON reader."""
    ascii_ = bool(rng.getrandbits(1)) if rng is not None else False
    return json.dumps({"a": pair[0], "b": pair[1]}, ensure_ascii=ascii_)


_RATIO_RE = re.compile(r'"ratio"\s*:\s*([^,}\s]+)')
_LINE_RE = re.compile(r"\bline\s+(\d+)", re.IGNORECASE)


class Run:
    """Result of one CLI invocation over a file: outputs[k] is the raw output line for input k, or None."""

    def __init__(self):
        self.outputs = []
        self.errors = {}  # input index -> error text (the CLI rejected that line)
        self.fatal = None  # text when the run failed as a whole
        self.seconds = 0.0


def run_cli(tandem, cli_args, lines, keep_dir=None, label="run", max_retries=8):
    """Runs `tandem seq score <cli_args> --pairs FILE` on all lines at once. If the CLI exits non-zero
    naming a line, that line is recorded as rejected and the run repeated without it (at most
    max_retries times)."""
    res = Run()
    res.outputs = [None] * len(lines)
    idx = list(range(len(lines)))
    t0 = time.monotonic()
    for attempt in range(max_retries + 1):
        if keep_dir:
            os.makedirs(keep_dir, exist_ok=True)
            path = os.path.join(keep_dir, "%s%s.jsonl" % (label, "" if attempt == 0 else ".retry%d" % attempt))
            f = open(path, "w", encoding="utf-8", newline="\n")
        else:
            f = tempfile.NamedTemporaryFile("w", encoding="utf-8", newline="\n", suffix=".jsonl",
                                            prefix="tandem_oracle_", delete=False)
            path = f.name
        with f:
            for k in idx:
                f.write(lines[k])
                f.write("\n")
        try:
            proc = subprocess.run([tandem, "seq", "score"] + cli_args + ["--pairs", path],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as e:
            res.fatal = "could not run %s: %s" % (tandem, e)
            break
        finally:
            if not keep_dir:
                os.unlink(path)
        out = proc.stdout.decode("utf-8", errors="replace").split("\n")
        if out and out[-1] == "":
            out.pop()
        err = proc.stderr.decode("utf-8", errors="replace").strip()
        if proc.returncode == 0:
            if len(out) != len(idx):
                res.fatal = "CLI printed %d lines for %d input lines (stderr: %r)" % (len(out), len(idx), err)
                for k, o in zip(idx, out):
                    res.outputs[k] = o
            else:
                for k, o in zip(idx, out):
                    res.outputs[k] = o
            break
        m = _LINE_RE.search(err)
        if not m or not (1 <= int(m.group(1)) <= len(idx)):
            res.fatal = "CLI exited %d without naming a valid line; stderr: %r" % (proc.returncode, err[:2000])
            break
        bad = idx[int(m.group(1)) - 1]
        res.errors[bad] = "exit %d, stderr: %s" % (proc.returncode, err[:2000])
        idx = [k for k in idx if k != bad]
        if attempt == max_retries:
            res.fatal = "CLI rejected %d lines, giving up: last stderr %r" % (len(res.errors), err[:2000])
    res.seconds = time.monotonic() - t0
    return res


def parse_output(text, want_blocks):
    """Parses one output line. Returns (ratio_float, ratio_text, blocks or None, problem or None)."""
    try:
        obj = json.loads(text)
    except ValueError as e:
        return None, None, None, "output line is not JSON (%s)" % e
    if not isinstance(obj, dict):
        return None, None, None, "output line is not a JSON object"
    keys = set(obj)
    want = {"ratio", "blocks"} if want_blocks else {"ratio"}
    if keys != want:
        return None, None, None, "keys %s, expected %s" % (sorted(keys), sorted(want))
    m = _RATIO_RE.search(text)
    if not m:
        return None, None, None, "ratio text not found"
    rtext = m.group(1)
    try:
        r = float(rtext)
    except ValueError:
        return None, rtext, None, "ratio %r is not a number" % rtext
    if isinstance(obj["ratio"], bool) or not isinstance(obj["ratio"], (int, float)) or float(obj["ratio"]) != r:
        return None, rtext, None, "ratio %r does not parse consistently" % rtext
    blocks = None
    if want_blocks:
        blocks = obj["blocks"]
        ok = isinstance(blocks, list) and all(
            isinstance(b, list) and len(b) == 3 and all(type(x) is int for x in b) for b in blocks)
        if not ok:
            return r, rtext, None, "blocks is not a list of [i, j, n] integer triples"
    return r, rtext, blocks, None


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.shown = 0
        self.first = None  # (label, case) of the first failure, for shrinking

    def fail(self, label, input_line, expected, got, why, case=None):
        self.failed += 1
        if self.first is None:
            self.first = (label, case)
        if self.shown < MAX_SHOWN:
            self.shown += 1
            print("MISMATCH [%s]: %s" % (label, why))
            print("  input:    %s" % input_line)
            print("  expected: %s" % expected)
            print("  got:      %s" % got, flush=True)
        elif self.shown == MAX_SHOWN:
            self.shown += 1
            print("(further mismatches not shown)", flush=True)

    def ok(self):
        self.passed += 1

    def check(self, label, input_line, exp_ratio, exp_blocks, out_text, case=None):
        """Compares one output line against the expected ratio (and blocks when exp_blocks is not None)."""
        want_blocks = exp_blocks is not None
        expected = json.dumps({"ratio": exp_ratio, "blocks": exp_blocks} if want_blocks else {"ratio": exp_ratio})
        if out_text is None:
            self.fail(label, input_line, expected, "<no output>", "no output line", case)
            return False
        r, rtext, blocks, problem = parse_output(out_text, want_blocks)
        if problem:
            self.fail(label, input_line, expected, out_text, problem, case)
            return False
        if not (r == exp_ratio and repr(r) == repr(exp_ratio)):
            self.fail(label, input_line, expected, out_text,
                      "ratio %s (repr %r) != expected %r" % (rtext, r, exp_ratio), case)
            return False
        if want_blocks and blocks != exp_blocks:
            self.fail(label, input_line, expected, out_text, "blocks differ", case)
            return False
        self.ok()
        return True

    def check_run(self, label, run, lines, expected, want_blocks, cases=None):
        """expected[k] = (ratio, blocks or None) for input line k."""
        for k, err in sorted(run.errors.items()):
            self.fail(label, lines[k], json.dumps(expected[k][0]), "<rejected>", err,
                      cases[k] if cases else None)
        if run.fatal:
            print("ERROR [%s]: %s" % (label, run.fatal), flush=True)
        for k, line in enumerate(lines):
            if k in run.errors:
                continue
            if run.fatal and run.outputs[k] is None:
                self.failed += 1
                continue
            ratio, blocks = expected[k]
            self.check(label, line, ratio, blocks if want_blocks else None, run.outputs[k],
                       cases[k] if cases else None)

    def summary(self):
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        return 0 if self.failed == 0 else 1


def single_fails(tandem, cli_args, pair, expect_fn):
    """True when the CLI disagrees with expect_fn(pair) -> (ratio, blocks or None) on this one pair."""
    line = dumps_line(pair)
    run = run_cli(tandem, cli_args, [line], max_retries=0)
    if run.errors or run.fatal:
        return True
    ratio, blocks = expect_fn(pair)
    r, _, got_blocks, problem = parse_output(run.outputs[0], blocks is not None)
    if problem:
        return True
    return not (r == ratio and repr(r) == repr(ratio)) or (blocks is not None and got_blocks != blocks)


def shrink(tandem, cli_args, pair, expect_fn, budget=400, keep=None):
    """Greedy delta debugging on a failing pair: removes chunks of a and b (halves down to single
    elements) while the CLI still disagrees, then tries renaming symbols to short names. keep(pair) may
    veto candidates (e.g. to keep a length above a threshold). Returns the smallest failing pair found."""
    calls = [0]

    def fails(p):
        if keep is not None and not keep(p):
            return False
        if calls[0] >= budget:
            return False
        calls[0] += 1
        return single_fails(tandem, cli_args, p, expect_fn)

    a, b = list(pair[0]), list(pair[1])
    changed = True
    while changed and calls[0] < budget:
        changed = False
        for side in (0, 1):
            chunk = max(1, len((a, b)[side]) // 2)
            while chunk >= 1 and calls[0] < budget:
                seq = (a, b)[side]
                i = 0
                while i < len(seq) and calls[0] < budget:
                    cand = seq[:i] + seq[i + chunk:]
                    trial = (cand, b) if side == 0 else (a, cand)
                    if fails(trial):
                        if side == 0:
                            a = cand
                        else:
                            b = cand
                        seq = cand
                        changed = True
                    else:
                        i += chunk
                chunk //= 2
    # rename symbols to short ASCII names where the failure survives
    names = sorted(set(a) | set(b), key=lambda s: (len(s), s))
    short = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    for s in names:
        if calls[0] >= budget:
            break
        try:
            t = next(short)
        except StopIteration:
            break
        if t in names or t == s:
            continue
        ra = [t if x == s else x for x in a]
        rb = [t if x == s else x for x in b]
        if fails((ra, rb)):
            a, b = ra, rb
    return (a, b), calls[0]


def report_shrunk(args, checker, cli_args_for, expect_for, keep_for=None):
    """If anything failed, shrinks the first failing case and prints it."""
    if checker.first is None or args.no_shrink or args.python_only:
        return
    label, case = checker.first
    if case is None:
        return
    cli_args = cli_args_for(label)
    expect_fn = expect_for(label)
    if not single_fails(args.tandem, cli_args, case, expect_fn):
        print("first failure [%s] does not reproduce on its own (context-dependent?)" % label)
        return
    small, calls = shrink(args.tandem, cli_args, case, expect_fn,
                          keep=keep_for(label) if keep_for else None)
    line = dumps_line(small)
    run = run_cli(args.tandem, cli_args, [line], max_retries=0)
    got = run.outputs[0] if run.outputs and run.outputs[0] is not None else (run.errors or run.fatal)
    ratio, blocks = expect_fn(small)
    exp = {"ratio": ratio} if blocks is None else {"ratio": ratio, "blocks": blocks}
    print("smallest failing input found [%s] after %d CLI calls:" % (label, calls))
    print("  command:  tandem seq score %s --pairs -" % " ".join(cli_args))
    print("  input:    %s" % line)
    print("  expected: %s" % json.dumps(exp))
    print("  got:      %s" % got, flush=True)


# ---- random symbol lists shared by the generators ----

LOOKALIKE = ["a", "a ", " a", "A", "", " ", "  ", "\u00e1", "a\u0301", "\u0430", "\uff41", "a\u0000",
             "\u0000", "aa", "a\t", "\ufb01", "fi", "a\n", "\"a\"", "\\a", "1", "01", "1.0", "true", "null"]
UNICODE = ["\u00e9t\u00e9", "\u4e2d\u6587", "\U0001F600", "\U0001F600\U0001F601", "\u05e9\u05dc\u05d5\u05dd",
           "\u0915\u094d\u0937", "\U00010348", "\U0010FFFF", "\uFFFD", "\u200b", "e\u0301", "\u00ff\u0100",
           "\u07ff", "\u0800", "\uffff", "\U00010000", "\u2028", "\u00a0", "\x7f", "\x01", "/", "</script>"]


def rand_unicode_symbol(rng):
    """A random string of 0..4 code points from assorted ranges (no surrogates)."""
    n = rng.choice([0, 1, 1, 1, 2, 3, 4])
    out = []
    for _ in range(n):
        lo, hi = rng.choice([(0x20, 0x7e), (0xa0, 0x7ff), (0x800, 0xd7ff), (0xe000, 0xfffd),
                             (0x10000, 0x10ffff), (0x1f300, 0x1f64f), (0x300, 0x36f), (0x1, 0x1f)])
        out.append(chr(rng.randint(lo, hi)))
    return "".join(out)


def alphabet(rng, kind, size):
    if kind == "names":
        off = rng.randrange(10 * size + 10)
        return ["s%d" % i for i in range(off, off + size)]
    if kind == "lookalike":
        return rng.sample(LOOKALIKE, min(size, len(LOOKALIKE)))
    if kind == "unicode":
        pool = set(UNICODE)
        while len(pool) < size + len(UNICODE) // 2:
            pool.add(rand_unicode_symbol(rng))
        return rng.sample(sorted(pool), size)
    raise ValueError(kind)


def pick_alphabet(rng, size):
    return alphabet(rng, rng.choices(["names", "lookalike", "unicode"], [6, 2, 2])[0], size)


def zipf_weights(size, s):
    return [1.0 / (r + 1) ** s for r in range(size)]


def draw(rng, alpha, n, weights=None):
    if weights is None:
        return [rng.choice(alpha) for _ in range(n)]
    return rng.choices(alpha, weights, k=n)


def mutate(rng, seq, alpha, edits, max_len=400):
    """Random inserts, deletes, substitutions and block moves/duplications."""
    s = list(seq)
    for _ in range(edits):
        op = rng.random()
        if op < 0.3 and s:
            del s[rng.randrange(len(s))]
        elif op < 0.6:
            s.insert(rng.randrange(len(s) + 1), rng.choice(alpha))
        elif op < 0.85 and s:
            s[rng.randrange(len(s))] = rng.choice(alpha)
        elif s:
            i = rng.randrange(len(s))
            j = rng.randrange(i, min(len(s), i + 30) + 1)
            chunk = s[i:j]
            if rng.random() < 0.5:
                del s[i:j]
            k = rng.randrange(len(s) + 1)
            s[k:k] = chunk
    return s[:max_len] if max_len is not None else s


# ---- reference LCS ----

def lcs_dp(a, b):
    """Length of the longest common subsequence of two lists of symbols (or two str, i.e. code points),
    row-by-row DP: cur[j+1] = diag+1 on a match, else max(left, up)."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        left = 0
        for y, diag, up in zip(b, prev, prev[1:]):
            if x == y:
                left = diag + 1
            elif up > left:
                left = up
            cur.append(left)
        prev = cur
    return prev[-1]


def lcs_table(a, b):
    """The same as a full 2-D table (used to self-check lcs_dp in --python-only mode)."""
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    return t[len(a)][len(b)]


def run_both_orders(args, checker, metric, pairs, expected, expect, rng):
    """Runs the CLI with --metric on every pair as (a, b) and as (b, a), checks each output line
    against expected, then shrinks the first failure (if any) and reports it."""
    for order in ("ab", "ba"):
        label = "%s (a,b)" % metric if order == "ab" else "%s (b,a)" % metric
        cases = pairs if order == "ab" else [(b, a) for a, b in pairs]
        lines = [dumps_line(c, rng) for c in cases]
        run = run_cli(args.tandem, ["--metric", metric], lines, args.keep, metric + "_" + order)
        print("%s: CLI %.2f s" % (label, run.seconds), flush=True)
        checker.check_run(label, run, lines, expected, False, cases)
    report_shrunk(args, checker, cli_args_for=lambda label: ["--metric", metric],
                  expect_for=lambda label: expect)
