/* kb.c: the knowledge base of one node (spec/kato.md 1.3-1.5). Learning stores a pattern once under its
 * SHA-1 name and counts re-learns in its frequency; it keeps the emotives window (the last `persistence`
 * dicts), merges metadata as per-key sorted sets, and updates the per-symbol statistics and global
 * counters that the prediction metrics read. Pattern symbols live in the sequence engine's store (same
 * index), which does the candidate search. A learn prepares every allocation before it touches anything,
 * so a failure leaves the knowledge base as it was. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t and clock_gettime under -std=c11 */
#include "kato/kato_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t name_key(const char *hex) {
    uint64_t k = 0;
    for (int i = 0; i < 16; i++) {
        char c = hex[i];
        k = k << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    return k;
}

uint32_t kato_name_lookup(const tdm_kato_kb *kb, const char *hex40) {
    if (!kb->name_cap) return UINT32_MAX;
    size_t mask = kb->name_cap - 1, h = (size_t)(name_key(hex40) * 0x9E3779B97F4A7C15ull >> 17) & mask;
    for (;; h = (h + 1) & mask) {
        uint32_t v = kb->name_table[h];
        if (!v) return UINT32_MAX;
        if (!memcmp(kb->pats[v - 1].name, hex40, TDM_KATO_NAME_LEN)) return v - 1;
    }
}

static void name_insert(uint32_t *table, size_t cap, const char *hex40, uint32_t index) {
    size_t mask = cap - 1, h = (size_t)(name_key(hex40) * 0x9E3779B97F4A7C15ull >> 17) & mask;
    while (table[h]) h = (h + 1) & mask;
    table[h] = index + 1;
}

/* Keeps the name table at most half full; -1 without memory. */
static int name_reserve(tdm_kato_kb *kb, size_t count) {
    if (2 * count <= kb->name_cap) return 0;
    size_t cap = kb->name_cap ? kb->name_cap : 64;
    while (2 * count > cap) cap *= 2;
    uint32_t *t = tdm_calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < kb->npats; i++) name_insert(t, cap, kb->pats[i].name, (uint32_t)i);
    tdm_free(kb->name_table);
    kb->name_table = t, kb->name_cap = cap;
    return 0;
}

uint32_t kato_emokey_find(const tdm_kato_kb *kb, const char *key) {
    for (uint32_t i = 0; i < kb->nemokeys; i++)
        if (!strcmp(kb->emokeys[i], key)) return i;
    return UINT32_MAX;
}

static int emokey_intern(tdm_kato_kb *kb, const char *key, uint32_t *out) {
    uint32_t k = kato_emokey_find(kb, key);
    if (k == UINT32_MAX) {
        char *copy = tdm_strndup(key, strlen(key));
        if (!copy || tdm_grow((void **)&kb->emokeys, &kb->capemokeys, kb->nemokeys + 1, sizeof *kb->emokeys)) {
            tdm_free(copy);
            return -1;
        }
        kb->emokeys[k = kb->nemokeys++] = copy;
    }
    *out = k;
    return 0;
}

uint32_t kato_average_emotives(uint32_t ndicts, const uint32_t *dsize, const uint32_t *keys, const double *vals,
                               uint32_t *out_keys, double *out_vals) {
    uint32_t nk = 0, total = 0;
    for (uint32_t d = 0; d < ndicts; d++) total += dsize[d];
    for (uint32_t i = 0; i < total; i++) {
        uint32_t k = 0;
        while (k < nk && out_keys[k] != keys[i]) k++;
        if (k < nk) continue;
        /* a new key: its values in dict order, summed left to right as Python's sum() */
        double sum = 0.0;
        uint32_t cnt = 0;
        for (uint32_t j = i; j < total; j++)
            if (keys[j] == keys[i]) sum += vals[j], cnt++;
        out_keys[nk] = keys[i];
        out_vals[nk++] = sum / (double)cnt;
    }
    return nk;
}

int tdm_kato_kb_new(tdm_ctx *ctx, tdm_kato_kb **out) {
    if (!ctx || !out) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_new: NULL argument");
    tdm_kato_kb *kb = tdm_calloc(1, sizeof *kb);
    if (!kb) return tdm_error(TDM_E_NOMEM, "tdm_kato_kb_new: no memory");
    kb->ctx = ctx;
    if (pthread_rwlock_init(&kb->lock, NULL)) {
        tdm_free(kb);
        return tdm_error(TDM_E_NOMEM, "tdm_kato_kb_new: cannot create the lock");
    }
    tdm_seq_store *store;
    int rc = tdm_seq_store_new(ctx, &store);
    if (!rc) {
        tdm_seq_engine_opts o;
        tdm_seq_engine_opts_init(ctx, &o);
        rc = tdm_seq_engine_new(store, &o, &kb->engine);
    }
    if (rc) {
        pthread_rwlock_destroy(&kb->lock);
        tdm_free(kb);
        return rc;
    }
    *out = kb;
    return TDM_OK;
}

