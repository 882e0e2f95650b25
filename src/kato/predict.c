/* predict.c: KATO's prediction pipeline for one STM (spec/kato.md section 3). The STM is encoded against
 * the knowledge base's vocabulary; one symbol takes the single-symbol fast path (patterns that start with
 * it), more take the full path: the sequence engine finds every pattern whose similarity reaches the
 * recall threshold (exact prefilters, CPU or GPU), then each candidate gets KATO's Ratcliff/Obershelp
 * extraction (matches, past/present/future, missing/extras, fragmentation, evidence, confidence, snr),
 * and ensemble.c computes the metrics that depend on the whole candidate set. Candidates are taken in
 * pattern-name order, which fixes every order-dependent sum that KATO leaves to set iteration. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t under -std=c11 */
#include "kato/predict_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

void kato_sym_bytes(const kato_pred *p, uint32_t id, const char **s, size_t *len) {
    if (id < p->vocab_n) tdm_seq_vocab_get(p->vocab, id, s, len);
    else *s = p->unk[id - p->vocab_n], *len = p->unk_len[id - p->vocab_n];
}

double kato_weight(const kato_pred *p, uint32_t id) {
    if (id >= p->vocab_n || id >= p->kb->capsym) return 0.01;
    const kato_aff *a = &p->kb->aff[id];
    double aff = 0.0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->keys[i] == p->aff_key) aff = a->sums[i];
    uint64_t f = p->kb->freq[id];
    if (!f || aff == 0.0) return 0.01;
    return fabs(aff) / (double)f + 0.01;
}

const uint32_t *kato_event_sizes(const kato_pred *p, uint32_t pid, uint32_t *nevents) {
    *nevents = p->kb->pats[pid].nevents;
    return p->kb->pats[pid].event_sizes;
}

/* ---- STM encoding ------------------------------------------------------------------------------------- */

static int encode_stm(kato_pred *p, const tdm_kato_event *stm, size_t nevents) {
    size_t n = 0;
    for (size_t e = 0; e < nevents; e++) {
        if (stm[e].n && (!stm[e].syms || !stm[e].lens)) return tdm_error(TDM_E_INVAL, "STM event %zu: NULL symbols", e);
        n += stm[e].n;
    }
    if (n >= UINT32_MAX / 2 || nevents >= UINT32_MAX) return tdm_error(TDM_E_OVERFLOW, "STM of %zu symbols", n);
    p->S = tdm_malloc((n + 1) * sizeof *p->S);
    p->stm_sizes = tdm_malloc((nevents + 1) * sizeof *p->stm_sizes);
    p->unk = tdm_malloc((n + 1) * sizeof *p->unk);
    p->unk_len = tdm_malloc((n + 1) * sizeof *p->unk_len);
    if (!p->S || !p->stm_sizes || !p->unk || !p->unk_len) return tdm_error(TDM_E_NOMEM, "predict: no memory for the STM");
    for (size_t e = 0; e < nevents; e++) {
        p->stm_sizes[p->nstm++] = (uint32_t)stm[e].n;
        for (size_t i = 0; i < stm[e].n; i++) {
            const char *s = stm[e].syms[i] ? stm[e].syms[i] : "";
            size_t len = stm[e].lens[i];
            if (tdm_seq_utf8_check(s, len)) return tdm_error(TDM_E_UTF8, "STM event %zu symbol %zu is not valid UTF-8", e, i);
            uint32_t id;
            if (tdm_seq_vocab_find(p->vocab, s, len, &id) || id >= p->vocab_n) {
                uint32_t k = 0; /* unknown: one id per distinct string, so equal strings compare equal */
                while (k < p->nunk && !(p->unk_len[k] == len && !memcmp(p->unk[k], s, len))) k++;
                if (k == p->nunk) p->unk[k] = s, p->unk_len[k] = len, p->nunk++;
                id = p->vocab_n + k;
            }
            p->S[p->ns++] = id;
        }
    }
    tdm_clear_error();
    return TDM_OK;
}

