/* bench_seq_rounds.c: tandem's side of the interleaved rounds (`peers.py rounds`, bench/README.md). The
 * development VM drifts in speed by 1.5-2x over minutes, and bench_seq times tandem minutes before
 * peers.py times the peers, so a ratio taken from the two can move by half from one run to the next. This
 * program builds bench_seq's store, STMs and difflib pair sample once (same generator, seed and draws) and
 * then waits on stdin; each `round` command measures tandem's figures for the threshold-0.1 targets and
 * answers with one JSON line on stdout, so that peers.py can time the peers in the minutes just before or
 * after, round after round, while this process sits idle. Progress and errors go to stderr. */
#include "tandem/seq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "bench_seq_rounds"
#include "bench_common.h" /* data, store, STMs, pair sample, hit digest, timing, errors */

#define WARMUPS 3    /* untimed queries (the first STMs) before each one-at-a-time loop, as bench_seq */
#define PAIR_PASSES 3

typedef struct {
    uint32_t patterns, pool, queries, pairs_per;
    uint32_t batch_q, single_q, difflib_q;
    int threads;
    uint64_t seed;
    int quick;
} options;

static const char *usage =
    "usage: bench_seq_rounds [--patterns N] [--pool N] [--queries N] [--pairs-per N] [--seed S] [--threads T]\n"
    "                        [--batch-queries B] [--single-queries S] [--difflib-queries D] [--quick]\n"
    "\n"
    "tandem's side of `peers.py rounds` (bench/README.md). Generates bench_seq's data (the first N patterns\n"
    "of `tandem seq gen --seed S`), builds the store once, draws the same STMs (near ones from the first\n"
    "--pool patterns: bench_seq's smallest size) and the same difflib pair sample (--pairs-per pattern ids\n"
    "per STM, uniform over the N patterns, stream seed + 2), prints one JSON line on stdout when ready\n"
    "({\"ready\": true, ...}: the setup, a digest of the STMs, the pair count and the sum of the sample's\n"
    "difflib ratios), then reads commands from stdin, one per line:\n"
    "  round   measure once and print one JSON line on stdout:\n"
    "          lcs_batch:      lcs threshold 0.1, one untimed tdm_seq_query_batch over the first B STMs, then\n"
    "                          one timed: ms per query, and each query's hit count and hit digest\n"
    "          lcs_single:     lcs threshold 0.1 through tdm_seq_query, 3 untimed warm-ups, then the first S\n"
    "                          STMs each timed alone: mean ms, every latency, hit counts and digests\n"
    "          difflib_single: difflib threshold 0.1 the same way over the first D STMs\n"
    "          difflib_pairs:  the pair sample, a new matcher per pair (set_b + blocks), the sample's\n"
    "                          patterns copied one after another: median of 3 passes, ns per pair\n"
    "  quit    exit 0 (so does the end of stdin)\n"
    "Any other line: an error on stderr and exit 2.\n"
    "\n"
    "Options (defaults; --quick changes the ones marked *, as bench_seq --quick does):\n"
    "  --patterns N         store size (1000000)\n"
    "  --pool N             near STMs come from the first N patterns (10000; * 2000), at most --patterns\n"
    "  --queries N          STMs drawn, as bench_seq --queries (200; * 40)\n"
    "  --pairs-per N        pair sample: pattern ids per STM, as bench_seq --pairs-per (100; * 20)\n"
    "  --seed S             data seed (42)\n"
    "  --threads T          query threads (2)\n"
    "  --batch-queries B    STMs in the timed batch (64, at most --queries)\n"
    "  --single-queries S   STMs timed one at a time, lcs (8, at most --queries)\n"
    "  --difflib-queries D  STMs timed one at a time, difflib (32, at most --queries)\n"
    "  --quick              the smoke run's defaults (*), with B, S and D cut to --queries\n";

/* A whole decimal number in [lo, hi], or exit 2 naming the option. */
static uint64_t parse_uint(const char *opt, const char *v, uint64_t lo, uint64_t hi) {
    char *end;
    errno = 0;
    unsigned long long x = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
    if (!v || !(*v >= '0' && *v <= '9') || errno || *end || x < lo || x > hi) {
        fprintf(stderr, BENCH_NAME ": %s needs a whole number from %llu to %llu, not '%s'\n", opt,
                (unsigned long long)lo, (unsigned long long)hi, v ? v : "");
        exit(2);
    }
    return x;
}

