/* bench_seq.c: measures the sequence engine through the library API, so that the figures in
 * bench/RESULTS.md have one source. For stores of 10K, 100K and 1M generated patterns it reports store
 * build time and bytes per pattern, then per-query latency (p50/p99/mean) and batched throughput of
 * threshold (0.1, 0.5, 0.8) and top-100 queries with the lcs and difflib metrics on 2 threads and 1, with
 * the mean number of patterns each exact prefilter removed; the same latency and batch again with the results
 * kept by the caller from query to query (tdm_seq_query_opts.reuse: "kept"), which saves the first touch of
 * fresh answer memory; and the in-process cost of one exact difflib comparison (set_b + matching blocks)
 * per (pattern, STM) pair. With --dump-dir it writes the STMs, the
 * pair sample and the hit sets of a few queries, so that peers.py times CPython's difflib and RapidFuzz on
 * exactly the same inputs and checks that they return the same patterns (bench/README.md).
 *
 * The data come from the shared generator with the same seed and options as `tandem seq gen`: ranks
 * 0..vocab-1 are interned as "s<rank>" before any pattern is added, so a store id equals the rank that
 * `seq gen` writes as "s<rank>", and pattern id k is line k of the JSON-lines file. Stores of different
 * sizes are prefixes of one generated stream (the 10K store is the first 10K lines of the 1M file). */
#include "tandem/seq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench_seq"
#include "bench_common.h" /* data, store, STMs, pair sample, hit digest, timing, errors */

#define MAX_SIZES 8
#define MAX_THREADS_LIST 4

typedef struct {
    uint32_t sizes[MAX_SIZES];
    int nsizes;
    int threads[MAX_THREADS_LIST];
    int nthreads;
    uint32_t queries;     /* STMs */
    uint32_t pairs_per;   /* difflib pair sample: patterns per STM */
    uint32_t verify;      /* queries whose hit sets are dumped */
    uint32_t top_k;
    uint64_t seed;
    double budget_s;      /* per configuration, for the latency loop and again for the batch loop */
    uint32_t min_queries; /* the latency loop stops at the budget only after this many */
    int reps;             /* batch repetitions (median), when the budget allows */
    int metrics[2];
    int nmetrics;
    const char *json, *dump;
    int quick;
} options;

/* ---- data ---------------------------------------------------------------------------------------- */

/* STMs: even indices are "near" (a stored pattern among the first `pool` ids, with about 10% of its
 * positions edited: substitution, deletion or insertion of a Zipf draw, equally likely), odd indices
 * are "fresh" draws of the generator; both from their own stream (seed + 1). See bench/README.md. */
static void put_symbols(FILE *f, const uint32_t *s, size_t n) {
    char name[16];
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        tdm_seq_gen_symbol_name(s[i], name);
        fprintf(f, i ? ", \"%s\"" : "\"%s\"", name);
    }
    fputc(']', f);
}