/* ---- per-candidate extraction (spec 3.4, 3.5) -------------------------------------------------------- */

int kato_prune_matcher = 0;

/* The counts and ratios of spec 3.4-3.5 that follow from the blocks' summary alone (b: the blocks of
 * RO(P, S), seq.h's tdm_seq_hit_blocks): |matches|, the flat extras count, evidence, snr, fragmentation,
 * the event ranges with KATO's fix-up, and confidence. Both the full extraction (extract, which has the
 * blocks) and the pruning pass (which has only the query's summaries) compute them here, so the two agree
 * bit for bit. c->pid and c->np must be set (the pattern's symbols are not read).
 *
 * KATO's step 3.4.5 recomputes the blocks on (present_flat, S) for the flat extras. That second matching
 * is not needed: present_flat = P[i0, iend) spans every block of RO(P, S), and RO restricted to a range of
 * a that contains all of its blocks finds the same blocks. (Each find_longest_match of the restricted run
 * scans a sub-rectangle of the full run's; run lengths there can only shrink, by truncation at i0 or iend,
 * while the full run's winner lies inside and keeps its length, so it is still the first longest; ranges
 * the full run recursed into but the restricted run drops held no block.) So the matched count of
 * (present_flat, S) is |matches| and extras_flat = |S| - |matches|; test_difflib checks this identity
 * against a real second matching. */
static void from_summary(const kato_pred *p, kato_cand *c, const tdm_seq_hit_blocks *b) {
    uint32_t nb = b->nblocks;
    c->nblocks = nb;
    c->nm = b->matched;
    size_t past_len = 0, pres_len = c->np; /* nb = 0 (threshold 0): past [] and present = the whole pattern */
    if (nb) past_len = b->a_first, pres_len = b->a_end - b->a_first;
    c->extras_flat = pres_len ? p->ns - c->nm : 0;
    c->evidence = c->np > 0 ? (double)c->nm / (double)c->np : 0.0;
    double den = 2.0 * (double)c->nm + (double)c->extras_flat;
    c->snr = den > 0 ? (2.0 * (double)c->nm - (double)c->extras_flat) / den : 0.0;
    c->frag = (double)nb - 1.0;
    /* flat spans to events: an event partly in past counts as past (prediction.py) */
    uint32_t nev;
    const uint32_t *sizes = kato_event_sizes(p, c->pid, &nev);
    size_t c1 = past_len, c2 = 0;
    uint32_t ev = 0;
    while (c2 < c1) c2 += sizes[ev++];
    uint32_t e1 = ev;
    size_t start_e1 = c2; /* flat start of event e1 */
    c1 += pres_len;
    while (c2 < c1) c2 += sizes[ev++];
    c->pb = e1, c->pe = ev;
    /* present events' flat length before the fix-up */
    uint32_t plen = (uint32_t)(c2 - start_e1);
    /* fix-up: the first match (the state symbol of the first block, S[b_first] = P[a_first]) inside the
     * last past event moves that event into present. pb > 0 needs a block, and then the last past event
     * is the one holding P[a_first - 1], of size sz > 0 (the walk stopped on it). When it also holds
     * a_first (start_e1 > a_first) the match is in it; otherwise it is P[a_first - sz, a_first), which
     * holds that symbol when its last occurrence before a_first is at most sz back: the summary's
     * a_repeat, so the pattern's symbols are not read here. */
    if (c->pb > 0) {
        uint32_t sz = sizes[c->pb - 1];
        if (start_e1 > b->a_first || (b->a_repeat && b->a_repeat <= sz)) c->pb--, plen += sz;
    }
    /* confidence over the present events */
    c->confidence = plen > 0 ? (double)c->nm / (double)plen : 0.0;
}

/* KATO's pruning key _pre_potential of an extracted candidate (spec 3.6 step 0). */
static double pre_potential(const kato_cand *c) {
    double t = c->frag == -1.0 ? 0.0 : 1.0 / (c->frag + 1.0);
    return (c->evidence + c->confidence) * c->snr + t;
}

