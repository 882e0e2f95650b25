/* stm.c: a session's short-term memory (spec/kato.md 1.1-1.2): observed events (each sorted when the
 * configuration says so), the emotives and metadata accumulators, the time counter, and auto-learn with
 * KATO's CLEAR and ROLLING modes. Strings are copied in, so callers may free their buffers at once. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t and clock_gettime under -std=c11 */
#include "kato/kato_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **syms;
    size_t *lens;
    size_t n;
} stm_event;

/* An owned copy of an emotives or metadata dict. */
typedef struct {
    tdm_kato_emotive *emo;
    tdm_kato_meta *meta;
    size_t n;
} stm_dict;

struct tdm_kato_stm {
    stm_event *events;
    size_t nevents, capevents;
    stm_dict *emo, *meta;
    size_t nemo, capemo, nmeta, capmeta;
    uint64_t time;
};

int tdm_kato_stm_new(tdm_kato_stm **out) {
    if (!out) return tdm_error(TDM_E_INVAL, "tdm_kato_stm_new: out is NULL");
    if (!(*out = tdm_calloc(1, sizeof **out))) return tdm_error(TDM_E_NOMEM, "tdm_kato_stm_new: no memory");
    return TDM_OK;
}

static void event_free(stm_event *e) {
    for (size_t i = 0; i < e->n; i++) tdm_free(e->syms[i]);
    tdm_free(e->syms), tdm_free(e->lens);
    memset(e, 0, sizeof *e);
}

static void dicts_free(stm_dict *d, size_t n) {
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < d[i].n; k++) {
            if (d[i].emo) tdm_free((char *)d[i].emo[k].key);
            if (d[i].meta) tdm_free((char *)d[i].meta[k].key), tdm_free((char *)d[i].meta[k].value);
        }
        tdm_free(d[i].emo), tdm_free(d[i].meta);
    }
}

static void clear_events(tdm_kato_stm *s) {
    for (size_t i = 0; i < s->nevents; i++) event_free(&s->events[i]);
    s->nevents = 0;
}

void tdm_kato_stm_clear(tdm_kato_stm *s) {
    if (!s) return;
    clear_events(s);
    dicts_free(s->emo, s->nemo), dicts_free(s->meta, s->nmeta);
    s->nemo = s->nmeta = 0;
    s->time = 0;
}

void tdm_kato_stm_free(tdm_kato_stm *s) {
    if (!s) return;
    tdm_kato_stm_clear(s);
    tdm_free(s->events), tdm_free(s->emo), tdm_free(s->meta);
    tdm_free(s);
}

size_t tdm_kato_stm_nevents(const tdm_kato_stm *s) { return s ? s->nevents : 0; }
uint64_t tdm_kato_stm_time(const tdm_kato_stm *s) { return s ? s->time : 0; }

int tdm_kato_stm_event(const tdm_kato_stm *s, size_t i, tdm_kato_event *out) {
    if (!s || !out) return tdm_error(TDM_E_INVAL, "tdm_kato_stm_event: NULL argument");
    if (i >= s->nevents) return tdm_error(TDM_E_RANGE, "STM event %zu: the STM has %zu", i, s->nevents);
    out->syms = (const char *const *)s->events[i].syms, out->lens = s->events[i].lens, out->n = s->events[i].n;
    return TDM_OK;
}

