/* test_seq_cross.c: the cross-backend driver of the sequence engine (design principle 6). On seeded random
 * stores and STMs it checks, bit for bit (hit count, every id in order, the IEEE bits of every similarity,
 * and where the query asks for them every hit's matching-block summary, the reference's against the
 * matcher's own):
 *   CPU half:  the dual-tier engine on a CPU-only context against tdm_seq_query with no_prefilter = 1 on a
 *              separate store of the same content, the plainest reference there is (every pattern scored);
 *   CUDA half: the engine on a context forced to the CUDA backend against the CPU engine, with the query
 *              and engine statistics checked, so that a silent fallback to the CPU fails instead of passing
 *              for free.
 * Without a CUDA backend that has sequence entry points the CUDA half does not run, and the last line says
 * "CUDA half: NOT RUN (<reason>)", which CTest reads as "skipped" (tests/cross/CMakeLists.txt). That line
 * is printed only when the CPU half passed: CTest skips on the line whatever the exit code, and a CPU
 * failure must not hide behind it. TANDEM_TEST_REQUIRE_GPU=1 (the GPU machine) makes "not run" a failure.
 *
 * Every case draws everything from the run's seed and its own index, so one case replays alone:
 * TANDEM_TEST_SEED=<seed> test_seq_cross --case <k>. Plain C rather than cmocka: a case is a loop over many
 * queries whose useful failure report is the case's parameters, and the skip needs one exact line. */
#include "tandem/backend.h"
#include "tandem/seq.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seq_cross_data.h" /* cases, generated patterns, STMs and options */

#define DEFAULT_SEED 20240611ull
#define DEFAULT_CASES 40
#define DEFAULT_QUERIES 12
#define DEFAULT_BIG 200000u

/* ---- the three sides: reference store, CPU engine, CUDA engine -------------------------------------- */

typedef struct {
    uint64_t seed;
    int failures;
    int verbose;
    tdm_ctx *cpu, *cuda;            /* cuda is NULL when the CUDA half does not run */
    const tdm_backend *cuda_backend;
} run_state;

/* The failure report: the case, then what broke. Returns 0 so that callers can `return fail(...)`. */
static int fail(run_state *st, const xcase *c, const char *fmt, ...) {
    st->failures++;
    printf("FAIL (seed %" PRIu64 ", replay: TANDEM_TEST_SEED=%" PRIu64 " test_seq_cross --case %d)\n  ", st->seed,
           st->seed, c->index);
    describe_case(c, stdout);
    printf("\n  ");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return 0;
}

static int api_fail(run_state *st, const xcase *c, const char *what, int rc) {
    return fail(st, c, "%s: %s (%s)", what, tdm_strerror(rc), tdm_last_error());
}

/* A store holding the case's vocabulary s0..s<vocab-1> in rank order and the first n patterns. */
static int build_store(run_state *st, const xcase *c, tdm_ctx *ctx, const patset *p, uint32_t n,
                       tdm_seq_store **out) {
    tdm_seq_store *s;
    int rc = tdm_seq_store_new(ctx, &s);
    if (rc) return api_fail(st, c, "tdm_seq_store_new", rc);
    tdm_seq_vocab *v = tdm_seq_store_vocab(s);
    char name[16];
    for (uint32_t r = 0; r < c->gen.vocab; r++) {
        uint32_t id;
        size_t len = tdm_seq_gen_symbol_name(r, name);
        if ((rc = tdm_seq_vocab_intern(v, name, len, &id)) || id != r) {
            tdm_seq_store_free(s);
            return rc ? api_fail(st, c, "tdm_seq_vocab_intern", rc) : fail(st, c, "symbol %s got id %u", name, id);
        }
    }
    namebuf nb = {0};
    for (uint32_t k = 0; k < n && !rc; k++) {
        const uint32_t *syms = p->sym + p->off[k];
        size_t len = (size_t)(p->off[k + 1] - p->off[k]);
        uint32_t id = UINT32_MAX;
        if (p->has_new[k]) {
            namebuf_fill(&nb, syms, len);
            rc = tdm_seq_store_add_strings(s, nb.names, nb.lens, len, &id);
        } else {
            rc = tdm_seq_store_add(s, syms, len, &id);
        }
        if (rc) api_fail(st, c, "tdm_seq_store_add", rc);
        else if (id != k) rc = -1, fail(st, c, "pattern %u was stored as id %u", k, id);
    }
    namebuf_free(&nb);
    if (rc) {
        tdm_seq_store_free(s);
        return 0;
    }
    *out = s;
    return 1;
}