static void parse_args(int argc, char **argv, options *o) {
    *o = (options){.patterns = 1000000, .seed = 42, .threads = 2};
    uint32_t pool = 0, queries = 0, per = 0, bq = 0, sq = 0, dq = 0; /* 0: not given */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            exit(0);
        }
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
            continue;
        }
        if (strncmp(a, "--", 2)) {
            fprintf(stderr, BENCH_NAME ": unexpected argument '%s' (--help lists the options)\n", a);
            exit(2);
        }
        i++;
        if (!strcmp(a, "--patterns")) o->patterns = (uint32_t)parse_uint(a, v, 1, 1000000000);
        else if (!strcmp(a, "--pool")) pool = (uint32_t)parse_uint(a, v, 1, 1000000000);
        else if (!strcmp(a, "--queries")) queries = (uint32_t)parse_uint(a, v, 1, 100000);
        else if (!strcmp(a, "--pairs-per")) per = (uint32_t)parse_uint(a, v, 1, 100000);
        else if (!strcmp(a, "--seed")) o->seed = parse_uint(a, v, 0, UINT64_MAX);
        else if (!strcmp(a, "--threads")) o->threads = (int)parse_uint(a, v, 1, 1024);
        else if (!strcmp(a, "--batch-queries")) bq = (uint32_t)parse_uint(a, v, 1, 100000);
        else if (!strcmp(a, "--single-queries")) sq = (uint32_t)parse_uint(a, v, 1, 100000);
        else if (!strcmp(a, "--difflib-queries")) dq = (uint32_t)parse_uint(a, v, 1, 100000);
        else {
            fprintf(stderr, BENCH_NAME ": unknown option '%s' (--help lists the options)\n", a);
            exit(2);
        }
    }
    o->pool = pool ? pool : o->quick ? 2000 : 10000;
    o->queries = queries ? queries : o->quick ? 40 : 200;
    o->pairs_per = per ? per : o->quick ? 20 : 100;
    if ((uint64_t)o->queries * o->pairs_per > 100000000) {
        fprintf(stderr, BENCH_NAME ": --queries x --pairs-per is over 10^8 pairs\n");
        exit(2);
    }
    if (o->pool > o->patterns) {
        fprintf(stderr, BENCH_NAME ": --pool %u is larger than --patterns %u\n", o->pool, o->patterns);
        exit(2);
    }
    /* B, S and D: given ones must fit in the STMs drawn; defaults are cut to them under --quick. */
    const struct {
        const char *name;
        uint32_t given, def, *out;
    } qs[] = {{"--batch-queries", bq, 64, &o->batch_q},
              {"--single-queries", sq, 8, &o->single_q},
              {"--difflib-queries", dq, 32, &o->difflib_q}};
    for (int k = 0; k < 3; k++) {
        uint32_t n = qs[k].given ? qs[k].given : qs[k].def;
        if (!qs[k].given && o->quick && n > o->queries) n = o->queries;
        if (n > o->queries) {
            fprintf(stderr, BENCH_NAME ": %s %u is more than the %u STMs drawn (--queries)\n", qs[k].name, n, o->queries);
            exit(2);
        }
        *qs[k].out = n;
    }
}

/* FNV-1a over 32-bit values, little-endian bytes: the STM and pair-id digests of the ready line, which
 * peers.py recomputes from the files bench_seq dumped. */
static uint64_t fnv_u32(uint64_t h, uint32_t v) {
    for (int b = 0; b < 4; b++) {
        h ^= (v >> (8 * b)) & 0xFFu;
        h *= 0x100000001B3ull;
    }
    return h;
}
#define FNV_SEED 0xCBF29CE484222325ull

typedef struct {
    const options *o;
    const tdm_seq_store *s;
    const tdm_seq_stm *stms;
    uint32_t **stm;
    const size_t *stm_len;
    pair_sample ps;
    tdm_seq_matcher *m;
    double ratio_sum;
    tdm_seq_result *out; /* batch_q results */
    double *lat;         /* per-query latencies, ms */
    unsigned round;
} bench;

