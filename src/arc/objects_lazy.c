/* objects_lazy.c: objects() with lazy layouts (spec §4.11). The reference builds objects by a flood fill of
 * set operations (spec §4.8) and later primitives read the resulting iteration orders, but most uses only
 * need the values (len, size, membership, equality, hashing). So objects() here labels the grid's connected
 * components and returns a lazy frozenset: n objects, no table. The labelling (objects_label.c) works on bit masks (a row of
 * at most 30 cells is one word): horizontal runs of a class of cells (one colour when univalued, every
 * foreground cell otherwise), of all classes of a row at once, are found by comparing the row's colours
 * with themselves shifted by one column; the runs of adjacent rows that touch, by comparing the row with
 * the row above (shifted by one column, for diagonals); a union-find over runs joins them; the count of
 * objects needs nothing more. The pieces of the result are made only when asked:
 *   - the objects themselves (lazy too: size, box, colour) when the outer set's members, hash, membership
 *     or layout is first asked for, and their hashes on the first hash question;
 *   - the outer layout: the reference adds each object to a set in discovery order (the order of each
 *     component's first cell in asindices order) and freezes it; only the objects' hashes matter, so this
 *     is a replay of k adds and one copy;
 *   - an object's layout: the flood fill of that one object, replayed with the same set operations as
 *     arc_objects_eager, except that `occupied` (the cells of earlier objects and of this one so far) is
 *     described by the labels instead of built: minus(nb, occupied) depends only on which keys it holds and
 *     how many (arc_set_minus_where); an object of up to 4 cells whose hash slots differ is laid out
 *     directly (it never leaves its first 8-slot table, so insertion order cannot matter).
 * The outer set also lists its objects without a layout (members), for order-free readers (merge, the
 * deferred filters and maps of image.c).
 * Each object also knows its bounding box, the positions it holds and whether its cells share one colour,
 * so measures, delta and colour readers need no layout (the arc_lazy hooks). The tests hold every layout made here to arc_objects_eager's, bit for bit (tests/unit/test_arc_lazy.c). */
#include "objects_lazy.h"

#include <pthread.h>
#include <string.h>

static int nomem(tdm_arc_rt *rt) {
    if (!rt->failed) {
        rt->failed = 1, rt->status = TDM_E_NOMEM;
        snprintf(rt->err, sizeof rt->err, "out of memory (objects layout)");
    }
    return -1;
}

/* Each interned cell's contribution to a frozenset's hash (arc_fset_hash_add of its hash), for colours 0..9
 * at positions of a 30x30 grid: made once per process, read by prepare() for every object's hash. */
static uint64_t cell_mix[ARC_COLOURS][MAXC];
/* And per colour and row, their prefix xors: cell_pxor[c][i][j] = the xor of cell_mix of colour c at
 * (i, 0) .. (i, j - 1), so that a run of one colour has its contribution in two reads. */
static uint64_t cell_pxor[ARC_COLOURS][ARC_SLOT][ARC_SLOT + 1];
static pthread_once_t cell_mix_once = PTHREAD_ONCE_INIT;
static int cell_mix_ok;

static void cell_mix_init(void) {
    tdm_arc_rt *rt;
    if (tdm_arc_rt_new(&rt)) return;
    for (int c = 0; c < ARC_COLOURS; c++)
        for (int p = 0; p < MAXC; p++) {
            tdm_arc_val *v = arc_cell(rt, c, p / ARC_SLOT, p % ARC_SLOT); /* interned: nothing is allocated */
            cell_mix[c][p] = arc_fset_hash_add(0, arc_hash(v));
            cell_pxor[c][p / ARC_SLOT][p % ARC_SLOT + 1] = cell_pxor[c][p / ARC_SLOT][p % ARC_SLOT] ^ cell_mix[c][p];
        }
    tdm_arc_rt_free(rt);
    cell_mix_ok = 1;
}

void arc_cell_mix_make(void) { pthread_once(&cell_mix_once, cell_mix_init); }

/* out[j] for j in 0..31: the run holding column j of a row whose runs start at s and whose cells in
 * objects are fg, numbered from base; none where fg has no bit j. */