/* Extracts candidate c (c->pid, c->P, c->np, c->sim set); *keep = 0 when KATO rejects it (no block at a
 * positive threshold). m has S as its second sequence. With c->matches NULL only the counts are kept;
 * otherwise c->matches has room for min(|P|, |S|) symbols. */
static int extract(kato_pred *p, tdm_seq_matcher *m, kato_cand *c, int *keep) {
    const tdm_seq_block *bl;
    size_t nb, total;
    int rc = tdm_seq_matcher_blocks(m, c->P, c->np, &bl, &nb, &total);
    if (rc) return rc;
    *keep = 1;
    if (nb == 0 && p->cfg->recall_threshold > 0.0) return *keep = 0, TDM_OK;
    tdm_seq_hit_blocks sum;
    tdm_seq_blocks_summary(bl, nb, total, c->P, &sum);
    from_summary(p, c, &sum);
    /* matches in state order; blocks are disjoint in both sequences, so at most min(|P|, |S|) */
    if (c->matches)
        for (size_t k = 0, at = 0; k < nb; k++)
            for (uint32_t t = 0; t < bl[k].n; t++) c->matches[at++] = p->S[bl[k].j + t];
    /* weighted similarity (affinity on): 2*w(matches)/(w(S)+w(P)), matches in state order */
    if (p->affinity && c->matches) {
        double wm = 0.0, ws = 0.0, wp = 0.0;
        for (uint32_t i = 0; i < c->nm; i++) wm += kato_weight(p, c->matches[i]);
        for (uint32_t i = 0; i < p->ns; i++) ws += kato_weight(p, p->S[i]);
        for (uint32_t i = 0; i < c->np; i++) wp += kato_weight(p, c->P[i]);
        if (ws + wp != 0.0) c->weighted_similarity = 2.0 * wm / (ws + wp), c->has_wsim = 1;
    }
    return TDM_OK;
}

static int cmp_cand_name(const void *a, const void *b, void *kb) {
    const kato_cand *x = a, *y = b;
    return kato_name_cmp(kb, x->pid, y->pid);
}

/* qsort with a context, portable: names are compared through a file-level pointer under the kb's read
 * lock; several predictions may run at once, so the pointer is thread-local. */
static _Thread_local const tdm_kato_kb *sort_kb;
static int cmp_name_tls(const void *a, const void *b) { return cmp_cand_name(a, b, (void *)sort_kb); }

void kato_sort_by_name(kato_pred *p) {
    sort_kb = p->kb;
    qsort(p->c, p->nc, sizeof *p->c, cmp_name_tls);
}

/* ---- the single-symbol fast path (spec 3.2) ---------------------------------------------------------- */

static int fast_path(kato_pred *p) {
    uint32_t s = p->S[0];
    uint32_t count = (uint32_t)p->kb->npats;
    if (s >= p->vocab_n) return TDM_OK; /* an unknown symbol starts no pattern */
    size_t cap = 0;
    if (!(p->match_arena = tdm_malloc(((size_t)count + 1) * sizeof *p->match_arena)))
        return tdm_error(TDM_E_NOMEM, "predict: no memory");
    for (uint32_t pid = 0; pid < count; pid++) {
        if (p->kb->first[pid] != s) continue; /* KATO: first_token == s and pattern_data[0][0] == s */
        const uint32_t *P;
        size_t np;
        tdm_seq_store_get(p->store, pid, &P, &np);
        if (tdm_grow((void **)&p->c, &cap, p->nc + 1, sizeof *p->c)) return tdm_error(TDM_E_NOMEM, "predict: no memory");
        kato_cand *c = &p->c[p->nc++];
        memset(c, 0, sizeof *c);
        c->pid = pid, c->P = P, c->np = (uint32_t)np, c->group = UINT32_MAX;
        if (p->cfg->use_token_matching) {
            c->sim = 2.0 * 1.0 / (double)(np + 1); /* no x100/100 round trip on this path */
        } else {
            size_t L, la, lb;
            int rc = tdm_seq_char_lcs(p->vocab, P, np, &s, 1, &L, &la, &lb);
            if (rc) return rc;
            c->sim = tdm_seq_char_ratio(L, la, lb);
        }
        c->matches = &p->match_arena[p->nc - 1];
        c->matches[0] = s, c->nm = 1, c->nblocks = 1;
        c->evidence = 1.0 / (double)np;
        c->confidence = 1.0;
        c->snr = 1.0; /* m/(m+e) with e = 0 */
        c->frag = 0.0;
        c->potential = (c->evidence + c->confidence) * c->snr + 1.0 / (c->frag + 1.0);
        if (p->affinity) {
            double wm = kato_weight(p, s), ws = wm, wp = 0.0;
            for (size_t i = 0; i < np; i++) wp += kato_weight(p, P[i]);
            c->weighted_similarity = 2.0 * wm / (ws + wp), c->has_wsim = 1;
        }
    }
    kato_sort_by_name(p);
    return kato_rank(p, TDM_KATO_RANK_POTENTIAL);
}