static int learn_rest(run_state *st, const xcase *c, tdm_seq_engine *e, const char *side, const patset *p) {
    namebuf nb = {0};
    int ok = 1;
    for (uint32_t k = c->n_initial; k < p->n && ok; k++) {
        const uint32_t *syms = p->sym + p->off[k];
        size_t len = (size_t)(p->off[k + 1] - p->off[k]);
        uint32_t id = UINT32_MAX;
        int rc;
        if (p->has_new[k]) {
            namebuf_fill(&nb, syms, len);
            rc = tdm_seq_engine_learn_strings(e, nb.names, nb.lens, len, &id);
        } else {
            rc = tdm_seq_engine_learn(e, syms, len, &id);
        }
        if (rc) ok = api_fail(st, c, side, rc);
        else if (id != k) ok = fail(st, c, "%s: learned pattern %u got id %u", side, k, id);
    }
    namebuf_free(&nb);
    return ok;
}

static int make_engine(run_state *st, const xcase *c, tdm_ctx *ctx, const patset *p, tdm_seq_engine **out) {
    tdm_seq_store *s;
    if (!build_store(st, c, ctx, p, c->n_initial, &s)) return 0;
    tdm_seq_engine_opts eo;
    tdm_seq_engine_opts_init(ctx, &eo);
    eo.sync_threshold = c->sync_threshold;
    eo.sync_interval_s = 0;  /* no background thread: the tiers hold what the case says when it queries */
    eo.gpu_min_patterns = 0; /* any store is worth the device here: small ones are where edge cases live */
    int rc = tdm_seq_engine_new(s, &eo, out);
    if (rc) return api_fail(st, c, "tdm_seq_engine_new", rc);
    return 1;
}

/* ---- comparing ------------------------------------------------------------------------------------- */

/* 1 when a and b are the same rows, bit for bit; else writes the first difference into msg. */
static int same_hits(const tdm_seq_result *a, const tdm_seq_result *b, const char *na, const char *nb, char *msg,
                     size_t cap) {
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const tdm_seq_hit *x = &a->hits[i], *y = &b->hits[i];
        if (x->id != y->id || memcmp(&x->similarity, &y->similarity, sizeof x->similarity)) {
            snprintf(msg, cap,
                     "row %zu differs: %s id %u sim %.17g (0x%016" PRIx64 "), %s id %u sim %.17g (0x%016" PRIx64
                     "); %s has %zu rows, %s %zu",
                     i, na, x->id, x->similarity, dbits(x->similarity), nb, y->id, y->similarity, dbits(y->similarity),
                     na, a->n, nb, b->n);
            return 0;
        }
    }
    if (a->n != b->n) {
        const tdm_seq_result *l = a->n > b->n ? a : b;
        snprintf(msg, cap, "%s has %zu rows, %s %zu; first extra row of %s: id %u sim %.17g (0x%016" PRIx64 ")", na,
                 a->n, nb, b->n, a->n > b->n ? na : nb, l->hits[n].id, l->hits[n].similarity,
                 dbits(l->hits[n].similarity));
        return 0;
    }
    return 1;
}

/* 1 when a and b carry the same block summaries for the same rows (same_hits passed), bit for bit, or
 * neither carries any; else writes the first difference into msg. */