static void row_run_ids(uint32_t s, uint32_t fg, int base, int none, int16_t *out) {
#if defined(__SSE2__)
    __m128i cl, ch, fl, fh, z = _mm_setzero_si128(), b = _mm_set1_epi16((short)(base - 1)), nn = _mm_set1_epi16((short)none);
    prefix_counts_v(s, &cl, &ch);
    bits_to_bytes(fg, &fl, &fh);
    __m128i v[4] = {_mm_unpacklo_epi8(cl, z), _mm_unpackhi_epi8(cl, z), _mm_unpacklo_epi8(ch, z), _mm_unpackhi_epi8(ch, z)};
    __m128i m[4] = {_mm_unpacklo_epi8(fl, fl), _mm_unpackhi_epi8(fl, fl), _mm_unpacklo_epi8(fh, fh), _mm_unpackhi_epi8(fh, fh)};
    for (int t = 0; t < 4; t++)
        _mm_storeu_si128((__m128i *)(out + 8 * t),
                         _mm_or_si128(_mm_and_si128(m[t], _mm_add_epi16(v[t], b)), _mm_andnot_si128(m[t], nn)));
#else
    uint8_t cnt[32];
    prefix_counts(s, cnt);
    for (int j = 0; j < 32; j++) out[j] = (int16_t)(fg >> j & 1 ? base + cnt[j] - 1 : none);
#endif
}

/* b = the bytewise max of b and v (4 bytes each): while prepare() measures, an object's box is kept as
 * ~min i, ~min j, max i, max j, so that one max widens it by a run. */
static inline void box_widen(uint8_t *b, uint32_t v) {
#if defined(__SSE2__)
    uint32_t o;
    memcpy(&o, b, sizeof o);
    o = (uint32_t)_mm_cvtsi128_si32(_mm_max_epu8(_mm_cvtsi32_si128((int)o), _mm_cvtsi32_si128((int)v)));
    memcpy(b, &o, sizeof o);
#else
    for (int t = 0; t < 4; t++, v >>= 8) b[t] = b[t] > (uint8_t)v ? b[t] : (uint8_t)v;
#endif
}

/* prepare()'s pass over the runs: each run's object, row and columns, and per object its size, box and
 * colour. A run's parent is a smaller run, or itself at a root (labelling links the larger root under the
 * smaller one), so in run order the parent's object is known: no find, and no branch (a root's entry is
 * written first, then read back). uni (a constant): the runs are of one colour (univalued), so an object's
 * colour is any run's. */
static inline __attribute__((always_inline)) void runs_measured(objs_ctx *x, uint32_t *size, const int uni) {
    int16_t *runobj = x->runobj;
    const int16_t *par = x->rpar;
    int next = 0;
    for (int i = 0; i < x->h; i++) {
        const uint8_t *cr = x->col + i * x->w;
        uint32_t st = x->start[i], en = x->end[i], ch = uni ? 0 : x->chg[i];
        for (int run = x->rbase[i]; st; st &= st - 1, run++) {
            int p = par[run];
            runobj[run] = (int16_t)next, runobj[run] = runobj[p];
            next += p == run;
            int j0 = __builtin_ctz(st), j1 = j0 + __builtin_ctz(en >> j0), r = runobj[run];
            uint32_t at = (uint32_t)i | (uint32_t)j0 << 8 | (uint32_t)j1 << 16;
            memcpy(x->run[run], &at, sizeof at); /* row, first and last columns: one store */
            size[r] += (uint32_t)(j1 - j0 + 1);
            box_widen(x->box[r], ((at & 0xffffu) ^ 0xffffu) | (uint32_t)i << 16 | (at & 0xff0000u) << 8); /* ~i, ~j0, i, j1 */
            if (uni) {
                x->ucol[r] = (int8_t)cr[j0];
                continue;
            }
            /* the run's one colour, or -1 when its colour changes inside it */
            int rc = ch & ((2u << j1) - (2u << j0)) ? -1 : cr[j0], u = x->ucol[r];
            x->ucol[r] = (int8_t)((u == -2) | (u == rc) ? rc : -1);
        }
    }
    runobj[x->nruns] = -1; /* background */
}

/* The objects' values: per object its cell count, box, colour and hash, and the lazy object values, in the
 * order of their first runs (row-major); their discovery order waits for a layout (prepare_order). Each
 * step is a straight pass over cells, runs or objects: the branches a per-run loop over its cells takes
 * (where it ends) are random to a predictor, and cost more than the work. */
