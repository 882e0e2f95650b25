/* seq_cross_data.h: the inputs of test_seq_cross: a seeded stream (splitmix64, as tests/unit/unit_common.h),
 * the parameters of each case (a fixed schedule, then the kinds in turn), the generated patterns (the shared
 * generator plus duplicates, extra-long patterns and learned patterns that bring new symbols), the STMs (edited
 * stored patterns, fresh draws, long ones, unknown symbols, pieces, empty) and the query options. Everything a
 * case draws comes from the run's seed and the case's index, so a case replays alone. Header-only, included by
 * the one driver, so that the driver itself reads as the comparison it is. */
#ifndef TANDEM_SEQ_CROSS_DATA_H
#define TANDEM_SEQ_CROSS_DATA_H

#include "tandem/seq.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Symbol codes of generated data: ranks below the case's vocabulary are "s<rank>" (interned before any
 * pattern, so id = rank); codes from NEW_BASE are symbols a learned pattern brings ("x<k>", interned by
 * the learn); codes from UNKNOWN_BASE never reach a vocabulary ("u<k>", unknown STM symbols). */
#define NEW_BASE 0x40000000u
#define UNKNOWN_BASE 0x80000000u

/* ---- small utilities ------------------------------------------------------------------------------- */

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_seq_cross: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "test_seq_cross: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return q;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64, as tests/unit/unit_common.h: small, seedable, the same on every platform. */
typedef struct {
    uint64_t s;
} rng;