/* ---- extraction of every candidate -------------------------------------------------------------------
 * Two passes keep memory small when the threshold admits most of a large store. The first computes every
 * hit's pruning key _pre_potential from the matching-block summary the engine's query returned with it
 * (on a GPU computed there, with the scores), so it runs no matcher and keeps no per-hit array: each
 * thread offers its candidates to a heap of its best 3 x max_predictions (a 32-byte brief: key, name key,
 * pattern, similarity). The union of the heaps holds the best 3 x max_predictions of all (the order is
 * total), or every kept candidate when there are no more; ranked (KATO's nlargest over the name-ordered
 * list) it gives the pruning. The second pass extracts the survivors in full with the matcher. Both go
 * through from_summary, so they agree bit for bit. */

typedef struct {
    double pre, sim;
    uint64_t nk;
    uint32_t pid;
} kato_brief;

#define KATO_PARALLEL_MIN 4096

static _Thread_local const tdm_kato_kb *brief_kb;
static int cmp_brief(const void *a, const void *b) {
    const kato_brief *x = a, *y = b;
    if (x->pre > y->pre) return -1;
    if (x->pre < y->pre) return 1;
    if (x->nk != y->nk) return x->nk < y->nk ? -1 : 1;
    return strcmp(brief_kb->pats[x->pid].name, brief_kb->pats[y->pid].name);
}

/* Heaps of briefs with the worst (in cmp_brief order) on top: a candidate that does not beat the top is
 * out in one comparison, which is almost every candidate after the first few thousand. */
static void sift_down(kato_brief *h, size_t n, size_t i) {
    kato_brief x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && cmp_brief(&h[c + 1], &h[c]) > 0) c++; /* the worse child */
        if (cmp_brief(&h[c], &x) <= 0) break;
        h[i] = h[c], i = c;
    }
    h[i] = x;
}