static void pat_clear_extras(kato_pat *p) {
    tdm_free(p->dsize), tdm_free(p->ekeys), tdm_free(p->evals);
    for (uint32_t m = 0; m < p->nmeta; m++) {
        for (uint32_t v = 0; v < p->meta[m].n; v++) tdm_free(p->meta[m].vals[v]);
        tdm_free(p->meta[m].vals), tdm_free(p->meta[m].key);
    }
    tdm_free(p->meta);
    p->dsize = p->ekeys = NULL, p->evals = NULL, p->meta = NULL, p->ndicts = p->nmeta = 0;
}

void tdm_kato_kb_free(tdm_kato_kb *kb) {
    if (!kb) return;
    tdm_seq_engine_free(kb->engine);
    for (size_t i = 0; i < kb->npats; i++) {
        pat_clear_extras(&kb->pats[i]);
        tdm_free(kb->pats[i].event_sizes);
    }
    tdm_free(kb->pats), tdm_free(kb->first), tdm_free(kb->name_table), tdm_free(kb->freq), tdm_free(kb->pmf);
    for (size_t i = 0; i < kb->capsym; i++) tdm_free(kb->aff[i].keys), tdm_free(kb->aff[i].sums);
    tdm_free(kb->aff);
    for (uint32_t i = 0; i < kb->nemokeys; i++) tdm_free(kb->emokeys[i]);
    tdm_free(kb->emokeys);
    pthread_rwlock_destroy(&kb->lock);
    tdm_free(kb);
}

/* ---- the new emotives window and metadata of a learn, built before anything changes ---------------- */

typedef struct {
    uint32_t ndicts, *dsize, *ekeys;
    double *evals;
    uint32_t nmeta;
    kato_meta_key *meta;
} extras;

