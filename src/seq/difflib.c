/* difflib.c: Ratcliff/Obershelp matching blocks exactly as CPython 3.11's difflib.SequenceMatcher with
 * isjunk=None: the b2j index of seq2 (with the optional autojunk "popular element" purge),
 * find_longest_match with its tie-break (earliest i, then earliest j) and its extension loops, the
 * work list of get_matching_blocks, sorting and merging of adjacent blocks. Python dicts become arrays:
 * j2len rows are two arrays told apart by generation stamps, so no row is ever cleared. */
#include "seq/seq_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t alo, ahi, blo, bhi;
} range;

struct tdm_seq_matcher {
    uint32_t *b;
    size_t nb;
    /* b's distinct values: open-addressing table value -> slot+1 (0 = empty), tcap a power of two */
    uint32_t *keys, *vals;
    size_t tcap;
    uint32_t nslots;
    uint64_t filter[64]; /* 4096-bit filter of b's values: most absent values cost one load */
    /* per slot: start[s]..start[s+1] in pos are its positions in b, ascending (none if purged) */
    uint32_t *start, *cnt, *pos, *bslot; /* bslot: the slot of each b[j] */
    uint64_t *bmask; /* |b| <= 64: per slot, the bit set of its positions in b */
    uint64_t *arow;  /* |b| <= 64: the elements of a found in b, listed: the positions in b where each occurs */
    uint32_t *aslot; /* |b| > 64: slot of each a[i] in b, UINT32_MAX if absent; |b| <= 64: the listed rows' i */
    uint32_t *len[2], *stamp[2]; /* j2len rows, indexed by j+1 */
    uint32_t gen;
    tdm_seq_block *blocks;
    range *queue;
    size_t cap_b, cap_t, cap_slot, cap_bmask, cap_a, cap_arow, cap_row, cap_blocks, cap_queue;
};

int tdm_seq_matcher_new(tdm_seq_matcher **out) {
    if (!out) return tdm_error(TDM_E_INVAL, "tdm_seq_matcher_new: out is NULL");
    tdm_seq_matcher *m = tdm_calloc(1, sizeof *m);
    if (!m) return tdm_error(TDM_E_NOMEM, "tdm_seq_matcher_new: no memory");
    *out = m;
    return TDM_OK;
}

void tdm_seq_matcher_free(tdm_seq_matcher *m) {
    if (!m) return;
    void *arrays[] = {m->b, m->keys, m->vals, m->start, m->cnt, m->pos, m->bslot, m->bmask, m->arow, m->aslot,
                      m->len[0], m->len[1], m->stamp[0], m->stamp[1], m->blocks, m->queue};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) tdm_free(arrays[i]);
    tdm_free(m);
}

static inline uint32_t slot_of(const tdm_seq_matcher *m, uint32_t v) {
    uint32_t h = tdm_seq_valset_hash(v);
    if (!(m->filter[(h >> 6) & 63] & (1ull << (h & 63)))) return UINT32_MAX;
    size_t mask = m->tcap - 1;
    for (size_t p = h & mask;; p = (p + 1) & mask) {
        if (!m->vals[p]) return UINT32_MAX;
        if (m->keys[p] == v) return m->vals[p] - 1;
    }
}

static int nomem(void) { return tdm_error(TDM_E_NOMEM, "difflib matcher: no memory"); }

/* Grows n arrays of one element size to hold need elements; they share the capacity *cap. */
static int grow_all(void **arrays[], int n, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    while (ncap < need) ncap *= 2;
    for (int i = 0; i < n; i++) {
        void *p = tdm_realloc(*arrays[i], ncap * elem);
        if (!p) return -1;
        *arrays[i] = p;
    }
    *cap = ncap;
    return 1;
}

