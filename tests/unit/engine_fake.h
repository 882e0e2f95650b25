/* engine_fake.h: what the dual-tier engine's tests (test_engine.c, test_engine_sync.c) share: a fake
 * device backend, contexts that hold it, generated stores, learns and STMs, and the check that an engine
 * answers exactly as tdm_seq_query does. Header-only (like unit_common.h) so that each test stays one .c
 * file.
 *
 * The fake device is a test double for the engine's tier and sync logic, not a model of the CUDA module
 * (whose exactness the cross-backend driver tests/cross checks on a GPU machine): it needs no GPU, and
 * contexts made here use TANDEM_DEVICE=cpu so that no real CUDA backend is registered even on a GPU
 * machine: the fake is the only device. */
#ifndef TANDEM_ENGINE_FAKE_H
#define TANDEM_ENGINE_FAKE_H

#include "unit_common.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "core/internal.h"
#include "seq/seq_device.h"
#include "tandem/backend.h"
#include "tandem/seq.h"

/* ---- the fake device -------------------------------------------------------------------------------
 * Keeps its own copy of every appended pattern in host memory and answers queries by brute force with
 * the pair-level functions, following src/seq/seq_device.h: only ids < limit, the need table in threshold
 * mode, the k best in top-k mode, similarity descending then id ascending, hits from tdm_malloc, or rows
 * by rank when the core sends a rank table (as the CUDA module answers such queries). Knobs
 * simulate a full device (a capacity in patterns: TDM_E_DEVICE_OOM, all or nothing) and failures. It
 * also records calls that overlap (the contract says none may) and appends made on a thread the test
 * forbids (learns must not do device work when a background thread exists). A query takes
 * fake.query_bytes of "device memory" from the backend's monitor (tdm_backend.mem, when a test gives it
 * one), so TANDEM_MEM_LIMIT's fallback can be tested without a GPU. */
struct tdm_seq_dstore {
    const tdm_backend *b;
    uint32_t *syms;
    uint64_t *off; /* count+1 entries */
    size_t nsym, capsym, capoff;
    uint32_t count;
    uint32_t *rank_ids;   /* a ranked answer's ids and rank extents, lent until the next call */
    uint64_t *rank_start;
};

static struct {
    atomic_uint capacity; /* patterns the device can hold */
    atomic_int fail_new, fail_append, fail_query;
    atomic_int corrupt; /* 1: two rows swapped (out of order); 2: the last row's id outside the tier */
    atomic_int no_blocks; /* 1: block summaries asked for are left to the host (tdm_seq_dresult.blocks NULL) */
    _Atomic size_t query_bytes; /* device scratch a query reserves from the monitor (0: none) */
    atomic_int busy, overlaps;
    atomic_ullong stores, appends, queries;
    atomic_uint last_limit;
    atomic_int forbid; /* appends on `forbidden` count as bad_thread */
    pthread_t forbidden;
    atomic_int bad_thread;
} fake;

static inline void fake_reset(void) {
    atomic_store(&fake.capacity, UINT32_MAX);
    atomic_store(&fake.fail_new, 0), atomic_store(&fake.fail_append, 0), atomic_store(&fake.fail_query, 0);
    atomic_store(&fake.corrupt, 0);
    atomic_store(&fake.no_blocks, 0);
    atomic_store(&fake.query_bytes, 0);
    atomic_store(&fake.overlaps, 0), atomic_store(&fake.bad_thread, 0), atomic_store(&fake.forbid, 0);
    atomic_store(&fake.stores, 0), atomic_store(&fake.appends, 0), atomic_store(&fake.queries, 0);
}

static inline void fake_enter(void) {
    if (atomic_exchange(&fake.busy, 1)) atomic_fetch_add(&fake.overlaps, 1);
}
static inline void fake_leave(void) { atomic_store(&fake.busy, 0); }

static inline int fake_store_new(const tdm_backend *b, tdm_seq_dstore **out) {
    if (atomic_load(&fake.fail_new)) return tdm_error(TDM_E_DEVICE, "fake: store_new fails on purpose");
    tdm_seq_dstore *d = calloc(1, sizeof *d);
    d->b = b;
    d->capoff = 1;
    d->off = calloc(1, sizeof *d->off);
    atomic_fetch_add(&fake.stores, 1);
    *out = d;
    return TDM_OK;
}