static int same_blocks(const tdm_seq_result *a, const tdm_seq_result *b, const char *na, const char *nb, char *msg,
                       size_t cap) {
    if (!a->blocks != !b->blocks) {
        snprintf(msg, cap, "%s %s block summaries, %s %s", na, a->blocks ? "has" : "lacks", nb, b->blocks ? "has" : "lacks");
        return 0;
    }
    for (size_t i = 0; a->blocks && i < a->n; i++) {
        const tdm_seq_hit_blocks *x = &a->blocks[i], *y = &b->blocks[i];
        if (memcmp(x, y, sizeof *x)) {
            snprintf(msg, cap,
                     "row %zu (id %u): %s summary {matched %u, nblocks %u, a_first %u, b_first %u, a_end %u, a_repeat %u}, "
                     "%s {%u, %u, %u, %u, %u, %u}",
                     i, a->hits[i].id, na, x->matched, x->nblocks, x->a_first, x->b_first, x->a_end, x->a_repeat, nb,
                     y->matched, y->nblocks, y->a_first, y->b_first, y->a_end, y->a_repeat);
            return 0;
        }
    }
    return 1;
}

/* The reference's summaries recomputed pattern by pattern with the matcher (SequenceMatcher(None, pattern,
 * STM, autojunk)); 1 when they agree. */
static int blocks_match_matcher(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o,
                                const tdm_seq_result *r, char *msg, size_t cap) {
    if (!o->blocks) {
        if (r->blocks) snprintf(msg, cap, "block summaries nobody asked for");
        return !r->blocks;
    }
    if (!r->blocks) {
        snprintf(msg, cap, "no block summaries although asked for");
        return 0;
    }
    tdm_seq_matcher *m;
    int ok = !tdm_seq_matcher_new(&m) && !tdm_seq_matcher_set_b(m, stm->ids, stm->n, o->autojunk);
    if (!ok) snprintf(msg, cap, "matcher: %s", tdm_last_error());
    for (size_t i = 0; ok && i < r->n; i++) {
        const uint32_t *P;
        size_t np;
        tdm_seq_hit_blocks want;
        if (tdm_seq_store_get(s, r->hits[i].id, &P, &np) || tdm_seq_matcher_summary(m, P, np, &want)) {
            snprintf(msg, cap, "row %zu: %s", i, tdm_last_error());
            ok = 0;
        } else if (memcmp(&want, &r->blocks[i], sizeof want)) {
            const tdm_seq_hit_blocks *x = &r->blocks[i];
            snprintf(msg, cap, "row %zu (id %u): summary {%u, %u, %u, %u, %u, %u}, the matcher's {%u, %u, %u, %u, %u, %u}", i,
                     r->hits[i].id, x->matched, x->nblocks, x->a_first, x->b_first, x->a_end, x->a_repeat, want.matched,
                     want.nblocks, want.a_first, want.b_first, want.a_end, want.a_repeat);
            ok = 0;
        }
    }
    tdm_seq_matcher_free(m);
    return ok;
}

/* Checks that a CUDA-engine answer came from where it should: the device tier searched on the CUDA
 * backend whenever the device holds patterns (a silent CPU answer fails), never a device-error fallback,
 * and both tiers together covering the store. */
static int check_cuda_stats(run_state *st, const xcase *c, const tdm_seq_query_opts *o, const tdm_seq_query_stats *q,
                            uint64_t device_now, uint32_t total, char *msg, size_t cap) {
    (void)st, (void)c;
    if (q->route_reason == TDM_ROUTE_DEVICE_ERROR) {
        snprintf(msg, cap, "the CUDA engine fell back to the CPU after a device error (route reason %s)",
                 tdm_route_reason_name((tdm_route_reason)q->route_reason));
        return 0;
    }
    if (o->metric == TDM_SEQ_CHAR) return 1; /* char stays on the CPU by design */
    if (device_now > 0) {
        if (!q->backend || strcmp(q->backend, st->cuda_backend->name)) {
            snprintf(msg, cap, "stats.backend is \"%s\" with %" PRIu64 " patterns on the device: expected \"%s\"",
                     q->backend ? q->backend : "(null)", device_now, st->cuda_backend->name);
            return 0;
        }
        if (q->device_patterns == 0) {
            snprintf(msg, cap, "the query searched no device pattern while the device tier holds %" PRIu64, device_now);
            return 0;
        }
    }
    if (q->device_patterns + q->recent_patterns != total) {
        snprintf(msg, cap, "stats: device_patterns %" PRIu64 " + recent_patterns %" PRIu64 " != %u patterns",
                 q->device_patterns, q->recent_patterns, total);
        return 0;
    }
    return 1;
}