/* Offers b to the heap h of at most cap briefs (n of them now). */
static void offer(kato_brief *h, size_t *n, size_t cap, kato_brief b) {
    if (*n < cap) {
        size_t i = (*n)++;
        for (; i > 0 && cmp_brief(&h[(i - 1) / 2], &b) < 0; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
        h[i] = b;
    } else if (cmp_brief(&b, &h[0]) < 0) {
        h[0] = b;
        sift_down(h, cap, 0);
    }
}

/* Moves the best `keep` (0 < keep < n) of br[0..n) in cmp_brief order to br[0..keep), in no particular
 * order. cmp_brief is a total order (names are unique), so these are exactly the first `keep` of a full
 * sort. */
static void select_best(kato_brief *br, size_t n, size_t keep) {
    for (size_t i = keep / 2; i-- > 0;) sift_down(br, keep, i);
    for (size_t h = keep; h < n; h++)
        if (cmp_brief(&br[h], &br[0]) < 0) br[0] = br[h], sift_down(br, keep, 0);
}

/* A thread's matcher with the STM as b (KATO's order, no autojunk); *m NULL on failure. */
static int stm_matcher(const kato_pred *p, tdm_seq_matcher **m) {
    int rc = tdm_seq_matcher_new(m);
    return rc ? rc : tdm_seq_matcher_set_b(*m, p->S, p->ns, 0);
}

/* Keeps the first thread's failure of a parallel extraction in *err. */
static void keep_first_error(int *err, int lrc) {
    if (!lrc) return;
#pragma omp critical(kato_extract_err)
    if (!*err) *err = lrc;
}

/* The pruning pass over the query's hits: every thread's best `cap` kept candidates go to best[t *
 * cap ..] (nbest[t] of them), *kept counts all kept ones. From the hits' summaries (sum), or with the
 * matcher (sum NULL: tests, through kato_prune_matcher). */
static int prune_pass(kato_pred *p, const tdm_seq_result *res, const tdm_seq_hit_blocks *sum, int threads, size_t cap,
                      kato_brief *best, size_t *nbest, uint64_t *kept) {
    size_t n = res->n;
    int err = TDM_OK;
    uint64_t total = 0;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(+ : total)
    {
        int t = omp_get_thread_num();
        kato_brief *h = best + (size_t)t * cap;
        size_t nh = 0;
        tdm_seq_matcher *m = NULL;
        int lrc = sum ? TDM_OK : stm_matcher(p, &m);
        brief_kb = p->kb;
#pragma omp for schedule(dynamic, 256)
        for (size_t i = 0; i < n; i++) {
            if (lrc) continue;
            /* hits come in similarity order, so their pattern records and event sizes (a separate
             * allocation each) are scattered: fetch the record 16 hits ahead, and through it the sizes 8
             * ahead */
            if (i + 16 < n) __builtin_prefetch(&p->kb->pats[res->hits[i + 16].id]);
            if (i + 8 < n) __builtin_prefetch(p->kb->pats[res->hits[i + 8].id].event_sizes);
            kato_cand x;
            memset(&x, 0, sizeof x);
            x.pid = res->hits[i].id, x.sim = res->hits[i].similarity, x.group = UINT32_MAX;
            int k = 0;
            if (sum) { /* extract's rejection test and arithmetic, from the summary and the pattern record
                        * (its length there spares a read of the store's offsets) */
                k = sum[i].nblocks > 0 || p->cfg->recall_threshold <= 0.0;
                x.np = p->kb->pats[x.pid].length;
                if (k) from_summary(p, &x, &sum[i]);
            } else {
                size_t np;
                tdm_seq_store_get(p->store, x.pid, &x.P, &np);
                x.np = (uint32_t)np;
                lrc = extract(p, m, &x, &k); /* x.matches NULL: counts only */
            }
            if (lrc || !k) continue;
            total++;
            offer(h, &nh, cap, (kato_brief){pre_potential(&x), x.sim, p->kb->pats[x.pid].name_key, x.pid});
        }
        nbest[t] = nh;
        tdm_seq_matcher_free(m);
        keep_first_error(&err, lrc);
    }
    *kept = total;
    if (err) return tdm_error(err, "predict: extraction failed: %s", tdm_strerror(err));
    return TDM_OK;
}

/* Extracts the survivors br[0..n) in full into c[0..n), their matches into arena slots. */
static int extract_full(kato_pred *p, const kato_brief *br, size_t n, kato_cand *c, uint32_t *arena, const size_t *slot) {
    /* one extraction takes about a microsecond: below a few thousand candidates a parallel region costs
     * more than it saves (and on a busy machine a descheduled worker stalls the others) */
    int threads = tdm_ctx_threads(p->kb->ctx), err = TDM_OK;
    if (n < KATO_PARALLEL_MIN) threads = 1;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        tdm_seq_matcher *m = NULL;
        int lrc = stm_matcher(p, &m);
#pragma omp for schedule(dynamic, 64)
        for (size_t h = 0; h < n; h++) {
            if (lrc) continue;
            kato_cand *x = &c[h];
            size_t np;
            memset(x, 0, sizeof *x);
            x->pid = br[h].pid, x->sim = br[h].sim, x->group = UINT32_MAX;
            tdm_seq_store_get(p->store, x->pid, &x->P, &np);
            x->np = (uint32_t)np;
            x->matches = arena + slot[h];
            int k = 0;
            lrc = extract(p, m, x, &k);
            x->pre_potential = br[h].pre;
        }
        tdm_seq_matcher_free(m);
        keep_first_error(&err, lrc);
    }
    if (err) return tdm_error(err, "predict: extraction failed: %s", tdm_strerror(err));
    return TDM_OK;
}