static inline void fake_store_free(tdm_seq_dstore *d) {
    if (!d) return;
    free(d->syms);
    free(d->off);
    free(d->rank_ids);
    free(d->rank_start);
    free(d);
}

static inline int fake_append(tdm_seq_dstore *d, const uint32_t *syms, const uint64_t *off, uint32_t first, uint32_t n) {
    fake_enter();
    atomic_fetch_add(&fake.appends, 1);
    if (atomic_load(&fake.forbid) && pthread_equal(pthread_self(), fake.forbidden)) atomic_fetch_add(&fake.bad_thread, 1);
    int rc = TDM_OK;
    if (first != d->count || n == 0) rc = tdm_error(TDM_E_INVAL, "fake: append of %u at %u, holding %u", n, first, d->count);
    else if (atomic_load(&fake.fail_append)) rc = tdm_error(TDM_E_DEVICE, "fake: append fails on purpose");
    else if ((uint64_t)d->count + n > atomic_load(&fake.capacity)) rc = tdm_error(TDM_E_DEVICE_OOM, "fake: full");
    if (!rc) {
        size_t nsym = (size_t)(off[n] - off[0]);
        if (d->nsym + nsym > d->capsym) {
            d->capsym = 2 * (d->nsym + nsym) + 16;
            d->syms = realloc(d->syms, d->capsym * sizeof *d->syms);
        }
        if (d->count + n + 1 > d->capoff) {
            d->capoff = 2 * (d->count + n + 1);
            d->off = realloc(d->off, d->capoff * sizeof *d->off);
        }
        memcpy(d->syms + d->nsym, syms, nsym * sizeof *syms);
        for (uint32_t k = 0; k < n; k++) d->off[d->count + k + 1] = d->nsym + (off[k + 1] - off[0]);
        d->nsym += nsym;
        d->count += n;
    }
    fake_leave();
    return rc;
}

static inline void fake_info(const tdm_seq_dstore *d, tdm_seq_dstore_info *info) {
    fake_enter();
    info->patterns = d->count;
    info->symbols = d->nsym;
    info->bytes = d->nsym * 4 + ((uint64_t)d->count + 1) * 8;
    info->reserved_bytes = d->capsym * 4 + d->capoff * 8;
    fake_leave();
}

