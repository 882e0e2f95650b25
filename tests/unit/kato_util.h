/* kato_util.h: helpers the KATO unit tests share: knowledge bases and STMs written as compact strings
 * ("a b|c" = [['a', 'b'], ['c']]), and reading result lists back as the same compact form, so that a
 * test states expected values the way the spec writes them. Header-only, one copy per test. */
#ifndef TANDEM_KATO_UTIL_H
#define TANDEM_KATO_UTIL_H

#include "unit_common.h"

#include "tandem/kato.h"

typedef struct {
    tdm_kato_event ev[256];
    const char *syms[1024];
    size_t lens[1024];
    char buf[8192];
    size_t n;
} ku_events;

/* Parses "a b|c d" (events split by '|', symbols by ' '); "" gives no event, "|" an empty event. */
static inline void ku_parse(ku_events *e, const char *text) {
    memset(e, 0, sizeof *e);
    assert_true(strlen(text) < sizeof e->buf);
    memcpy(e->buf, text, strlen(text) + 1);
    if (!*text) return;
    size_t ns = 0;
    char *p = e->buf;
    e->n = 1;
    e->ev[0].syms = &e->syms[0], e->ev[0].lens = &e->lens[0];
    while (*p) {
        if (*p == '|') {
            *p++ = '\0';
            assert_true(e->n < 256);
            e->ev[e->n].syms = &e->syms[ns], e->ev[e->n].lens = &e->lens[ns];
            e->n++;
            continue;
        }
        if (*p == ' ') {
            *p++ = '\0';
            continue;
        }
        char *start = p;
        while (*p && *p != ' ' && *p != '|') p++;
        assert_true(ns < 1024 && e->n <= 256);
        e->syms[ns] = start, e->lens[ns] = (size_t)(p - start);
        e->ev[e->n - 1].n++;
        ns++;
        if (*p == ' ') *p++ = '\0';
        else if (*p == '|') {
            *p = '\0';
            p++;
            assert_true(e->n < 256);
            e->ev[e->n].syms = &e->syms[ns], e->ev[e->n].lens = &e->lens[ns];
            e->n++;
        }
    }
}

static inline void ku_learn(tdm_kato_kb *kb, const char *text, char *name) {
    ku_events e;
    ku_parse(&e, text);
    int learned;
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, NULL, 0, NULL, 0, 5, name, &learned), TDM_OK);
}

static inline tdm_kato_result *ku_predict(tdm_kato_kb *kb, const char *stm, const tdm_kato_config *cfg) {
    ku_events e;
    ku_parse(&e, stm);
    tdm_kato_result *r = NULL;
    int rc = tdm_kato_predict(kb, e.ev, e.n, cfg, &r);
    if (rc) print_error("predict: %s: %s\n", tdm_strerror(rc), tdm_last_error());
    assert_int_equal(rc, TDM_OK);
    return r;
}

/* A result list in the compact form ("a|b c|" with '|' between events; flat lists joined by ' '). */
static inline const char *ku_events_str(const tdm_kato_result *r, const tdm_kato_events *ev, char *out, size_t cap) {
    size_t at = 0, k = 0;
    out[0] = '\0';
    for (uint32_t e = 0; e < ev->nevents; e++) {
        if (e) at += (size_t)snprintf(out + at, cap - at, "|");
        for (uint32_t i = 0; i < ev->sizes[e]; i++, k++) {
            const char *s;
            size_t len;
            tdm_kato_result_symbol(r, ev->syms[k], &s, &len);
            at += (size_t)snprintf(out + at, cap - at, "%s%.*s", i ? " " : "", (int)len, s);
        }
    }
    return out;
}

static inline const char *ku_syms_str(const tdm_kato_result *r, const tdm_kato_sym *syms, uint32_t n, char *out, size_t cap) {
    tdm_kato_events ev = {syms, &n, 1, n, 1};
    return ku_events_str(r, &ev, out, cap);
}