static int extract_all(kato_pred *p, const tdm_seq_result *res, tdm_kato_predict_stats *st) {
    size_t n = res->n, limit = 3 * (size_t)p->cfg->max_predictions;
    int threads = tdm_ctx_threads(p->kb->ctx);
    if (n < KATO_PARALLEL_MIN) threads = 1;
    size_t cap = limit < n ? limit : n;
    kato_brief *br = tdm_malloc(((size_t)threads * cap + 1) * sizeof *br);
    size_t *nbest = tdm_calloc((size_t)threads, sizeof *nbest), *slot = NULL;
    int rc = TDM_OK;
    if (!br || !nbest) {
        rc = tdm_error(TDM_E_NOMEM, "predict: no memory for %zu candidates", n);
        goto out;
    }
    uint64_t kept = 0;
    if ((rc = prune_pass(p, res, kato_prune_matcher ? NULL : res->blocks, threads, cap, br, nbest, &kept))) goto out;
    size_t k = 0; /* the threads' heaps, back to back */
    for (int t = 0; t < threads; t++) {
        memmove(br + k, br + (size_t)t * cap, nbest[t] * sizeof *br);
        k += nbest[t];
    }
    st->candidates = kept;
    if (kept > limit) { /* pruning (spec 3.6 step 0): the best 3 x max_predictions, in that order */
        brief_kb = p->kb;
        if (k > limit) select_best(br, k, limit);
        qsort(br, limit, sizeof *br, cmp_brief);
        k = limit;
        p->pruned = 1;
    } /* else every kept candidate, in no particular order: the ensemble orders them by name */
    p->c = tdm_calloc(k + 1, sizeof *p->c);
    slot = tdm_malloc((k + 1) * sizeof *slot);
    size_t total = 0;
    for (size_t i = 0; slot && i < k; i++) {
        const uint32_t *P;
        size_t np;
        tdm_seq_store_get(p->store, br[i].pid, &P, &np);
        slot[i] = total, total += np < p->ns ? np : p->ns;
    }
    p->match_arena = slot ? tdm_malloc((total + 1) * sizeof *p->match_arena) : NULL;
    if (!p->c || !slot || !p->match_arena) {
        rc = tdm_error(TDM_E_NOMEM, "predict: no memory for %zu candidates", k);
        goto out;
    }
    if ((rc = extract_full(p, br, k, p->c, p->match_arena, slot))) goto out;
    p->nc = k;
out:
    tdm_free(br), tdm_free(nbest), tdm_free(slot);
    return rc;
}

/* ---- the full path (spec 3.3-3.7) --------------------------------------------------------------------- */