static inline int cmp_hit(const void *x, const void *y) {
    const tdm_seq_hit *a = x, *b = y;
    if (a->similarity != b->similarity) return a->similarity > b->similarity ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static inline int fake_query(tdm_seq_dstore *d, const tdm_seq_dquery *q, tdm_seq_dresult *r) {
    fake_enter();
    atomic_fetch_add(&fake.queries, 1);
    atomic_store(&fake.last_limit, q->limit);
    if (atomic_load(&fake.fail_query) || q->limit > d->count) {
        fake_leave();
        return tdm_error(TDM_E_DEVICE, "fake: query fails (limit %u, holding %u)", q->limit, d->count);
    }
    size_t scratch = atomic_load(&fake.query_bytes);
    if (scratch && d->b->mem) {
        int rc = tdm_mem_monitor_reserve(d->b->mem, scratch);
        if (rc) {
            fake_leave();
            return rc;
        }
        tdm_mem_monitor_unreserve(d->b->mem, scratch); /* the scratch lives only during the call */
    }
    tdm_seq_hit *h = tdm_malloc(((size_t)q->limit + 1) * sizeof *h);
    size_t n = 0;
    tdm_seq_matcher *mt;
    assert_int_equal(tdm_seq_matcher_new(&mt), TDM_OK);
    if (q->metric == TDM_SEQ_DIFFLIB && !q->stm_first) assert_int_equal(tdm_seq_matcher_set_b(mt, q->stm, q->m, q->autojunk), TDM_OK);
    for (uint32_t id = 0; id < q->limit; id++) {
        const uint32_t *p = d->syms + d->off[id];
        size_t np = (size_t)(d->off[id + 1] - d->off[id]), count;
        double sim;
        if (q->metric == TDM_SEQ_LCS) {
            assert_int_equal(tdm_seq_lcs_length(p, np, q->stm, q->m, &count), TDM_OK);
            sim = tdm_seq_lcs_ratio(count, np, q->m);
        } else {
            const tdm_seq_block *bl;
            size_t nb;
            if (q->stm_first) {
                assert_int_equal(tdm_seq_matcher_set_b(mt, p, np, q->autojunk), TDM_OK);
                assert_int_equal(tdm_seq_matcher_blocks(mt, q->stm, q->m, &bl, &nb, &count), TDM_OK);
            } else {
                assert_int_equal(tdm_seq_matcher_blocks(mt, p, np, &bl, &nb, &count), TDM_OK);
            }
            sim = tdm_seq_difflib_ratio(count, np, q->m);
        }
        if (q->top_k || (np < q->n_need && q->need[np] != UINT32_MAX && count >= q->need[np]))
            h[n++] = (tdm_seq_hit){id, sim};
    }
    tdm_seq_matcher_free(mt);
    qsort(h, n, sizeof *h, cmp_hit);
    if (q->top_k && n > q->top_k) n = q->top_k;
    int bad = atomic_load(&fake.corrupt);
    if (q->rank && q->nrank && !q->top_k && !q->blocks) {
        /* Rows by rank, as the CUDA module sends them (seq_device.h): the ids, and each rank's first row.
         * A row's rank is the table's entry for its length and the count that gives its similarity. */
        free(d->rank_ids), free(d->rank_start);
        d->rank_ids = malloc((n + 1) * sizeof *d->rank_ids);
        d->rank_start = calloc((size_t)q->nrank + 1, sizeof *d->rank_start);
        uint32_t *rk = malloc((n + 1) * sizeof *rk);
        for (size_t i = 0; i < n; i++) {
            size_t np = (size_t)(d->off[h[i].id + 1] - d->off[h[i].id]), c = 0;
            while (c <= q->m && (q->metric == TDM_SEQ_LCS ? tdm_seq_lcs_ratio(c, np, q->m) : tdm_seq_difflib_ratio(c, np, q->m)) != h[i].similarity) c++;
            assert_true(c <= q->m && np < q->n_need);
            rk[i] = q->rank[np * (q->m + 1) + c];
            d->rank_ids[i] = h[i].id;
            assert_true(rk[i] < q->nrank && (i == 0 || rk[i - 1] <= rk[i]));
        }
        for (uint32_t k = 0, i = 0; k <= q->nrank; k++) {
            while (i < n && rk[i] < k) i++;
            d->rank_start[k] = i;
        }
        if (bad == 1) /* two neighbours of one rank swapped: out of order */
            for (size_t i = n - 1; i > 0; i--)
                if (rk[i] == rk[i - 1]) {
                    uint32_t t = d->rank_ids[i];
                    d->rank_ids[i] = d->rank_ids[i - 1], d->rank_ids[i - 1] = t;
                    break;
                }
        if (bad == 2 && n) d->rank_ids[n - 1] = q->limit;
        free(rk);
        tdm_free(h);
        *r = (tdm_seq_dresult){.n = n, .ids = d->rank_ids, .rank_start = d->rank_start, .scored = q->limit,
                               .score_ms = 0.25, .copy_ms = 0.125};
        fake_leave();
        return TDM_OK;
    }
    if (bad == 1 && n >= 2) {
        tdm_seq_hit t = h[n / 2];
        h[n / 2] = h[n / 2 - 1], h[n / 2 - 1] = t;
    }
    if (bad == 2 && n) h[n - 1].id = q->limit;
    tdm_seq_hit_blocks *hb = NULL;
    if (q->blocks && !atomic_load(&fake.no_blocks)) { /* the kept rows' summaries (pattern as a, STM as b) */
        hb = tdm_malloc((n + 1) * sizeof *hb);
        assert_int_equal(tdm_seq_matcher_new(&mt), TDM_OK);
        assert_int_equal(tdm_seq_matcher_set_b(mt, q->stm, q->m, q->autojunk), TDM_OK);
        for (size_t i = 0; i < n; i++) {
            uint32_t id = h[i].id < d->count ? h[i].id : 0;
            assert_int_equal(tdm_seq_matcher_summary(mt, d->syms + d->off[id], (size_t)(d->off[id + 1] - d->off[id]), &hb[i]), TDM_OK);
        }
        tdm_seq_matcher_free(mt);
    }
    *r = (tdm_seq_dresult){.hits = h, .n = n, .blocks = hb, .scored = q->limit, .score_ms = 0.25, .copy_ms = 0.125};
    fake_leave();
    return TDM_OK;
}

static const tdm_seq_dev_ops fake_ops = {fake_store_new, fake_store_free, fake_append, fake_info, fake_query};

static inline int fake_supports(const tdm_backend *b, tdm_op op) {
    return op == TDM_OP_SEQ_LCS || op == TDM_OP_SEQ_DIFFLIB || op == TDM_OP_SEQ_PREFILTER || op == TDM_OP_SEQ_SELECT;
}

static inline void fake_destroy(tdm_backend *b) { free(b); }

/* A context with TANDEM_DEVICE=cpu (no real CUDA backend), TANDEM_SEQ_BACKEND=pref, and the fake device
 * appended when with_fake. */
static inline tdm_ctx *make_ctx(tdm_device_pref pref, int strict, int with_fake) {
    tdm_config c;
    tdm_config_init(&c);
    if (!getenv("TANDEM_THREADS")) c.threads = 2;
    c.device = TDM_DEVICE_CPU;
    c.seq_backend = pref;
    c.strict = strict;
    /* No cost model: the router answers RESIDENCY_ONLY for the fake (tests of the model itself are in
     * test_router.c), and nothing is read from or written to the user's cache. */
    c.calibrate = TDM_CALIBRATE_OFF;
    c.costmodel_path = "";
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &c), TDM_OK);
    if (with_fake) {
        tdm_backend *b = calloc(1, sizeof *b);
        b->name = "fake:0";
        b->kind = TDM_BACKEND_CUDA;
        b->device = 0;
        snprintf(b->description, sizeof b->description, "host-memory test double");
        b->supports = fake_supports;
        b->destroy = fake_destroy;
        b->seq = &fake_ops;
        ctx->backends[ctx->nbackends++] = b;
    }
    fake_reset();
    return ctx;
}