typedef struct {
    tdm_seq_store *ref;
    tdm_seq_engine *cpu, *cuda;
    uint32_t total;
    uint64_t device_now; /* patterns on the CUDA engine's device tier */
} sides;

static int encode_all(run_state *st, const xcase *c, sides *sd, const stm_codes *s, tdm_seq_stm out[3]) {
    char *buf = xmalloc(s->n * 16 + 1);
    const char **names = xmalloc((s->n + 1) * sizeof *names);
    size_t *lens = xmalloc((s->n + 1) * sizeof *lens);
    code_names(s->codes, s->n, buf, names, lens);
    memset(out, 0, 3 * sizeof *out);
    int rc, ok = 1;
    if ((rc = tdm_seq_stm_encode(tdm_seq_store_vocab_const(sd->ref), names, lens, s->n, &out[0])))
        ok = api_fail(st, c, "tdm_seq_stm_encode", rc);
    else if ((rc = tdm_seq_engine_encode(sd->cpu, names, lens, s->n, &out[1])))
        ok = api_fail(st, c, "tdm_seq_engine_encode (CPU engine)", rc);
    else if (sd->cuda && (rc = tdm_seq_engine_encode(sd->cuda, names, lens, s->n, &out[2])))
        ok = api_fail(st, c, "tdm_seq_engine_encode (CUDA engine)", rc);
    for (int k = 1; ok && k < (sd->cuda ? 3 : 2); k++)
        if (out[k].n != out[0].n || memcmp(out[k].ids, out[0].ids, out[0].n * sizeof *out[0].ids) ||
            out[k].ncp != out[0].ncp || memcmp(out[k].cps, out[0].cps, out[0].ncp * sizeof *out[0].cps)) {
            print_stm(s);
            ok = fail(st, c, "the %s engine encodes the STM differently from the reference store's vocabulary",
                      k == 1 ? "CPU" : "CUDA");
        }
    free(buf), free(names), free(lens);
    if (!ok)
        for (int k = 0; k < 3; k++) tdm_seq_stm_clear(&out[k]);
    return ok;
}

/* One query on the three sides. */
static int run_query(run_state *st, const xcase *c, sides *sd, const char *phase, int qi, const stm_codes *s,
                     const tdm_seq_stm enc[3], const tdm_seq_query_opts *o) {
    char od[256], msg[512];
    describe_opts(o, od, sizeof od);
    tdm_seq_query_opts ro = *o;
    ro.no_prefilter = 1;
    tdm_seq_result ref = {0}, cpu = {0}, cuda = {0};
    int ok = 1, rc;
    if ((rc = tdm_seq_query(sd->ref, &enc[0], &ro, &ref))) {
        print_stm(s);
        ok = fail(st, c, "%s query %d (%s): tdm_seq_query: %s (%s)", phase, qi, od, tdm_strerror(rc), tdm_last_error());
    } else if ((rc = tdm_seq_engine_query(sd->cpu, &enc[1], o, &cpu))) {
        print_stm(s);
        ok = fail(st, c, "%s query %d (%s): CPU engine: %s (%s)", phase, qi, od, tdm_strerror(rc), tdm_last_error());
    } else if (!same_hits(&cpu, &ref, "CPU engine", "tdm_seq_query", msg, sizeof msg)) {
        print_stm(s);
        ok = fail(st, c, "%s query %d (%s): CPU engine vs reference: %s", phase, qi, od, msg);
    } else if (!blocks_match_matcher(sd->ref, &enc[0], o, &ref, msg, sizeof msg)) {
        print_stm(s);
        ok = fail(st, c, "%s query %d (%s): reference block summaries: %s", phase, qi, od, msg);
    } else if (!same_blocks(&cpu, &ref, "CPU engine", "tdm_seq_query", msg, sizeof msg)) {
        print_stm(s);
        ok = fail(st, c, "%s query %d (%s): CPU engine vs reference: %s", phase, qi, od, msg);
    } else if (cpu.stats.route_reason == TDM_ROUTE_DEVICE_ERROR || !cpu.stats.backend || strcmp(cpu.stats.backend, "cpu")) {
        ok = fail(st, c, "%s query %d (%s): the CPU engine reports backend \"%s\", reason %s", phase, qi, od,
                  cpu.stats.backend ? cpu.stats.backend : "(null)",
                  tdm_route_reason_name((tdm_route_reason)cpu.stats.route_reason));
    } else if (sd->cuda) {
        if ((rc = tdm_seq_engine_query(sd->cuda, &enc[2], o, &cuda))) {
            print_stm(s);
            ok = fail(st, c, "%s query %d (%s): CUDA engine: %s (%s)", phase, qi, od, tdm_strerror(rc), tdm_last_error());
        } else if (!same_hits(&cuda, &cpu, "CUDA engine", "CPU engine", msg, sizeof msg) ||
                   !same_blocks(&cuda, &cpu, "CUDA engine", "CPU engine", msg, sizeof msg)) {
            print_stm(s);
            ok = fail(st, c, "%s query %d (%s): CUDA vs CPU: %s", phase, qi, od, msg);
        } else if (!check_cuda_stats(st, c, o, &cuda.stats, sd->device_now, sd->total, msg, sizeof msg)) {
            ok = fail(st, c, "%s query %d (%s): %s", phase, qi, od, msg);
        }
    }
    if (st->verbose && ok)
        printf("    %s q%d %-40s %-100s -> %zu hits\n", phase, qi, s->desc, od, ref.n);
    tdm_seq_result_clear(&ref), tdm_seq_result_clear(&cpu), tdm_seq_result_clear(&cuda);
    return ok;
}

