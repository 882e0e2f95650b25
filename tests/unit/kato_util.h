/* kato_util.h: helpers the KATO unit tests share: knowledge bases and STMs written as compact strings
 * ("a b|c" = [['a', 'b'], ['c']]), and reading result lists back as the same compact form, so that a
 * test states expected values the way the spec writes them. Header-only, one copy per test. */
#ifndef TANDEM_KATO_UTIL_H
#define TANDEM_KATO_UTIL_H

#include "unit_common.h"

#include "tandem/kato.h"

typedef struct {
    tdm_kato_event ev[64];
    const char *syms[256];
    size_t lens[256];
    char buf[2048];
    size_t n;
} ku_events;

/* Parses "a b|c d" (events split by '|', symbols by ' '); "" gives no event, "|" an empty event. */
static inline void ku_parse(ku_events *e, const char *text) {
    memset(e, 0, sizeof *e);
    snprintf(e->buf, sizeof e->buf, "%s", text);
    if (!*text) return;
    size_t ns = 0;
    char *p = e->buf;
    e->n = 1;
    e->ev[0].syms = &e->syms[0], e->ev[0].lens = &e->lens[0];
    while (*p) {
        if (*p == '|') {
            *p++ = '\0';
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
        e->syms[ns] = start, e->lens[ns] = (size_t)(p - start);
        e->ev[e->n - 1].n++;
        ns++;
        if (*p == ' ') *p++ = '\0';
        else if (*p == '|') {
            *p = '\0';
            p++;
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

#define KU_EV(r, ev) ku_events_str((r), &(ev), (char[512]){0}, 512)

#endif