/* ---- stores, patterns, STMs ------------------------------------------------------------------------- */

static inline uint32_t intern(tdm_seq_store *s, const char *name) {
    uint32_t id;
    assert_int_equal(tdm_seq_vocab_intern(tdm_seq_store_vocab(s), name, strlen(name), &id), TDM_OK);
    return id;
}

static inline uint32_t rank_id(tdm_seq_store *s, uint32_t rank) {
    char name[16];
    tdm_seq_gen_symbol_name(rank, name);
    return intern(s, name);
}

static inline tdm_seq_gen *make_gen(uint64_t seed, uint32_t vocab, uint32_t max_len, double mean) {
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    o.seed = seed, o.vocab = vocab, o.min_len = 0, o.max_len = max_len, o.mean_len = mean, o.zipf_s = 0.8;
    tdm_seq_gen *g;
    assert_int_equal(tdm_seq_gen_new(&o, &g), TDM_OK);
    return g;
}

/* npat patterns over a small vocabulary (similarities spread out), with duplicates (ties), a few long
 * ones (difflib's autojunk) and a few with multi-byte symbols. */
static inline tdm_seq_store *make_store(tdm_ctx *ctx, uint64_t seed, uint32_t vocab, uint32_t npat) {
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    tdm_seq_gen *g = make_gen(seed, vocab, 24, 7.0);
    uint32_t ranks[300], ids[300];
    const char *wide[] = {"\xE6\x97\xA5", "s\xC3\xA9", "\xF0\x9F\x98\x80s1"};
    for (uint32_t p = 0; p < npat; p++) {
        size_t n;
        uint64_t kind = tdm_seq_gen_uniform(g, 100);
        if (kind < 3 && p > 0) {
            const uint32_t *old;
            assert_int_equal(tdm_seq_store_get(s, (uint32_t)tdm_seq_gen_uniform(g, p), &old, &n), TDM_OK);
            memcpy(ids, old, n * sizeof *ids);
        } else if (kind == 3) {
            n = 200 + (size_t)tdm_seq_gen_uniform(g, 40);
            for (size_t i = 0; i < n; i++) ids[i] = rank_id(s, tdm_seq_gen_symbol(g));
        } else {
            tdm_seq_gen_next(g, ranks, &n);
            for (size_t i = 0; i < n; i++) ids[i] = rank_id(s, ranks[i]);
            if (kind == 4)
                for (size_t i = 0; i < n; i += 2) ids[i] = intern(s, wide[tdm_seq_gen_uniform(g, 3)]);
        }
        assert_int_equal(tdm_seq_store_add(s, ids, n, NULL), TDM_OK);
    }
    tdm_seq_gen_free(g);
    return s;
}