/* Fails unless two results are the same: names, flags, every double bit for bit, every list and emotive. */
static inline void ku_events_same(const tdm_kato_result *a, const tdm_kato_events *x, const tdm_kato_result *b,
                                  const tdm_kato_events *y, const char *what) {
    char sa[2048], sb[2048];
    tu_check(x->flat == y->flat && x->nevents == y->nevents, "%s: event counts", what);
    tu_check(!strcmp(ku_events_str(a, x, sa, sizeof sa), ku_events_str(b, y, sb, sizeof sb)), "%s: %s vs %s", what, sa, sb);
}

static inline void ku_results_same(const tdm_kato_result *a, const tdm_kato_result *b) {
    tu_check(tdm_kato_result_count(a) == tdm_kato_result_count(b), "counts %zu vs %zu", tdm_kato_result_count(a),
             tdm_kato_result_count(b));
    for (size_t i = 0; i < tdm_kato_result_count(a); i++) {
        const tdm_kato_prediction *x = tdm_kato_result_get(a, i), *y = tdm_kato_result_get(b, i);
        tu_check(!strcmp(x->name, y->name), "prediction %zu: %s vs %s", i, x->name, y->name);
        tu_check(x->flags == y->flags && x->frequency == y->frequency, "prediction %zu: flags or frequency", i);
        const double *dx = &x->similarity, *dy = &y->similarity;
        for (int k = 0; k < 23; k++) tu_assert_same_double(dx[k], dy[k], "prediction %zu double %d", i, k);
        char sa[2048], sb[2048];
        tu_check(!strcmp(ku_syms_str(a, x->matches, x->nmatches, sa, sizeof sa), ku_syms_str(b, y->matches, y->nmatches, sb, sizeof sb)),
                 "matches");
        ku_events_same(a, &x->past, b, &y->past, "past");
        ku_events_same(a, &x->present, b, &y->present, "present");
        ku_events_same(a, &x->future, b, &y->future, "future");
        ku_events_same(a, &x->missing, b, &y->missing, "missing");
        ku_events_same(a, &x->extras, b, &y->extras, "extras");
        tu_check(x->nemotives == y->nemotives, "emotive counts");
        for (uint32_t k = 0; k < x->nemotives; k++) {
            const char *ka, *kb;
            size_t la, lb;
            tdm_kato_result_symbol(a, x->emotive_keys[k], &ka, &la);
            tdm_kato_result_symbol(b, y->emotive_keys[k], &kb, &lb);
            tu_check(la == lb && !memcmp(ka, kb, la), "emotive key %u", k);
            tu_assert_same_double(x->emotive_values[k], y->emotive_values[k], "emotive %u", k);
        }
    }
    tu_check(tdm_kato_result_future_count(a) == tdm_kato_result_future_count(b), "future_potentials counts");
    for (size_t i = 0; i < tdm_kato_result_future_count(a); i++) {
        const tdm_kato_future_potential *x = tdm_kato_result_future(a, i), *y = tdm_kato_result_future(b, i);
        ku_events_same(a, &x->future, b, &y->future, "future_potentials future");
        tu_assert_same_double(x->aggregate_potential, y->aggregate_potential, "aggregate %zu", i);
        tu_assert_same_double(x->total_weighted_frequency, y->total_weighted_frequency, "weight %zu", i);
        tu_check(x->supporting_patterns == y->supporting_patterns, "supporting %zu", i);
    }
}

/* A random knowledge base text for tests: n patterns over an alphabet of alpha symbols, 1-4 events of
 * 1-2 symbols, about one in ten learned twice. */
static inline void ku_random_pattern(tu_rng *r, int alpha, char *out, size_t cap) {
    size_t at = 0;
    int ne = (int)tu_range(r, 1, 4);
    out[0] = '\0';
    for (int e = 0; e < ne; e++) {
        int n = (int)tu_range(r, 1, 2);
        for (int k = 0; k < n; k++)
            at += (size_t)snprintf(out + at, cap - at, "%ss%d", k ? " " : (e ? "|" : ""), (int)tu_below(r, (uint64_t)alpha));
    }
}

#define KU_EV(r, ev) ku_events_str((r), &(ev), (char[512]){0}, 512)

#endif