static uint64_t rnext(rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t below(rng *r, uint64_t n) { return n ? rnext(r) % n : 0; }
static uint64_t range_u(rng *r, uint64_t lo, uint64_t hi) { return lo + below(r, hi - lo + 1); }
static double unit(rng *r) { return (double)(rnext(r) >> 11) * 0x1.0p-53; }
static int chance(rng *r, double p) { return unit(r) < p; }
/* Log-uniform in [lo, hi]: small stores as often as large ones. */
static uint32_t log_range(rng *r, uint32_t lo, uint32_t hi) {
    double x = exp(log((double)lo) + unit(r) * (log((double)hi + 1.0) - log((double)lo)));
    uint32_t v = (uint32_t)x;
    return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t dbits(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* ---- cases ----------------------------------------------------------------------------------------- */

typedef struct {
    int index;
    const char *kind;
    uint64_t seed;            /* the case's own stream (data, STMs, options) */
    tdm_seq_gen_opts gen;     /* pattern distribution */
    uint32_t n_initial;       /* patterns in the store the engines take over (the device tier) */
    uint32_t n_learned;       /* patterns learned afterwards (the recent tier until a sync) */
    double dup_rate;          /* share of patterns that repeat an earlier one (ties in top-k) */
    double long_rate;         /* share of extra-long patterns drawn symbol by symbol */
    uint32_t long_max;        /* their longest */
    double new_symbol_rate;   /* share of learned patterns that bring a symbol the vocabulary lacked */
    uint32_t sync_threshold;  /* engine option: 0 = no count trigger, so the recent tier stays */
    uint32_t stm_max;         /* longest STM drawn (keeps difflib's cost bounded on tiny vocabularies) */
    uint32_t stm_min_long;    /* STMs of the "long" kind start here (200+ where autojunk must matter) */
    int char_ok;              /* the char metric is cheap enough on this store */
    uint32_t queries;         /* per phase (the second phase, after the sync, runs half as many) */
} xcase;

static const char *const KINDS[] = {"tiny", "zipf", "long", "junk", "mixed"};

static void describe_case(const xcase *c, FILE *f) {
    fprintf(f, "case %d (%s): vocab %u zipf %.2f lengths %u..%u mean %.1f, %u patterns + %u learned, "
               "dup %.2f, long %.2f (to %u), new symbols %.2f, sync threshold %u, STMs to %u, %u queries",
            c->index, c->kind, c->gen.vocab, c->gen.zipf_s, c->gen.min_len, c->gen.max_len, c->gen.mean_len,
            c->n_initial, c->n_learned, c->dup_rate, c->long_rate, c->long_max, c->new_symbol_rate,
            c->sync_threshold, c->stm_max, c->queries);
}

static void set_split(rng *r, xcase *c, uint32_t total, uint32_t max_learned) {
    uint64_t u = below(r, 10);
    uint32_t learned;
    if (u < 2) learned = 0;                      /* device tier only */
    else if (u < 3) learned = total;             /* everything in the recent tier until the sync */
    else learned = (uint32_t)((double)total * (0.01 + 0.4 * unit(r)));
    if (learned > max_learned) learned = max_learned;
    if (learned > total) learned = total;
    c->n_learned = learned;
    c->n_initial = total - learned;
}

/* The parameters of case k: a fixed schedule (empty store, one pattern, the big store), then the kinds in
 * turn, each with random parameters inside the bounds that keep the CPU-only run short. */
static void make_case(uint64_t seed, int k, uint32_t big, uint32_t queries, xcase *c) {
    rng r = {seed ^ ((uint64_t)(k + 1) * 0xD1B54A32D192ED03ull)};
    rnext(&r);
    memset(c, 0, sizeof *c);
    c->index = k;
    c->seed = rnext(&r);
    tdm_seq_gen_opts_init(&c->gen);
    c->gen.seed = c->seed;
    c->queries = queries;
    c->long_max = 0;
    c->stm_max = 600;
    c->stm_min_long = 65;
    c->sync_threshold = chance(&r, 0.3) ? (uint32_t)range_u(&r, 1, 50) : 0;
    c->new_symbol_rate = chance(&r, 0.5) ? 0.2 : 0.0;
    uint32_t total;
    if (k == 0) {
        c->kind = "empty";
        c->gen.vocab = 5, c->gen.min_len = 0, c->gen.max_len = 10, c->gen.mean_len = 3;
        total = 0, c->char_ok = 1;
        c->n_initial = 0, c->n_learned = 0;
        return;
    }
    if (k == 1) {
        c->kind = "one";
        c->gen.vocab = 4, c->gen.min_len = 0, c->gen.max_len = 70, c->gen.mean_len = 8;
        c->char_ok = 1;
        c->stm_max = 200;
        set_split(&r, c, 1, 1);
        return;
    }
    if (k == 2 && big) {
        /* The benchmark's distribution at a size where the device's chunking and top-k selection are
         * exercised for real; few queries, each against every pattern in the reference. */
        c->kind = "big";
        c->dup_rate = 0.01;
        c->stm_max = 1200;
        c->queries = queries / 2 ? queries / 2 : 1;
        set_split(&r, c, big, 3000);
        return;
    }
    c->kind = KINDS[(k - 3 + (big ? 0 : 1) + 5) % 5];
    if (!strcmp(c->kind, "tiny")) {
        /* 3-8 symbols: long runs of repeats, many equal similarities, ties at every top-k boundary. */
        c->gen.vocab = (uint32_t)range_u(&r, 3, 8);
        c->gen.zipf_s = 1.2 * unit(&r);
        c->gen.min_len = (uint32_t)below(&r, 2);
        c->gen.max_len = (uint32_t)range_u(&r, 8, 60);
        c->gen.mean_len = c->gen.min_len + (c->gen.max_len - c->gen.min_len) * (0.1 + 0.4 * unit(&r));
        c->dup_rate = 0.1;
        c->stm_max = 150;
        c->char_ok = 1;
        total = log_range(&r, 1, 600);
    } else if (!strcmp(c->kind, "zipf")) {
        /* The benchmark's distribution (Zipf over 50,000, lengths 2-60 mean 20), sometimes from length 0. */
        if (chance(&r, 0.3)) c->gen.min_len = (uint32_t)below(&r, 2);
        c->dup_rate = 0.03;
        c->stm_max = 1200;
        total = log_range(&r, 2, 30000);
        c->char_ok = total <= 3000;
    } else if (!strcmp(c->kind, "long")) {
        /* Patterns of hundreds to thousands of symbols: the multi-word bit-parallel LCS on both sides. */
        c->gen.vocab = (uint32_t)range_u(&r, 300, 5000);
        c->gen.zipf_s = 0.7;
        c->gen.min_len = (uint32_t)below(&r, 101);
        c->gen.max_len = (uint32_t)range_u(&r, 400, 3000);
        c->gen.mean_len = c->gen.min_len + (c->gen.max_len - c->gen.min_len) * 0.25;
        c->dup_rate = 0.05;
        c->stm_max = 2000;
        c->stm_min_long = 513;
        total = (uint32_t)range_u(&r, 1, 40);
    } else if (!strcmp(c->kind, "junk")) {
        /* |b| >= 200 over a few dozen symbols, the head of them popular: autojunk 0 and 1 differ here,
         * whichever side (STM or pattern) is b. */
        c->gen.vocab = (uint32_t)range_u(&r, 8, 80);
        c->gen.zipf_s = 0.8 + 0.4 * unit(&r);
        c->gen.min_len = 150, c->gen.max_len = 450, c->gen.mean_len = 250;
        c->dup_rate = 0.05;
        c->stm_max = 700;
        c->stm_min_long = 200;
        total = (uint32_t)range_u(&r, 5, 150);
    } else { /* mixed */
        c->gen.vocab = (uint32_t)range_u(&r, 20, 2000);
        c->gen.zipf_s = 0.5 + unit(&r);
        c->gen.min_len = (uint32_t)below(&r, 2);
        c->gen.max_len = (uint32_t)range_u(&r, 20, 200);
        c->gen.mean_len = c->gen.min_len + (c->gen.max_len - c->gen.min_len) * (0.1 + 0.3 * unit(&r));
        c->dup_rate = 0.05;
        c->long_rate = 0.02, c->long_max = 600;
        c->stm_max = 600;
        total = log_range(&r, 1, 8000);
        c->char_ok = total <= 2000;
    }
    set_split(&r, c, total, 5000);
}

/* ---- generated data -------------------------------------------------------------------------------- */

typedef struct {
    uint32_t *sym; /* symbol codes, back to back */
    uint64_t *off; /* n + 1 offsets */
    uint8_t *has_new; /* pattern brings a NEW_BASE symbol: it is learned through its strings */
    uint32_t n;
} patset;

static void gen_patterns(const xcase *c, patset *p) {
    uint32_t total = c->n_initial + c->n_learned;
    tdm_seq_gen *g;
    int rc = tdm_seq_gen_new(&c->gen, &g);
    if (rc) {
        fprintf(stderr, "test_seq_cross: generator: %s (%s)\n", tdm_strerror(rc), tdm_last_error());
        exit(2);
    }
    rng r = {c->seed ^ 0x5EEDull};
    size_t cap = (size_t)total * (c->gen.mean_len + 4) + c->gen.max_len + c->long_max + 64, used = 0;
    p->sym = xmalloc(cap * sizeof *p->sym);
    p->off = xmalloc(((size_t)total + 1) * sizeof *p->off);
    p->has_new = xmalloc((size_t)total + 1);
    p->n = total;
    uint32_t new_count = 0;
    for (uint32_t k = 0; k < total; k++) {
        size_t need = used + c->gen.max_len + c->long_max + 1;
        if (need > cap) {
            cap = need * 2;
            p->sym = xrealloc(p->sym, cap * sizeof *p->sym);
        }
        p->off[k] = used;
        p->has_new[k] = 0;
        size_t n;
        if (k > 0 && chance(&r, c->dup_rate)) {
            uint32_t src = (uint32_t)below(&r, k);
            n = (size_t)(p->off[src + 1] - p->off[src]);
            memmove(p->sym + used, p->sym + p->off[src], n * sizeof *p->sym);
            p->has_new[k] = p->has_new[src];
        } else if (c->long_max && chance(&r, c->long_rate)) {
            n = (size_t)range_u(&r, 100, c->long_max);
            for (size_t i = 0; i < n; i++) p->sym[used + i] = tdm_seq_gen_symbol(g);
        } else {
            tdm_seq_gen_next(g, p->sym + used, &n);
        }
        /* A learned pattern may bring new symbols: only the recent tier has them until the next sync. */
        if (k >= c->n_initial && n && chance(&r, c->new_symbol_rate)) {
            size_t reps = 1 + (size_t)below(&r, 3);
            for (size_t t = 0; t < reps; t++) {
                uint32_t code = NEW_BASE + (new_count && chance(&r, 0.5) ? (uint32_t)below(&r, new_count) : new_count++);
                p->sym[used + below(&r, n)] = code;
            }
            p->has_new[k] = 1;
        }
        used += n;
    }
    p->off[total] = used;
    tdm_seq_gen_free(g);
}

static void free_patterns(patset *p) {
    free(p->sym);
    free(p->off);
    free(p->has_new);
}

/* Names of symbol codes, into one buffer (names[i] points into buf; buf holds 16 bytes per symbol). */
static void code_names(const uint32_t *codes, size_t n, char *buf, const char **names, size_t *lens) {
    for (size_t i = 0; i < n; i++) {
        char *s = buf + 16 * i;
        uint32_t c = codes[i];
        if (c >= UNKNOWN_BASE) lens[i] = (size_t)snprintf(s, 16, "u%u", c - UNKNOWN_BASE);
        else if (c >= NEW_BASE) lens[i] = (size_t)snprintf(s, 16, "x%u", c - NEW_BASE);
        else lens[i] = tdm_seq_gen_symbol_name(c, s);
        names[i] = s;
    }
}

/* A coded sequence's names, in buffers reused and grown across calls (release with namebuf_free). */
typedef struct {
    size_t cap;
    char *buf;
    const char **names;
    size_t *lens;
} namebuf;

static void namebuf_fill(namebuf *nb, const uint32_t *codes, size_t n) {
    if (n + 1 > nb->cap) {
        nb->cap = n + 1;
        nb->buf = xrealloc(nb->buf, nb->cap * 16);
        nb->names = xrealloc((void *)nb->names, nb->cap * sizeof *nb->names);
        nb->lens = xrealloc(nb->lens, nb->cap * sizeof *nb->lens);
    }
    code_names(codes, n, nb->buf, nb->names, nb->lens);
}

static void namebuf_free(namebuf *nb) {
    free(nb->buf), free((void *)nb->names), free(nb->lens);
    memset(nb, 0, sizeof *nb);
}

/* ---- STMs and options ------------------------------------------------------------------------------ */

typedef struct {
    uint32_t *codes;
    size_t n, cap;
    char desc[96];
} stm_codes;

static void stm_push(stm_codes *s, uint32_t code) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->codes = xrealloc(s->codes, s->cap * sizeof *s->codes);
    }
    s->codes[s->n++] = code;
}

/* Appends pattern id's symbols, each position edited with probability rate (a substituted Zipf draw, a
 * deletion or an insertion, equally likely), so the STM resembles stored patterns to a chosen degree. */
static void push_mutated(rng *r, tdm_seq_gen *g, const patset *p, uint32_t id, double rate, stm_codes *s) {
    for (uint64_t t = p->off[id]; t < p->off[id + 1]; t++) {
        if (!chance(r, rate)) {
            stm_push(s, p->sym[t]);
            continue;
        }
        uint64_t u = below(r, 3);
        if (u == 0) stm_push(s, tdm_seq_gen_symbol(g));
        else if (u == 2) stm_push(s, tdm_seq_gen_symbol(g)), stm_push(s, p->sym[t]);
    }
}

static void make_stm(rng *r, tdm_seq_gen *g, const xcase *c, const patset *p, stm_codes *s) {
    static const double rates[] = {0.0, 0.05, 0.2, 0.5};
    s->n = 0;
    uint64_t u = below(r, 100);
    double rate = rates[below(r, 4)];
    if (u < 3) {
        snprintf(s->desc, sizeof s->desc, "empty");
    } else if (u < 45 && p->n) {
        uint32_t id = (uint32_t)below(r, p->n);
        push_mutated(r, g, p, id, rate, s);
        snprintf(s->desc, sizeof s->desc, "pattern %u edited at rate %.2f", id, rate);
    } else if (u < 62) {
        size_t n;
        uint32_t *tmp = xmalloc((size_t)c->gen.max_len * sizeof *tmp + 4);
        tdm_seq_gen_next(g, tmp, &n);
        for (size_t i = 0; i < n; i++) stm_push(s, tmp[i]);
        free(tmp);
        snprintf(s->desc, sizeof s->desc, "fresh draw");
    } else if (u < 80) {
        /* Longer than one machine word (65+) or than 512 symbols: several stored patterns back to back,
         * edited, or plain Zipf draws, up to the case's cap. */
        size_t lo = c->stm_min_long, hi = c->stm_max;
        if (lo > hi) lo = hi;
        if (chance(r, 0.5) && hi > 513 && lo < 513) lo = 513;
        size_t want = (size_t)range_u(r, lo, hi);
        int from_patterns = p->n && chance(r, 0.6);
        while (s->n < want) {
            if (from_patterns) push_mutated(r, g, p, (uint32_t)below(r, p->n), rate, s);
            else stm_push(s, tdm_seq_gen_symbol(g));
            if (from_patterns && p->off[p->n] == 0) break; /* only empty patterns: nothing to concatenate */
        }
        if (s->n > want) s->n = want;
        snprintf(s->desc, sizeof s->desc, "long (%s, rate %.2f)", from_patterns ? "patterns" : "draws", rate);
    } else if (u < 92) {
        /* Unknown symbols: scattered through a stored or fresh sequence, or the whole STM. */
        if (p->n && chance(r, 0.7)) push_mutated(r, g, p, (uint32_t)below(r, p->n), rate, s);
        else
            for (size_t n = (size_t)range_u(r, 1, 30); n; n--) stm_push(s, tdm_seq_gen_symbol(g));
        double share = chance(r, 0.2) ? 1.0 : 0.3;
        for (size_t i = 0; i < s->n; i++)
            if (chance(r, share)) s->codes[i] = UNKNOWN_BASE + (uint32_t)below(r, 5);
        snprintf(s->desc, sizeof s->desc, "with unknown symbols (share %.1f)", share);
    } else if (p->n) {
        /* A piece of a stored pattern: prefixes and suffixes meet the length bounds at their edges. */
        uint32_t id = (uint32_t)below(r, p->n);
        uint64_t len = p->off[id + 1] - p->off[id];
        uint64_t a = below(r, len + 1), b = a + below(r, len - a + 1);
        for (uint64_t t = a; t < b; t++) stm_push(s, p->sym[p->off[id] + t]);
        snprintf(s->desc, sizeof s->desc, "piece [%" PRIu64 ", %" PRIu64 ") of pattern %u", a, b, id);
    } else {
        for (size_t n = (size_t)range_u(r, 1, 10); n; n--) stm_push(s, tdm_seq_gen_symbol(g));
        snprintf(s->desc, sizeof s->desc, "short draw");
    }
    if (s->n > c->stm_max) s->n = c->stm_max;
}

static void draw_opts(rng *r, const xcase *c, uint32_t total, tdm_seq_query_opts *o) {
    tdm_seq_query_opts_init(o);
    uint64_t m = below(r, 100);
    o->metric = c->char_ok && m < 8 ? TDM_SEQ_CHAR : m % 2 ? TDM_SEQ_DIFFLIB : TDM_SEQ_LCS;
    o->autojunk = (int)below(r, 2);
    o->stm_first = (int)below(r, 2);
    o->no_prefilter = (int)below(r, 2);
    o->threads = (int)below(r, 2); /* 0 = the context's threads, or 1: results never depend on it */
    if (chance(r, 0.4)) {
        static const uint32_t ks[] = {1, 10, 100};
        uint64_t t = below(r, 5);
        o->top_k = t < 3 ? ks[t] : t == 3 ? total + 1 + (uint32_t)below(r, 3) : (total ? total : 1);
    } else {
        static const double thr[] = {0.0, 1.0, 0.1, 0.5, 0.8};
        uint64_t t = below(r, 8);
        if (t < 5) o->threshold = thr[t];
        else if (t == 5) o->threshold = unit(r);
        else { /* a value a similarity can take (2k/T): the inclusive boundary, and KATO's 1e-6 slack */
            uint64_t T = range_u(r, 1, 120);
            o->threshold = (2.0 * (double)below(r, T / 2 + 1)) / (double)T;
            if (o->threshold > 1.0) o->threshold = 1.0;
        }
    }
    o->blocks = (int)below(r, 2); /* each hit's matching-block summary (KATO's path asks for them) */
}

static void describe_opts(const tdm_seq_query_opts *o, char *buf, size_t cap) {
    snprintf(buf, cap, "metric %s, autojunk %d, stm_first %d, %s %.17g, top_k %u, no_prefilter %d, threads %d, blocks %d",
             tdm_seq_metric_name(o->metric), o->autojunk, o->stm_first, o->top_k ? "(threshold unused)" : "threshold",
             o->threshold, o->top_k, o->no_prefilter, o->threads, o->blocks);
}

static void print_stm(const stm_codes *s) {
    char name[16];
    printf("  STM: %s, %zu symbols:", s->desc, s->n);
    for (size_t i = 0; i < s->n && i < 24; i++) {
        uint32_t c = s->codes[i];
        if (c >= UNKNOWN_BASE) snprintf(name, sizeof name, "u%u", c - UNKNOWN_BASE);
        else if (c >= NEW_BASE) snprintf(name, sizeof name, "x%u", c - NEW_BASE);
        else tdm_seq_gen_symbol_name(c, name);
        printf(" %s", name);
    }
    printf("%s\n", s->n > 24 ? " ..." : "");
}

#endif
