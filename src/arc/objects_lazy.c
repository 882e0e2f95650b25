/* objects_lazy.c: objects() with lazy layouts (spec §4.11). The reference builds objects by a flood fill of
 * set operations (spec §4.8) and later primitives read the resulting iteration orders, but most uses only
 * need the values (len, size, membership, equality, hashing). So objects() here labels the grid's connected
 * components with a union-find and returns a lazy frozenset: n objects, no table. Its pieces are made only
 * when asked:
 *   - the objects themselves (lazy too, with their hashes) when the outer set's hash, membership or layout
 *     is first asked for;
 *   - the outer layout: the reference adds each object to a set in discovery order (the order of each
 *     component's first cell in asindices order) and freezes it; only the objects' hashes matter, so this
 *     is a replay of k adds and one copy;
 *   - an object's layout: the flood fill of that one object, replayed with the same set operations as
 *     arc_objects_eager, except that `occupied` (the cells of earlier objects and of this one so far) is
 *     described by the labels instead of built: minus(nb, occupied) depends only on which keys it holds and
 *     how many (arc_set_minus_where).
 * The tests hold every layout made here to arc_objects_eager's, bit for bit (tests/unit/test_arc_lazy.c). */
#include "arc_device.h"
#include "arc_internal.h"

#include <string.h>

#define MAXC (ARC_SLOT * ARC_SLOT)
#define OUTER UINT32_MAX /* part of the outer set; objects are parts 0..k-1 in discovery order */

typedef struct {
    arc_lazy z; /* first: the lazy sets point here */
    int h, w, univalued, diagonal, has_bg, bg;
    uint32_t ncomp, nruns;
    uint8_t col[MAXC];
    /* the partition: maximal horizontal runs of linked cells, joined by a union-find over runs (roots are
       the smallest run index, so a root run's first cell is its component's smallest cell) */
    int16_t rpar[MAXC];    /* per run: union-find parent */
    uint16_t rstart[MAXC + 1], rend[MAXC + 1]; /* per run: its first and last cell (row-major; + a spare) */
    /* made by prepare() on first need */
    int prepared;
    int16_t *comp;     /* per cell: its object's discovery rank, -1 for background */
    uint16_t *seed;    /* per object: its first cell in asindices order */
    uint32_t *base;    /* per object: cells of the objects found before it (occupied's size at its start) */
    uint8_t *added;    /* replay: cells of the object being replayed already added to occupied */
    tdm_arc_val *objs; /* the k lazy objects */
    int cur;           /* the object being replayed */
} objs_ctx;

static int find(int16_t *par, int x) {
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

/* Links keep the smaller root, so every parent index is below its child's and roots are minimum cells. */
static void unite(int16_t *par, int a, int b) {
    a = find(par, a), b = find(par, b);
    if (a < b) par[b] = (int16_t)a;
    else if (b < a) par[a] = (int16_t)b;
}

static int nomem(tdm_arc_rt *rt) {
    if (!rt->failed) {
        rt->failed = 1, rt->status = TDM_E_NOMEM;
        snprintf(rt->err, sizeof rt->err, "out of memory (objects layout)");
    }
    return -1;
}

/* Discovery ranks, per-object cell counts and hashes, and the lazy object values. */
static int prepare(objs_ctx *x) {
    if (x->prepared) return 0;
    tdm_arc_rt *rt = x->z.rt;
    int n = x->h * x->w;
    size_t nz = (size_t)(uint32_t)n, k = x->ncomp;
    const uint16_t *order = arc_asindices_order(x->h, x->w);
    int16_t *root = arc_alloc(rt, nz * sizeof *root);
    x->comp = arc_alloc(rt, nz * sizeof *x->comp);
    x->added = arc_alloc(rt, nz);
    x->seed = arc_alloc(rt, k * sizeof *x->seed);
    x->base = arc_alloc(rt, k * sizeof *x->base);
    x->objs = arc_alloc(rt, k * sizeof *x->objs);
    uint64_t *acc = arc_alloc(rt, k * sizeof *acc);
    if (!order || !root || !x->comp || !x->added || !x->seed || !x->base || !x->objs || !acc) return nomem(rt);
    /* run parents point to smaller runs, so one ascending pass compresses every path */
    for (int c = 0; c < n; c++) root[c] = -1;
    for (uint32_t r = 0; r < x->nruns; r++) {
        x->rpar[r] = x->rpar[x->rpar[r]];
        int16_t rc = (int16_t)x->rstart[x->rpar[r]];
        for (int c = x->rstart[r], e = x->rend[r]; c <= e; c++) root[c] = rc;
    }
    int16_t *rank = x->comp; /* indexed by root cell first; a root cell is its component's smallest */
    for (int c = 0; c < n; c++) rank[c] = -1;
    int next = 0;
    for (int q = 0; q < n; q++) {
        int c = order[q], r = root[c];
        if (r >= 0 && rank[r] < 0) rank[r] = (int16_t)next, x->seed[next++] = (uint16_t)c;
    }
    memset(acc, 0, k * sizeof *acc);
    memset(x->added, 0, nz);
    uint32_t *size = x->base;
    memset(size, 0, k * sizeof *size);
    /* a root cell comes first in row-major order, so rank[root[c]] is final when c reads it */
    for (int c = 0; c < n; c++) {
        if (root[c] < 0) continue;
        int r = rank[root[c]];
        rank[c] = (int16_t)r;
        size[r]++;
        acc[r] = arc_fset_hash_add(acc[r], arc_cell(rt, x->col[c], c / x->w, c % x->w)->hash);
    }
    memset(x->objs, 0, k * sizeof *x->objs);
    uint32_t before = 0;
    for (size_t r = 0; r < k; r++) {
        tdm_arc_val *o = &x->objs[r];
        o->kind = TDM_ARC_FSET, o->n = size[r];
        o->hash = arc_fset_hash_end(acc[r], size[r]), o->hashed = 1;
        o->u.set.lazy = &x->z, o->u.set.part = (uint32_t)r;
        x->base[r] = before; /* size[r] is read above before base[r] overwrites it */
        before += o->n;
    }
    x->prepared = 1;
    return 0;
}

static int64_t lazy_hash(arc_lazy *z, tdm_arc_val *s) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part != OUTER) return s->hash;
    if (prepare(x)) return 0; /* no memory: the run fails */
    uint64_t acc = 0;
    for (uint32_t r = 0; r < x->ncomp; r++) acc = arc_fset_hash_add(acc, x->objs[r].hash);
    return arc_fset_hash_end(acc, x->ncomp);
}

