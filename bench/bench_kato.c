/* bench_kato.c: KATO predictions, observe and learn latency over knowledge bases of 10K, 100K and 1M
 * learned patterns (issue 4's library-level benchmark), on the CPU and, where a GPU is present, with the
 * candidate search on the device. Patterns come from the shared generator (bench_common.h), cut into events
 * of 1 to 3 symbols; STMs hold 5 to 20 symbols (half from a stored pattern with edits, half fresh), and
 * predictions use KATO's defaults unless told (recall_threshold 0.1, max_predictions 100, token matching,
 * potential). Timings are for bench/RESULTS.md; nothing here asserts on them.
 * Every cell forces its backend through the context, and the two backends' predictions are compared
 * (names, similarity and potential bits) on the first queries of each size. Predictions report wall time
 * and the process's CPU time (steadier on a shared machine). */
#define BENCH_NAME "bench_kato"
#include "bench_common.h"

#include "tandem/backend.h"
#include "tandem/kato.h"

#include <stdint.h>

#define MAX_SIZES 8
#define MAX_EVENT 3
#define STM_MIN 5
#define STM_MAX 20

typedef struct {
    uint32_t sizes[MAX_SIZES];
    int nsizes, backends[2], nbackends, threads, require_gpu;
    uint32_t queries, learns, verify, max_predictions;
    double budget_s, threshold;
    uint64_t seed;
} options;

enum { BK_CPU = 0, BK_CUDA = 1 };
static const char *const BK_NAME[] = {"cpu", "cuda"};

static const char *usage =
    "usage: bench_kato [--sizes N,N,...] [--backends cpu,cuda] [--queries N] [--learns N] [--budget SECONDS]\n"
    "                  [--verify N] [--threads N] [--seed S] [--threshold X] [--max-predictions N] [--quick]\n"
    "                  [--require-gpu]\n"
    "Defaults: --sizes 10000,100000,1000000 --backends cpu (cpu,cuda when a GPU is found) --queries 200\n"
    "          --learns 1000 --budget 3 --verify 8 --threads <online cores> --seed 42 --threshold 0.1\n"
    "          --max-predictions 100\n"
    "--quick: --sizes 2000 --queries 20 --learns 100 --budget 0.5 (a smoke run).\n"
    "Each cell times predictions one at a time until all queries ran or the budget is spent (at least 8).\n"
    "Exit status 1 on a prediction that differs between the backends, or (--require-gpu) when cuda cannot run.\n";

/* Symbol names for the generator's ranks, made once. */
static char **names;
static size_t *name_lens;
static void make_names(uint32_t vocab) {
    names = xmalloc(vocab * sizeof *names);
    name_lens = xmalloc(vocab * sizeof *name_lens);
    for (uint32_t r = 0; r < vocab; r++) {
        char buf[32];
        name_lens[r] = tdm_seq_gen_symbol_name(r, buf);
        names[r] = xmalloc(name_lens[r] + 1);
        memcpy(names[r], buf, name_lens[r] + 1);
    }
}

/* Events of 1..3 symbols over ranks[0..n): sizes drawn from g; syms/lens/ev must hold n entries. */
static size_t to_events(tdm_seq_gen *g, const uint32_t *ranks, size_t n, const char **syms, size_t *lens,
                        tdm_kato_event *ev) {
    size_t ne = 0, i = 0;
    while (i < n) {
        size_t k = 1 + (size_t)tdm_seq_gen_uniform(g, MAX_EVENT);
        if (k > n - i) k = n - i;
        ev[ne++] = (tdm_kato_event){syms + i, lens + i, k};
        for (size_t j = i; j < i + k; j++) syms[j] = names[ranks[j]], lens[j] = name_lens[ranks[j]];
        i += k;
    }
    return ne;
}

/* CPU seconds of the whole process (every thread). On a machine shared with other work, wall time
 * includes the time the scheduler gave to others; CPU time does not (though it counts OpenMP workers
 * spinning while they wait, so it is the steadier figure with one thread). */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    tdm_ctx *ctx;
    tdm_kato_kb *kb;
    double build_s;
    double *pred_ms, *pred_cpu_ms, *learn_us, *observe_us;
    uint32_t npred, nlearn, nobserve;
    double cand_sum, search_ms, blocks_ms, extract_ms, ensemble_ms;
    uint32_t fast;
} cell;