/* The batch entry points over the phase's STMs with one set of options. */
static int run_batch(run_state *st, const xcase *c, sides *sd, const char *phase, tdm_seq_stm (*enc)[3], size_t n,
                     const tdm_seq_query_opts *o) {
    if (!n) return 1;
    char od[256], msg[512];
    describe_opts(o, od, sizeof od);
    tdm_seq_stm *list[3];
    for (int k = 0; k < 3; k++) {
        list[k] = xmalloc(n * sizeof *list[k]);
        for (size_t i = 0; i < n; i++) list[k][i] = enc[i][k];
    }
    tdm_seq_query_opts ro = *o;
    ro.no_prefilter = 1;
    tdm_seq_result *out[3];
    for (int k = 0; k < 3; k++) out[k] = calloc(n, sizeof *out[k]);
    int ok = 1, rc;
    if ((rc = tdm_seq_query_batch(sd->ref, list[0], n, &ro, out[0])))
        ok = fail(st, c, "%s batch (%s): tdm_seq_query_batch: %s (%s)", phase, od, tdm_strerror(rc), tdm_last_error());
    else if ((rc = tdm_seq_engine_query_batch(sd->cpu, list[1], n, o, out[1])))
        ok = fail(st, c, "%s batch (%s): CPU engine: %s (%s)", phase, od, tdm_strerror(rc), tdm_last_error());
    else if (sd->cuda && (rc = tdm_seq_engine_query_batch(sd->cuda, list[2], n, o, out[2])))
        ok = fail(st, c, "%s batch (%s): CUDA engine: %s (%s)", phase, od, tdm_strerror(rc), tdm_last_error());
    for (size_t i = 0; ok && i < n; i++) {
        if (!same_hits(&out[1][i], &out[0][i], "CPU engine", "tdm_seq_query_batch", msg, sizeof msg) ||
            !same_blocks(&out[1][i], &out[0][i], "CPU engine", "tdm_seq_query_batch", msg, sizeof msg))
            ok = fail(st, c, "%s batch (%s), STM %zu: CPU engine vs reference: %s", phase, od, i, msg);
        else if (!blocks_match_matcher(sd->ref, &list[0][i], o, &out[0][i], msg, sizeof msg))
            ok = fail(st, c, "%s batch (%s), STM %zu: reference block summaries: %s", phase, od, i, msg);
        else if (sd->cuda && (!same_hits(&out[2][i], &out[1][i], "CUDA engine", "CPU engine", msg, sizeof msg) ||
                              !same_blocks(&out[2][i], &out[1][i], "CUDA engine", "CPU engine", msg, sizeof msg)))
            ok = fail(st, c, "%s batch (%s), STM %zu: CUDA vs CPU: %s", phase, od, i, msg);
        else if (sd->cuda && !check_cuda_stats(st, c, o, &out[2][i].stats, sd->device_now, sd->total, msg, sizeof msg))
            ok = fail(st, c, "%s batch (%s), STM %zu: %s", phase, od, i, msg);
    }
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < n; i++) tdm_seq_result_clear(&out[k][i]);
        free(out[k]);
        free(list[k]);
    }
    return ok;
}