static int prepare(objs_ctx *x) {
    if (x->prepared) return 0;
    tdm_arc_rt *rt = x->z.rt;
    int h = x->h, w = x->w, n = h * w, nr = (int)x->nruns, k = (int)x->ncomp;
    arc_cell_mix_make();
    x->rid = arc_alloc(rt, (size_t)(n + 32) * sizeof *x->rid); /* rows are written 32 entries at a time */
    x->runobj = arc_alloc(rt, (size_t)(nr + 1) * sizeof *x->runobj);
    x->run = arc_alloc(rt, (size_t)(nr + 1) * sizeof *x->run);
    x->comp = arc_alloc(rt, (size_t)n * sizeof *x->comp);
    x->objs = arc_alloc(rt, (size_t)k * sizeof *x->objs);
    x->ucol = arc_alloc(rt, (size_t)k);
    x->box = arc_alloc(rt, (size_t)k * sizeof *x->box);
    uint32_t *size = arc_alloc(rt, (size_t)k * sizeof *size);
    if (!cell_mix_ok || !x->rid || !x->runobj || !x->run || !x->comp || !x->objs || !x->ucol || !x->box || !size)
        return nomem(rt);
    /* per object: size, box, colour, run by run (its hash waits for the first hash question) */
    memset(size, 0, (size_t)k * sizeof *size);
    memset(x->ucol, -2, (size_t)k); /* -2: no cell yet */
    memset(x->box, 0, (size_t)k * sizeof *x->box); /* no cell yet: ~min i and ~min j 0, as if 255 */
    if (x->univalued) runs_measured(x, size, 1);
    else runs_measured(x, size, 0);
    for (int r = 0; r < k; r++) { /* min i and min j back from their complements */
        uint32_t b;
        memcpy(&b, x->box[r], sizeof b), b ^= 0xffffu, memcpy(x->box[r], &b, sizeof b);
    }
    for (int r = 0; r < k; r++) /* not hashed: lazy_hash makes the hashes when first asked */
        arc_lazy_set_init(&x->objs[r], &x->z, (uint32_t)r, size[r]);
    x->prepared = 1;
    return 0;
}

/* The objects' hashes, run by run: a run's part is the xor of two prefix xors of cell hashes at its ends,
 * its colour's (cell_pxor) when univalued, else its row's. Apart from prepare(): filters, unions, measures
 * and fills never ask for them, and the table reads are most of their cost. */
static int object_hashes(objs_ctx *x) {
    if (x->hashes_ready) return 0;
    int h = x->h, w = x->w, k = (int)x->ncomp;
    uint64_t *acc = arc_alloc(x->z.rt, (size_t)k * sizeof *acc);
    if (!acc) return nomem(x->z.rt);
    memset(acc, 0, (size_t)k * sizeof *acc);
    if (x->univalued) /* runs of one colour: its prefix xors, run by run */
        for (uint32_t run = 0; run < x->nruns; run++) {
            const uint8_t *u = x->run[run];
            const uint64_t *p = cell_pxor[x->col[u[0] * w + u[1]]][u[0]];
            acc[x->runobj[run]] ^= p[u[2] + 1] ^ p[u[1]];
        }
    else /* runs of several colours: each row's own prefix xors */
        for (int i = 0; i < h; i++) {
            const uint8_t *cr = x->col + i * w;
            const uint64_t(*mix)[MAXC] = (const uint64_t(*)[MAXC])((const uint64_t *)cell_mix + i * ARC_SLOT);
            uint64_t px[ARC_SLOT + 1], a = 0;
            px[0] = 0;
            for (int j = 0; j < w; j++) px[j + 1] = a ^= mix[cr[j]][j];
            uint32_t st = x->start[i], en = x->end[i];
            for (int run = x->rbase[i]; st; st &= st - 1, run++) {
                int j0 = __builtin_ctz(st), j1 = j0 + __builtin_ctz(en >> j0);
                acc[x->runobj[run]] ^= px[j1 + 1] ^ px[j0];
            }
        }
    for (int r = 0; r < k; r++) x->objs[r].hash = arc_fset_hash_end(acc[r], x->objs[r].n), x->objs[r].hashed = 1;
    x->hashes_ready = 1;
    return 0;
}

/* Fills rid (each cell's run) on first need, after prepare(): only the cells' objects and the discovery
 * order read it. */
static void run_ids(objs_ctx *x) {
    if (x->rids_ready) return;
    for (int i = 0; i < x->h; i++) row_run_ids(x->start[i], x->fg[i], x->rbase[i], (int)x->nruns, x->rid + i * x->w);
    x->rids_ready = 1;
}