/* Learns n patterns through the engine: generated ones as strings (new symbols "n<salt>_<k>" now and
 * then, so the vocabulary grows), and copies of stored patterns by id. */
static inline void learn_some(tdm_seq_engine *e, tu_rng *r, uint32_t vocab, uint32_t n, uint32_t salt) {
    tdm_seq_gen *g = make_gen(tu_next(r), vocab, 24, 7.0);
    uint32_t ranks[64];
    char names[64][24];
    const char *syms[64];
    size_t lens[64];
    for (uint32_t k = 0; k < n; k++) {
        uint32_t before = tdm_seq_store_count(tdm_seq_engine_store(e)), id;
        if (k % 5 == 4 && before) { /* a copy of a stored pattern, by ids */
            const uint32_t *p;
            size_t np;
            uint32_t copy[300];
            assert_int_equal(tdm_seq_store_get(tdm_seq_engine_store(e), (uint32_t)tu_below(r, before), &p, &np), TDM_OK);
            memcpy(copy, p, np * sizeof *p);
            assert_int_equal(tdm_seq_engine_learn(e, copy, np, &id), TDM_OK);
        } else {
            size_t np;
            tdm_seq_gen_next(g, ranks, &np);
            for (size_t i = 0; i < np; i++) {
                if (i == 0 && k % 7 == 3) snprintf(names[i], sizeof names[i], "n%u_%u", salt, k);
                else tdm_seq_gen_symbol_name(ranks[i], names[i]);
                syms[i] = names[i];
                lens[i] = strlen(names[i]);
            }
            assert_int_equal(tdm_seq_engine_learn_strings(e, syms, lens, np, &id), TDM_OK);
        }
        assert_int_equal(id, before); /* ids are dense, in learning order */
    }
    tdm_seq_gen_free(g);
}

/* STMs through tdm_seq_engine_encode: the empty one, copies and perturbed copies of stored patterns
 * (from the newest ones too: the recent tier must answer them), random ones and unknown symbols. */
static inline size_t make_stms(tdm_seq_engine *e, tu_rng *r, uint32_t vocab, tdm_seq_stm *out, size_t cap) {
    const tdm_seq_store *s = tdm_seq_engine_store(e);
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(s);
    uint32_t count = tdm_seq_store_count(s);
    char names[64][24];
    const char *syms[64];
    size_t lens[64], k = 0;
    assert_int_equal(tdm_seq_engine_encode(e, NULL, NULL, 0, &out[k++]), TDM_OK);
    while (k < cap) {
        size_t n = 0, kind = k % 4;
        if (kind <= 1) {
            const uint32_t *p;
            size_t np;
            uint32_t id = (uint32_t)(k % 8 == 1 && count > 20 ? count - 1 - tu_below(r, 20) : tu_below(r, count));
            assert_int_equal(tdm_seq_store_get(s, id, &p, &np), TDM_OK);
            for (size_t i = 0; i < np && n < 40; i++) {
                if (kind == 1 && tu_below(r, 5) == 0) continue;
                const char *sym;
                size_t len;
                assert_int_equal(tdm_seq_vocab_get(v, p[i], &sym, &len), TDM_OK);
                snprintf(names[n], sizeof names[n], "%.*s", (int)len, sym);
                n++;
            }
        } else {
            n = 1 + (size_t)tu_below(r, 20);
            for (size_t i = 0; i < n; i++) {
                if (kind == 3 && tu_below(r, 4) == 0) snprintf(names[i], sizeof names[i], "zz%u", (unsigned)tu_below(r, 3));
                else tdm_seq_gen_symbol_name((uint32_t)tu_below(r, vocab), names[i]);
            }
        }
        for (size_t i = 0; i < n; i++) syms[i] = names[i], lens[i] = strlen(names[i]);
        assert_int_equal(tdm_seq_engine_encode(e, syms, lens, n, &out[k++]), TDM_OK);
    }
    return k;
}

static inline void clear_stms(tdm_seq_stm *stms, size_t n) {
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
}

/* ---- checks ----------------------------------------------------------------------------------------- */

#include "seq_configs.h" /* the metric configurations every query test runs */
#include "hit_blocks_check.h" /* block summaries against the matcher's blocks */