static FILE *open_dump(const options *o, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", o->dump, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}

static int cmp_hit_id(const void *a, const void *b) {
    const tdm_seq_hit *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Hit sets of the first o->verify STMs at each threshold, one JSON line each. */
static void dump_hits(const options *o, const tdm_seq_store *s, const tdm_seq_stm *stms, tdm_seq_metric metric) {
    static const double thr[] = {0.1, 0.5, 0.8};
    char name[128];
    snprintf(name, sizeof name, "hits_%s_%u.jsonl", tdm_seq_metric_name(metric), tdm_seq_store_count(s));
    FILE *f = open_dump(o, name);
    for (uint32_t i = 0; i < o->verify && i < o->queries; i++)
        for (int t = 0; t < 3; t++) {
            tdm_seq_query_opts qo;
            tdm_seq_query_opts_init(&qo);
            qo.metric = metric;
            qo.threshold = thr[t];
            qo.threads = o->threads[0];
            tdm_seq_result r;
            int rc = tdm_seq_query(s, &stms[i], &qo, &r);
            if (rc) die("verification query", rc);
            qsort(r.hits, r.n, sizeof *r.hits, cmp_hit_id);
            fprintf(f, "{\"patterns\": %u, \"metric\": \"%s\", \"threshold\": %g, \"query\": %u, \"n\": %zu, "
                       "\"digest\": \"%016llx\", \"ids\": [",
                    tdm_seq_store_count(s), tdm_seq_metric_name(metric), thr[t], i, r.n,
                    (unsigned long long)hits_digest(r.hits, r.n));
            for (size_t k = 0; k < r.n; k++) fprintf(f, k ? ", %u" : "%u", r.hits[k].id);
            fputs("]}\n", f);
            tdm_seq_result_clear(&r);
        }
    fclose(f);
}

/* ---- query benchmark ------------------------------------------------------------------------------ */

typedef struct {
    int metric, threads;
    double threshold;
    uint32_t top_k;
    uint32_t n; /* queries timed */
    double p50, p99, mean, min, max; /* ms */
    double batch_qps;
    int batch_reps;
    double length_pruned, index_pruned, multiset_pruned, lcs_pruned, scored, returned; /* means per query */
    double *lat; /* n latencies in query order, ms */
    /* The same n queries into results the caller keeps (opts.reuse), measured after the figures above. */
    double kept_p50, kept_p99, kept_mean; /* ms */
    double kept_batch_qps;
    int kept_batch_reps;
    double *kept_lat; /* n latencies in query order, ms */
} qrow;

/* A kept answer must be the fresh one, bit for bit (ids and similarities, order aside). */
static void kept_differs(const char *where, const qrow *row, uint32_t i) {
    fprintf(stderr, "bench_seq: %s, %s threshold %g top-%u %d threads: query %u kept differs from fresh\n", where,
            tdm_seq_metric_name((tdm_seq_metric)row->metric), row->threshold, row->top_k, row->threads, i);
    exit(1);
}

static void run_config(const options *o, const tdm_seq_store *s, const tdm_seq_stm *stms, qrow *row) {
    tdm_seq_query_opts qo;
    tdm_seq_query_opts_init(&qo);
    qo.metric = (tdm_seq_metric)row->metric;
    qo.threshold = row->threshold;
    qo.top_k = row->top_k;
    qo.threads = row->threads;
    tdm_seq_result r;
    int rc;
    /* Warm-up: caches, page faults of the scratch, OpenMP's thread pool. */
    for (uint32_t i = 0; i < 3 && i < o->queries; i++) {
        if ((rc = tdm_seq_query(s, &stms[i], &qo, &r))) die("query", rc);
        tdm_seq_result_clear(&r);
    }
    double *lat = xmalloc(o->queries * sizeof *lat);
    double sums[6] = {0}, start = now_s(), total = 0.0;
    uint32_t n = 0;
    while (n < o->queries) {
        double t0 = now_s();
        rc = tdm_seq_query(s, &stms[n], &qo, &r);
        double t1 = now_s();
        if (rc) die("query", rc);
        lat[n] = (t1 - t0) * 1e3;
        total += lat[n];
        sums[0] += (double)r.stats.length_pruned, sums[1] += (double)r.stats.multiset_pruned;
        sums[2] += (double)r.stats.lcs_pruned, sums[3] += (double)r.stats.scored, sums[4] += (double)r.stats.returned;
        sums[5] += (double)r.stats.index_pruned;
        tdm_seq_result_clear(&r);
        n++;
        if (n >= o->min_queries && t1 - start > o->budget_s) break;
    }
    row->n = n;
    row->mean = total / n;
    row->lat = xmalloc(n * sizeof *row->lat);
    memcpy(row->lat, lat, n * sizeof *lat);
    qsort(lat, n, sizeof *lat, cmp_double);
    row->p50 = percentile(lat, n, 50), row->p99 = percentile(lat, n, 99);
    row->min = lat[0], row->max = lat[n - 1];
    row->length_pruned = sums[0] / n, row->multiset_pruned = sums[1] / n, row->lcs_pruned = sums[2] / n;
    row->scored = sums[3] / n, row->returned = sums[4] / n, row->index_pruned = sums[5] / n;

    /* Batch: the same n queries in one tdm_seq_query_batch call, repeated while the budget allows. */
    tdm_seq_result *out = xmalloc(n * sizeof *out);
    uint64_t *dig = xmalloc(n * sizeof *dig); /* the first repetition's answers, which the kept ones must equal */
    double reps[16];
    int nrep = 0;
    start = now_s();
    while (nrep < o->reps && nrep < 16) {
        double t0 = now_s();
        if ((rc = tdm_seq_query_batch(s, stms, n, &qo, out))) die("query_batch", rc);
        reps[nrep++] = now_s() - t0;
        if (nrep == 1)
            for (uint32_t i = 0; i < n; i++) dig[i] = hits_digest(out[i].hits, out[i].n);
        for (uint32_t i = 0; i < n; i++) tdm_seq_result_clear(&out[i]);
        if (now_s() - start > o->budget_s) break;
    }
    row->batch_reps = nrep;
    row->batch_qps = n / median(reps, (size_t)nrep);

    /* Kept: the figures above again with results the caller keeps between queries (opts.reuse), after them
     * so that they stay as they were measured before. One result for the queries run one at a time, warmed
     * up by the first three STMs (as the fresh loop); the batch's n results kept from repetition to
     * repetition, after one untimed call that gives them their arrays. */
    qo.reuse = 1;
    tdm_seq_result kept = {0};
    for (uint32_t i = 0; i < 3 && i < n; i++)
        if ((rc = tdm_seq_query(s, &stms[i], &qo, &kept))) die("kept query", rc);
    total = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        double t0 = now_s();
        rc = tdm_seq_query(s, &stms[i], &qo, &kept);
        double t1 = now_s();
        if (rc) die("kept query", rc);
        lat[i] = (t1 - t0) * 1e3;
        total += lat[i];
        if (hits_digest(kept.hits, kept.n) != dig[i]) kept_differs("one at a time", row, i);
    }
    tdm_seq_result_clear(&kept);
    row->kept_mean = total / n;
    row->kept_lat = xmalloc(n * sizeof *row->kept_lat);
    memcpy(row->kept_lat, lat, n * sizeof *lat);
    qsort(lat, n, sizeof *lat, cmp_double);
    row->kept_p50 = percentile(lat, n, 50), row->kept_p99 = percentile(lat, n, 99);

    memset(out, 0, n * sizeof *out); /* zeroed results are valid empty ones for opts.reuse */
    if ((rc = tdm_seq_query_batch(s, stms, n, &qo, out))) die("kept query_batch", rc);
    nrep = 0;
    start = now_s();
    while (nrep < o->reps && nrep < 16) {
        double t0 = now_s();
        if ((rc = tdm_seq_query_batch(s, stms, n, &qo, out))) die("kept query_batch", rc);
        reps[nrep++] = now_s() - t0;
        if (now_s() - start > o->budget_s) break;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (hits_digest(out[i].hits, out[i].n) != dig[i]) kept_differs("batch", row, i);
        tdm_seq_result_clear(&out[i]);
    }
    row->kept_batch_reps = nrep;
    row->kept_batch_qps = n / median(reps, (size_t)nrep);
    free(out);
    free(dig);
    free(lat);
}

/* ---- difflib per pair ---------------------------------------------------------------------------- */

typedef struct {
    uint32_t npairs, per, from_size;
    double fresh_ns, reuse_ns; /* per pair, median over repetitions, over the prepared sample */
    double store_ns;           /* the same, new matcher per pair, each pattern read where the store holds it */
    int reps;
    double mean_ratio;
} pairrow;

/* The pair sample: for each STM, `per` pattern ids uniform over the largest store (stream seed + 2).
 * Timed two ways, as CPython is: a new SequenceMatcher(None, P, S) per pair (set_b(S) + blocks(P)), and
 * set_b once per STM (set_seq2 once, set_seq1 per pattern). Like the peer, which times lists it built
 * for the sample, the timed loops read the sample's patterns copied one after another; the fresh loop is
 * also timed reading each pattern where the 1M-pattern store keeps it (a cache miss or two per pair,
 * reported beside). */
static void bench_pairs(const options *o, const patterns *p, uint32_t size, uint32_t **stm, const size_t *stm_len,
                        pairrow *pr) {
    pair_sample ps;
    pair_sample_make(o->seed, o->queries, o->pairs_per, p, size, &ps);
    uint32_t np = ps.n, *pid = ps.pid;
    tdm_seq_matcher *m;
    int rc = tdm_seq_matcher_new(&m);
    if (rc) die("matcher_new", rc);
    double *ratio = xmalloc((size_t)np * sizeof *ratio);
    pair_ratios(m, &ps, stm, stm_len, ratio);
    int reps = o->quick ? 3 : 7;
    double tf[16], tr[16], ts[16];
    for (int r = 0; r < reps; r++) {
        tf[r] = time_pairs(m, o->pairs_per, np, ps.sym, ps.off, NULL, stm, stm_len, 1);
        tr[r] = time_pairs(m, o->pairs_per, np, ps.sym, ps.off, NULL, stm, stm_len, 0);
        ts[r] = time_pairs(m, o->pairs_per, np, p->sym, p->off, pid, stm, stm_len, 1);
    }
    pr->npairs = np, pr->per = o->pairs_per, pr->from_size = size, pr->reps = reps;
    pr->fresh_ns = median(tf, (size_t)reps) / np * 1e9;
    pr->reuse_ns = median(tr, (size_t)reps) / np * 1e9;
    pr->store_ns = median(ts, (size_t)reps) / np * 1e9;
    double sum = 0.0;
    for (uint32_t k = 0; k < np; k++) sum += ratio[k];
    pr->mean_ratio = np ? sum / np : 0.0;
    if (o->dump) {
        FILE *f = open_dump(o, "pairs.jsonl");
        for (uint32_t k = 0; k < np; k++) {
            uint32_t i = k / o->pairs_per;
            fprintf(f, "{\"stm\": %u, \"pattern\": %u, \"ratio\": %.17g, \"a\": ", i, pid[k], ratio[k]);
            put_symbols(f, p->sym + p->off[pid[k]], (size_t)(p->off[pid[k] + 1] - p->off[pid[k]]));
            fputs(", \"b\": ", f);
            put_symbols(f, stm[i], stm_len[i]);
            fputs("}\n", f);
        }
        fclose(f);
    }
    free(ratio);
    pair_sample_free(&ps);
    tdm_seq_matcher_free(m);
}

/* ---- options and output -------------------------------------------------------------------------- */

static const char *usage =
    "usage: bench_seq [--sizes N,N,...] [--queries N] [--seed S] [--threads T,T] [--metrics lcs,difflib]\n"
    "                 [--budget SECONDS] [--min-queries N] [--reps N] [--pairs-per N] [--verify N]\n"
    "                 [--json FILE] [--dump-dir DIR] [--quick]\n"
    "Defaults: --sizes 10000,100000,1000000 --queries 200 --seed 42 --threads 2,1 --metrics lcs,difflib\n"
    "          --budget 4 --min-queries 8 --reps 3 --pairs-per 100 --verify 4\n"
    "--quick: sizes 2000,20000, 40 queries, budget 0.5 s, 20 pairs per STM (a smoke run).\n"
    "Each configuration times queries one at a time until all are done, or the budget is spent and at\n"
    "least --min-queries ran; the batch run then answers those same queries, --reps times at most. Both\n"
    "again with results kept between calls (\"kept\", opts.reuse): the same queries, the same reps rule.\n";

static void parse_args(int argc, char **argv, options *o) {
    *o = (options){.sizes = {10000, 100000, 1000000}, .nsizes = 3, .threads = {2, 1}, .nthreads = 2, .queries = 200,
                   .pairs_per = 100, .verify = 4, .top_k = 100, .seed = 42, .budget_s = 4.0, .min_queries = 8,
                   .reps = 3, .metrics = {TDM_SEQ_LCS, TDM_SEQ_DIFFLIB}, .nmetrics = 2};
    int set_sizes = 0, set_q = 0, set_budget = 0, set_pairs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double list[MAX_SIZES];
        int n;
#define NEED_VALUE                                                                                         \
    if (!v) {                                                                                              \
        fprintf(stderr, "bench_seq: %s needs a value\n%s", a, usage);                                      \
        exit(2);                                                                                           \
    }                                                                                                      \
    i++;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) o->quick = 1;
        else if (!strcmp(a, "--sizes")) {
            NEED_VALUE
            if ((n = parse_list(v, list, MAX_SIZES)) <= 0) goto bad;
            for (int k = 0; k < n; k++) {
                if (!(list[k] >= 1 && list[k] <= 4e9)) goto bad;
                o->sizes[k] = (uint32_t)list[k];
            }
            o->nsizes = n, set_sizes = 1;
        } else if (!strcmp(a, "--threads")) {
            NEED_VALUE
            if ((n = parse_list(v, list, MAX_THREADS_LIST)) <= 0) goto bad;
            for (int k = 0; k < n; k++) {
                if (!(list[k] >= 1 && list[k] <= 1024)) goto bad;
                o->threads[k] = (int)list[k];
            }
            o->nthreads = n;
        } else if (!strcmp(a, "--metrics")) {
            NEED_VALUE
            o->nmetrics = 0;
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t && o->nmetrics < 2; t = strtok(NULL, ",")) {
                tdm_seq_metric m;
                if (tdm_seq_metric_parse(t, &m) || m == TDM_SEQ_CHAR) goto bad;
                o->metrics[o->nmetrics++] = m;
            }
            if (!o->nmetrics) goto bad;
        } else if (!strcmp(a, "--queries")) {
            NEED_VALUE
            if ((o->queries = (uint32_t)strtoul(v, NULL, 10)) < 1) goto bad;
            set_q = 1;
        } else if (!strcmp(a, "--seed")) {
            NEED_VALUE
            o->seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--budget")) {
            NEED_VALUE
            if (!((o->budget_s = strtod(v, NULL)) > 0)) goto bad;
            set_budget = 1;
        } else if (!strcmp(a, "--min-queries")) {
            NEED_VALUE
            if ((o->min_queries = (uint32_t)strtoul(v, NULL, 10)) < 1) goto bad;
        } else if (!strcmp(a, "--reps")) {
            NEED_VALUE
            if ((o->reps = atoi(v)) < 1 || o->reps > 16) goto bad;
        } else if (!strcmp(a, "--pairs-per")) {
            NEED_VALUE
            if ((o->pairs_per = (uint32_t)strtoul(v, NULL, 10)) < 1) goto bad;
            set_pairs = 1;
        } else if (!strcmp(a, "--verify")) {
            NEED_VALUE
            o->verify = (uint32_t)strtoul(v, NULL, 10);
        } else if (!strcmp(a, "--json")) {
            NEED_VALUE
            o->json = v;
        } else if (!strcmp(a, "--dump-dir")) {
            NEED_VALUE
            o->dump = v;
        } else {
            fprintf(stderr, "bench_seq: unknown option '%s'\n%s", a, usage);
            exit(2);
        }
        continue;
    bad:
        fprintf(stderr, "bench_seq: bad value for %s: '%s'\n%s", a, v ? v : "", usage);
        exit(2);
    }
    if (o->quick) {
        if (!set_sizes) o->sizes[0] = 2000, o->sizes[1] = 20000, o->nsizes = 2;
        if (!set_q) o->queries = 40;
        if (!set_budget) o->budget_s = 0.5;
        if (!set_pairs) o->pairs_per = 20;
        o->min_queries = o->min_queries < 4 ? o->min_queries : 4;
        o->reps = 1;
    }
    if (o->min_queries > o->queries) o->min_queries = o->queries;
    for (int k = 1; k < o->nsizes; k++)
        if (o->sizes[k] < o->sizes[k - 1]) {
            fprintf(stderr, "bench_seq: --sizes must be ascending\n");
            exit(2);
        }
}