/* The discovery order (spec §4.8: the order of the objects' first cells in asindices order), which only
 * layouts read: per object its rank, first cell and the cells of the objects found before it. */
static int prepare_order(objs_ctx *x) {
    if (prepare(x)) return -1;
    if (x->ordered) return 0;
    tdm_arc_rt *rt = x->z.rt;
    int n = x->h * x->w, nr = (int)x->nruns, k = (int)x->ncomp;
    const uint16_t *order = arc_asindices_order(x->h, x->w);
    x->disc = arc_alloc(rt, (size_t)k * sizeof *x->disc);
    x->bydisc = arc_alloc(rt, (size_t)k * sizeof *x->bydisc);
    x->seed = arc_alloc(rt, (size_t)k * sizeof *x->seed);
    x->base = arc_alloc(rt, (size_t)k * sizeof *x->base);
    int16_t *root_at = arc_alloc(rt, (size_t)(n + 1) * sizeof *root_at);
    uint16_t *firstq = arc_alloc(rt, (size_t)(nr + 1) * sizeof *firstq);
    int16_t *rroot = arc_alloc(rt, (size_t)(nr + 1) * sizeof *rroot);
    if (!order || !x->disc || !x->bydisc || !x->seed || !x->base || !root_at || !firstq || !rroot) return nomem(rt);
    run_ids(x);
    const int16_t *rid = x->rid, *par = x->rpar;
    /* each run's root (its parent's, in run order as runs_measured finds objects); background its own */
    for (int r = 0; r < nr; r++) rroot[r] = (int16_t)r, rroot[r] = rroot[par[r]];
    rroot[nr] = (int16_t)nr;
    /* each root's first place in asindices order, walking it until every root is met (the background's
       entry starts met); most objects are met long before the order ends */
    memset(firstq, 0xff, (size_t)nr * sizeof *firstq);
    firstq[nr] = 0;
    for (int q = 0, left = k; left; q++) {
        uint16_t *f = &firstq[rroot[rid[order[q]]]], v = *f;
        int met = v == 0xffff;
        *f = met ? (uint16_t)q : v, left -= met;
    }
    /* the roots' first places marked (a byte each: setting bits would chain through memory), gathered into
       bit masks and read in order */
    uint8_t mark[MAXC + 64];
    uint32_t first[(MAXC + 64) / 32];
    memset(mark, 0, (size_t)n + 32); /* the last mask reads up to 31 bytes past n */
    for (int r = 0; r < nr; r++) {
        /* firstq[r] is only meaningful for roots; masks, not a branch (which runs are roots is random) */
        int root = -(rroot[r] == r), q = (firstq[r] & root) | (n & ~root);
        mark[q] = (uint8_t)root, root_at[q] = (int16_t)r;
    }
    int nw = (n + 31) / 32;
    for (int t = 0; t < nw; t++) {
#if defined(__SSE2__)
        first[t] = (uint32_t)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(mark + 32 * t))) |
                   (uint32_t)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(mark + 32 * t + 16))) << 16;
#else
        first[t] = 0;
        for (int b = 0; b < 32 && 32 * t + b < n; b++) first[t] |= (uint32_t)(mark[32 * t + b] & 1) << b;
#endif
    }
    int next = 0;
    uint32_t before = 0;
    for (int t = 0; t < nw; t++)
        for (uint32_t b = first[t]; b; b &= b - 1) {
            int q = t * 32 + __builtin_ctz(b), o = x->runobj[root_at[q]];
            x->disc[o] = (int16_t)next, x->bydisc[next++] = (int16_t)o;
            x->seed[o] = order[q], x->base[o] = before;
            before += x->objs[o].n;
        }
    x->ordered = 1;
    return 0;
}

/* Fills comp (each cell's object) on first need: only membership, positions and replays read it. */
static void cell_objects(objs_ctx *x) {
    if (x->comp_ready) return;
    run_ids(x);
    for (int c = 0, n = x->h * x->w; c < n; c++) x->comp[c] = x->runobj[x->rid[c]];
    x->comp_ready = 1;
}