/* One phase: nq queries with fresh STMs and options, then one batch over the first few STMs. */
static int run_phase(run_state *st, const xcase *c, sides *sd, const patset *p, const char *phase, uint32_t nq,
                     rng *r, tdm_seq_gen *g) {
    enum { BATCH = 8 };
    tdm_seq_stm enc[BATCH][3];
    size_t nb = 0;
    stm_codes s = {0};
    int ok = 1;
    for (uint32_t qi = 0; qi < nq && ok; qi++) {
        make_stm(r, g, c, p, &s);
        tdm_seq_query_opts o;
        draw_opts(r, c, sd->total, &o);
        tdm_seq_stm e3[3];
        if (!(ok = encode_all(st, c, sd, &s, e3))) break;
        ok = run_query(st, c, sd, phase, (int)qi, &s, e3, &o);
        if (nb < BATCH) memcpy(enc[nb++], e3, sizeof e3);
        else
            for (int k = 0; k < 3; k++) tdm_seq_stm_clear(&e3[k]);
    }
    if (ok) {
        tdm_seq_query_opts o;
        draw_opts(r, c, sd->total, &o);
        if (o.metric == TDM_SEQ_CHAR) o.metric = TDM_SEQ_LCS;
        ok = run_batch(st, c, sd, phase, enc, nb, &o);
    }
    for (size_t i = 0; i < nb; i++)
        for (int k = 0; k < 3; k++) tdm_seq_stm_clear(&enc[i][k]);
    free(s.codes);
    return ok;
}

/* Engine statistics after a phase: no fallback, no failure, and on the CUDA side a device tier that holds
 * what it was given (unless the device said it is full). */
static int check_engines(run_state *st, const xcase *c, sides *sd, const char *when, uint64_t want_device) {
    tdm_seq_engine_stats es;
    tdm_seq_engine_stats_get(sd->cpu, &es);
    if (es.patterns != sd->total || es.device_patterns != 0 || es.fallbacks || es.device_failed)
        return fail(st, c, "%s: CPU engine stats: patterns %" PRIu64 " (want %u), device %" PRIu64
                           " (want 0), fallbacks %" PRIu64 ", device_failed %d",
                    when, es.patterns, sd->total, es.device_patterns, es.fallbacks, es.device_failed);
    if (!sd->cuda) return 1;
    tdm_seq_engine_stats_get(sd->cuda, &es);
    sd->device_now = es.device_patterns;
    if (es.patterns != sd->total || es.device_patterns + es.recent_patterns != es.patterns)
        return fail(st, c, "%s: CUDA engine stats: patterns %" PRIu64 " (want %u) = device %" PRIu64 " + recent %" PRIu64,
                    when, es.patterns, sd->total, es.device_patterns, es.recent_patterns);
    if (es.fallbacks || es.device_failed)
        return fail(st, c, "%s: CUDA engine: %" PRIu64 " fallbacks, device_failed %d", when, es.fallbacks, es.device_failed);
    if (want_device && !es.device)
        return fail(st, c, "%s: CUDA engine has no device tier (stats.device NULL) on a CUDA context", when);
    if (es.device_patterns < want_device && !es.device_full)
        return fail(st, c, "%s: CUDA engine holds %" PRIu64 " patterns on the device, expected at least %" PRIu64
                           " (device_full is 0)",
                    when, es.device_patterns, want_device);
    return 1;
}