static const char *mode_name(const qrow *r, char *buf) {
    if (r->top_k) snprintf(buf, 32, "top-%u", r->top_k);
    else snprintf(buf, 32, "thr %.1f", r->threshold);
    return buf;
}

static void print_row(const qrow *r) {
    char m[32];
    printf("  %-7s %-8s %2dT %5u %9.3f %9.3f %9.3f %10.1f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %9.3f %9.3f %10.1f\n",
           tdm_seq_metric_name((tdm_seq_metric)r->metric), mode_name(r, m), r->threads, r->n, r->p50, r->p99, r->mean,
           r->batch_qps, r->length_pruned, r->index_pruned, r->multiset_pruned, r->lcs_pruned, r->scored, r->returned,
           r->kept_p50, r->kept_mean, r->kept_batch_qps);
    fflush(stdout);
}

typedef struct {
    uint32_t patterns;
    double build_s;
    uint64_t bytes, vocab_bytes, symbols;
    qrow *rows;
    int nrows;
} sizerow;

static void write_json(const options *o, const sizerow *sr, int nsr, const pairrow *pr, uint32_t nnear,
                       double mean_stm_len, int cores) {
    FILE *f = fopen(o->json, "w");
    if (!f) {
        perror(o->json);
        exit(1);
    }
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    fprintf(f, "{\n  \"tool\": \"bench_seq\", \"tandem_version\": \"%s\", \"date\": \"%s\", \"online_cores\": %d,\n",
            tdm_version(), date, cores);
    fprintf(f, "  \"seed\": %llu, \"quick\": %s, \"budget_s\": %g, \"min_queries\": %u, \"reps\": %d,\n",
            (unsigned long long)o->seed, o->quick ? "true" : "false", o->budget_s, o->min_queries, o->reps);
    fprintf(f, "  \"stms\": {\"count\": %u, \"near\": %u, \"fresh\": %u, \"mean_length\": %.3f},\n", o->queries, nnear,
            o->queries - nnear, mean_stm_len);
    fprintf(f, "  \"difflib_pairs\": {\"pairs\": %u, \"per_stm\": %u, \"from_patterns\": %u, \"reps\": %d, "
               "\"ns_per_pair\": %.2f, \"ns_per_pair_b_reused\": %.2f, \"ns_per_pair_from_store\": %.2f, "
               "\"mean_ratio\": %.6f},\n",
            pr->npairs, pr->per, pr->from_size, pr->reps, pr->fresh_ns, pr->reuse_ns, pr->store_ns, pr->mean_ratio);
    fputs("  \"sizes\": [\n", f);
    for (int s = 0; s < nsr; s++) {
        fprintf(f, "    {\"patterns\": %u, \"build_s\": %.6f, \"bytes\": %llu, \"bytes_per_pattern\": %.2f, "
                   "\"vocabulary_bytes\": %llu, \"bytes_per_pattern_without_vocabulary\": %.2f, \"symbols\": %llu, "
                   "\"queries\": [\n",
                sr[s].patterns, sr[s].build_s, (unsigned long long)sr[s].bytes, (double)sr[s].bytes / sr[s].patterns,
                (unsigned long long)sr[s].vocab_bytes, (double)(sr[s].bytes - sr[s].vocab_bytes) / sr[s].patterns,
                (unsigned long long)sr[s].symbols);
        for (int k = 0; k < sr[s].nrows; k++) {
            const qrow *r = &sr[s].rows[k];
            fprintf(f, "      {\"metric\": \"%s\", \"mode\": \"%s\", \"threshold\": %g, \"top_k\": %u, \"threads\": %d, "
                       "\"n\": %u, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"mean_ms\": %.4f, \"min_ms\": %.4f, "
                       "\"max_ms\": %.4f, \"batch_qps\": %.3f, \"batch_reps\": %d, \"length_pruned\": %.1f, "
                       "\"index_pruned\": %.1f, \"multiset_pruned\": %.1f, \"lcs_pruned\": %.1f, \"scored\": %.1f, \"returned\": %.1f, \"lat_ms\": [",
                    tdm_seq_metric_name((tdm_seq_metric)r->metric), r->top_k ? "top_k" : "threshold",
                    r->top_k ? 0.0 : r->threshold, r->top_k, r->threads, r->n, r->p50, r->p99, r->mean, r->min, r->max,
                    r->batch_qps, r->batch_reps, r->length_pruned, r->index_pruned, r->multiset_pruned, r->lcs_pruned, r->scored,
                    r->returned);
            for (uint32_t i = 0; i < r->n; i++) fprintf(f, i ? ", %.4f" : "%.4f", r->lat[i]);
            fprintf(f, "], \"kept_p50_ms\": %.4f, \"kept_p99_ms\": %.4f, \"kept_mean_ms\": %.4f, \"kept_batch_qps\": %.3f, "
                       "\"kept_batch_reps\": %d, \"kept_lat_ms\": [",
                    r->kept_p50, r->kept_p99, r->kept_mean, r->kept_batch_qps, r->kept_batch_reps);
            for (uint32_t i = 0; i < r->n; i++) fprintf(f, i ? ", %.4f" : "%.4f", r->kept_lat[i]);
            fprintf(f, "]}%s\n", k + 1 < sr[s].nrows ? "," : "");
        }
        fprintf(f, "    ]}%s\n", s + 1 < nsr ? "," : "");
    }
    fputs("  ]\n}\n", f);
    if (fclose(f)) {
        perror(o->json);
        exit(1);
    }
}