static int64_t lazy_hash(arc_lazy *z, tdm_arc_val *s) {
    objs_ctx *x = (objs_ctx *)z;
    if (prepare(x) || object_hashes(x)) return 0; /* no memory: the run fails */
    if (s->u.set.part != OUTER) return x->objs[s->u.set.part].hash;
    uint64_t acc = 0;
    for (uint32_t r = 0; r < x->ncomp; r++) acc = arc_fset_hash_add(acc, x->objs[r].hash);
    return arc_fset_hash_end(acc, x->ncomp);
}

static int lazy_contains(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part == OUTER) {
        if (!arc_is_set(key)) return 0; /* a frozenset of frozensets holds nothing else */
        if (prepare(x)) return -1;
        cell_objects(x);
        if (key >= x->objs && key < x->objs + x->ncomp) return 1;
        if (key->n == 0) return 0;
        if (key->u.set.lazy) return -1; /* another maker's set: no element to go by without a layout */
        /* key can only equal the object that holds its first element's cell */
        tdm_arc_val *e = arc_first(key), *p;
        if (!arc_is_tuple(e) || e->n != 2 || !arc_is_int(e->u.items[0])) return 0;
        p = e->u.items[1];
        if (!arc_is_tuple(p) || p->n != 2 || !arc_is_int(p->u.items[0]) || !arc_is_int(p->u.items[1])) return 0;
        int64_t i = p->u.items[0]->u.i, j = p->u.items[1]->u.i;
        if (i < 0 || j < 0 || i >= x->h || j >= x->w) return 0;
        int c = (int)(i * x->w + j);
        if (x->comp[c] < 0 || x->col[c] != e->u.items[0]->u.i) return 0;
        return arc_eq(key, &x->objs[x->comp[c]]);
    }
    /* an object holds (v, (i, j)) for its cells: anything else is not in it */
    cell_objects(x);
    if (!arc_is_tuple(key) || key->n != 2 || !arc_is_int(key->u.items[0])) return 0;
    tdm_arc_val *p = key->u.items[1];
    if (!arc_is_tuple(p) || p->n != 2 || !arc_is_int(p->u.items[0]) || !arc_is_int(p->u.items[1])) return 0;
    int64_t i = p->u.items[0]->u.i, j = p->u.items[1]->u.i;
    if (i < 0 || j < 0 || i >= x->h || j >= x->w) return 0;
    int c = (int)(i * x->w + j);
    return x->comp[c] == (int16_t)s->u.set.part && x->col[c] == key->u.items[0]->u.i;
}

static int lazy_uniform(arc_lazy *z, tdm_arc_val *s, int64_t *c) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part == OUTER || x->ucol[s->u.set.part] < 0) return 0;
    *c = x->ucol[s->u.set.part];
    return 1;
}

static int lazy_bbox(arc_lazy *z, tdm_arc_val *s, int64_t box[4]) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part == OUTER) return 0;
    for (int t = 0; t < 4; t++) box[t] = x->box[s->u.set.part][t];
    return 1;
}

static const arc_lazy_ops objs_ops; /* objects()' hooks, defined after them */

int arc_objs_span(const tdm_arc_val *s, int cols, int64_t *lo, int64_t *hi) {
    if (!arc_is_set(s) || !s->u.set.lazy || s->u.set.lazy->op != &objs_ops || s->u.set.part == OUTER) return 0;
    const uint8_t *b = ((objs_ctx *)s->u.set.lazy)->box[s->u.set.part];
    *lo = b[cols], *hi = b[2 + cols];
    return 1;
}

static int lazy_holds_pos(arc_lazy *z, tdm_arc_val *s, int64_t i, int64_t j) {
    objs_ctx *x = (objs_ctx *)z;
    cell_objects(x);
    return i >= 0 && j >= 0 && i < x->h && j < x->w && x->comp[i * x->w + j] == (int16_t)s->u.set.part;
}

/* Every object's cells as row masks over its box (orow, from orow_at[object]), in one pass over the runs:
 * made on the first bits question, which objects are often asked many times (manhattan in a loop). */
static int object_rows(objs_ctx *x) {
    tdm_arc_rt *rt = x->z.rt;
    uint32_t total = 0, k = x->ncomp;
    if (!(x->orow_at = arc_alloc(rt, (size_t)k * sizeof *x->orow_at))) return nomem(rt);
    for (uint32_t r = 0; r < k; r++) x->orow_at[r] = total, total += (uint32_t)(x->box[r][2] - x->box[r][0] + 1);
    if (!(x->orow = arc_alloc(rt, (size_t)total * sizeof *x->orow))) return nomem(rt);
    memset(x->orow, 0, (size_t)total * sizeof *x->orow);
    for (uint32_t run = 0; run < x->nruns; run++) {
        const uint8_t *u = x->run[run];
        int r = x->runobj[run];
        x->orow[x->orow_at[r] + (uint32_t)(u[0] - x->box[r][0])] |= (2u << u[2]) - (1u << u[1]); /* j0..j1 (j1 <= 29) */
    }
    return 0;
}