static int full_path(kato_pred *p, tdm_kato_predict_stats *st) {
    tdm_seq_stm q = {0};
    int rc;
    /* the engine's STM: unknown symbols keep their place and never match */
    const char **syms = tdm_malloc((p->ns + 1) * sizeof *syms);
    size_t *lens = tdm_malloc((p->ns + 1) * sizeof *lens);
    if (!syms || !lens) {
        tdm_free(syms), tdm_free(lens);
        return tdm_error(TDM_E_NOMEM, "predict: no memory");
    }
    for (uint32_t i = 0; i < p->ns; i++) kato_sym_bytes(p, p->S[i], &syms[i], &lens[i]);
    rc = tdm_seq_stm_encode(p->vocab, syms, lens, p->ns, &q);
    tdm_free(syms), tdm_free(lens);
    if (rc) return rc;
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = p->cfg->use_token_matching ? TDM_SEQ_LCS : TDM_SEQ_CHAR;
    o.threshold = p->cfg->recall_threshold;
    o.blocks = !kato_prune_matcher; /* the pruning keys come from the hits' block summaries */
    tdm_seq_result res = {0};
    double t0 = tdm_now_ms();
    rc = tdm_seq_engine_query(p->kb->engine, &q, &o, &res);
    tdm_seq_stm_clear(&q);
    st->search_ms = tdm_now_ms() - t0;
    if (rc) return rc;
    st->blocks_ms = res.stats.blocks_ms;
    t0 = tdm_now_ms();
    rc = extract_all(p, &res, st);
    tdm_seq_result_clear(&res);
    st->extract_ms = tdm_now_ms() - t0;
    if (rc) return rc;
    t0 = tdm_now_ms();
    rc = kato_ensemble(p);
    st->ensemble_ms = tdm_now_ms() - t0;
    return rc;
}

static void pred_free(kato_pred *p) {
    tdm_free(p->match_arena);
    tdm_free(p->c), tdm_free(p->S), tdm_free(p->stm_sizes), tdm_free(p->unk), tdm_free(p->unk_len);
    tdm_free(p->group_first), tdm_free(p->group_w), tdm_free(p->group_count);
    tdm_free(p->group_pid), tdm_free(p->group_pe);
}

int tdm_kato_predict(tdm_kato_kb *kb, const tdm_kato_event *stm, size_t nevents, const tdm_kato_config *cfg,
                     tdm_kato_result **out) {
    if (!kb || !out || (nevents && !stm)) return tdm_error(TDM_E_INVAL, "tdm_kato_predict: NULL argument");
    int rc = tdm_kato_config_check(cfg);
    if (rc) return rc;
    kato_pred p = {0};
    tdm_kato_predict_stats st = {0};
    pthread_rwlock_rdlock(&kb->lock);
    p.kb = kb, p.cfg = cfg;
    p.store = tdm_seq_engine_store(kb->engine);
    p.vocab = tdm_seq_store_vocab_const(p.store);
    p.vocab_n = tdm_seq_vocab_size(p.vocab);
    if (cfg->affinity_emotive && cfg->affinity_emotive[0]) {
        /* KATO weighs as soon as an affinity emotive is configured; one never recorded gives every symbol
         * the floor weight 0.01 */
        p.affinity = 1;
        p.aff_key = kato_emokey_find(kb, cfg->affinity_emotive);
    }
    rc = encode_stm(&p, stm, nevents);
    if (!rc && p.ns == 1) p.fast = st.fast_path = 1, rc = fast_path(&p), st.candidates = p.nc;
    else if (!rc && p.ns > 1) rc = full_path(&p, &st);
    st.pruned = p.pruned;
    if (!rc) rc = kato_result_build(&p, &st, out);
    pthread_rwlock_unlock(&kb->lock);
    pred_free(&p);
    return rc;
}

int tdm_kato_stm_predict(const tdm_kato_stm *s, tdm_kato_kb *kb, const tdm_kato_config *cfg, tdm_kato_result **out) {
    if (!s) return tdm_error(TDM_E_INVAL, "tdm_kato_stm_predict: STM is NULL");
    size_t n = tdm_kato_stm_nevents(s);
    tdm_kato_event *ev = tdm_malloc((n + 1) * sizeof *ev);
    if (!ev) return tdm_error(TDM_E_NOMEM, "predict: no memory");
    for (size_t i = 0; i < n; i++) tdm_kato_stm_event(s, i, &ev[i]);
    int rc = tdm_kato_predict(kb, ev, n, cfg, out);
    tdm_free(ev);
    return rc;
}