static void extras_free(extras *x) {
    kato_pat p = {0};
    p.dsize = x->dsize, p.ekeys = x->ekeys, p.evals = x->evals, p.nmeta = x->nmeta, p.meta = x->meta;
    pat_clear_extras(&p);
    memset(x, 0, sizeof *x);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Adds value to the sorted unique set of key k (a new key goes last: dict insertion order). */
static int meta_add(extras *x, const char *key, const char *value) {
    uint32_t k = 0;
    while (k < x->nmeta && strcmp(x->meta[k].key, key)) k++;
    if (k == x->nmeta) {
        kato_meta_key *m = tdm_realloc(x->meta, (x->nmeta + 1) * sizeof *m);
        if (!m) return -1;
        x->meta = m;
        memset(&m[k], 0, sizeof m[k]);
        if (!(m[k].key = tdm_strndup(key, strlen(key)))) return -1;
        x->nmeta++;
    }
    kato_meta_key *m = &x->meta[k];
    char *const *hit = m->n ? bsearch(&value, m->vals, m->n, sizeof *m->vals, cmp_str) : NULL;
    if (hit) return 0;
    char **v = tdm_realloc(m->vals, (m->n + 1) * sizeof *v);
    if (!v) return -1;
    m->vals = v;
    char *copy = tdm_strndup(value, strlen(value));
    if (!copy) return -1;
    uint32_t at = m->n;
    while (at > 0 && strcmp(v[at - 1], copy) > 0) v[at] = v[at - 1], at--;
    v[at] = copy;
    m->n++;
    return 0;
}

/* Builds the window: (old window + new dicts) trimmed to the last `persistence`; the metadata: old sets
 * united with the new values. Interns emotive keys (harmless if the learn fails later). */
static int build_extras(tdm_kato_kb *kb, const kato_pat *old, const tdm_kato_emotives *emo, size_t nemo,
                        const tdm_kato_metadata *meta, size_t nmeta, uint32_t persistence, extras *x) {
    memset(x, 0, sizeof *x);
    size_t nold = old ? old->ndicts : 0, all = nold + nemo, first = all > persistence ? all - persistence : 0;
    size_t entries = 0, oldoff = 0;
    for (size_t d = first; d < all; d++) entries += d < nold ? old->dsize[d] : emo[d - nold].n;
    x->dsize = tdm_malloc((all - first + 1) * sizeof *x->dsize);
    x->ekeys = tdm_malloc((entries + 1) * sizeof *x->ekeys);
    x->evals = tdm_malloc((entries + 1) * sizeof *x->evals);
    if (!x->dsize || !x->ekeys || !x->evals) goto nomem;
    for (size_t d = 0; d < first && d < nold; d++) oldoff += old->dsize[d];
    size_t at = 0;
    for (size_t d = first; d < all; d++) {
        if (d < nold) {
            memcpy(x->ekeys + at, old->ekeys + oldoff, old->dsize[d] * sizeof *x->ekeys);
            memcpy(x->evals + at, old->evals + oldoff, old->dsize[d] * sizeof *x->evals);
            oldoff += old->dsize[d], at += old->dsize[d];
            x->dsize[x->ndicts++] = old->dsize[d];
        } else {
            const tdm_kato_emotives *e = &emo[d - nold];
            for (size_t i = 0; i < e->n; i++) {
                if (emokey_intern(kb, e->items[i].key, &x->ekeys[at])) goto nomem;
                x->evals[at++] = e->items[i].value;
            }
            x->dsize[x->ndicts++] = (uint32_t)e->n;
        }
    }
    for (uint32_t m = 0; old && m < old->nmeta; m++)
        for (uint32_t v = 0; v < old->meta[m].n; v++)
            if (meta_add(x, old->meta[m].key, old->meta[m].vals[v])) goto nomem;
    for (size_t d = 0; d < nmeta; d++)
        for (size_t i = 0; i < meta[d].n; i++)
            if (meta_add(x, meta[d].items[i].key, meta[d].items[i].value)) goto nomem;
    return 0;
nomem:
    extras_free(x);
    return -1;
}

static int check_learn_args(const tdm_kato_event *events, size_t nevents, const tdm_kato_emotives *emo, size_t nemo,
                            const tdm_kato_metadata *meta, size_t nmeta, uint32_t persistence) {
    if (!nevents) return tdm_error(TDM_E_INVAL, "cannot learn from an empty STM");
    if (!events || (nemo && !emo) || (nmeta && !meta)) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_learn: NULL argument");
    if (persistence < 1 || persistence > 100)
        return tdm_error(TDM_E_INVAL, "persistence=%u: expected 1..100", persistence);
    for (size_t d = 0; d < nemo; d++)
        for (size_t i = 0; i < emo[d].n; i++) {
            if (!emo[d].items[i].key) return tdm_error(TDM_E_INVAL, "emotives dict %zu: key %zu is NULL", d, i);
            if (!isfinite(emo[d].items[i].value))
                return tdm_error(TDM_E_INVAL, "emotive \"%s\": value is not a finite number", emo[d].items[i].key);
            if (tdm_seq_utf8_check(emo[d].items[i].key, strlen(emo[d].items[i].key)))
                return tdm_error(TDM_E_UTF8, "emotive key %zu of dict %zu is not valid UTF-8", i, d);
        }
    for (size_t d = 0; d < nmeta; d++)
        for (size_t i = 0; i < meta[d].n; i++)
            if (!meta[d].items[i].key || !meta[d].items[i].value)
                return tdm_error(TDM_E_INVAL, "metadata dict %zu: entry %zu has a NULL key or value", d, i);
    return TDM_OK;
}

/* Symbol statistics of one learn: counts per occurrence, pattern-member frequency and affinity once per
 * distinct symbol. New patterns only add to the member frequency. */
static int update_symbols(tdm_kato_kb *kb, const uint32_t *ids, size_t n, int is_new, uint64_t times,
                          const tdm_kato_emotives *emo, size_t nemo) {
    /* counts first: they cannot fail, so the pattern and its counts always agree */
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ids[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = ids[j] == s;
        kb->freq[s] += times;
        if (!seen && is_new && kb->pmf[s]++ == 0) kb->nsym++;
    }
    if (!nemo) return 0;
    /* affinity: the accumulator's per-key means (average_emotives), added to each distinct symbol */
    size_t total = 0;
    for (size_t d = 0; d < nemo; d++) total += emo[d].n;
    uint32_t *dsize = tdm_malloc((nemo + 1) * sizeof *dsize), *keys = tdm_malloc((total + 1) * sizeof *keys);
    uint32_t *mkeys = tdm_malloc((total + 1) * sizeof *mkeys);
    double *vals = tdm_malloc((total + 1) * sizeof *vals), *means = tdm_malloc((total + 1) * sizeof *means);
    int rc = -1;
    if (!dsize || !keys || !mkeys || !vals || !means) goto out;
    for (size_t d = 0, at = 0; d < nemo; d++) {
        dsize[d] = (uint32_t)emo[d].n;
        for (size_t i = 0; i < emo[d].n; i++, at++) {
            keys[at] = kato_emokey_find(kb, emo[d].items[i].key); /* interned by the learn */
            vals[at] = emo[d].items[i].value;
        }
    }
    uint32_t nmeans = kato_average_emotives((uint32_t)nemo, dsize, keys, vals, mkeys, means);
    /* reserve every slot before adding, so that a failure adds nothing rather than part */
    for (size_t i = 0; i < n; i++) {
        kato_aff *a = &kb->aff[ids[i]];
        uint32_t *k2 = tdm_realloc(a->keys, (a->n + nmeans + 1) * sizeof *k2);
        if (k2) a->keys = k2;
        double *s2 = tdm_realloc(a->sums, (a->n + nmeans + 1) * sizeof *s2);
        if (s2) a->sums = s2;
        if (!k2 || !s2) goto out;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ids[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = ids[j] == s;
        if (seen) continue;
        kato_aff *a = &kb->aff[s];
        for (uint32_t m = 0; m < nmeans; m++) {
            uint32_t k = 0;
            while (k < a->n && a->keys[k] != mkeys[m]) k++;
            if (k == a->n) a->keys[a->n] = mkeys[m], a->sums[a->n++] = 0.0;
            a->sums[k] += means[m];
        }
    }
    rc = 0;
out:
    tdm_free(dsize), tdm_free(keys), tdm_free(mkeys), tdm_free(vals), tdm_free(means);
    return rc;
}

static int find_symbol(tdm_kato_kb *kb, const char *sym, size_t len, uint32_t *id);

/* A learn (times = 1, with affinity) or an import (times = the stored frequency, no affinity: an import
 * restores affinities separately, and must not meet an existing pattern). */
static int learn_impl(tdm_kato_kb *kb, const tdm_kato_event *events, size_t nevents, const tdm_kato_emotives *emotives,
                      size_t nemotives, const tdm_kato_metadata *metadata, size_t nmetadata, uint32_t persistence,
                      uint64_t times, int import, char name[TDM_KATO_NAME_LEN + 1], int *learned) {
    int rc = check_learn_args(events, nevents, emotives, nemotives, metadata, nmetadata, persistence);
    if (rc) return rc;
    char hex[TDM_KATO_NAME_LEN + 1];
    if ((rc = tdm_kato_pattern_name(events, nevents, hex))) return rc;
    size_t length = 0;
    for (size_t e = 0; e < nevents; e++) length += events[e].n;
    if (length <= 1) { /* KATO stores nothing below two symbols and answers with an empty name */
        if (name) name[0] = '\0';
        if (learned) *learned = 0;
        return TDM_OK;
    }
    const char **syms = tdm_malloc(length * sizeof *syms);
    size_t *lens = tdm_malloc(length * sizeof *lens);
    uint32_t *sizes = tdm_malloc(nevents * sizeof *sizes);
    extras x = {0};
    if (!syms || !lens || !sizes) {
        rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_learn: no memory");
        goto out;
    }
    for (size_t e = 0, at = 0; e < nevents; e++) {
        sizes[e] = (uint32_t)events[e].n;
        for (size_t i = 0; i < events[e].n; i++, at++) syms[at] = events[e].syms[i] ? events[e].syms[i] : "", lens[at] = events[e].lens[i];
    }
    pthread_rwlock_wrlock(&kb->lock);
    uint32_t idx = kato_name_lookup(kb, hex);
    kato_pat *old = idx == UINT32_MAX ? NULL : &kb->pats[idx];
    if (old && import) {
        rc = tdm_error(TDM_E_INVAL, "import: pattern %s is already in the knowledge base", hex);
        goto unlock;
    }
    /* every key of the accumulator gets an index, also those of dicts outside the window: the affinity
     * averages all of them */
    for (size_t d = 0; d < nemotives; d++)
        for (size_t i = 0; i < emotives[d].n; i++) {
            uint32_t k;
            if (emokey_intern(kb, emotives[d].items[i].key, &k)) {
                rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_learn: no memory for emotive keys");
                goto unlock;
            }
        }
    if (build_extras(kb, old, emotives, nemotives, metadata, nmetadata, persistence, &x)) {
        rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_learn: no memory for emotives/metadata");
        goto unlock;
    }
    tdm_seq_store *store = (tdm_seq_store *)tdm_seq_engine_store(kb->engine);
    size_t need = (size_t)tdm_seq_vocab_size(tdm_seq_store_vocab(store)) + length;
    size_t oldcap = kb->capsym;
    if (need > kb->capsym) { /* per-symbol arrays for every id the learn can create */
        size_t cap = kb->capsym, c2 = cap, c3 = cap;
        if (tdm_grow((void **)&kb->freq, &cap, need, sizeof *kb->freq) ||
            tdm_grow((void **)&kb->pmf, &c2, need, sizeof *kb->pmf) ||
            tdm_grow((void **)&kb->aff, &c3, need, sizeof *kb->aff)) {
            rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_learn: no memory for symbol statistics");
            goto unlock;
        }
        size_t newcap = cap < c2 ? cap : c2;
        newcap = newcap < c3 ? newcap : c3;
        memset(kb->freq + oldcap, 0, (newcap - oldcap) * sizeof *kb->freq);
        memset(kb->pmf + oldcap, 0, (newcap - oldcap) * sizeof *kb->pmf);
        memset(kb->aff + oldcap, 0, (newcap - oldcap) * sizeof *kb->aff);
        kb->capsym = newcap;
    }
    uint32_t pid;
    if (!old) {
        if (kato_reserve_pattern(kb)) {
            rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_learn: no memory for the pattern table");
            goto unlock;
        }
        if ((rc = tdm_seq_engine_learn_strings(kb->engine, syms, lens, length, &pid))) goto unlock;
        if (pid != kb->npats) { /* the engine's ids and ours move together; anything else is a bug */
            rc = tdm_error(TDM_E_CORRUPT, "tdm_kato_kb_learn: engine id %u for pattern %zu", pid, kb->npats);
            goto unlock;
        }
        kato_pat rec;
        memset(&rec, 0, sizeof rec);
        memcpy(rec.name, hex, sizeof hex);
        rec.frequency = times;
        rec.nevents = (uint32_t)nevents;
        rec.event_sizes = sizes, sizes = NULL;
        kato_commit_pattern(kb, &rec);
        idx = pid;
    } else {
        old->frequency += times;
    }
    kato_pat *p = &kb->pats[idx];
    pat_clear_extras(p);
    p->ndicts = x.ndicts, p->dsize = x.dsize, p->ekeys = x.ekeys, p->evals = x.evals, p->nmeta = x.nmeta, p->meta = x.meta;
    memset(&x, 0, sizeof x);
    const uint32_t *ids;
    size_t n;
    tdm_seq_store_get(tdm_seq_engine_store(kb->engine), idx, &ids, &n);
    if (update_symbols(kb, ids, n, !old, times, emotives, import ? 0 : nemotives)) {
        /* the pattern and its counts are in; only its affinity contribution could not be recorded */
        kb->tpf += times;
        kb->tspf += length * times;
        rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_learn: pattern %s learned, but no memory for its affinities", hex);
        goto unlock;
    }
    /* tandem counts every learn in total_pattern_frequencies, as KATO's documentation says
     * (KATO itself skips re-learns: docs/kato-compat.md) */
    kb->tpf += times;
    kb->tspf += length * times;
    if (name) memcpy(name, hex, sizeof hex);
    if (learned) *learned = 1;
unlock:
    pthread_rwlock_unlock(&kb->lock);
out:
    extras_free(&x);
    tdm_free(syms), tdm_free(lens), tdm_free(sizes);
    return rc;
}

int tdm_kato_kb_learn(tdm_kato_kb *kb, const tdm_kato_event *events, size_t nevents,
                      const tdm_kato_emotives *emotives, size_t nemotives, const tdm_kato_metadata *metadata,
                      size_t nmetadata, uint32_t persistence, char name[TDM_KATO_NAME_LEN + 1], int *learned) {
    if (!kb) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_learn: kb is NULL");
    return learn_impl(kb, events, nevents, emotives, nemotives, metadata, nmetadata, persistence, 1, 0, name, learned);
}

int tdm_kato_kb_import(tdm_kato_kb *kb, const tdm_kato_pattern *p) {
    if (!kb || !p) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_import: NULL argument");
    if (!p->frequency) return tdm_error(TDM_E_INVAL, "import: pattern %.40s has frequency 0", p->name);
    if (p->nemotive_dicts > 100) return tdm_error(TDM_E_INVAL, "import: %zu emotive dicts (at most 100)", p->nemotive_dicts);
    size_t nval = 0, nent = 0;
    for (size_t m = 0; m < p->nmeta; m++) nval += p->meta_nvalues[m];
    for (size_t d = 0; d < p->nemotive_dicts; d++) nent += p->emotive_sizes[d];
    tdm_kato_event *ev = tdm_calloc(p->nevents + 1, sizeof *ev);
    tdm_kato_emotives *emo = tdm_calloc(p->nemotive_dicts + 1, sizeof *emo);
    tdm_kato_meta *mi = tdm_calloc(nval + 1, sizeof *mi);
    tdm_kato_metadata *md = tdm_calloc(nval + 1, sizeof *md);
    int rc = TDM_OK;
    if (!ev || !emo || !mi || !md) {
        rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_import: no memory");
        goto out;
    }
    size_t at = 0;
    for (size_t e = 0; e < p->nevents; e++) {
        if (at + p->event_sizes[e] > p->nsyms) {
            rc = tdm_error(TDM_E_CORRUPT, "import: pattern %.40s: event sizes exceed its %zu symbols", p->name, p->nsyms);
            goto out;
        }
        ev[e].syms = (const char *const *)p->syms + at, ev[e].lens = p->sym_lens + at, ev[e].n = p->event_sizes[e];
        at += p->event_sizes[e];
    }
    if (at != p->nsyms) {
        rc = tdm_error(TDM_E_CORRUPT, "import: pattern %.40s: event sizes cover %zu of %zu symbols", p->name, at, p->nsyms);
        goto out;
    }
    char hex[TDM_KATO_NAME_LEN + 1];
    if ((rc = tdm_kato_pattern_name(ev, p->nevents, hex))) goto out;
    if (strcmp(hex, p->name)) {
        rc = tdm_error(TDM_E_CORRUPT, "import: pattern named %.40s has the name %s", p->name, hex);
        goto out;
    }
    for (size_t d = 0, off = 0; d < p->nemotive_dicts; d++) emo[d].items = p->emotives + off, emo[d].n = p->emotive_sizes[d], off += p->emotive_sizes[d];
    /* one single-entry dict per stored value: the union rebuilds the same sorted sets, keys in order */
    for (size_t m = 0, k = 0; m < p->nmeta; m++)
        for (size_t v = 0; v < p->meta_nvalues[m]; v++, k++) {
            mi[k].key = p->meta_keys[m], mi[k].value = p->meta_values[k];
            md[k].items = &mi[k], md[k].n = 1;
        }
    int learned;
    rc = learn_impl(kb, ev, p->nevents, emo, p->nemotive_dicts, md, nval, p->nemotive_dicts ? (uint32_t)p->nemotive_dicts : 1,
                    p->frequency, 1, hex, &learned);
    if (!rc && !learned) rc = tdm_error(TDM_E_INVAL, "import: pattern %.40s has fewer than 2 symbols", p->name);
out:
    tdm_free(ev), tdm_free(emo), tdm_free(mi), tdm_free(md);
    (void)nent;
    return rc;
}

int tdm_kato_kb_set_affinity(tdm_kato_kb *kb, const char *sym, size_t len, const char *emotive, double value) {
    if (!kb || (!sym && len) || !emotive) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_set_affinity: NULL argument");
    if (!isfinite(value)) return tdm_error(TDM_E_INVAL, "affinity of \"%s\" is not a finite number", emotive);
    pthread_rwlock_wrlock(&kb->lock);
    uint32_t id, k;
    int rc = find_symbol(kb, sym ? sym : "", len, &id);
    if (!rc && emokey_intern(kb, emotive, &k)) rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_set_affinity: no memory");
    if (!rc) {
        kato_aff *a = &kb->aff[id];
        uint32_t i = 0;
        while (i < a->n && a->keys[i] != k) i++;
        if (i == a->n) {
            uint32_t *k2 = tdm_realloc(a->keys, (a->n + 1) * sizeof *k2);
            if (k2) a->keys = k2;
            double *s2 = k2 ? tdm_realloc(a->sums, (a->n + 1) * sizeof *s2) : NULL;
            if (s2) a->sums = s2;
            if (!k2 || !s2) rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_set_affinity: no memory");
            else a->keys[a->n++] = k;
        }
        if (!rc) a->sums[i] = value;
    }
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

uint32_t tdm_kato_kb_symbol_count(tdm_kato_kb *kb) {
    pthread_rwlock_rdlock(&kb->lock);
    uint32_t n = tdm_seq_vocab_size(tdm_seq_store_vocab_const(tdm_seq_engine_store(kb->engine)));
    pthread_rwlock_unlock(&kb->lock);
    return n;
}

void tdm_kato_symbol_free(tdm_kato_symbol *s) {
    if (!s) return;
    tdm_free(s->sym);
    for (size_t i = 0; i < s->naff; i++) tdm_free(s->aff_keys ? s->aff_keys[i] : NULL);
    tdm_free(s->aff_keys), tdm_free(s->aff_values);
    memset(s, 0, sizeof *s);
}

int tdm_kato_kb_symbol_get(tdm_kato_kb *kb, uint32_t index, tdm_kato_symbol *out) {
    if (!kb || !out) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_symbol_get: NULL argument");
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&kb->lock);
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(tdm_seq_engine_store(kb->engine));
    int rc = TDM_OK;
    if (index >= tdm_seq_vocab_size(v) || index >= kb->capsym) {
        rc = tdm_error(TDM_E_RANGE, "symbol index %u: the knowledge base has %u", index, tdm_seq_vocab_size(v));
        goto out;
    }
    rc = kato_symbol_export(kb, index, out);
out:
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

int kato_symbol_export(const tdm_kato_kb *kb, uint32_t id, tdm_kato_symbol *out) {
    const char *s;
    size_t len;
    tdm_seq_vocab_get(tdm_seq_store_vocab_const(tdm_seq_engine_store(kb->engine)), id, &s, &len);
    memset(out, 0, sizeof *out);
    out->sym = tdm_strndup(s, len);
    out->len = len;
    out->frequency = kb->freq[id];
    out->pattern_member_frequency = kb->pmf[id];
    if (out->sym && !kato_copy_affinity(kb, id, &out->aff_keys, &out->aff_values, &out->naff)) return TDM_OK;
    tdm_kato_symbol_free(out);
    return tdm_error(TDM_E_NOMEM, "symbol export: no memory");
}

void tdm_kato_kb_totals_get(tdm_kato_kb *kb, tdm_kato_kb_totals *out) {
    pthread_rwlock_rdlock(&kb->lock);
    out->patterns = kb->npats;
    out->total_pattern_frequencies = kb->tpf;
    out->total_symbols_in_patterns_frequencies = kb->tspf;
    out->symbols = kb->nsym;
    pthread_rwlock_unlock(&kb->lock);
}

uint32_t tdm_kato_kb_count(tdm_kato_kb *kb) {
    pthread_rwlock_rdlock(&kb->lock);
    uint32_t n = (uint32_t)kb->npats;
    pthread_rwlock_unlock(&kb->lock);
    return n;
}

int tdm_kato_kb_find(tdm_kato_kb *kb, const char *name, uint32_t *index) {
    if (!kb || !name || !index) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_find: NULL argument");
    if (!strncmp(name, "PTRN|", 5)) name += 5;
    if (strlen(name) != TDM_KATO_NAME_LEN || strspn(name, "0123456789abcdef") != TDM_KATO_NAME_LEN)
        return tdm_error(TDM_E_INVAL, "pattern name \"%.60s\": expected 40 lower-case hex digits", name);
    pthread_rwlock_rdlock(&kb->lock);
    uint32_t i = kato_name_lookup(kb, name);
    pthread_rwlock_unlock(&kb->lock);
    if (i == UINT32_MAX) return tdm_error(TDM_E_NOTFOUND, "pattern %s not found", name);
    *index = i;
    return TDM_OK;
}

static int find_symbol(tdm_kato_kb *kb, const char *sym, size_t len, uint32_t *id) {
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(tdm_seq_engine_store(kb->engine));
    if (tdm_seq_vocab_find(v, sym, len, id) || *id >= kb->capsym)
        return tdm_error(TDM_E_NOTFOUND, "symbol \"%.*s\" never learned", (int)(len > 60 ? 60 : len), sym);
    return TDM_OK;
}

int tdm_kato_kb_symbol_stats(tdm_kato_kb *kb, const char *sym, size_t len, uint64_t *frequency, uint64_t *pmf) {
    if (!kb || (!sym && len)) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_symbol_stats: NULL argument");
    pthread_rwlock_rdlock(&kb->lock);
    uint32_t id;
    int rc = find_symbol(kb, sym ? sym : "", len, &id);
    if (!rc) {
        if (frequency) *frequency = kb->freq[id];
        if (pmf) *pmf = kb->pmf[id];
    }
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

int tdm_kato_kb_symbol_affinity(tdm_kato_kb *kb, const char *sym, size_t len, const char *emotive, double *out) {
    if (!kb || (!sym && len) || !emotive || !out) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_symbol_affinity: NULL argument");
    pthread_rwlock_rdlock(&kb->lock);
    uint32_t id;
    int rc = find_symbol(kb, sym ? sym : "", len, &id);
    if (!rc) {
        uint32_t k = kato_emokey_find(kb, emotive);
        *out = 0.0;
        for (uint32_t i = 0; k != UINT32_MAX && i < kb->aff[id].n; i++)
            if (kb->aff[id].keys[i] == k) *out = kb->aff[id].sums[i];
    }
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

void tdm_kato_pattern_free(tdm_kato_pattern *p) {
    if (!p) return;
    for (size_t i = 0; i < p->nsyms; i++) tdm_free(p->syms ? p->syms[i] : NULL);
    size_t nent = 0, nval = 0;
    for (size_t d = 0; d < p->nemotive_dicts; d++) nent += p->emotive_sizes[d];
    for (size_t i = 0; i < nent; i++) tdm_free((char *)p->emotives[i].key);
    for (size_t m = 0; m < p->nmeta; m++) nval += p->meta_nvalues[m], tdm_free(p->meta_keys[m]);
    for (size_t i = 0; i < nval; i++) tdm_free(p->meta_values[i]);
    tdm_free(p->event_sizes), tdm_free(p->syms), tdm_free(p->sym_lens), tdm_free(p->emotive_sizes);
    tdm_free(p->emotives), tdm_free(p->meta_keys), tdm_free(p->meta_nvalues), tdm_free(p->meta_values);
    memset(p, 0, sizeof *p);
}

int tdm_kato_kb_get(tdm_kato_kb *kb, uint32_t index, tdm_kato_pattern *out) {
    if (!kb || !out) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_get: NULL argument");
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&kb->lock);
    int rc = TDM_OK;
    if (index >= kb->npats) {
        rc = tdm_error(TDM_E_RANGE, "pattern index %u: the knowledge base has %zu", index, kb->npats);
        goto out;
    }
    const kato_pat *p = &kb->pats[index];
    const tdm_seq_store *st = tdm_seq_engine_store(kb->engine);
    const uint32_t *ids;
    size_t n, nent = 0, nval = 0;
    tdm_seq_store_get(st, index, &ids, &n);
    for (uint32_t d = 0; d < p->ndicts; d++) nent += p->dsize[d];
    for (uint32_t m = 0; m < p->nmeta; m++) nval += p->meta[m].n;
    memcpy(out->name, p->name, sizeof out->name);
    out->frequency = p->frequency;
    out->event_sizes = tdm_malloc((p->nevents + 1) * sizeof *out->event_sizes);
    out->syms = tdm_calloc(n + 1, sizeof *out->syms);
    out->sym_lens = tdm_malloc((n + 1) * sizeof *out->sym_lens);
    out->emotive_sizes = tdm_malloc((p->ndicts + 1) * sizeof *out->emotive_sizes);
    out->emotives = tdm_calloc(nent + 1, sizeof *out->emotives);
    out->meta_keys = tdm_calloc(p->nmeta + 1, sizeof *out->meta_keys);
    out->meta_nvalues = tdm_calloc(p->nmeta + 1, sizeof *out->meta_nvalues);
    out->meta_values = tdm_calloc(nval + 1, sizeof *out->meta_values);
    int bad = !out->event_sizes || !out->syms || !out->sym_lens || !out->emotive_sizes || !out->emotives ||
              !out->meta_keys || !out->meta_nvalues || !out->meta_values;
    if (bad) goto nomem;
    out->nevents = p->nevents;
    for (uint32_t e = 0; e < p->nevents; e++) out->event_sizes[e] = p->event_sizes[e];
    out->nsyms = n;
    for (size_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        tdm_seq_vocab_get(tdm_seq_store_vocab_const(st), ids[i], &s, &len);
        if (!(out->syms[i] = tdm_strndup(s, len))) goto nomem;
        out->sym_lens[i] = len;
    }
    out->nemotive_dicts = p->ndicts;
    for (uint32_t d = 0; d < p->ndicts; d++) out->emotive_sizes[d] = p->dsize[d];
    for (size_t i = 0; i < nent; i++) {
        const char *k = kb->emokeys[p->ekeys[i]];
        if (!(out->emotives[i].key = tdm_strndup(k, strlen(k)))) goto nomem;
        out->emotives[i].value = p->evals[i];
    }
    out->nmeta = p->nmeta;
    for (uint32_t m = 0, at = 0; m < p->nmeta; m++) {
        if (!(out->meta_keys[m] = tdm_strndup(p->meta[m].key, strlen(p->meta[m].key)))) goto nomem;
        out->meta_nvalues[m] = p->meta[m].n;
        for (uint32_t v = 0; v < p->meta[m].n; v++, at++)
            if (!(out->meta_values[at] = tdm_strndup(p->meta[m].vals[v], strlen(p->meta[m].vals[v])))) goto nomem;
    }
    goto out;
nomem:
    tdm_kato_pattern_free(out);
    rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_get: no memory");
out:
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

/* ---- for kb_persist.c: the emotive keys, the table slots and the bookkeeping of a restored pattern ------ */
int kato_emokey_intern(tdm_kato_kb *kb, const char *key, uint32_t *out) { return emokey_intern(kb, key, out); }

/* Room for one more pattern in the pattern table, the first-symbol array and the name table (learn and
 * restore reserve before the engine learn, the last step that can fail). */
int kato_reserve_pattern(tdm_kato_kb *kb) {
    if (tdm_grow((void **)&kb->pats, &kb->cappats, kb->npats + 1, sizeof *kb->pats)) return -1;
    /* predictions read the records of scattered candidates: from 4 MB the table lies on huge pages
       (tdm_malloc's mappings), which spare most of the TLB misses */
    return tdm_grow((void **)&kb->first, &kb->capfirst, kb->npats + 1, sizeof *kb->first) ||
                   name_reserve(kb, kb->npats + 1)
               ? -1
               : 0;
}

/* Takes rec as pattern kb->npats, whose symbols the engine has just stored under that index: its sort
 * key, its name in the name table and its first symbol (the fast path's index) are set here, once for
 * learn and restore. */
void kato_commit_pattern(tdm_kato_kb *kb, kato_pat *rec) {
    uint32_t pid = (uint32_t)kb->npats;
    rec->name_key = name_key(rec->name);
    name_insert(kb->name_table, kb->name_cap, rec->name, pid);
    const uint32_t *fs;
    size_t fn;
    tdm_seq_store_get(tdm_seq_engine_store(kb->engine), pid, &fs, &fn);
    kb->first[pid] = rec->nevents && rec->event_sizes[0] ? fs[0] : UINT32_MAX;
    rec->length = (uint32_t)fn;
    kb->pats[kb->npats++] = *rec;
}

/* A copy of symbol id's affinity sums (keys and values, first-seen order), for the two exports (by index,
 * tdm_kato_kb_symbol_get and tdm_kato_kb_symbol_find); the caller holds the lock.
 * Returns -1 without memory; what was copied so far is in *keys and *sums for the caller's free. */
int kato_copy_affinity(const tdm_kato_kb *kb, uint32_t id, char ***keys, double **sums, size_t *n) {
    const kato_aff *a = &kb->aff[id];
    *keys = tdm_calloc(a->n + 1, sizeof **keys);
    *sums = tdm_malloc((a->n + 1) * sizeof **sums);
    if (!*keys || !*sums) return -1;
    for (uint32_t i = 0; i < a->n; i++, ++*n) {
        const char *k = kb->emokeys[a->keys[i]];
        if (!((*keys)[i] = tdm_strndup(k, strlen(k)))) return -1;
        (*sums)[i] = a->sums[i];
    }
    return 0;
}