static tdm_ctx *make_ctx(int kind, int threads) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.seq_backend = kind == BK_CUDA ? TDM_DEVICE_CUDA : TDM_DEVICE_CPU;
    cfg.device = kind == BK_CUDA ? TDM_DEVICE_AUTO : TDM_DEVICE_CPU;
    cfg.strict = 0;
    cfg.threads = threads;
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, &cfg);
    if (rc) die("tdm_init", rc);
    return ctx;
}

static void learn_range(tdm_kato_kb *kb, const patterns *p, uint32_t from, uint32_t to, uint64_t seed, double *lat) {
    tdm_seq_gen *g = new_gen(seed);
    const char *syms[64];
    size_t lens[64];
    tdm_kato_event ev[64];
    for (uint32_t k = from; k < to; k++) {
        size_t n = (size_t)(p->off[k + 1] - p->off[k]);
        if (n > 64) n = 64;
        size_t ne = to_events(g, p->sym + p->off[k], n, syms, lens, ev);
        double t0 = lat ? now_s() : 0.0;
        int learned, rc = tdm_kato_kb_learn(kb, ev, ne, NULL, 0, NULL, 0, 5, NULL, &learned);
        if (lat) lat[k - from] = (now_s() - t0) * 1e6;
        if (rc) die("learn", rc);
    }
    tdm_seq_gen_free(g);
}

static int cmp_pred(const tdm_kato_result *a, const tdm_kato_result *b) {
    size_t n = tdm_kato_result_count(a);
    if (n != tdm_kato_result_count(b)) return 1;
    for (size_t i = 0; i < n; i++) {
        const tdm_kato_prediction *x = tdm_kato_result_get(a, i), *y = tdm_kato_result_get(b, i);
        if (strcmp(x->name, y->name) || memcmp(&x->similarity, &y->similarity, sizeof(double)) ||
            memcmp(&x->potential, &y->potential, sizeof(double)))
            return 1;
    }
    return 0;
}

static void parse_args(int argc, char **argv, options *o) {
    *o = (options){.sizes = {10000, 100000, 1000000}, .nsizes = 3, .backends = {BK_CPU}, .nbackends = 1,
                   .queries = 200, .learns = 1000, .verify = 8, .budget_s = 3.0, .seed = 42, .threshold = 0.1,
                   .max_predictions = 100};
    int set_backends = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double list[MAX_SIZES];
        int n;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            exit(0);
        } else if (!strcmp(a, "--require-gpu")) {
            o->require_gpu = 1;
            continue;
        } else if (!strcmp(a, "--quick")) {
            o->sizes[0] = 2000, o->nsizes = 1, o->queries = 20, o->learns = 100, o->budget_s = 0.5;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench_kato: %s needs a value\n%s", a, usage);
            exit(2);
        }
        i++;
        if (!strcmp(a, "--sizes")) {
            if ((n = parse_list(v, list, MAX_SIZES)) <= 0) goto bad;
            for (int k = 0; k < n; k++) {
                if (list[k] < 1 || list[k] > 1e8) goto bad;
                o->sizes[k] = (uint32_t)list[k];
            }
            o->nsizes = n;
        } else if (!strcmp(a, "--backends")) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            o->nbackends = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (o->nbackends == 2) goto bad;
                if (!strcmp(t, "cpu")) o->backends[o->nbackends++] = BK_CPU;
                else if (!strcmp(t, "cuda")) o->backends[o->nbackends++] = BK_CUDA;
                else goto bad;
            }
            if (!o->nbackends) goto bad;
            set_backends = 1;
        } else if (!strcmp(a, "--queries") || !strcmp(a, "--learns") || !strcmp(a, "--verify") ||
                   !strcmp(a, "--threads") || !strcmp(a, "--seed") || !strcmp(a, "--max-predictions")) {
            char *end;
            unsigned long long x = strtoull(v, &end, 10);
            if (*end || end == v || x > 100000000ull) goto bad;
            if (!strcmp(a, "--queries")) o->queries = (uint32_t)x;
            else if (!strcmp(a, "--learns")) o->learns = (uint32_t)x;
            else if (!strcmp(a, "--verify")) o->verify = (uint32_t)x;
            else if (!strcmp(a, "--threads")) o->threads = (int)x;
            else if (!strcmp(a, "--max-predictions")) o->max_predictions = (uint32_t)x;
            else o->seed = x;
            if (!strcmp(a, "--queries") && !x) goto bad;
        } else if (!strcmp(a, "--budget") || !strcmp(a, "--threshold")) {
            char *end;
            double x = strtod(v, &end);
            if (*end || end == v || !(x >= 0) || (!strcmp(a, "--budget") && !(x > 0)) || (!strcmp(a, "--threshold") && x > 1))
                goto bad;
            if (!strcmp(a, "--budget")) o->budget_s = x;
            else o->threshold = x;
        } else {
            fprintf(stderr, "bench_kato: unknown option %s\n%s", a, usage);
            exit(2);
        }
        continue;
    bad:
        fprintf(stderr, "bench_kato: bad value for %s: %s\n%s", a, v, usage);
        exit(2);
    }
    if (!set_backends) {
        /* cuda too when this machine has a usable GPU */
        tdm_ctx *probe = make_ctx(BK_CUDA, 1);
        const tdm_backend *b = tdm_backend_find(probe, TDM_BACKEND_CUDA);
        if (b && b->seq) o->backends[o->nbackends++] = BK_CUDA;
        tdm_destroy(probe);
    }
}