int main(int argc, char **argv) {
    options o;
    parse_args(argc, argv, &o);
    if (o.dump) mkdir(o.dump, 0777);
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, NULL);
    if (rc) die("tdm_init", rc);
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t maxn = o.sizes[o.nsizes - 1];
    printf("bench_seq: tandem %s, seed %llu, %u STMs, sizes", tdm_version(), (unsigned long long)o.seed, o.queries);
    for (int k = 0; k < o.nsizes; k++) printf(" %u", o.sizes[k]);
    printf(", %d online cores%s\n", cores, o.quick ? " (quick)" : "");

    double t0 = now_s();
    patterns p;
    generate(o.seed, maxn, &p);
    printf("generated %u patterns (%llu symbols) in %.2f s\n", maxn, (unsigned long long)p.off[maxn], now_s() - t0);

    size_t *stm_len;
    uint32_t **stm = make_stms(o.seed, o.queries, &p, o.sizes[0], &stm_len);
    tdm_seq_stm *stms = xmalloc(o.queries * sizeof *stms);
    double len_sum = 0;
    uint32_t nnear = (o.queries + 1) / 2;
    for (uint32_t i = 0; i < o.queries; i++) len_sum += (double)stm_len[i];
    if (o.dump) {
        FILE *f = open_dump(&o, "stms.jsonl");
        for (uint32_t i = 0; i < o.queries; i++) put_symbols(f, stm[i], stm_len[i]), fputc('\n', f);
        fclose(f);
    }

    sizerow *sr = xmalloc(o.nsizes * sizeof *sr);
    printf("\nper query: latency of queries run one at a time; batch q/s = tdm_seq_query_batch over the same queries;\n"
           "mean patterns removed by each exact prefilter (length, inverted index, multiset, lcs), scored, returned;\n"
           "kept: the same queries into results the caller keeps between calls (opts.reuse: one result for the\n"
           "one-at-a-time loop, the batch's n results from repetition to repetition), no fresh answer memory\n");
    printf("%-9s %-8s %2s  %5s %9s %9s %9s %10s %9s %9s %9s %9s %9s %9s %9s %9s %10s\n", "  metric", "mode", "th", "n",
           "p50 ms", "p99 ms", "mean ms", "batch q/s", "length", "index", "multiset", "lcs", "scored", "returned",
           "kept p50", "kept mean", "kept b q/s");
    for (int si = 0; si < o.nsizes; si++) {
        tdm_seq_store *s;
        uint32_t n = o.sizes[si];
        sr[si].patterns = n;
        sr[si].build_s = build_store(ctx, &p, n, &s, &sr[si].vocab_bytes);
        sr[si].bytes = tdm_seq_store_bytes(s);
        sr[si].symbols = tdm_seq_store_total_symbols(s);
        printf("%u patterns: build %.3f s (%.0f ns/pattern); %llu bytes held = %.1f bytes/pattern, %.1f without the "
               "vocabulary's %llu (symbol ids alone: %.1f)\n",
               n, sr[si].build_s, sr[si].build_s / n * 1e9, (unsigned long long)sr[si].bytes, (double)sr[si].bytes / n,
               (double)(sr[si].bytes - sr[si].vocab_bytes) / n, (unsigned long long)sr[si].vocab_bytes,
               4.0 * (double)sr[si].symbols / n);
        fflush(stdout);
        for (uint32_t i = 0; i < o.queries; i++)
            if ((rc = tdm_seq_stm_from_ids(tdm_seq_store_vocab_const(s), stm[i], stm_len[i], &stms[i]))) die("stm", rc);
        sr[si].rows = xmalloc((size_t)o.nmetrics * 4 * o.nthreads * sizeof *sr[si].rows);
        sr[si].nrows = 0;
        static const double thr[] = {0.1, 0.5, 0.8, 0.0};
        for (int mi = 0; mi < o.nmetrics; mi++)
            for (int ti = 0; ti < 4; ti++)
                for (int th = 0; th < o.nthreads; th++) {
                    qrow *r = &sr[si].rows[sr[si].nrows++];
                    *r = (qrow){.metric = o.metrics[mi], .threshold = thr[ti], .top_k = ti == 3 ? o.top_k : 0,
                                .threads = o.threads[th]};
                    run_config(&o, s, stms, r);
                    print_row(r);
                }
        if (o.dump && o.verify) {
            /* lcs hit sets at the largest size (RapidFuzz checks them), difflib at the smallest (CPython). */
            if (si == o.nsizes - 1) dump_hits(&o, s, stms, TDM_SEQ_LCS);
            if (si == 0) dump_hits(&o, s, stms, TDM_SEQ_DIFFLIB);
        }
        for (uint32_t i = 0; i < o.queries; i++) tdm_seq_stm_clear(&stms[i]);
        tdm_seq_store_free(s);
    }

    pairrow pr;
    bench_pairs(&o, &p, maxn, stm, stm_len, &pr);
    printf("\ndifflib per pair (in process, set_b + matching blocks, %u pairs of %u STMs x %u patterns of the "
           "%u store, the sample's patterns copied one after another as the peer's lists, median of %d):\n"
           "  %.1f ns/pair new matcher per pair, %.1f ns/pair b set once per STM (mean ratio %.4f)\n"
           "  %.1f ns/pair new matcher per pair reading each pattern where the store keeps it\n",
           pr.npairs, o.queries, pr.per, pr.from_size, pr.reps, pr.fresh_ns, pr.reuse_ns, pr.mean_ratio, pr.store_ns);
    if (o.json) write_json(&o, sr, o.nsizes, &pr, nnear, len_sum / o.queries, cores);
    printf("total %.1f s\n", now_s() - t0);

    for (int si = 0; si < o.nsizes; si++) {
        for (int k = 0; k < sr[si].nrows; k++) free(sr[si].rows[k].lat), free(sr[si].rows[k].kept_lat);
        free(sr[si].rows);
    }
    free(sr);
    for (uint32_t i = 0; i < o.queries; i++) free(stm[i]);
    free(stm);
    free(stm_len);
    free(stms);
    free(p.sym);
    free(p.off);
    tdm_destroy(ctx);
    return 0;
}