/* Byte order of UTF-8 = code-point order = Python's str order; a prefix sorts first. */
static int sym_cmp(const char *a, size_t la, const char *b, size_t lb) {
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

static int copy_event(const char *const *syms, const size_t *lens, size_t n, int sort, stm_event *e) {
    memset(e, 0, sizeof *e);
    e->syms = tdm_calloc(n, sizeof *e->syms);
    e->lens = tdm_malloc(n * sizeof *e->lens);
    if (!e->syms || !e->lens) return event_free(e), -1;
    for (size_t i = 0; i < n; i++) {
        char *c = tdm_strndup(syms[i] ? syms[i] : "", lens[i]);
        if (!c) return event_free(e), -1;
        size_t at = e->n++;
        /* insertion sort: events are short, and it is stable like list.sort() */
        while (sort && at > 0 && sym_cmp(e->syms[at - 1], e->lens[at - 1], c, lens[i]) > 0)
            e->syms[at] = e->syms[at - 1], e->lens[at] = e->lens[at - 1], at--;
        e->syms[at] = c, e->lens[at] = lens[i];
    }
    return 0;
}

static int push_dict(stm_dict **arr, size_t *n, size_t *cap, const tdm_kato_emotives *emo, const tdm_kato_metadata *meta) {
    if (tdm_grow((void **)arr, cap, *n + 1, sizeof **arr)) return -1;
    stm_dict d = {0};
    size_t cnt = emo ? emo->n : meta->n;
    if (emo && !(d.emo = tdm_calloc(cnt, sizeof *d.emo))) return -1;
    if (meta && !(d.meta = tdm_calloc(cnt, sizeof *d.meta))) return -1;
    for (size_t i = 0; i < cnt; i++, d.n++) {
        if (emo) {
            d.emo[i].value = emo->items[i].value;
            if (!(d.emo[i].key = tdm_strndup(emo->items[i].key, strlen(emo->items[i].key)))) goto fail;
        } else {
            d.meta[i].key = tdm_strndup(meta->items[i].key, strlen(meta->items[i].key));
            d.meta[i].value = tdm_strndup(meta->items[i].value, strlen(meta->items[i].value));
            if (!d.meta[i].key || !d.meta[i].value) {
                d.n++;
                goto fail;
            }
        }
    }
    (*arr)[(*n)++] = d;
    return 0;
fail:
    dicts_free(&d, 1);
    return -1;
}

/* The STM and accumulators as the learn call wants them (views into s). */
static int learn_views(const tdm_kato_stm *s, tdm_kato_event **ev, tdm_kato_emotives **emo, tdm_kato_metadata **meta) {
    *ev = tdm_malloc((s->nevents + 1) * sizeof **ev);
    *emo = tdm_malloc((s->nemo + 1) * sizeof **emo);
    *meta = tdm_malloc((s->nmeta + 1) * sizeof **meta);
    if (!*ev || !*emo || !*meta) {
        tdm_free(*ev), tdm_free(*emo), tdm_free(*meta);
        return tdm_error(TDM_E_NOMEM, "STM learn: no memory");
    }
    for (size_t i = 0; i < s->nevents; i++) tdm_kato_stm_event(s, i, &(*ev)[i]);
    for (size_t i = 0; i < s->nemo; i++) (*emo)[i].items = s->emo[i].emo, (*emo)[i].n = s->emo[i].n;
    for (size_t i = 0; i < s->nmeta; i++) (*meta)[i].items = s->meta[i].meta, (*meta)[i].n = s->meta[i].n;
    return TDM_OK;
}

int tdm_kato_stm_learn(tdm_kato_stm *s, tdm_kato_kb *kb, uint32_t persistence, char name[TDM_KATO_NAME_LEN + 1],
                       int *learned) {
    if (!s || !kb) return tdm_error(TDM_E_INVAL, "tdm_kato_stm_learn: NULL argument");
    if (!s->nevents) return tdm_error(TDM_E_INVAL, "cannot learn from an empty STM");
    tdm_kato_event *ev;
    tdm_kato_emotives *emo;
    tdm_kato_metadata *meta;
    int rc = learn_views(s, &ev, &emo, &meta);
    if (rc) return rc;
    rc = tdm_kato_kb_learn(kb, ev, s->nevents, emo, s->nemo, meta, s->nmeta, persistence, name, learned);
    tdm_free(ev), tdm_free(emo), tdm_free(meta);
    if (!rc) clear_events(s); /* the accumulators stay, as in KATO, until clear */
    return rc;
}

int tdm_kato_stm_observe(tdm_kato_stm *s, tdm_kato_kb *kb, const tdm_kato_config *cfg, const char *const *syms,
                         const size_t *lens, size_t n, const tdm_kato_emotives *emotives,
                         const tdm_kato_metadata *metadata, char auto_name[TDM_KATO_NAME_LEN + 1]) {
    if (!s || !cfg || (n && (!syms || !lens))) return tdm_error(TDM_E_INVAL, "tdm_kato_stm_observe: NULL argument");
    int rc = tdm_kato_config_check(cfg);
    if (rc) return rc;
    if (auto_name) auto_name[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((rc = tdm_seq_utf8_check(syms[i] ? syms[i] : "", lens[i]))) return tdm_error(TDM_E_UTF8, "observed symbol %zu is not valid UTF-8", i);
    for (size_t i = 0; emotives && i < emotives->n; i++) {
        if (!emotives->items[i].key) return tdm_error(TDM_E_INVAL, "emotive %zu: key is NULL", i);
        if (!isfinite(emotives->items[i].value)) return tdm_error(TDM_E_INVAL, "emotive \"%s\" is not a finite number", emotives->items[i].key);
        if (tdm_seq_utf8_check(emotives->items[i].key, strlen(emotives->items[i].key))) return tdm_error(TDM_E_UTF8, "emotive key %zu is not valid UTF-8", i);
    }
    for (size_t i = 0; metadata && i < metadata->n; i++)
        if (!metadata->items[i].key || !metadata->items[i].value) return tdm_error(TDM_E_INVAL, "metadata entry %zu is NULL", i);
    if (cfg->max_pattern_length > 0 && !kb) return tdm_error(TDM_E_INVAL, "tdm_kato_stm_observe: auto-learn needs a knowledge base");
    if (n) {
        if (tdm_grow((void **)&s->events, &s->capevents, s->nevents + 1, sizeof *s->events) ||
            copy_event(syms, lens, n, cfg->sort_symbols, &s->events[s->nevents]))
            return tdm_error(TDM_E_NOMEM, "tdm_kato_stm_observe: no memory");
        s->nevents++;
    }
    if (emotives && emotives->n && push_dict(&s->emo, &s->nemo, &s->capemo, emotives, NULL))
        return tdm_error(TDM_E_NOMEM, "tdm_kato_stm_observe: no memory");
    if (metadata && metadata->n && push_dict(&s->meta, &s->nmeta, &s->capmeta, NULL, metadata))
        return tdm_error(TDM_E_NOMEM, "tdm_kato_stm_observe: no memory");
    s->time++;
    if (!n || !cfg->max_pattern_length || s->nevents < cfg->max_pattern_length) return TDM_OK;
    /* auto-learn: ROLLING keeps the last max_pattern_length-1 events (spec 1.2) */
    size_t keep = 0;
    if (s->nevents > 1 && cfg->stm_mode == TDM_KATO_STM_ROLLING) {
        size_t w = cfg->max_pattern_length - 1;
        keep = s->nevents > w ? w : s->nevents - 1;
    }
    tdm_kato_event *ev;
    tdm_kato_emotives *emo;
    tdm_kato_metadata *meta;
    if ((rc = learn_views(s, &ev, &emo, &meta))) return rc;
    int learned = 0;
    rc = tdm_kato_kb_learn(kb, ev, s->nevents, emo, s->nemo, meta, s->nmeta, cfg->persistence, auto_name, &learned);
    tdm_free(ev), tdm_free(emo), tdm_free(meta);
    if (rc) return rc;
    size_t drop = s->nevents - keep;
    for (size_t i = 0; i < drop; i++) event_free(&s->events[i]);
    memmove(s->events, s->events + drop, keep * sizeof *s->events);
    s->nevents = keep;
    return TDM_OK;
}
