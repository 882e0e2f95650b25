/* kb_persist.c: export and restore of a knowledge base's parts for the durable store (src/store). A learn
 * changes one pattern record, the statistics of the pattern's distinct symbols and the totals; the store
 * writes exactly those after each learn, and at start-up puts them back here in pattern-index order, so
 * the restored knowledge base is the one that learned (same indices, counts, emotives, affinities) without
 * replaying any learn. Kept apart from kb.c so that the learning code stays as it is. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t under -std=c11 */
#include "kato/kato_internal.h"

#include <stdlib.h>
#include <string.h>

static int symbol_id(tdm_kato_kb *kb, const char *sym, size_t len, uint32_t *id) {
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(tdm_seq_engine_store(kb->engine));
    if (tdm_seq_vocab_find(v, sym, len, id) || *id >= kb->capsym)
        return tdm_error(TDM_E_NOTFOUND, "symbol \"%.*s\" never learned", (int)(len > 60 ? 60 : len), sym);
    return TDM_OK;
}

int tdm_kato_kb_symbol_find(tdm_kato_kb *kb, const char *sym, size_t len, tdm_kato_symbol *out) {
    if (!kb || (!sym && len) || !out) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_symbol_find: NULL argument");
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&kb->lock);
    uint32_t id;
    int rc = symbol_id(kb, sym ? sym : "", len, &id);
    if (!rc) rc = kato_symbol_export(kb, id, out);
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

/* Per-symbol arrays for every vocabulary id up to need (zeroed); -1 without memory. Write lock held. */
static int grow_symbols(tdm_kato_kb *kb, size_t need) {
    if (need <= kb->capsym) return 0;
    size_t c1 = kb->capsym, c2 = c1, c3 = c1, old = kb->capsym;
    if (tdm_grow((void **)&kb->freq, &c1, need, sizeof *kb->freq) || tdm_grow((void **)&kb->pmf, &c2, need, sizeof *kb->pmf) ||
        tdm_grow((void **)&kb->aff, &c3, need, sizeof *kb->aff))
        return -1;
    size_t cap = c1 < c2 ? c1 : c2;
    cap = cap < c3 ? cap : c3;
    memset(kb->freq + old, 0, (cap - old) * sizeof *kb->freq);
    memset(kb->pmf + old, 0, (cap - old) * sizeof *kb->pmf);
    memset(kb->aff + old, 0, (cap - old) * sizeof *kb->aff);
    kb->capsym = cap;
    return 0;
}

static void free_pat(kato_pat *p) {
    tdm_free(p->event_sizes), tdm_free(p->dsize), tdm_free(p->ekeys), tdm_free(p->evals);
    for (uint32_t m = 0; m < p->nmeta; m++) {
        for (uint32_t v = 0; p->meta[m].vals && v < p->meta[m].n; v++) tdm_free(p->meta[m].vals[v]);
        tdm_free(p->meta[m].vals), tdm_free(p->meta[m].key);
    }
    tdm_free(p->meta);
    memset(p, 0, sizeof *p);
}

/* Builds the kb-side record of p (emotive keys interned into kb). -1 without memory. Write lock held. */
static int build_pat(tdm_kato_kb *kb, const tdm_kato_pattern *p, kato_pat *out) {
    memset(out, 0, sizeof *out);
    memcpy(out->name, p->name, sizeof out->name);
    out->frequency = p->frequency;
    size_t nent = 0;
    for (size_t d = 0; d < p->nemotive_dicts; d++) nent += p->emotive_sizes[d];
    out->event_sizes = tdm_malloc((p->nevents + 1) * sizeof *out->event_sizes);
    out->dsize = tdm_malloc((p->nemotive_dicts + 1) * sizeof *out->dsize);
    out->ekeys = tdm_malloc((nent + 1) * sizeof *out->ekeys);
    out->evals = tdm_malloc((nent + 1) * sizeof *out->evals);
    out->meta = tdm_calloc(p->nmeta + 1, sizeof *out->meta);
    if (!out->event_sizes || !out->dsize || !out->ekeys || !out->evals || !out->meta) return -1;
    out->nevents = (uint32_t)p->nevents;
    for (size_t e = 0; e < p->nevents; e++) out->event_sizes[e] = (uint32_t)p->event_sizes[e];
    out->ndicts = (uint32_t)p->nemotive_dicts;
    for (size_t d = 0; d < p->nemotive_dicts; d++) out->dsize[d] = (uint32_t)p->emotive_sizes[d];
    for (size_t i = 0; i < nent; i++) {
        if (kato_emokey_intern(kb, p->emotives[i].key, &out->ekeys[i])) return -1;
        out->evals[i] = p->emotives[i].value;
    }
    for (size_t m = 0, at = 0; m < p->nmeta; m++) {
        kato_meta_key *k = &out->meta[m];
        out->nmeta++;
        if (!(k->key = tdm_strndup(p->meta_keys[m], strlen(p->meta_keys[m])))) return -1;
        if (!(k->vals = tdm_calloc(p->meta_nvalues[m] + 1, sizeof *k->vals))) return -1;
        for (size_t v = 0; v < p->meta_nvalues[m]; v++, at++, k->n++)
            if (!(k->vals[v] = tdm_strndup(p->meta_values[at], strlen(p->meta_values[at])))) return -1;
    }
    return 0;
}