int tdm_seq_matcher_set_b(tdm_seq_matcher *m, const uint32_t *b, size_t nb, int autojunk) {
    if (!m || (nb && !b)) return tdm_error(TDM_E_INVAL, "tdm_seq_matcher_set_b: NULL argument");
    if (nb >= UINT32_MAX - 1) return tdm_error(TDM_E_OVERFLOW, "difflib: sequence of %zu elements", nb);
    size_t tcap = 16;
    while (tcap < 2 * nb) tcap *= 2;
    void **tb[] = {(void **)&m->keys, (void **)&m->vals};
    void **sl[] = {(void **)&m->start, (void **)&m->cnt, (void **)&m->pos, (void **)&m->bslot};
    void **rows[] = {(void **)&m->len[0], (void **)&m->len[1], (void **)&m->stamp[0], (void **)&m->stamp[1]};
    int grown;
    if (grow_all((void **[]){(void **)&m->b}, 1, &m->cap_b, nb, sizeof *m->b) < 0 ||
        grow_all(tb, 2, &m->cap_t, tcap, sizeof(uint32_t)) < 0 ||
        grow_all(sl, 4, &m->cap_slot, nb + 1, sizeof(uint32_t)) < 0 ||
        grow_all((void **[]){(void **)&m->bmask}, 1, &m->cap_bmask, nb + 1, sizeof *m->bmask) < 0 ||
        (grown = grow_all(rows, 4, &m->cap_row, nb + 1, sizeof(uint32_t))) < 0)
        return nomem();
    if (grown) { /* fresh rows hold garbage stamps: clear them and restart the generations */
        memset(m->stamp[0], 0, m->cap_row * sizeof(uint32_t));
        memset(m->stamp[1], 0, m->cap_row * sizeof(uint32_t));
        m->gen = 0;
    }
    if (nb) memcpy(m->b, b, nb * sizeof *b);
    m->nb = nb;
    m->tcap = tcap;
    memset(m->vals, 0, tcap * sizeof *m->vals);
    memset(m->filter, 0, sizeof m->filter);
    m->nslots = 0;
    for (size_t j = 0; j < nb; j++) {
        size_t mask = tcap - 1, p = tdm_seq_valset_hash(b[j]) & mask;
        while (m->vals[p] && m->keys[p] != b[j]) p = (p + 1) & mask;
        if (!m->vals[p]) {
            uint32_t h = tdm_seq_valset_hash(b[j]);
            m->keys[p] = b[j];
            m->vals[p] = ++m->nslots;
            m->cnt[m->nslots - 1] = 0;
            m->filter[(h >> 6) & 63] |= 1ull << (h & 63);
        }
        m->cnt[m->vals[p] - 1]++;
        m->bslot[j] = m->vals[p] - 1;
    }
    /* CPython purges "popular" elements (more than 1 + n//100 occurrences) when n >= 200. A purged value
     * keeps its slot with no positions, so lookups find nothing, as with the deleted b2j key. */
    if (nb <= 64) { /* the bit-parallel search needs only each slot's positions as a bit set */
        memset(m->bmask, 0, m->nslots * sizeof *m->bmask);
        for (size_t j = 0; j < nb; j++) m->bmask[m->bslot[j]] |= 1ull << j; /* autojunk needs >= 200 */
        return TDM_OK;
    }
    uint32_t ntest = autojunk && nb >= 200 ? (uint32_t)(nb / 100 + 1) : UINT32_MAX;
    uint32_t acc = 0;
    for (uint32_t s = 0; s < m->nslots; s++) {
        m->start[s] = acc;
        if (m->cnt[s] > ntest) m->cnt[s] = 0;
        acc += m->cnt[s];
        m->cnt[s] = m->start[s]; /* from here on: the fill cursor */
    }
    m->start[m->nslots] = acc;
    for (size_t j = 0; j < nb; j++) {
        uint32_t s = m->bslot[j];
        if (m->cnt[s] < m->start[s + 1]) m->pos[m->cnt[s]++] = (uint32_t)j;
    }
    return TDM_OK;
}

/* A range of the work list that also knows its rows: entries elo..ehi-1 of the sparse row list. */
typedef struct {
    uint32_t alo, ahi, blo, bhi, elo, ehi;
} erange;

/* The chain of rows elo..ehi-1 with their bits masked by in_range: its count (what tdm_seq_difflib_chain
 * explains), and in *run whether two adjacent rows hold a run of two (then the count is not difflib's).
 * Branch-free but for the loop: the adjacency test mispredicted often as a branch. */
static size_t chain_run(const uint32_t *pos, const uint64_t *rows, uint32_t elo, uint32_t ehi, uint64_t in_range, int *run) {
    uint64_t above = ~0ull, prev = 0, two = 0;
    uint32_t prev_pos = UINT32_MAX - 1;
    size_t count = 0;
    for (uint32_t e = elo; e < ehi; e++) {
        uint64_t r = rows[e] & in_range;
        two |= r & (prev << 1) & (0 - (uint64_t)(pos[e] == prev_pos + 1));
        count += tdm_seq_chain_take(r, &above);
        prev = r, prev_pos = pos[e];
    }
    *run = two != 0;
    return count;
}