static inline tdm_seq_query_opts opts_for(config c, double thr, uint32_t k) {
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = c.metric, o.autojunk = c.autojunk, o.stm_first = c.stm_first, o.threshold = thr, o.top_k = k;
    return o;
}

static inline tdm_seq_engine_stats stats_of(tdm_seq_engine *e) {
    tdm_seq_engine_stats st;
    tdm_seq_engine_stats_get(e, &st);
    return st;
}

static inline void same_hits(const tdm_seq_result *got, const tdm_seq_result *want, const char *what, const char *cfg, size_t si,
                      double thr, uint32_t k) {
    tu_check(got->n == want->n, "%s %s STM %zu thr %g top %u: %zu hits, want %zu", what, cfg, si, thr, k, got->n, want->n);
    for (size_t h = 0; h < want->n; h++) {
        tu_check(got->hits[h].id == want->hits[h].id, "%s %s STM %zu thr %g top %u: hit %zu is id %u, want %u", what, cfg,
                 si, thr, k, h, got->hits[h].id, want->hits[h].id);
        tu_assert_same_double(got->hits[h].similarity, want->hits[h].similarity, "%s %s STM %zu hit %zu", what, cfg, si, h);
    }
}

/* Where token-metric queries are expected to run. */
typedef struct {
    const char *backend;  /* "fake:0" or "cpu" */
    tdm_route_reason why;
} expect;

/* Every configuration, thresholds 0, 0.5 and 1 and several k, over every STM: the engine's answer is the
 * same as tdm_seq_query's over the engine's store, bit for bit, and the statistics say where it ran.
 * Char queries always run on the CPU (no device implements them). */