static void run_case(run_state *st, const xcase *c) {
    double t0 = now_s();
    int before = st->failures;
    patset p;
    gen_patterns(c, &p);
    sides sd = {0};
    sd.total = p.n;
    rng r = {c->seed ^ 0xC0FFEEull};
    tdm_seq_gen_opts go = c->gen;
    go.seed = c->seed + 1; /* the STMs' own stream */
    tdm_seq_gen *g = NULL;
    int rc = tdm_seq_gen_new(&go, &g);
    if (rc) {
        api_fail(st, c, "tdm_seq_gen_new", rc);
        goto done;
    }
    if (!build_store(st, c, st->cpu, &p, p.n, &sd.ref)) goto done;
    if (!make_engine(st, c, st->cpu, &p, &sd.cpu)) goto done;
    if (st->cuda && !make_engine(st, c, st->cuda, &p, &sd.cuda)) goto done;
    sd.total = c->n_initial;
    if (!check_engines(st, c, &sd, "after tdm_seq_engine_new", c->n_initial)) goto done;
    /* Learning: the recent tier (a count trigger may move part of it to the device on the way). */
    if (!learn_rest(st, c, sd.cpu, "CPU engine learn", &p)) goto done;
    if (sd.cuda && !learn_rest(st, c, sd.cuda, "CUDA engine learn", &p)) goto done;
    sd.total = p.n;
    if (!check_engines(st, c, &sd, "after learning", c->n_initial)) goto done;
    if (!run_phase(st, c, &sd, &p, "merged", c->queries, &r, g)) goto done;
    /* The sync moves the recent tier to the device; the answers must not change. */
    if ((rc = tdm_seq_engine_sync(sd.cpu))) {
        api_fail(st, c, "tdm_seq_engine_sync (CPU engine)", rc);
        goto done;
    }
    if (sd.cuda && (rc = tdm_seq_engine_sync(sd.cuda))) {
        api_fail(st, c, "tdm_seq_engine_sync (CUDA engine)", rc);
        goto done;
    }
    if (!check_engines(st, c, &sd, "after tdm_seq_engine_sync", p.n)) goto done;
    run_phase(st, c, &sd, &p, "synced", c->queries / 2 ? c->queries / 2 : 1, &r, g);
done:
    tdm_seq_engine_free(sd.cuda);
    tdm_seq_engine_free(sd.cpu);
    tdm_seq_store_free(sd.ref);
    tdm_seq_gen_free(g);
    free_patterns(&p);
    printf("case %d %-5s: vocab %5u, %6u + %4u learned patterns, len %u..%u, sync@%u, %u+%u queries: %s (%.2f s)\n",
           c->index, c->kind, c->gen.vocab, c->n_initial, c->n_learned, c->gen.min_len, c->gen.max_len, c->sync_threshold,
           c->queries, c->queries / 2 ? c->queries / 2 : 1, st->failures == before ? "ok" : "FAILED", now_s() - t0);
    fflush(stdout);
}

/* ---- main ------------------------------------------------------------------------------------------ */

static const char *usage =
    "usage: test_seq_cross [--cases N] [--case K] [--queries N] [--big N] [--verbose]\n"
    "  --cases N    cases to run (default 40, or TANDEM_TEST_CASES; the GPU machine runs more)\n"
    "  --case K     run only case K (with the same TANDEM_TEST_SEED: replays a failure)\n"
    "  --queries N  queries per case and phase (default 12; the phase after the sync runs half)\n"
    "  --big N      patterns in case 2, the large store (default 200000; 0 = no large case)\n"
    "Environment: TANDEM_TEST_SEED (the run's seed), TANDEM_TEST_CASES (--cases), TANDEM_TEST_REQUIRE_GPU=1\n"
    "(the CUDA half must run: a missing GPU fails instead of skipping).\n";

static tdm_ctx *make_ctx(int seq_backend, int device) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.seq_backend = seq_backend;
    cfg.device = device;
    cfg.strict = 0; /* a missing device must reach this test (and its NOT RUN line), not fail tdm_init */
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, &cfg);
    if (rc) {
        fprintf(stderr, "test_seq_cross: tdm_init: %s (%s)\n", tdm_strerror(rc), tdm_last_error());
        exit(1);
    }
    return ctx;
}