/* An object's cells as masks (arc_bits): its rows from object_rows, a row mask at a time (no per-cell
 * pass: the cells' objects are not made for it). */
static int lazy_bits(arc_lazy *z, tdm_arc_val *s, arc_bits *dst) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part == OUTER || dst->kind == ARC_BITS_POS) return 0;
    if (!x->orow && object_rows(x)) return -1;
    dst->kind = ARC_BITS_CELLS;
    int16_t part = (int16_t)s->u.set.part;
    const uint8_t *b = x->box[part];
    const uint32_t *rows = x->orow + x->orow_at[part] - b[0];
    uint32_t *m = x->ucol[part] >= 0 ? arc_bits_block(dst, x->ucol[part]) : NULL; /* one colour: one block */
    for (int i = b[0]; i <= b[2]; i++) {
        uint32_t row = rows[i];
        if (m) {
            m[i + ARC_BITS_OFF] |= row << ARC_BITS_OFF;
            continue;
        }
        const uint8_t *cr = x->col + i * x->w; /* a 32-byte read stays in x (fields follow col) */
        while (row) { /* several colours: the row's cells of each, by one compare of the row */
            int c = cr[__builtin_ctz(row)];
            uint32_t mine = row & arc_colour_mask32(cr, c);
            arc_bits_block(dst, c)[i + ARC_BITS_OFF] |= mine << ARC_BITS_OFF, row &= ~mine;
        }
    }
    return 1;
}

static int lazy_rows(arc_lazy *z, tdm_arc_val *s, uint32_t rows[32], uint32_t *used) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part == OUTER) return 0;
    if (!x->orow && object_rows(x)) return -1;
    int16_t part = (int16_t)s->u.set.part;
    const uint8_t *b = x->box[part];
    const uint32_t *src = x->orow + x->orow_at[part] - b[0];
    uint32_t u = 0; /* rows outside the box are not written (arc_bits_rows) */
    for (int i = b[0]; i <= b[2]; i++) rows[i + ARC_BITS_OFF] = src[i] << ARC_BITS_OFF, u |= (uint32_t)(src[i] != 0) << (i + ARC_BITS_OFF);
    *used = u;
    return 1;
}

/* Is position key in `occupied` while object x->cur is replayed: in an object found earlier, or added
 * already. */
static int occupied(void *ctx, tdm_arc_val *key) {
    objs_ctx *x = ctx;
    int c = (int)(key->u.items[0]->u.i * x->w + key->u.items[1]->u.i), r = x->comp[c];
    return r >= 0 && (x->disc[r] < x->disc[x->cur] || (r == x->cur && x->added[c]));
}