static inline void check_engine(tdm_seq_engine *e, const tdm_seq_stm *stms, size_t nstm, expect tok, const char *what) {
    const tdm_seq_store *s = tdm_seq_engine_store(e);
    tdm_seq_engine_stats es = stats_of(e);
    uint32_t count = tdm_seq_store_count(s);
    assert_int_equal(es.patterns, count);
    const double thr[] = {0.0, 0.5, 1.0};
    const uint32_t ks[] = {1, 5, count + 3};
    tdm_seq_result kept = {0}, kept_batch[12] = {{0}}; /* reused from query to query (opts.reuse) */
    for (size_t c = 0; c < NCONFIG; c++) {
        for (size_t t = 0; t < 6; t++) {
            double th = t < 3 ? thr[t] : 0.5;
            uint32_t k = t < 3 ? 0 : ks[t - 3];
            tdm_seq_query_opts o = opts_for(configs[c], th, k);
            tdm_seq_result got[12], want;
            assert_true(nstm <= 12);
            for (size_t i = 0; i < nstm; i++) {
                int rc = tdm_seq_engine_query(e, &stms[i], &o, &got[i]);
                tu_check(rc == TDM_OK, "%s %s: rc %d (%s)", what, configs[c].name, rc, tdm_last_error());
                assert_int_equal(tdm_seq_query(s, &stms[i], &o, &want), TDM_OK);
                same_hits(&got[i], &want, what, configs[c].name, i, th, k);
                const tdm_seq_query_stats *st = &got[i].stats;
                int dev = configs[c].metric != TDM_SEQ_CHAR && !strcmp(tok.backend, "fake:0");
                if (configs[c].metric != TDM_SEQ_CHAR) {
                    tu_check(!strcmp(st->backend, tok.backend), "%s %s: ran on %s", what, configs[c].name, st->backend);
                    tu_check(st->route_reason == (int)tok.why, "%s %s: route %s", what, configs[c].name,
                             tdm_route_reason_name((tdm_route_reason)st->route_reason));
                } else {
                    assert_string_equal(st->backend, "cpu");
                }
                assert_int_equal(st->patterns, count);
                assert_int_equal(st->returned, got[i].n);
                assert_int_equal(st->device_patterns, dev ? es.device_patterns : 0);
                assert_int_equal(st->recent_patterns, dev ? es.recent_patterns : count);
                if (dev) { /* the device's copy, plus the host's placement of rows sent by rank */
                    assert_int_equal(atomic_load(&fake.last_limit), es.device_patterns);
                    tu_check(st->copy_ms >= 0.125 && st->copy_ms < 1e3, "%s: copy_ms %g not the device's", what, st->copy_ms);
                } else {
                    assert_true(st->copy_ms == 0.0);
                }
                tdm_seq_result_clear(&want);
            }
            /* A batch answers as the single queries did. */
            tdm_seq_result batch[12];
            assert_int_equal(tdm_seq_engine_query_batch(e, stms, nstm, &o, batch), TDM_OK);
            for (size_t i = 0; i < nstm; i++) {
                same_hits(&batch[i], &got[i], "batch", configs[c].name, i, th, k);
                assert_int_equal(batch[i].stats.route_reason, got[i].stats.route_reason);
                assert_string_equal(batch[i].stats.backend, got[i].stats.backend);
                assert_null(batch[i].blocks);
                tdm_seq_result_clear(&batch[i]);
            }
            /* Into results kept from query to query (opts.reuse), blocks asked for every other time: the
             * same hits, and a threshold answer that fits the kept array lands in it. */
            tdm_seq_query_opts ro = o;
            ro.reuse = 1;
            for (size_t i = 0; i < nstm; i++) {
                ro.blocks = (int)((i + t) % 2);
                tdm_seq_hit *before = kept.hits;
                size_t cap = kept.cap;
                assert_int_equal(tdm_seq_engine_query(e, &stms[i], &ro, &kept), TDM_OK);
                same_hits(&kept, &got[i], "reused result", configs[c].name, i, th, k);
                tu_check(kept.cap >= kept.n && (kept.blocks != NULL) == ro.blocks, "%s: reused result: cap %zu, n %zu, blocks %p",
                         what, kept.cap, kept.n, (void *)kept.blocks);
                if (ro.blocks) hb_check(s, &stms[i], o.autojunk, &kept, "reused result");
                if (!k && before && cap >= kept.n)
                    tu_check(kept.hits == before, "%s %s STM %zu: %zu hits did not land in the kept array of %zu", what,
                             configs[c].name, i, kept.n, cap);
            }
            ro.blocks = (int)(t % 2);
            assert_int_equal(tdm_seq_engine_query_batch(e, stms, nstm, &ro, kept_batch), TDM_OK);
            for (size_t i = 0; i < nstm; i++) same_hits(&kept_batch[i], &got[i], "reused batch", configs[c].name, i, th, k);
            /* With block summaries (from the fake device, or left to the host every other time): the same
             * hits, each with its summary, through both tiers' merge; single queries and a batch. */
            o.blocks = 1;
            atomic_store(&fake.no_blocks, (int)(t % 2));
            assert_int_equal(tdm_seq_engine_query_batch(e, stms, nstm, &o, batch), TDM_OK);
            for (size_t i = 0; i < nstm; i++) {
                char desc[160];
                snprintf(desc, sizeof desc, "%s %s STM %zu thr %g top %u, blocks (device %s)", what, configs[c].name, i, th,
                         k, t % 2 ? "leaves them to the host" : "computes them");
                tdm_seq_result wb;
                int rc = tdm_seq_engine_query(e, &stms[i], &o, &wb);
                tu_check(rc == TDM_OK, "%s: rc %d (%s)", desc, rc, tdm_last_error());
                same_hits(&wb, &got[i], desc, configs[c].name, i, th, k);
                same_hits(&batch[i], &got[i], desc, configs[c].name, i, th, k);
                hb_check(s, &stms[i], o.autojunk, &wb, desc);
                hb_check(s, &stms[i], o.autojunk, &batch[i], desc);
                tdm_seq_result_clear(&wb);
                tdm_seq_result_clear(&batch[i]);
                tdm_seq_result_clear(&got[i]);
            }
            atomic_store(&fake.no_blocks, 0);
        }
    }
    tdm_seq_result_clear(&kept);
    for (size_t i = 0; i < 12; i++) tdm_seq_result_clear(&kept_batch[i]);
}

static inline tdm_seq_engine *make_engine(tdm_seq_store *s, uint32_t thr, double interval, uint64_t gpu_min) {
    tdm_seq_engine_opts o = {.sync_threshold = thr, .sync_interval_s = interval, .gpu_min_patterns = gpu_min};
    tdm_seq_engine *e;
    int rc = tdm_seq_engine_new(s, &o, &e);
    tu_check(rc == TDM_OK, "engine_new: rc %d (%s)", rc, tdm_last_error());
    return e;
}

#endif