static void summary(const char *what, double *v, uint32_t n, const char *unit) {
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += v[i];
    printf("  %-12s n %5u  p50 %9.3f  p99 %9.3f  mean %9.3f %s\n", what, n, percentile(v, n, 50),
           percentile(v, n, 99), n ? sum / n : 0.0, unit);
}

int main(int argc, char **argv) {
    options o;
    parse_args(argc, argv, &o);
    tdm_seq_gen_opts go;
    tdm_seq_gen_opts_init(&go);
    make_names(go.vocab);
    uint32_t max = 0;
    for (int s = 0; s < o.nsizes; s++) max = o.sizes[s] > max ? o.sizes[s] : max;
    patterns p;
    double t0 = now_s();
    generate(o.seed, max + o.learns, &p);
    printf("bench_kato: tandem %s, seed %llu, sizes", tdm_version(), (unsigned long long)o.seed);
    for (int s = 0; s < o.nsizes; s++) printf(" %u", o.sizes[s]);
    printf(", threshold %g, max_predictions %u, backends", o.threshold, o.max_predictions);
    for (int b = 0; b < o.nbackends; b++) printf(" %s", BK_NAME[o.backends[b]]);
    printf("; generated %u patterns in %.2f s\n", max + o.learns, now_s() - t0);
    int failed = 0;
    for (int s = 0; s < o.nsizes; s++) {
        uint32_t n = o.sizes[s];
        /* STMs: the generator's edited / fresh draws, clamped to 5..20 symbols, as events of 1..3. */
        size_t *slen;
        uint32_t **stms = make_stms(o.seed, o.queries, &p, n, &slen);
        cell cells[2];
        memset(cells, 0, sizeof cells);
        tdm_kato_result **first = xmalloc((size_t)o.verify * sizeof *first);
        memset(first, 0, (size_t)o.verify * sizeof *first);
        printf("\n== %u learned patterns\n", n);
        for (int b = 0; b < o.nbackends; b++) {
            cell *c = &cells[b];
            int kind = o.backends[b];
            c->ctx = make_ctx(kind, o.threads);
            if (kind == BK_CUDA) {
                const tdm_backend *cb = tdm_backend_find(c->ctx, TDM_BACKEND_CUDA);
                if (!cb || !cb->seq) {
                    printf("%s: not run: no usable CUDA backend\n", BK_NAME[kind]);
                    if (o.require_gpu) failed = 1;
                    tdm_destroy(c->ctx);
                    c->ctx = NULL;
                    continue;
                }
            }
            int rc = tdm_kato_kb_new(c->ctx, &c->kb);
            if (rc) die("kb_new", rc);
            t0 = now_s();
            learn_range(c->kb, &p, 0, n, o.seed + 7, NULL);
            c->build_s = now_s() - t0;
            c->learn_us = xmalloc((o.learns ? o.learns : 1) * sizeof(double));
            learn_range(c->kb, &p, max, max + o.learns, o.seed + 9, c->learn_us);
            c->nlearn = o.learns;
            /* Observe: one event of 1..3 symbols into a session STM (auto-learn off). */
            tdm_kato_stm *stm;
            if ((rc = tdm_kato_stm_new(&stm))) die("stm_new", rc);
            tdm_kato_config cfg;
            tdm_kato_config_init(&cfg);
            cfg.recall_threshold = o.threshold, cfg.max_predictions = o.max_predictions;
            if ((rc = tdm_kato_config_check(&cfg))) die("config", rc);
            c->observe_us = xmalloc(o.queries * sizeof(double));
            c->pred_ms = xmalloc(o.queries * sizeof(double));
            c->pred_cpu_ms = xmalloc(o.queries * sizeof(double));
            tdm_seq_gen *g = new_gen(o.seed + 11);
            double start = now_s();
            for (uint32_t q = 0; q < o.queries; q++) {
                uint32_t ranks[STM_MAX];
                size_t len = slen[q] < STM_MAX ? slen[q] : STM_MAX;
                memcpy(ranks, stms[q], len * sizeof *ranks);
                while (len < STM_MIN) ranks[len++] = tdm_seq_gen_symbol(g);
                const char *syms[STM_MAX];
                size_t lens[STM_MAX];
                tdm_kato_event ev[STM_MAX];
                size_t ne = to_events(g, ranks, len, syms, lens, ev);
                tdm_kato_stm_clear(stm);
                for (size_t e = 0; e < ne; e++) {
                    double a = now_s();
                    if ((rc = tdm_kato_stm_observe(stm, c->kb, &cfg, ev[e].syms, ev[e].lens, ev[e].n, NULL, NULL, NULL)))
                        die("observe", rc);
                    if (c->nobserve < o.queries) c->observe_us[c->nobserve++] = (now_s() - a) * 1e6;
                }
                tdm_kato_result *r;
                double a = now_s(), ac = cpu_s();
                if ((rc = tdm_kato_stm_predict(stm, c->kb, &cfg, &r))) die("predict", rc);
                c->pred_cpu_ms[c->npred] = (cpu_s() - ac) * 1e3;
                c->pred_ms[c->npred++] = (now_s() - a) * 1e3;
                const tdm_kato_predict_stats *st = tdm_kato_result_stats(r);
                c->cand_sum += (double)st->candidates;
                c->search_ms += st->search_ms, c->extract_ms += st->extract_ms, c->ensemble_ms += st->ensemble_ms;
                c->blocks_ms += st->blocks_ms;
                c->fast += st->fast_path != 0;
                if (q < o.verify) {
                    if (b == 0) first[q] = r, r = NULL;
                    else if (first[q] && cmp_pred(first[q], r)) {
                        printf("MISMATCH: query %u differs between %s and %s\n", q, BK_NAME[o.backends[0]], BK_NAME[kind]);
                        failed = 1;
                    }
                }
                tdm_kato_result_free(r);
                if (c->npred >= 8 && now_s() - start > o.budget_s) break;
            }
            tdm_seq_gen_free(g);
            tdm_kato_stm_free(stm);
            printf("%s: knowledge base of %u patterns built in %.2f s (%.2f us per learn)\n", BK_NAME[kind], n,
                   c->build_s, c->build_s * 1e6 / n);
            summary("predictions", c->pred_ms, c->npred, "ms");
            summary("  cpu time", c->pred_cpu_ms, c->npred, "ms");
            double k = c->npred ? c->npred : 1;
            printf("  %-12s mean candidates %.0f, search %.3f ms (block summaries on the host %.3f), extract %.3f ms, "
                   "ensemble %.3f ms, fast path %u\n",
                   "", c->cand_sum / k, c->search_ms / k, c->blocks_ms / k, c->extract_ms / k, c->ensemble_ms / k, c->fast);
            summary("observe", c->observe_us, c->nobserve, "us");
            summary("learn", c->learn_us, c->nlearn, "us");
        }
        if (o.nbackends == 2 && cells[0].ctx && cells[1].ctx)
            printf("cross-check: %u queries compared between %s and %s\n", o.verify < cells[1].npred ? o.verify : cells[1].npred,
                   BK_NAME[o.backends[0]], BK_NAME[o.backends[1]]);
        for (uint32_t q = 0; q < o.verify; q++) tdm_kato_result_free(first[q]);
        free(first);
        for (int b = 0; b < 2; b++) {
            tdm_kato_kb_free(cells[b].kb);
            if (cells[b].ctx) tdm_destroy(cells[b].ctx);
            free(cells[b].pred_ms), free(cells[b].pred_cpu_ms), free(cells[b].learn_us), free(cells[b].observe_us);
        }
        for (uint32_t q = 0; q < o.queries; q++) free(stms[q]);
        free(stms), free(slen);
    }
    printf("\n%s\n", failed ? "FAILED" : "ok");
    return failed;
}