/* The flood fill of arc_objects_eager for one object (spec §4.8 step 2), with occupied described. */
static tdm_arc_val *replay_object(objs_ctx *x, int part) {
    tdm_arc_rt *rt = x->z.rt;
    int w = x->w, seed = x->seed[part], val = x->col[seed];
    cell_objects(x);
    if (!x->added) {
        if (!(x->added = arc_alloc(rt, (size_t)(x->h * w)))) return NULL;
        memset(x->added, 0, (size_t)(x->h * w));
    }
    x->cur = part; /* each object is replayed at most once: its cells' added marks are still 0 */
    uint32_t occ = x->base[part];
    tdm_arc_val *obj = arc_set_new(rt), *cands = arc_set_new(rt);
    if (!obj || !cands) return NULL;
    if (arc_set_add(rt, obj, arc_cell(rt, val, seed / w, seed % w)) || arc_set_add(rt, cands, arc_ipair(rt, seed / w, seed % w)))
        return NULL;
    while (cands->n) {
        tdm_arc_val *nb = arc_set_new(rt);
        if (!nb) return NULL;
        for (uint32_t cs = 0; cs <= cands->u.set.mask; cs++) {
            tdm_arc_val *cand = cands->u.set.tab[cs].key;
            if (!cand || cand == ARC_DUMMY) continue;
            int64_t ci = cand->u.items[0]->u.i, cj = cand->u.items[1]->u.i;
            int c = (int)(ci * w + cj), v = x->col[c];
            if (x->univalued ? v != val : (x->has_bg && v == x->bg)) continue;
            if (arc_set_add(rt, obj, arc_cell(rt, v, ci, cj))) return NULL;
            if (!x->added[c]) x->added[c] = 1, occ++;
            arc_slot islots[8];
            tdm_arc_val inside;
            memset(&inside, 0, sizeof inside), memset(islots, 0, sizeof islots);
            inside.kind = TDM_ARC_FSET, inside.u.set.tab = islots, inside.u.set.mask = 7;
            const int8_t(*o)[2] = arc_neigh_order(x->diagonal, (int)ci, (int)cj);
            for (int q = 0; q < (x->diagonal ? 8 : 4); q++) {
                int64_t pi = ci + o[q][0], pj = cj + o[q][1];
                if (0 <= pi && pi < x->h && 0 <= pj && pj < w && arc_set_add(rt, &inside, arc_ipair(rt, pi, pj)))
                    return NULL;
            }
            if (arc_set_merge(rt, nb, &inside)) return NULL;
        }
        if (!(cands = arc_set_minus_where(rt, nb, occ, occupied, x))) return NULL;
    }
    return arc_set_copy(rt, obj);
}

/* The layout of a set of one colour's objects (arc_objects_of_colour), which stands for colorfilter(objects(
 * ...), c): the reference's order comes from every object, so it is read from the full objects() of the same
 * arguments, made now. The outer set is its objects of colour c added in its order (colorfilter's frozenset
 * of a generator), with this set's own objects (its twins': the same cells) as the elements; an object takes
 * its twin's table (the same flood fill made it). 0, or -1 with rt's error set. */
static int only_layout(objs_ctx *x, tdm_arc_val *s) {
    tdm_arc_rt *rt = x->z.rt;
    if (!x->full) {
        int fallback = 0;
        tdm_arc_val *f = arc_objects_lazy(rt, x->fa, &fallback); /* lazy: it holds at least this set's objects */
        if (!f || !arc_set_is_lazy(f)) return f ? arc_failf(rt, "objects: the grid read differently a second time") : -1;
        x->full = f, x->fullx = (objs_ctx *)f->u.set.lazy;
    }
    objs_ctx *f = x->fullx;
    cell_objects(x);
    if (s->u.set.part == OUTER) {
        arc_list l;
        tdm_arc_val *out = arc_set_new(rt);
        if (!out || arc_elems(rt, x->full, &l, "colorfilter")) return -1;
        for (uint32_t k = 0; k < l.n; k++) {
            int o = (int)(l.v[k] - f->objs); /* the full layout lists its own objects; seed made for it */
            if (f->ucol[o] == x->only && arc_set_add(rt, out, &x->objs[x->comp[f->seed[o]]])) return -1;
        }
        arc_set_take(s, out);
        return 0;
    }
    if (prepare(f)) return -1;
    cell_objects(f);
    int part = (int)s->u.set.part, i = x->box[part][0], j = x->box[part][1];
    while (x->comp[i * x->w + j] != part) j++; /* its first cell on its top row */
    tdm_arc_val *twin = &f->objs[f->comp[i * x->w + j]];
    if (arc_set_is_lazy(twin) && arc_set_force(twin)) return -1;
    arc_set_take(s, twin);
    return 0;
}