static uint32_t parse_u32(const char *opt, const char *v) {
    char *end;
    unsigned long long x = v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || *end || x > UINT32_MAX) {
        fprintf(stderr, "test_seq_cross: bad value for %s: '%s'\n%s", opt, v ? v : "", usage);
        exit(2);
    }
    return (uint32_t)x;
}

int main(int argc, char **argv) {
    uint32_t cases = DEFAULT_CASES, queries = DEFAULT_QUERIES, big = DEFAULT_BIG;
    int only = -1, verbose = 0;
    const char *env_cases = getenv("TANDEM_TEST_CASES"); /* --cases wins over it */
    if (env_cases && *env_cases) cases = parse_u32("TANDEM_TEST_CASES", env_cases);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--cases")) cases = parse_u32(a, v), i++;
        else if (!strcmp(a, "--case")) only = (int)parse_u32(a, v), i++;
        else if (!strcmp(a, "--queries")) queries = parse_u32(a, v), i++;
        else if (!strcmp(a, "--big")) big = parse_u32(a, v), i++;
        else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) verbose = 1;
        else {
            fprintf(stderr, "test_seq_cross: unknown option '%s'\n%s", a, usage);
            return 2;
        }
    }
    if (queries < 1) queries = 1;
    run_state st = {.seed = DEFAULT_SEED, .verbose = verbose};
    const char *env = getenv("TANDEM_TEST_SEED");
    if (env && *env) {
        char *end;
        st.seed = strtoull(env, &end, 0);
        if (*end) {
            fprintf(stderr, "test_seq_cross: TANDEM_TEST_SEED=\"%s\" is not an integer\n", env);
            return 2;
        }
    }
    const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
    int require_gpu = req && !strcmp(req, "1");
    printf("test_seq_cross: seed %" PRIu64 " (replay with TANDEM_TEST_SEED=%" PRIu64 "), %u cases, %u queries per "
           "phase, big case %u patterns\n",
           st.seed, st.seed, cases, queries, big);

    st.cpu = make_ctx(TDM_DEVICE_CPU, TDM_DEVICE_CPU);
    tdm_ctx *cuda_ctx = make_ctx(TDM_DEVICE_CUDA, TDM_DEVICE_AUTO);
    char why[256] = "";
    const tdm_backend *cb = tdm_backend_find(cuda_ctx, TDM_BACKEND_CUDA);
    if (!cb)
        snprintf(why, sizeof why, "no CUDA backend: no GPU, or libtandem_cuda.so did not load; "
                                  "TANDEM_LOG_LEVEL=info says why");
    else if (!cb->seq)
        snprintf(why, sizeof why, "backend %s has no sequence entry points", cb->name);
    if (cb && cb->seq) {
        st.cuda = cuda_ctx;
        st.cuda_backend = cb;
        printf("CUDA half: runs on %s (%s)\n", cb->name, cb->description);
    } else {
        printf("CUDA half: will not run (%s); the CPU half runs alone\n", why);
    }
    fflush(stdout);

    double t0 = now_s();
    for (uint32_t k = 0; k < cases; k++) {
        if (only >= 0 && (int)k != only) continue;
        xcase c;
        make_case(st.seed, (int)k, big, queries, &c);
        run_case(&st, &c);
    }
    if (only >= (int)cases) {
        xcase c;
        make_case(st.seed, only, big, queries, &c);
        run_case(&st, &c);
    }
    printf("%d failure%s in %.1f s\n", st.failures, st.failures == 1 ? "" : "s", now_s() - t0);
    int rc = st.failures ? 1 : 0;
    if (!st.cuda) {
        if (require_gpu) {
            printf("CUDA half: REQUIRED BUT NOT RUN (%s; TANDEM_TEST_REQUIRE_GPU=1)\n", why);
            rc = 1;
        } else if (st.failures) {
            /* Not the skip line: CTest would report a skip and hide the CPU half's failure. */
            printf("CUDA half: not run either (%s)\n", why);
        } else {
            printf("CUDA half: NOT RUN (%s)\n", why);
        }
    }
    tdm_destroy(cuda_ctx);
    tdm_destroy(st.cpu);
    return rc;
}