/* get_matching_blocks for |b| <= 64 over the listed rows (see tdm_seq_difflib_count_rows), bit-parallel:
 * bit j of D_k(i) says that a run of equal elements of length >= k ends at (i, j) inside the rectangle:
 * D_1(i) = positions of a[i] in b[blo..bhi), and D_k(i) = D_1(i) & (D_{k-1}(i-1) << 1). CPython's
 * find_longest_match keeps the first (i, j), in row-then-column order, at which a run longer than the
 * best so far ends: the deepest non-empty level of the first row that beats the best, at its lowest bit.
 * Its extension loops only move over autojunk-purged elements, none below 200. Rows that are not listed
 * hold no position of b, so they only end runs, and a range with no listed row finds nothing. Blocks go
 * to out (when not NULL) in the order found; returns their total size, stopping once it reaches cap. */
static size_t rows_blocks(const uint32_t *restrict pos, const uint64_t *restrict rows, size_t ne, size_t na, size_t nb,
                          size_t cap, tdm_seq_block *out, size_t *nout) {
    /* Each block found uses at least one element of b (<= 64), and the work list holds at most one more
     * range than blocks found so far. */
    erange queue[72];
    uint64_t lv[2][65];
    size_t nq = 0, total = 0;
    if (ne) queue[nq++] = (erange){0, (uint32_t)na, 0, (uint32_t)nb, 0, (uint32_t)ne};
    while (nq) {
        erange r = queue[--nq];
        uint64_t in_range = (r.bhi == 64 ? ~0ull : (1ull << r.bhi) - 1) & ~((1ull << r.blo) - 1);
        if (!out && (r.elo || r.ehi != ne)) { /* a range with no run of two is a chain (see below) */
            int run;
            size_t c = chain_run(pos, rows, r.elo, r.ehi, in_range, &run);
            if (!run) {
                if ((total += c) >= cap) return total;
                continue;
            }
        }
        /* longest_bits over the listed rows only: a row that is not listed, or has no bit in range,
         * ends every run (level count 0). */
        uint32_t nprev = 0, best = 0, end_i = 0, end_j = 0, prev_pos = UINT32_MAX - 1, side = 0;
        for (uint32_t e = r.elo; e < r.ehi; e++) {
            uint64_t d1 = rows[e] & in_range;
            uint32_t i = pos[e];
            if (i != prev_pos + 1) nprev = 0;
            prev_pos = i;
            if (!d1) {
                nprev = 0;
                continue;
            }
            side ^= 1;
            uint64_t *cur = lv[side];
            const uint64_t *prev = lv[side ^ 1];
            uint32_t ncur = 1;
            cur[0] = d1;
            while (ncur <= nprev) {
                uint64_t x = d1 & (prev[ncur - 1] << 1);
                if (!x) break;
                cur[ncur++] = x;
            }
            if (ncur > best) {
                best = ncur;
                end_i = i;
                end_j = (uint32_t)__builtin_ctzll(cur[ncur - 1]);
            }
            nprev = ncur;
        }
        if (!best) continue;
        uint32_t bi = end_i - best + 1, bj = end_j - best + 1, el = r.elo, er;
        if (out) out[(*nout)++] = (tdm_seq_block){bi, bj, best};
        if ((total += best) >= cap) return total; /* the rest of the work list cannot add to it */
        while (el < r.ehi && pos[el] < bi) el++;
        er = el;
        while (er < r.ehi && pos[er] < bi + best) er++;
        if (r.alo < bi && r.blo < bj && el > r.elo) queue[nq++] = (erange){r.alo, bi, r.blo, bj, r.elo, el};
        if (bi + best < r.ahi && bj + best < r.bhi && er < r.ehi) queue[nq++] = (erange){bi + best, r.ahi, bj + best, r.bhi, er, r.ehi};
    }
    return total;
}

/* With no run of two (no listed row i + 1 holding a bit one above a bit of row i), every longest match of
 * every range has length 1, and the block search reduces to a chain: the first row with a bit in range
 * takes its lowest bit j, the range to its left (earlier rows, which have no bit in range) finds nothing,
 * and the range to its right is the later rows above column j. That chain is counted in one pass, which
 * also notes whether any run of two occurs (then its count is not difflib's). */