static int lazy_contains(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key) {
    objs_ctx *x = (objs_ctx *)z;
    if (s->u.set.part == OUTER) {
        if (!arc_is_set(key)) return 0; /* a frozenset of frozensets holds nothing else */
        if (prepare(x)) return -1;
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
    if (!arc_is_tuple(key) || key->n != 2 || !arc_is_int(key->u.items[0])) return 0;
    tdm_arc_val *p = key->u.items[1];
    if (!arc_is_tuple(p) || p->n != 2 || !arc_is_int(p->u.items[0]) || !arc_is_int(p->u.items[1])) return 0;
    int64_t i = p->u.items[0]->u.i, j = p->u.items[1]->u.i;
    if (i < 0 || j < 0 || i >= x->h || j >= x->w) return 0;
    int c = (int)(i * x->w + j);
    return x->comp[c] == (int16_t)s->u.set.part && x->col[c] == key->u.items[0]->u.i;
}

/* Is position key in `occupied` while object x->cur is replayed: in an earlier object, or added already. */
static int occupied(void *ctx, tdm_arc_val *key) {
    objs_ctx *x = ctx;
    int c = (int)(key->u.items[0]->u.i * x->w + key->u.items[1]->u.i), r = x->comp[c];
    return r >= 0 && (r < x->cur || (r == x->cur && x->added[c]));
}

/* The flood fill of arc_objects_eager for one object (spec §4.8 step 2), with occupied described. */
static tdm_arc_val *replay_object(objs_ctx *x, int part) {
    tdm_arc_rt *rt = x->z.rt;
    int w = x->w, seed = x->seed[part], val = x->col[seed];
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

static int lazy_layout(arc_lazy *z, tdm_arc_val *s) {
    objs_ctx *x = (objs_ctx *)z;
    if (prepare(x)) return -1;
    tdm_arc_val *r;
    if (s->u.set.part == OUTER) {
        /* objs.add(frozenset(obj)) in discovery order, then frozenset(objs) */
        tdm_arc_val *objs = arc_set_new(z->rt);
        if (!objs) return -1;
        for (uint32_t k = 0; k < x->ncomp; k++)
            if (arc_set_add(z->rt, objs, &x->objs[k])) return -1;
        r = arc_set_copy(z->rt, objs);
    } else {
        r = replay_object(x, (int)s->u.set.part);
    }
    if (!r) return -1;
    arc_set_take(s, r);
    return 0;
}

/* Joins the runs of row i (runs rf..re-1) with those of row i - 1 (pf..pe-1) that they link to: runs
 * whose column spans overlap, or come within one column when diagonal, and (univalued) of one colour. The
 * runs of each row are in column order, so one forward sweep finds every such pair. */
static void join_rows(objs_ctx *x, int i, int pf, int pe, int rf, int re) {
    int w = x->w, d = x->diagonal, p = pf, pbase = (i - 1) * w, base = i * w;
    for (int b = rf; b < re; b++) {
        int bs = x->rstart[b] - base, be = x->rend[b] - base, bc = x->col[x->rstart[b]];
        while (p < pe && x->rend[p] - pbase + d < bs) p++;
        for (int q = p; q < pe && x->rstart[q] - pbase - d <= be; q++)
            if (!x->univalued || x->col[x->rstart[q]] == bc) unite(x->rpar, q, b);
    }
}

/* mostcolor(grid) (spec §4.9 tie rule): counts in four interleaved histograms, so that runs of one colour
 * do not wait on their own increments, and each colour's first cell. */
static int background(const uint8_t *col, int n) {
    uint32_t hist[4][ARC_COLOURS] = {{0}}, count[ARC_COLOURS], first[ARC_COLOURS];
    unsigned seen = 0;
    for (int s = 0; s < n; s++) {
        int c = col[s];
        hist[s & 3][c]++;
        if (!(seen >> c & 1)) seen |= 1u << c, first[c] = (uint32_t)s;
    }
    for (int c = 0; c < ARC_COLOURS; c++) count[c] = hist[0][c] + hist[1][c] + hist[2][c] + hist[3][c];
    return arc_mostcolor_of_counts(count, first);
}

tdm_arc_val *arc_objects_lazy(tdm_arc_rt *rt, tdm_arc_val **a, int *fallback) {
    tdm_arc_val *g = a[0];
    *fallback = 1;
    if (!arc_is_tuple(g) || g->n < 1 || g->n > ARC_SLOT) return NULL;
    int h = (int)g->n, w = arc_is_tuple(g->u.items[0]) ? (int)g->u.items[0]->n : 0;
    if (w < 1 || w > ARC_SLOT || !arc_neigh_order(0, 0, 0)) return NULL;
    objs_ctx *x = arc_alloc(rt, sizeof *x);
    if (!x) return NULL;
    uintptr_t zero = (uintptr_t)arc_int_zero;
    for (int i = 0; i < h; i++) {
        tdm_arc_val *row = g->u.items[i];
        if (!arc_is_tuple(row) || (int)row->n != w) return NULL;
        for (int j = 0; j < w; j++) {
            tdm_arc_val *v = row->u.items[j];
            uintptr_t off = (uintptr_t)v - zero;
            int c;
            if (off < ARC_COLOURS * sizeof(tdm_arc_val)) {
                c = (int)(off / sizeof(tdm_arc_val)); /* an interned int 0..9: no need to read it */
            } else {
                if (!arc_is_int(v) || v->u.i < 0 || v->u.i >= ARC_COLOURS) return NULL;
                c = (int)v->u.i;
            }
            x->col[i * w + j] = (uint8_t)c;
        }
    }
    *fallback = 0;
    x->z.rt = rt, x->z.layout = lazy_layout, x->z.hash = lazy_hash, x->z.contains = lazy_contains;
    x->h = h, x->w = w, x->prepared = 0;
    x->univalued = arc_truthy(a[1]), x->diagonal = arc_truthy(a[2]), x->has_bg = arc_truthy(a[3]);
    x->bg = x->has_bg ? background(x->col, h * w) : -1;
    int bg = x->bg, uni = x->univalued, nr = 0, pf = 0;
    const uint8_t *col = x->col;
    for (int i = 0; i < h; i++) {
        /* the row's runs: a cell continues the run on its left when the two link. Branch-free: which
           cells are background is as good as random to a branch predictor. */
        int rf = nr, pfg = 0, pc = -1;
        for (int j = 0, s = i * w; j < w; j++, s++) {
            int c = col[s], fg = c != bg, st = fg & !(pfg & (!uni | (c == pc)));
            x->rstart[nr] = (uint16_t)s; /* kept only when s starts a run */
            nr += st;
            x->rend[fg ? nr - 1 : MAXC] = (uint16_t)s;
            pfg = fg, pc = c;
        }
        for (int r = rf; r < nr; r++) x->rpar[r] = (int16_t)r;
        if (i) join_rows(x, i, pf, rf, rf, nr);
        pf = rf;
    }
    x->nruns = (uint32_t)nr;
    uint32_t k = 0;
    for (int r = 0; r < nr; r++) k += x->rpar[r] == r;
    x->ncomp = k;
    if (!k) return arc_set_new(rt); /* frozenset(set()): a fresh empty table */
    return arc_set_lazy(rt, &x->z, OUTER, k);
}