static int lazy_layout(arc_lazy *z, tdm_arc_val *s) {
    objs_ctx *x = (objs_ctx *)z;
    if (prepare(x)) return -1;
    tdm_arc_val *r;
    if (s->u.set.part != OUTER && s->n <= 4) {
        /* obj only grows by insertion, and up to 4 cells stay in its first 8-slot table, which its freeze
           copies verbatim: when the cells' home slots (hash & 7) differ, each lands in its own whatever
           the order, so the flood fill need not be replayed */
        tdm_arc_val *cv[4];
        unsigned used = 0, k = 0;
        const uint8_t *b = x->box[s->u.set.part];
        cell_objects(x);
        /* its cells, row-major, from its box (at most 4 x 4) */
        for (int i = b[0]; i <= b[2]; i++)
            for (int j = b[1]; j <= b[3]; j++)
                if (x->comp[i * x->w + j] == (int16_t)s->u.set.part) {
                    cv[k] = arc_cell(z->rt, x->col[i * x->w + j], i, j);
                    used |= 1u << (cv[k++]->hash & 7);
                }
        if ((uint32_t)arc_popc(used) == s->n) {
            tdm_arc_val *obj = arc_set_from(z->rt, cv, s->n);
            if (!obj) return -1;
            arc_set_take(s, obj);
            return 0;
        }
    }
    if (x->only >= 0) return only_layout(x, s);
    if (prepare_order(x)) return -1; /* the rest replays the reference's order */
    if (s->u.set.part == OUTER) {
        /* objs.add(frozenset(obj)) in discovery order, then frozenset(objs) */
        tdm_arc_val *objs = arc_set_new(z->rt);
        if (!objs) return -1;
        for (uint32_t k = 0; k < x->ncomp; k++)
            if (arc_set_add(z->rt, objs, &x->objs[x->bydisc[k]])) return -1;
        r = arc_set_copy(z->rt, objs);
    } else {
        r = replay_object(x, (int)s->u.set.part);
    }
    if (!r) return -1;
    arc_set_take(s, r);
    return 0;
}

/* The outer set's members: its objects, in their own order (by first run), with no layout. */
static int lazy_members(arc_lazy *z, tdm_arc_val *s, tdm_arc_val ***v) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part != OUTER) return 0;
    if (prepare(x)) return -1;
    if (!x->objp) {
        if (!(x->objp = arc_alloc(z->rt, (size_t)x->ncomp * sizeof *x->objp))) return -1;
        for (uint32_t r = 0; r < x->ncomp; r++) x->objp[r] = &x->objs[r];
    }
    *v = x->objp;
    return 1;
}

int arc_objects_lazy_parts(tdm_arc_val *outer, const int16_t **comp, tdm_arc_val **objs) {
    if (!arc_set_is_lazy(outer) || outer->u.set.lazy->op != &objs_ops || outer->u.set.part != OUTER) return -1;
    objs_ctx *x = (objs_ctx *)outer->u.set.lazy;
    if (x->only >= 0) return -1;
    if (prepare(x)) return -1;
    cell_objects(x);
    *comp = x->comp, *objs = x->objs;
    return 0;
}

static const arc_lazy_ops objs_ops = {.layout = lazy_layout, .hash = lazy_hash, .contains = lazy_contains, .uniform = lazy_uniform,
                                       .bbox = lazy_bbox, .holds_pos = lazy_holds_pos, .bits = lazy_bits, .members = lazy_members,
                                       .rows = lazy_rows};

/* arc_objects_lazy, of the objects of colour only (-1: all). */
static tdm_arc_val *objects_make(tdm_arc_rt *rt, tdm_arc_val **a, int only, int *fallback) {
    *fallback = 1;
    if (!arc_neigh_order(0, 0, 0)) return NULL;
    objs_ctx *x = arc_alloc(rt, sizeof *x);
    if (x) x->only = only, memcpy(x->fa, a, sizeof x->fa), x->full = NULL, x->fullx = NULL;
    int r = x ? arc_objs_label(rt, x, a) : -2;
    if (r == -1) return NULL;
    *fallback = 0;
    if (r) return NULL; /* out of memory */
    if (x->has_bg) arc_pick_keep(rt, a[0], 0, x->bg); /* cover(I, ...) and the like ask for it again */
    x->z.rt = rt, x->z.op = &objs_ops;
    x->prepared = x->rids_ready = x->comp_ready = x->ordered = x->hashes_ready = 0, x->added = NULL, x->objp = NULL, x->orow = NULL;
    if (!x->ncomp) return arc_set_new(rt); /* frozenset(set()): a fresh empty table */
    return arc_set_lazy(rt, &x->z, OUTER, x->ncomp);
}

tdm_arc_val *arc_objects_lazy(tdm_arc_rt *rt, tdm_arc_val **a, int *fallback) { return objects_make(rt, a, -1, fallback); }

tdm_arc_val *arc_objects_of_colour(tdm_arc_rt *rt, tdm_arc_val **a, int c, int *fallback) {
    return objects_make(rt, a, c, fallback);
}

int arc_objects_only(const tdm_arc_val *s, int c) {
    return arc_set_is_lazy(s) && s->u.set.lazy->op == &objs_ops && s->u.set.part == OUTER && ((objs_ctx *)s->u.set.lazy)->only == c;
}