int tdm_seq_difflib_chain(const uint32_t *pos, const uint64_t *rows, size_t ne, size_t *count) {
    int run;
    size_t c = chain_run(pos, rows, 0, (uint32_t)ne, ~0ull, &run);
    if (run) return 0;
    *count = c;
    return 1;
}

size_t tdm_seq_difflib_count_search(const uint32_t *pos, const uint64_t *rows, size_t ne, size_t na, size_t nb, size_t cap) {
    return rows_blocks(pos, rows, ne, na, nb, cap, NULL, NULL);
}

size_t tdm_seq_difflib_count_rows(const uint32_t *pos, const uint64_t *rows, size_t ne, size_t na, size_t nb, size_t cap) {
    size_t count;
    return tdm_seq_difflib_chain(pos, rows, ne, &count) ? count : rows_blocks(pos, rows, ne, na, nb, cap, NULL, NULL);
}

/* difflib's find_longest_match(alo, ahi, blo, bhi) with no junk. Hot: the generation counter and the
 * arrays live in locals so the compiler keeps them in registers. */
static tdm_seq_block longest(tdm_seq_matcher *m, const uint32_t *a, uint32_t alo, uint32_t ahi, uint32_t blo,
                             uint32_t bhi) {
    uint32_t besti = alo, bestj = blo, bestsize = 0;
    const uint32_t *restrict b = m->b, *restrict aslot = m->aslot, *restrict start = m->start, *restrict pos = m->pos;
    uint32_t *restrict len0 = m->len[0], *restrict len1 = m->len[1], *restrict st0 = m->stamp[0], *restrict st1 = m->stamp[1];
    uint32_t gen = m->gen, prev_gen = 0; /* 0: no previous row (stamps are never 0 once written) */
    if (gen > UINT32_MAX - (ahi - alo) - 1) { /* this scan would wrap the counter: forget every stamp first */
        memset(st0, 0, m->cap_row * sizeof *st0);
        memset(st1, 0, m->cap_row * sizeof *st1);
        gen = 0;
    }
    for (uint32_t i = alo; i < ahi; i++) {
        ++gen;
        uint32_t s = aslot[i];
        if (s != UINT32_MAX) {
            /* Rows alternate between the two arrays: this row writes (clen, cst), reads the other. */
            uint32_t *clen = (i & 1) ? len1 : len0, *cst = (i & 1) ? st1 : st0;
            const uint32_t *plen = (i & 1) ? len0 : len1, *pst = (i & 1) ? st0 : st1;
            for (uint32_t q = start[s], qe = start[s + 1]; q < qe; q++) {
                uint32_t j = pos[q];
                if (j < blo) continue;
                if (j >= bhi) break;
                uint32_t k = (prev_gen && pst[j] == prev_gen ? plen[j] : 0) + 1; /* j2len[j-1] lives at index j */
                clen[j + 1] = k;
                cst[j + 1] = gen;
                if (k > bestsize) {
                    besti = i - k + 1;
                    bestj = j - k + 1;
                    bestsize = k;
                }
            }
        }
        prev_gen = gen;
    }
    m->gen = gen;
    /* Extension loops: with no junk only the first pair can move, over elements the autojunk purge
     * removed from b2j. */
    while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) besti--, bestj--, bestsize++;
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize]) bestsize++;
    return (tdm_seq_block){besti, bestj, bestsize};
}

/* Blocks never share an i (they cover disjoint parts of a), so sorting by i is difflib's tuple sort.
 * There are few of them: insertion sort. */
static void sort_blocks(tdm_seq_block *bl, size_t n) {
    for (size_t k = 1; k < n; k++) {
        tdm_seq_block x = bl[k];
        size_t t = k;
        for (; t > 0 && bl[t - 1].i > x.i; t--) bl[t] = bl[t - 1];
        bl[t] = x;
    }
}