static void put_uint_array(const char *key, const size_t *v, uint32_t n) {
    printf("\"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) printf(i ? ", %zu" : "%zu", v[i]);
    putchar(']');
}

static void put_digest_array(const char *key, const uint64_t *v, uint32_t n) {
    printf("\"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) printf(i ? ", \"%016llx\"" : "\"%016llx\"", (unsigned long long)v[i]);
    putchar(']');
}

static void put_ms_array(const char *key, const double *v, uint32_t n) {
    printf("\"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) printf(i ? ", %.4f" : "%.4f", v[i]);
    putchar(']');
}

/* The answers' hit counts and digests as the members "hits" and "digests", closing the object; frees
 * both arrays. */
static void put_answers(size_t *hits, uint64_t *dig, uint32_t n) {
    put_uint_array("hits", hits, n);
    fputs(", ", stdout);
    put_digest_array("digests", dig, n);
    putchar('}');
    free(hits);
    free(dig);
}

/* The rounds' query options: metric at threshold 0.1 on the configured threads. */
static tdm_seq_query_opts thr01_opts(const bench *b, tdm_seq_metric metric) {
    tdm_seq_query_opts qo;
    tdm_seq_query_opts_init(&qo);
    qo.metric = metric;
    qo.threshold = 0.1;
    qo.threads = b->o->threads;
    return qo;
}

/* Threshold-0.1 queries of the first n STMs one at a time, after WARMUPS untimed ones; prints the JSON
 * member `key` (mean, every latency, hit counts and digests). */
static void one_at_a_time(bench *b, const char *key, tdm_seq_metric metric, uint32_t n) {
    tdm_seq_query_opts qo = thr01_opts(b, metric);
    tdm_seq_result r;
    int rc;
    for (uint32_t i = 0; i < WARMUPS && i < b->o->queries; i++) {
        if ((rc = tdm_seq_query(b->s, &b->stms[i], &qo, &r))) die("warm-up query", rc);
        tdm_seq_result_clear(&r);
    }
    size_t *hits = xmalloc(n * sizeof *hits);
    uint64_t *dig = xmalloc(n * sizeof *dig);
    double total = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        double t0 = now_s();
        rc = tdm_seq_query(b->s, &b->stms[i], &qo, &r);
        double t1 = now_s();
        if (rc) die("query", rc);
        b->lat[i] = (t1 - t0) * 1e3;
        total += b->lat[i];
        hits[i] = r.n, dig[i] = hits_digest(r.hits, r.n);
        tdm_seq_result_clear(&r);
    }
    printf("\"%s\": {\"metric\": \"%s\", \"threshold\": 0.1, \"queries\": %u, \"mean_ms\": %.5f, ", key,
           tdm_seq_metric_name(metric), n, total / n);
    put_ms_array("ms", b->lat, n);
    fputs(", ", stdout);
    put_answers(hits, dig, n);
}

static void lcs_batch(bench *b) {
    uint32_t n = b->o->batch_q;
    tdm_seq_query_opts qo = thr01_opts(b, TDM_SEQ_LCS);
    int rc;
    if ((rc = tdm_seq_query_batch(b->s, b->stms, n, &qo, b->out))) die("warm-up query_batch", rc);
    for (uint32_t i = 0; i < n; i++) tdm_seq_result_clear(&b->out[i]);
    double t0 = now_s();
    rc = tdm_seq_query_batch(b->s, b->stms, n, &qo, b->out);
    double dt = now_s() - t0;
    if (rc) die("query_batch", rc);
    size_t *hits = xmalloc(n * sizeof *hits);
    uint64_t *dig = xmalloc(n * sizeof *dig);
    for (uint32_t i = 0; i < n; i++) {
        hits[i] = b->out[i].n, dig[i] = hits_digest(b->out[i].hits, b->out[i].n);
        tdm_seq_result_clear(&b->out[i]);
    }
    printf("\"lcs_batch\": {\"metric\": \"lcs\", \"threshold\": 0.1, \"queries\": %u, \"ms\": %.4f, "
           "\"ms_per_query\": %.5f, ",
           n, dt * 1e3, dt * 1e3 / n);
    put_answers(hits, dig, n);
}

static void difflib_pairs(bench *b) {
    double t[PAIR_PASSES], ms[PAIR_PASSES];
    for (int r = 0; r < PAIR_PASSES; r++) {
        t[r] = time_pairs(b->m, b->ps.per, b->ps.n, b->ps.sym, b->ps.off, NULL, b->stm, b->stm_len, 1);
        ms[r] = t[r] * 1e3;
    }
    double med = median(t, PAIR_PASSES);
    printf("\"difflib_pairs\": {\"pairs\": %u, \"passes\": %d, \"ns_per_pair\": %.3f, ", b->ps.n, PAIR_PASSES,
           med / b->ps.n * 1e9);
    put_ms_array("pass_ms", ms, PAIR_PASSES);
    printf(", \"ratio_sum\": %.17g}", b->ratio_sum);
}

static void run_round(bench *b) {
    double t0 = now_s();
    b->round++;
    printf("{\"round\": %u, \"threads\": %d, \"patterns\": %u, ", b->round, b->o->threads, tdm_seq_store_count(b->s));
    lcs_batch(b);
    fputs(", ", stdout);
    one_at_a_time(b, "lcs_single", TDM_SEQ_LCS, b->o->single_q);
    fputs(", ", stdout);
    one_at_a_time(b, "difflib_single", TDM_SEQ_DIFFLIB, b->o->difflib_q);
    fputs(", ", stdout);
    difflib_pairs(b);
    printf(", \"wall_s\": %.3f}\n", now_s() - t0);
    fflush(stdout);
    fprintf(stderr, BENCH_NAME ": round %u done in %.1f s\n", b->round, now_s() - t0);
}

int main(int argc, char **argv) {
    options o;
    parse_args(argc, argv, &o);
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, NULL);
    if (rc) die("tdm_init", rc);

    double t0 = now_s();
    patterns p;
    generate(o.seed, o.patterns, &p);
    double gen_s = now_s() - t0;
    tdm_seq_store *s;
    uint64_t vocab_bytes;
    double build_s = build_store(ctx, &p, o.patterns, &s, &vocab_bytes);

    size_t *stm_len;
    uint32_t **stm = make_stms(o.seed, o.queries, &p, o.pool, &stm_len);
    tdm_seq_stm *stms = xmalloc(o.queries * sizeof *stms);
    uint64_t stm_digest = FNV_SEED;
    for (uint32_t i = 0; i < o.queries; i++) {
        if ((rc = tdm_seq_stm_from_ids(tdm_seq_store_vocab_const(s), stm[i], stm_len[i], &stms[i]))) die("stm", rc);
        stm_digest = fnv_u32(stm_digest, (uint32_t)stm_len[i]);
        for (size_t k = 0; k < stm_len[i]; k++) stm_digest = fnv_u32(stm_digest, stm[i][k]);
    }

    bench b = {.o = &o, .s = s, .stms = stms, .stm = stm, .stm_len = stm_len};
    pair_sample_make(o.seed, o.queries, o.pairs_per, &p, o.patterns, &b.ps);
    if ((rc = tdm_seq_matcher_new(&b.m))) die("matcher_new", rc);
    double *ratio = xmalloc((size_t)b.ps.n * sizeof *ratio);
    pair_ratios(b.m, &b.ps, stm, stm_len, ratio);
    uint64_t pid_digest = FNV_SEED;
    for (uint32_t k = 0; k < b.ps.n; k++) b.ratio_sum += ratio[k], pid_digest = fnv_u32(pid_digest, b.ps.pid[k]);
    free(ratio);
    free(p.sym), free(p.off); /* the store and the sample's copy hold what the rounds read */

    b.out = xmalloc(o.batch_q * sizeof *b.out);
    uint32_t most = o.single_q > o.difflib_q ? o.single_q : o.difflib_q;
    b.lat = xmalloc(most * sizeof *b.lat);
    fprintf(stderr, BENCH_NAME ": tandem %s, %u patterns generated in %.1f s, store built in %.1f s (%.1f bytes/pattern); "
                    "%u STMs (near ones from the first %u), %u pairs; %d threads; waiting for commands\n",
            tdm_version(), o.patterns, gen_s, build_s, (double)tdm_seq_store_bytes(s) / o.patterns, o.queries, o.pool,
            b.ps.n, o.threads);
    printf("{\"ready\": true, \"tool\": \"bench_seq_rounds\", \"tandem_version\": \"%s\", \"patterns\": %u, "
           "\"pool\": %u, \"queries\": %u, \"pairs_per\": %u, \"seed\": %llu, \"threads\": %d, \"batch_queries\": %u, "
           "\"single_queries\": %u, \"difflib_queries\": %u, \"generate_s\": %.3f, \"build_s\": %.3f, "
           "\"store_bytes\": %llu, \"stms_digest\": \"%016llx\", \"pairs\": %u, \"pair_ids_digest\": \"%016llx\", "
           "\"ratio_sum\": %.17g}\n",
           tdm_version(), o.patterns, o.pool, o.queries, o.pairs_per, (unsigned long long)o.seed, o.threads, o.batch_q,
           o.single_q, o.difflib_q, gen_s, build_s, (unsigned long long)tdm_seq_store_bytes(s),
           (unsigned long long)stm_digest, b.ps.n, (unsigned long long)pid_digest, b.ratio_sum);
    fflush(stdout);

    char line[256];
    int status = 0;
    while (fgets(line, sizeof line, stdin)) {
        size_t len = strlen(line);
        int whole = (len && line[len - 1] == '\n') || feof(stdin); /* a last line may lack its newline */
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (whole && !strcmp(line, "round")) run_round(&b);
        else if (whole && !strcmp(line, "quit")) break;
        else {
            fprintf(stderr, BENCH_NAME ": unknown command '%.64s' (the commands are round and quit)\n", line);
            status = 2;
            break;
        }
    }

    for (uint32_t i = 0; i < o.queries; i++) tdm_seq_stm_clear(&stms[i]), free(stm[i]);
    free(stms), free(stm), free(stm_len);
    free(b.out), free(b.lat);
    pair_sample_free(&b.ps);
    tdm_seq_matcher_free(b.m);
    tdm_seq_store_free(s);
    tdm_destroy(ctx);
    return status;
}