int tdm_kato_kb_restore_pattern(tdm_kato_kb *kb, const tdm_kato_pattern *p) {
    if (!kb || !p) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_restore_pattern: NULL argument");
    if (strlen(p->name) != TDM_KATO_NAME_LEN || strspn(p->name, "0123456789abcdef") != TDM_KATO_NAME_LEN)
        return tdm_error(TDM_E_INVAL, "restored pattern name \"%.60s\": expected 40 lower-case hex digits", p->name);
    size_t total = 0;
    for (size_t e = 0; e < p->nevents; e++) total += p->event_sizes[e];
    if (total != p->nsyms || p->nsyms < 2 || !p->frequency)
        return tdm_error(TDM_E_CORRUPT, "restored pattern %s: %zu symbols, events hold %zu, frequency %llu", p->name,
                         p->nsyms, total, (unsigned long long)p->frequency);
    for (size_t i = 0; i < p->nsyms; i++)
        if (tdm_seq_utf8_check(p->syms[i], p->sym_lens[i])) return tdm_error(TDM_E_UTF8, "restored pattern %s: symbol %zu is not UTF-8", p->name, i);
    kato_pat rec;
    int rc = TDM_OK;
    pthread_rwlock_wrlock(&kb->lock);
    if (kato_name_lookup(kb, p->name) != UINT32_MAX) {
        rc = tdm_error(TDM_E_CORRUPT, "restored pattern %s is already in the knowledge base", p->name);
        goto unlock;
    }
    size_t need = (size_t)tdm_seq_vocab_size(tdm_seq_store_vocab_const(tdm_seq_engine_store(kb->engine))) + p->nsyms;
    if (build_pat(kb, p, &rec) || grow_symbols(kb, need) || kato_reserve_pattern(kb)) {
        free_pat(&rec);
        rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_restore_pattern: no memory");
        goto unlock;
    }
    uint32_t pid;
    /* everything that can fail without undo is done: the engine learn is the last step that can fail */
    rc = tdm_seq_engine_learn_strings(kb->engine, (const char *const *)p->syms, p->sym_lens, p->nsyms, &pid);
    if (!rc && pid != kb->npats) rc = tdm_error(TDM_E_CORRUPT, "restore: engine id %u for pattern %zu", pid, kb->npats);
    if (rc) {
        free_pat(&rec);
        goto unlock;
    }
    kato_commit_pattern(kb, &rec);
unlock:
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

int tdm_kato_kb_restore_symbol(tdm_kato_kb *kb, const tdm_kato_symbol *s) {
    if (!kb || !s || (!s->sym && s->len) || (s->naff && (!s->aff_keys || !s->aff_values)))
        return tdm_error(TDM_E_INVAL, "tdm_kato_kb_restore_symbol: NULL argument");
    pthread_rwlock_wrlock(&kb->lock);
    uint32_t id;
    int rc = symbol_id(kb, s->sym ? s->sym : "", s->len, &id);
    if (rc) goto out;
    uint32_t *keys = tdm_malloc((s->naff + 1) * sizeof *keys);
    double *sums = tdm_malloc((s->naff + 1) * sizeof *sums);
    int bad = !keys || !sums;
    for (size_t i = 0; !bad && i < s->naff; i++) {
        bad = kato_emokey_intern(kb, s->aff_keys[i], &keys[i]) != 0;
        sums[i] = s->aff_values[i];
    }
    if (bad) {
        tdm_free(keys), tdm_free(sums);
        rc = tdm_error(TDM_E_NOMEM, "tdm_kato_kb_restore_symbol: no memory");
        goto out;
    }
    kato_aff *a = &kb->aff[id];
    tdm_free(a->keys), tdm_free(a->sums);
    a->keys = keys, a->sums = sums, a->n = (uint32_t)s->naff;
    kb->freq[id] = s->frequency, kb->pmf[id] = s->pattern_member_frequency;
out:
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}

int tdm_kato_kb_restore_totals(tdm_kato_kb *kb, const tdm_kato_kb_totals *t) {
    if (!kb || !t) return tdm_error(TDM_E_INVAL, "tdm_kato_kb_restore_totals: NULL argument");
    pthread_rwlock_wrlock(&kb->lock);
    int rc = TDM_OK;
    if (t->patterns != kb->npats)
        rc = tdm_error(TDM_E_CORRUPT, "restored totals say %llu patterns, the knowledge base has %zu",
                       (unsigned long long)t->patterns, kb->npats);
    else
        kb->tpf = t->total_pattern_frequencies, kb->tspf = t->total_symbols_in_patterns_frequencies, kb->nsym = t->symbols;
    pthread_rwlock_unlock(&kb->lock);
    return rc;
}