int tdm_seq_matcher_blocks(tdm_seq_matcher *m, const uint32_t *a, size_t na, const tdm_seq_block **blocks,
                           size_t *nblocks, size_t *matches) {
    if (!m || (na && !a) || !blocks || !nblocks) return tdm_error(TDM_E_INVAL, "tdm_seq_matcher_blocks: NULL argument");
    if (na >= UINT32_MAX - 1) return tdm_error(TDM_E_OVERFLOW, "difflib: sequence of %zu elements", na);
    if (grow_all((void **[]){(void **)&m->aslot}, 1, &m->cap_a, na + 1, sizeof *m->aslot) < 0 ||
        grow_all((void **[]){(void **)&m->arow}, 1, &m->cap_arow, na + 1, sizeof *m->arow) < 0)
        return nomem();
    size_t nq = 0, nbk = 0, maxq = na < m->nb ? na + 1 : m->nb + 1;
    if (grow_all((void **[]){(void **)&m->queue}, 1, &m->cap_queue, maxq + 1, sizeof *m->queue) < 0 ||
        grow_all((void **[]){(void **)&m->blocks}, 1, &m->cap_blocks, maxq + 1, sizeof *m->blocks) < 0)
        return nomem();
    if (m->nb <= 64) { /* the rows of a that occur in b, listed (aslot holds their positions) */
        size_t ne = 0;
        for (size_t i = 0; i < na && m->nslots; i++) {
            uint32_t sl = slot_of(m, a[i]);
            if (sl != UINT32_MAX) m->aslot[ne] = (uint32_t)i, m->arow[ne++] = m->bmask[sl];
        }
        rows_blocks(m->aslot, m->arow, ne, na, m->nb, SIZE_MAX, m->blocks, &nbk);
    } else {
        for (size_t i = 0; i < na; i++) m->aslot[i] = m->nslots ? slot_of(m, a[i]) : UINT32_MAX;
        m->queue[nq++] = (range){0, (uint32_t)na, 0, (uint32_t)m->nb};
        while (nq) {
            range r = m->queue[--nq];
            tdm_seq_block x = longest(m, a, r.alo, r.ahi, r.blo, r.bhi);
            if (!x.n) continue;
            m->blocks[nbk++] = x;
            if (r.alo < x.i && r.blo < x.j) m->queue[nq++] = (range){r.alo, x.i, r.blo, x.j};
            if (x.i + x.n < r.ahi && x.j + x.n < r.bhi) m->queue[nq++] = (range){x.i + x.n, r.ahi, x.j + x.n, r.bhi};
        }
    }
    sort_blocks(m->blocks, nbk);
    /* Merge adjacent blocks, as get_matching_blocks does before appending the sentinel. */
    size_t out = 0, total = 0;
    for (size_t k = 0; k < nbk; k++) {
        tdm_seq_block x = m->blocks[k];
        if (out && m->blocks[out - 1].i + m->blocks[out - 1].n == x.i && m->blocks[out - 1].j + m->blocks[out - 1].n == x.j)
            m->blocks[out - 1].n += x.n;
        else
            m->blocks[out++] = x;
        total += x.n;
    }
    *blocks = m->blocks;
    *nblocks = out;
    if (matches) *matches = total;
    return TDM_OK;
}

void tdm_seq_blocks_summary(const tdm_seq_block *bl, size_t nb, size_t total, const uint32_t *a, tdm_seq_hit_blocks *out) {
    *out = (tdm_seq_hit_blocks){0};
    if (!nb) return;
    uint32_t i0 = bl[0].i, rep = 0;
    for (uint32_t t = i0; t-- > 0;)
        if (a[t] == a[i0]) {
            rep = i0 - t;
            break;
        }
    *out = (tdm_seq_hit_blocks){(uint32_t)total, (uint32_t)nb, i0, bl[0].j, bl[nb - 1].i + bl[nb - 1].n, rep};
}

int tdm_seq_matcher_summary(tdm_seq_matcher *m, const uint32_t *a, size_t na, tdm_seq_hit_blocks *out) {
    if (!out) return tdm_error(TDM_E_INVAL, "tdm_seq_matcher_summary: out is NULL");
    const tdm_seq_block *bl;
    size_t nb, total;
    int rc = tdm_seq_matcher_blocks(m, a, na, &bl, &nb, &total);
    if (rc) return rc;
    tdm_seq_blocks_summary(bl, nb, total, a, out);
    return TDM_OK;
}

void tdm_seq_rows_summary(const uint32_t *pos, const uint64_t *rows, size_t ne, const uint32_t *a, size_t na, size_t nb,
                          tdm_seq_hit_blocks *out) {
    tdm_seq_block bl[64]; /* each block takes at least one of b's <= 64 elements */
    size_t n = 0, total = rows_blocks(pos, rows, ne, na, nb, SIZE_MAX, bl, &n);
    /* With no junk no block is adjacent to another (each is extended as far as its range allows), so the
     * sorted list is get_matching_blocks', its merge step included. */
    sort_blocks(bl, n);
    tdm_seq_blocks_summary(bl, n, total, a, out);
}
