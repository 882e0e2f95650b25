/* prim_container.c: container primitives (spec §3.2). Generic primitives rebuild their result with the
 * type of their container argument (tuples keep order and duplicates, frozensets are re-inserted in input
 * iteration order: for merge and difference of sets of cells or positions, only when the order is first
 * read, bits.c), and the selection primitives (first, last, argmax, mostcommon, ...) read CPython's
 * iteration order and break ties the way max()/min() do: a later element wins only if strictly better. */
#include "arc_device.h"
#include "arc_internal.h"

#include <string.h>

static tdm_arc_val **buf(tdm_arc_rt *rt, uint32_t n) { return arc_alloc(rt, (size_t)(n ? n : 1) * sizeof(tdm_arc_val *)); }

tdm_arc_val *arc_p_size(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t n = arc_len(rt, a[0]);
    ARC_TRYI(n);
    return arc_int(rt, n);
}

static tdm_arc_val *combine_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list la, lb;
    ARC_TRYI(arc_elems(rt, a[0], &la, "combine"));
    ARC_TRYI(arc_elems(rt, a[1], &lb, "combine"));
    tdm_arc_val **v = buf(rt, la.n + lb.n);
    ARC_TRY(v);
    if (la.n) memcpy(v, la.v, la.n * sizeof *v);
    if (lb.n) memcpy(v + la.n, lb.v, lb.n * sizeof *v);
    return arc_rebuild(rt, a[0], v, la.n + lb.n);
}

/* Two sets of positions (or of cells): their union, laid out when read (combine_eager then), so that
 * combining the deferred results of mapply, ofcolor or neighbours lays none of them out; likewise two
 * filters of one set's objects (image.c). */
tdm_arc_val *arc_p_combine(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt) && arc_is_set(a[0]) && arc_is_set(a[1]) && (a[0]->n || a[1]->n)) {
        arc_bits b;
        ARC_TRYI(arc_bits_init_wide(rt, &b));
        int r = arc_bits_add(&b, a[0]);
        if (r > 0) r = arc_bits_add(&b, a[1]);
        ARC_TRYI(r);
        if (r) return arc_bits_set(rt, &b, combine_eager, a, 2);
        tdm_arc_val *u;
        ARC_TRYI(r = arc_filter_union(rt, a, combine_eager, &u)); /* two filters of one set's objects */
        if (r) return u;
    }
    return combine_eager(rt, a);
}

static tdm_arc_val *intersection_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (!arc_is_set(a[0]) || !arc_is_set(a[1]))
        return arc_fail(rt, "intersection: unsupported operand types for &: '%s' and '%s'", arc_type_name(a[0]),
                        arc_type_name(a[1]));
    return arc_set_meet(rt, a[0], a[1]);
}

/* Two sets of positions (or of cells), the wide ones too: x & y, laid out when read (set_intersection's
 * walk of the smaller operand then). a & a, empty operands and mixed kinds take the eager path. */
tdm_arc_val *arc_p_intersection(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt) && arc_is_set(a[0]) && arc_is_set(a[1]) && a[0] != a[1] && a[0]->n && a[1]->n) {
        arc_bits x, y, d;
        int r = arc_bits_get_wide(rt, a[0], &x);
        ARC_TRYI(r);
        if (r) ARC_TRYI(r = arc_bits_get_wide(rt, a[1], &y));
        if (r && x.kind == y.kind) {
            ARC_TRYI(arc_bits_meet(rt, &x, &y, &d));
            return arc_bits_set(rt, &d, intersection_eager, a, 2);
        }
    }
    return intersection_eager(rt, a);
}

/* T(c, the elements e of iter(c) with keep(e)): the filter behind difference, remove and sfilter. */
static tdm_arc_val *filter(tdm_arc_rt *rt, tdm_arc_val *c, int (*keep)(tdm_arc_rt *, tdm_arc_val *, void *), void *ctx,
                           const char *who) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, c, &l, who));
    tdm_arc_val **v = buf(rt, l.n);
    ARC_TRY(v);
    uint32_t m = 0;
    for (uint32_t k = 0; k < l.n; k++) {
        int r = keep(rt, l.v[k], ctx);
        ARC_TRYI(r);
        v[m] = l.v[k], m += r != 0; /* no branch: kept at random */
    }
    return arc_rebuild(rt, c, v, m);
}

static int keep_not_in(tdm_arc_rt *rt, tdm_arc_val *e, void *ctx) {
    int r = arc_contains(rt, ctx, e);
    return r < 0 ? -1 : !r;
}

/* filter, over a set that lists its members (image.c) first, in any order: arc_filter_members gives up
 * (the ordered path then) when keep raises. */
static tdm_arc_val *filter_any(tdm_arc_rt *rt, tdm_arc_val *c, int (*keep)(tdm_arc_rt *, tdm_arc_val *, void *),
                               void *ctx, const char *who) {
    int deferred;
    tdm_arc_val *r = arc_filter_members(rt, c, keep, ctx, &deferred);
    return r || deferred ? r : filter(rt, c, keep, ctx, who);
}

static tdm_arc_val *difference_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (!arc_is_tuple(a[1]) && !arc_is_set(a[1]))
        return arc_fail(rt, "difference: argument of type '%s' is not iterable", arc_type_name(a[1]));
    tdm_arc_val *r;
    int by_flags = arc_filter_minus(rt, a[0], a[1], &r); /* a[1] filters a[0]'s own members */
    ARC_TRYI(by_flags);
    if (by_flags) return r;
    return filter_any(rt, a[0], keep_not_in, a[1], "difference");
}

tdm_arc_val *arc_p_difference(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt) && arc_is_set(a[0]) && arc_is_set(a[1])) {
        /* two sets of positions (or of cells): a & ~b, laid out when read */
        arc_bits x, y, d;
        int r = arc_bits_get(rt, a[0], &x);
        ARC_TRYI(r);
        if (r) ARC_TRYI(r = arc_bits_get(rt, a[1], &y));
        if (r && (x.kind == y.kind || y.kind == ARC_BITS_NONE)) {
            ARC_TRYI(arc_bits_init(rt, &d));
            d.kind = x.kind;
            for (uint32_t bl = x.blocks; bl; bl &= bl - 1) {
                int c = __builtin_ctz(bl);
                uint32_t *m = arc_bits_block(&d, c);
                const uint32_t *p = x.m + 32 * c, *q = y.m + 32 * c;
                if (y.blocks >> c & 1) for (int i = 0; i < 32; i++) m[i] = p[i] & ~q[i];
                else memcpy(m, p, 32 * sizeof *m);
            }
            return arc_bits_set(rt, &d, difference_eager, a, 2);
        }
    }
    return difference_eager(rt, a);
}

static int keep_ne(tdm_arc_rt *rt, tdm_arc_val *e, void *ctx) { return !arc_eq(e, ctx); }

tdm_arc_val *arc_p_remove(tdm_arc_rt *rt, tdm_arc_val **a) { return filter_any(rt, a[1], keep_ne, a[0], "remove"); }

static tdm_arc_val *sfilter_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return filter(rt, a[0], arc_keep_true, a[1], "sfilter"); }

/* sfilter of a set of cells (positions) whose contents fit the masks by a condition that reads its
 * elements only through first(): the condition is called once per colour (row) on one of its elements,
 * and the kept blocks (rows) are the result, deferred. 1 and *out, 0 when not such, or when a call raised
 * or made closures (the per-element path runs then, from a runtime put back), -1 out of memory. */
static int sfilter_by_first(tdm_arc_rt *rt, tdm_arc_val **a, tdm_arc_val **out) {
    arc_bits b, d;
    if (!arc_defer(rt) || !arc_is_set(a[0]) || !a[0]->n || !arc_fn_reads_first(a[1])) return 0;
    int r = arc_bits_get(rt, a[0], &b);
    if (r <= 0 || b.kind == ARC_BITS_NONE) return r;
    if (arc_bits_init(rt, &d)) return -1;
    d.kind = b.kind;
    arc_mark mk = arc_mark_of(rt);
    int lo, hi;
    arc_bits_span(&b, &lo, &hi);
    for (uint32_t bl = b.blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        const uint32_t *m = b.m + 32 * c;
        for (int i = lo; i < hi; i++) {
            if (!m[i]) continue;
            int y = arc_keep_true(rt, arc_bits_elem(b.kind, c, i, __builtin_ctz(m[i])), a[1]);
            if (y < 0 || rt->serial != mk.serial) return arc_put_back(rt, mk) ? -1 : 0;
            if (b.kind == ARC_BITS_CELLS) { /* one colour: one answer for the block */
                if (y) memcpy(arc_bits_block(&d, c), m, 32 * sizeof *m);
                break;
            }
            if (y) arc_bits_block(&d, 0)[i] = m[i];
        }
    }
    *out = arc_bits_set(rt, &d, sfilter_eager, a, 2);
    return *out ? 1 : -1;
}

/* By first() when the condition reads only that (above); else over a set that lists its members, deferred
 * (image.c): the condition is called once per element as in the reference, in another order; only its
 * truth is kept, so closures it makes go nowhere, and a raise sends it down the ordered path (which raises
 * the reference's error: the first in CPython's order). */
tdm_arc_val *arc_p_sfilter(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *out = NULL;
    int r = sfilter_by_first(rt, a, &out);
    ARC_TRYI(r);
    return r ? out : filter_any(rt, a[0], arc_keep_true, a[1], "sfilter");
}

tdm_arc_val *arc_p_mfilter(tdm_arc_rt *rt, tdm_arc_val **a) {
    int lazy = arc_take_lazy(rt, a);
    tdm_arc_val *f = arc_p_sfilter(rt, a);
    ARC_TRY(f);
    return arc_merge(rt, &f, lazy);
}

/* dedupe of a grid's rows, read as bytes: a row is kept unless its bytes equal an earlier kept row's, and
 * the result keeps the kept rows' bytes as its view for the next reader. 1 with *out, 0 when t is not a
 * grid of colours, -1 out of memory. */
static int dedupe_rows(tdm_arc_rt *rt, tdm_arc_val *t, tdm_arc_val **v, tdm_arc_val **out) {
    arc_gview g;
    int r = arc_defer(rt) && t->n > 1 && arc_is_tuple(t->u.items[0]) ? arc_grid_view(rt, t, &g) : 0;
    if (r <= 0) return r;
    uint32_t full = (1u << g.w) - 1u, m = 0;
    uint8_t kept[ARC_SLOT]; /* the kept rows, by index in t */
    for (int k = 0; k < g.h; k++) {
        const uint8_t *row = g.c + k * g.w;
        uint32_t p = 0;
        while (p < m && (arc_eq_mask32(row, g.c + kept[p] * g.w) & full) != full) p++;
        if (p == m) kept[m] = (uint8_t)k, v[m++] = t->u.items[k];
    }
    uint8_t *c = arc_grid_view_bytes(rt, (int)m, g.w);
    if (!c || !(*out = arc_rebuild(rt, t, v, m))) return -1;
    /* 32 bytes a row (into the next row's place, written after it, or the slack, set again) */
    for (uint32_t p = 0; p < m; p++) memcpy(c + p * g.w, g.c + kept[p] * g.w, 32);
    memset(c + m * g.w, 0xff, 32);
    arc_grid_view_keep(rt, *out, c, (int)m, g.w);
    return 1;
}

tdm_arc_val *arc_p_dedupe(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *t = a[0], *out;
    if (!arc_is_tuple(t)) return arc_fail(rt, "dedupe: '%s' object has no attribute 'index'", arc_type_name(t));
    tdm_arc_val **v = buf(rt, t->n);
    ARC_TRY(v);
    int r = dedupe_rows(rt, t, v, &out);
    if (r) return r > 0 ? out : NULL;
    uint32_t m = 0, k = 0;
    /* ints 0..63 (colours, mostly): tup.index(e) == i exactly at the first item of each value (True == 1) */
    for (uint64_t seen = 0; k < t->n; k++) {
        tdm_arc_val *x = t->u.items[k];
        if (!arc_is_int(x) || x->u.i < 0 || x->u.i > 63) break;
        if (!(seen >> x->u.i & 1)) seen |= 1ull << x->u.i, v[m++] = x;
    }
    for (; k < t->n; k++) { /* from the first other item on, by == against every earlier item */
        uint32_t p = 0;
        while (!arc_eq(t->u.items[p], t->u.items[k])) p++;
        if (p == k) v[m++] = t->u.items[k];
    }
    return arc_rebuild(rt, t, v, m);
}

/* A stable merge sort on keys with Python's <; for the total orders of ints and tuples any stable sort
 * gives CPython's result. */
static int sort_rec(tdm_arc_rt *rt, tdm_arc_val **k, tdm_arc_val **v, tdm_arc_val **tk, tdm_arc_val **tv, uint32_t n) {
    if (n < 2) return 0;
    uint32_t h = n / 2;
    if (sort_rec(rt, k, v, tk, tv, h) || sort_rec(rt, k + h, v + h, tk, tv, n - h)) return -1;
    uint32_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        int lt = arc_cmp(rt, k[j], k[i], 0);
        if (lt < 0) return -1;
        if (lt) tk[o] = k[j], tv[o++] = v[j++];
        else tk[o] = k[i], tv[o++] = v[i++];
    }
    while (i < h) tk[o] = k[i], tv[o++] = v[i++];
    while (j < n) tk[o] = k[j], tv[o++] = v[j++];
    memcpy(k, tk, n * sizeof *k), memcpy(v, tv, n * sizeof *v);
    return 0;
}

tdm_arc_val *arc_p_order(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "order"));
    tdm_arc_val **k = buf(rt, l.n), **v = buf(rt, l.n), **tk = buf(rt, l.n), **tv = buf(rt, l.n);
    ARC_TRY(k && v && tk && tv);
    for (uint32_t i = 0; i < l.n; i++) {
        v[i] = l.v[i];
        ARC_TRY(k[i] = arc_call1(rt, a[1], l.v[i]));
    }
    ARC_TRYI(sort_rec(rt, k, v, tk, tv, l.n));
    tdm_arc_val *t = arc_tuple(rt, l.n);
    ARC_TRY(t);
    if (l.n) memcpy(t->u.items, v, l.n * sizeof *v);
    return t;
}

tdm_arc_val *arc_p_repeat(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t n;
    ARC_TRYI(arc_get_int(rt, a[1], &n, "repeat"));
    if (n < 0) n = 0;
    ARC_TRYI(arc_elems_limit(rt, "repeat", (uint64_t)n));
    tdm_arc_val *t = arc_tuple(rt, (uint32_t)n);
    ARC_TRY(t);
    int64_t k = 0;
#if defined(__SSE2__) /* four items a turn, in two 16-byte stores (a row or a grid of one value) */
    const __m128i two = _mm_set1_epi64x((long long)(uintptr_t)a[0]);
    for (; k + 4 <= n; k += 4)
        _mm_storeu_si128((__m128i *)(t->u.items + k), two), _mm_storeu_si128((__m128i *)(t->u.items + k + 2), two);
#endif
    for (; k < n; k++) t->u.items[k] = a[0];
    return t;
}

tdm_arc_val *arc_merge_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list outer;
    ARC_TRYI(arc_elems(rt, a[0], &outer, "merge"));
    uint32_t total = 0;
    for (uint32_t k = 0; k < outer.n; k++) {
        tdm_arc_val *c = outer.v[k];
        if (!arc_is_tuple(c) && !arc_is_set(c)) return arc_fail(rt, "merge: '%s' object is not iterable", arc_type_name(c));
        total += c->n;
    }
    tdm_arc_val **v = buf(rt, total);
    ARC_TRY(v);
    uint32_t m = 0;
    for (uint32_t k = 0; k < outer.n; k++) {
        arc_list inner;
        ARC_TRYI(arc_elems(rt, outer.v[k], &inner, "merge"));
        if (inner.n) memcpy(v + m, inner.v, inner.n * sizeof *v);
        m += inner.n;
    }
    return arc_rebuild(rt, a[0], v, m);
}

tdm_arc_val *arc_p_merge(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_merge(rt, a, arc_take_lazy(rt, a)); }

tdm_arc_val *arc_merge(tdm_arc_rt *rt, tdm_arc_val **a, int lazy) {
    if (lazy && arc_defer(rt) && arc_is_tuple(a[0]) && a[0]->n) { /* the caller reads only the contents */
        tdm_arc_val *out;
        int r = arc_cat(rt, a[0], &out);
        ARC_TRYI(r);
        if (r) return out;
    }
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n) {
        /* a set of sets of positions (or of cells): their union, laid out when read */
        arc_list outer;
        arc_bits b;
        int m = arc_set_members(a[0], &outer.v); /* a union: any order will do */
        ARC_TRYI(m);
        if (m) outer.n = a[0]->n;
        else ARC_TRYI(arc_elems(rt, a[0], &outer, "merge"));
        ARC_TRYI(arc_bits_init_wide(rt, &b));
        uint32_t k = 0;
        int r = 1;
        while (k < outer.n && (r = arc_bits_add(&b, outer.v[k])) > 0) k++;
        ARC_TRYI(r);
        if (k == outer.n) return arc_bits_set(rt, &b, arc_merge_eager, a, 1);
    }
    return arc_merge_eager(rt, a);
}

/* max()/min() over container by key (NULL: the elements themselves): index of the winner, -1 on error.
 * n must be > 0. keys receives the winner's key. */
static int64_t best_index(tdm_arc_rt *rt, arc_list *l, tdm_arc_val *keyfn, int gt, tdm_arc_val **key_out) {
    /* a closure's keys by column first (the same calls; a call that raised is made again in order); a
       comparison that raises then raises as the reference's does, after the keys before it */
    tdm_arc_val **keys = keyfn && l->n >= 2 && arc_is_closure(keyfn) ? buf(rt, l->n) : NULL;
    int col = keys ? arc_call_column(rt, keyfn, l->n, l->v, keys, 0) : 0;
    if (col < 0) return -1;
    tdm_arc_val *best = col ? keys[0] : keyfn ? arc_call1(rt, keyfn, l->v[0]) : l->v[0];
    if (!best) return -1;
    int64_t bi = 0;
    for (uint32_t k = 1; k < l->n; k++) {
        tdm_arc_val *key = col ? keys[k] : keyfn ? arc_call1(rt, keyfn, l->v[k]) : l->v[k];
        if (!key) return -1;
        int r = arc_cmp(rt, key, best, gt);
        if (r < 0) return -1;
        if (r) best = key, bi = k;
    }
    if (key_out) *key_out = best;
    return bi;
}

static tdm_arc_val *extreme(tdm_arc_rt *rt, tdm_arc_val *c, int gt, const char *who) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, c, &l, who));
    if (!l.n) return arc_int(rt, 0);
    int64_t k = best_index(rt, &l, NULL, gt, NULL);
    ARC_TRYI(k);
    return l.v[k];
}

tdm_arc_val *arc_p_maximum(tdm_arc_rt *rt, tdm_arc_val **a) { return extreme(rt, a[0], 1, "maximum"); }
tdm_arc_val *arc_p_minimum(tdm_arc_rt *rt, tdm_arc_val **a) { return extreme(rt, a[0], 0, "minimum"); }

static tdm_arc_val *valext(tdm_arc_rt *rt, tdm_arc_val **a, int gt, const char *who) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, who));
    if (!l.n) return arc_call1(rt, a[1], arc_int(rt, 0));
    tdm_arc_val *key;
    int64_t k = best_index(rt, &l, a[1], gt, &key);
    ARC_TRYI(k);
    return arc_call1(rt, a[1], l.v[k]);
}

tdm_arc_val *arc_p_valmax(tdm_arc_rt *rt, tdm_arc_val **a) { return valext(rt, a, 1, "valmax"); }
tdm_arc_val *arc_p_valmin(tdm_arc_rt *rt, tdm_arc_val **a) { return valext(rt, a, 0, "valmin"); }

/* argmax / argmin over members: max() calls the key on every element, in any order the same calls; when
 * every key is an int and one element alone is best, it is the answer in any order. Ties, and keys that
 * are not ints (a partial order: sets), go the ordered way. */
static tdm_arc_val *argext_members(tdm_arc_rt *rt, tdm_arc_val **a, int gt, int *done) {
    tdm_arc_val **m, **key;
    arc_mark mk;
    int r = arc_call_members(rt, a[1], a[0], &m, &key, &mk, 0);
    *done = r < 0;
    if (r <= 0) return NULL;
    uint32_t n = a[0]->n, best = 0, ties = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (!arc_is_int(key[k])) {
            ties = 1;
            break;
        }
        int64_t x = key[k]->u.i, y = key[best]->u.i;
        if (k && (gt ? x > y : x < y)) best = k, ties = 0;
        else if (k && x == y) ties++;
    }
    if (!ties) return *done = 1, m[best];
    arc_put_back(rt, mk); /* the ordered path calls the key again (no error is pending) */
    return NULL;
}

static tdm_arc_val *argext(tdm_arc_rt *rt, tdm_arc_val **a, int gt, const char *who) {
    int done;
    tdm_arc_val *w = argext_members(rt, a, gt, &done);
    if (w || done) return w;
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, who));
    if (!l.n) return arc_fail(rt, "%s: %s() arg is an empty sequence", who, gt ? "max" : "min");
    int64_t k = best_index(rt, &l, a[1], gt, NULL);
    ARC_TRYI(k);
    return l.v[k];
}

tdm_arc_val *arc_p_argmax(tdm_arc_rt *rt, tdm_arc_val **a) { return argext(rt, a, 1, "argmax"); }
tdm_arc_val *arc_p_argmin(tdm_arc_rt *rt, tdm_arc_val **a) { return argext(rt, a, 0, "argmin"); }

/* The last slot of the table set() builds from d distinct ints (spec §4.5: 8 slots, growth to 4 x used at
 * 60% fill): 7 up to 4 keys, 31 up to 18, then 127 (64 keys at most here). */
static uint32_t small_set_mask(uint32_t d) { return d <= 4 ? 7 : d <= 18 ? 31 : 127; }

/* A count byte per int 0..15, laid out like arc_small_ints[0..15] (a value's 48 bytes): the entry at an
 * interned int's offset from arc_small_ints[0] adds 1 to byte v (common_colours, no division). */
static const uint8_t onehot[16][sizeof(tdm_arc_val)] __attribute__((aligned(16))) = {
    {[0] = 1}, {[1] = 1}, {[2] = 1},   {[3] = 1},   {[4] = 1},   {[5] = 1},   {[6] = 1},   {[7] = 1},
    {[8] = 1}, {[9] = 1}, {[10] = 1}, {[11] = 1}, {[12] = 1}, {[13] = 1}, {[14] = 1}, {[15] = 1}};

#if defined(__SSE2__)
/* Every byte of x replaced by the largest (most) or smallest of them. */
static inline __m128i bytes_extreme(__m128i x, int most) {
#define ARC_EXT(y) (x = most ? _mm_max_epu8(x, (y)) : _mm_min_epu8(x, (y)))
    ARC_EXT(_mm_shuffle_epi32(x, 0x4e));                                     /* 64-bit halves */
    ARC_EXT(_mm_shuffle_epi32(x, 0xb1));                                     /* 32-bit words */
    ARC_EXT(_mm_shufflehi_epi16(_mm_shufflelo_epi16(x, 0xb1), 0xb1));         /* 16-bit words */
    ARC_EXT(_mm_or_si128(_mm_srli_epi16(x, 8), _mm_slli_epi16(x, 8)));      /* bytes */
#undef ARC_EXT
    return x;
}
#endif

/* Of n <= 4 int keys 0..63 added to a fresh set in the order given (an int's hash is itself; up to 4 keys
 * stay in the first 8 slots), the first in the table's order whose bit is set in win: CPython's probes
 * replayed (arc_slot8). */
static uint32_t first_in_slots(const uint32_t *keys, uint32_t n, uint64_t win) {
    int slot[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    uint32_t taken = 0;
    for (uint32_t k = 0; k < n; k++) slot[arc_slot8(&taken, keys[k])] = (int)keys[k];
    for (int s = 0; s < 8; s++)
        if (slot[s] >= 0 && win >> slot[s] & 1) return (uint32_t)slot[s];
    return keys[0]; /* not reached: win holds one of the keys */
}

/* The answer of common() from the keys 0..15 present (seen) and those with the winning count (win): keys sit
 * in their home slots, by v & 7 for up to 4 keys, ascending for more (16 keys fit a 32-slot table); the
 * first key of that order with the winning count is the answer. -1 when two keys would share a home slot
 * of the 8-slot table (then the order they were added in decides: common's general path). */
static int colours_pick(uint32_t seen, uint32_t win) {
    uint32_t past4 = seen & (seen - 1);
    past4 &= past4 - 1, past4 &= past4 - 1, past4 &= past4 - 1; /* the keys after the lowest four */
    if (past4) return __builtin_ctz(win); /* ascending order */
    if (seen & seen >> 8 & 0xff) return -1; /* v and v + 8 share slot v */
    int s = __builtin_ctz((win & 0xff) | win >> 8); /* slot s holds s or s + 8, whichever is present */
    return seen >> s & 1 ? s : s + 8;
}

#if defined(__SSE2__)
/* seen and win (colours_pick) from counts a byte per key. */
static inline void colours_won(__m128i acc, int most, uint32_t *seen, uint32_t *win) {
    __m128i absent = _mm_cmpeq_epi8(acc, _mm_setzero_si128());
    *seen = (uint32_t)_mm_movemask_epi8(absent) ^ 0xffff;
    if (!most) acc = _mm_or_si128(acc, absent); /* 255: never below a count of a present key */
    *win = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(acc, bytes_extreme(acc, most))) & *seen;
}
#endif

/* seen and win (colours_pick) from counts per key (the portable form). */
static void colours_won_counts(const uint32_t cnt[16], int most, uint32_t *seen, uint32_t *win) {
    uint32_t bc = most ? 0 : UINT32_MAX;
    *seen = *win = 0;
    for (int v = 0; v < 16; v++) *seen |= (uint32_t)(cnt[v] > 0) << v;
    for (uint32_t o = *seen; o; o &= o - 1) {
        uint32_t c = cnt[__builtin_ctz(o)];
        if (most ? c > bc : c < bc) bc = c, *win = 0;
        *win |= (uint32_t)(c == bc) << __builtin_ctz(o);
    }
}

/* common() for up to 255 items that are all interned ints 0..15 (a row of colours, most often), counted a
 * byte per int: 1 with *best, 0 when an item is anything else, there are more items, or colours_pick
 * cannot tell. */
static int common_colours(tdm_arc_val *const *items, uint32_t n, int most, tdm_arc_val **best) {
    const uintptr_t zero = (uintptr_t)&arc_small_ints[-ARC_INT_LO], size = sizeof onehot;
    if (n > 255) return 0;
    uint32_t seen, win; /* the keys present; those with the winning count */
#if defined(__SSE2__)
    if (!arc_bits_portable) {
        __m128i acc = _mm_setzero_si128();
        for (uint32_t k = 0; k < n; k++) {
            uintptr_t off = (uintptr_t)items[k] - zero; /* unsigned: below zero wraps */
            if (off >= size) return 0;
            acc = _mm_add_epi8(acc, _mm_load_si128((const __m128i *)((const char *)onehot + off)));
        }
        colours_won(acc, most, &seen, &win);
    } else
#endif
    {
        uint32_t cnt[16] = {0};
        for (uint32_t k = 0; k < n; k++) {
            uintptr_t off = (uintptr_t)items[k] - zero;
            if (off >= size) return 0;
            cnt[off / sizeof(tdm_arc_val)]++;
        }
        colours_won_counts(cnt, most, &seen, &win);
    }
    int bv = colours_pick(seen, win);
    if (bv < 0) return 0;
    *best = &arc_small_ints[bv - ARC_INT_LO];
    return 1;
}

/* max(set(container), key=container.count): ties follow the layout of the set of distinct elements. */
static tdm_arc_val *common(tdm_arc_rt *rt, tdm_arc_val *t, int most, const char *who) {
    if (!arc_is_tuple(t)) return arc_fail(rt, "%s: '%s' object has no attribute 'count'", who, arc_type_name(t));
    if (!t->n) return arc_fail(rt, "%s: %s() arg is an empty sequence", who, most ? "max" : "min");
    tdm_arc_val *best = NULL, *first[64];
    uint32_t bestc = 0, small[64], is_small = 1, distinct = 0, top = 0, seq[64];
    if (common_colours(t->u.items, t->n, most, &best)) return best;
    /* items that are all ints in 0..63 are counted in one pass; else by == per key */
    memset(small, 0, sizeof small);
    for (uint32_t k = 0; k < t->n && is_small; k++) {
        tdm_arc_val *x = t->u.items[k];
        if ((is_small = arc_is_int(x) && x->u.i >= 0 && x->u.i < 64)) {
            uint32_t v = (uint32_t)x->u.i;
            if (!small[v]++) first[v] = x, seq[distinct++] = v; /* the set keeps the first of equal keys (True before 1) */
            top = v > top ? v : top;
        }
    }
    if (is_small && distinct <= 4) { /* the first key in table order with the winning count */
        uint32_t bc = small[seq[0]];
        uint64_t win = 0;
        for (uint32_t k = 1; k < distinct; k++) {
            uint32_t c = small[seq[k]];
            if (most ? c > bc : c < bc) bc = c;
        }
        for (uint32_t k = 0; k < distinct; k++) win |= (uint64_t)(small[seq[k]] == bc) << seq[k];
        return first[first_in_slots(seq, distinct, win)];
    }
    if (is_small && top <= small_set_mask(distinct)) {
        /* an int's hash is itself: when every key's home slot is inside the final table none of them ever
           probes (a resize reinserts into home slots too), so the layout is ascending order */
        for (uint32_t v = 0; v <= top; v++)
            if (small[v] && (!best || (most ? small[v] > bestc : small[v] < bestc))) best = first[v], bestc = small[v];
        return best;
    }
    tdm_arc_val *d = arc_set_from(rt, t->u.items, t->n);
    ARC_TRY(d);
    arc_slot *tab = arc_set_slots(d);
    for (uint32_t s = 0; s <= d->u.set.mask; s++) {
        tdm_arc_val *key = tab[s].key;
        if (!key || key == ARC_DUMMY) continue;
        uint32_t c = 0;
        if (is_small) c = small[key->u.i];
        else
            for (uint32_t k = 0; k < t->n; k++) c += (uint32_t)arc_eq(t->u.items[k], key);
        if (!best || (most ? c > bestc : c < bestc)) best = key, bestc = c;
    }
    return best;
}

tdm_arc_val *arc_p_mostcommon(tdm_arc_rt *rt, tdm_arc_val **a) { return common(rt, a[0], 1, "mostcommon"); }
tdm_arc_val *arc_p_leastcommon(tdm_arc_rt *rt, tdm_arc_val **a) { return common(rt, a[0], 0, "leastcommon"); }

/* seen and win (colours_pick) of a row of w colours 0..9. */
static inline void row_won(const uint8_t *c, int w, int most, uint32_t *seen, uint32_t *win) {
#if defined(__SSE2__)
    if (!arc_bits_portable) {
        __m128i a0 = _mm_setzero_si128(), a1 = a0; /* two sums: the adds do not wait on each other */
        int j = 0;
#define ARC_ONE(x) _mm_load_si128((const __m128i *)onehot[x])
        for (; j + 4 <= w; j += 4)
            a0 = _mm_add_epi8(a0, _mm_add_epi8(ARC_ONE(c[j]), ARC_ONE(c[j + 1]))),
            a1 = _mm_add_epi8(a1, _mm_add_epi8(ARC_ONE(c[j + 2]), ARC_ONE(c[j + 3])));
        for (; j < w; j++) a0 = _mm_add_epi8(a0, ARC_ONE(c[j]));
#undef ARC_ONE
        colours_won(_mm_add_epi8(a0, a1), most, seen, win);
        return;
    }
#endif
    uint32_t cnt[16] = {0};
    for (int j = 0; j < w; j++) cnt[c[j]]++;
    colours_won_counts(cnt, most, seen, win);
}

tdm_arc_val *arc_rows_common(tdm_arc_rt *rt, const arc_gview *v, int most) {
    tdm_arc_val *t = arc_tuple(rt, (uint32_t)v->h);
    ARC_TRY(t);
    for (int i = 0; i < v->h; i++) {
        const uint8_t *c = v->c + (size_t)i * (size_t)v->w;
        uint32_t seen, win;
        row_won(c, v->w, most, &seen, &win);
        int bv = colours_pick(seen, win);
        if (bv < 0) { /* k and k + 8 both present, 4 keys at most: the keys in the order they first occur */
            uint32_t key[4], nk = 0, added = 0;
            for (int j = 0; j < v->w && nk < 4; j++)
                if (!(added >> c[j] & 1)) added |= 1u << c[j], key[nk++] = c[j];
            bv = (int)first_in_slots(key, nk, win);
        }
        t->u.items[i] = &arc_small_ints[bv - ARC_INT_LO];
    }
    return t;
}

tdm_arc_val *arc_p_initset(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_set_of1(rt, a[0]); }

/* extract over members: the condition on every member (the reference stops at the first in its order that
 * holds); when exactly one holds, no call raised and none made a closure (so the serial counter stands where
 * the reference's would), it is the answer in any order. Otherwise the ordered way. */
static tdm_arc_val *extract_members(tdm_arc_rt *rt, tdm_arc_val **a, int *done) {
    tdm_arc_val **m, **res;
    arc_mark mk;
    int r = arc_call_members(rt, a[1], a[0], &m, &res, &mk, 0);
    *done = r < 0;
    if (r <= 0) return NULL;
    uint32_t hits = 0, at = 0;
    for (uint32_t k = 0; k < a[0]->n; k++)
        if (arc_truthy(res[k])) hits++, at = k;
    if (hits == 1 && rt->serial == mk.serial) return *done = 1, m[at];
    arc_put_back(rt, mk);
    return NULL;
}

tdm_arc_val *arc_p_extract(tdm_arc_rt *rt, tdm_arc_val **a) {
    int done;
    tdm_arc_val *w = extract_members(rt, a, &done);
    if (w || done) return w;
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "extract"));
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *r = arc_call1(rt, a[1], l.v[k]);
        ARC_TRY(r);
        if (arc_truthy(r)) return l.v[k];
    }
    return arc_fail(rt, "extract: StopIteration (no element satisfies the condition)");
}

tdm_arc_val *arc_p_totuple(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "totuple"));
    if (arc_is_tuple(a[0])) return a[0];
    tdm_arc_val *t = arc_tuple(rt, l.n);
    ARC_TRY(t);
    if (l.n) memcpy(t->u.items, l.v, l.n * sizeof *l.v);
    return t;
}

tdm_arc_val *arc_p_first(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (!arc_is_tuple(a[0]) && !arc_is_set(a[0])) return arc_fail(rt, "first: '%s' object is not iterable", arc_type_name(a[0]));
    tdm_arc_val *e = arc_first(a[0]);
    return e ? e : arc_fail(rt, "first: StopIteration (empty container)");
}

tdm_arc_val *arc_p_last(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *c = a[0];
    if (arc_is_tuple(c)) return c->n ? c->u.items[c->n - 1] : arc_fail(rt, "last: max() arg is an empty sequence");
    if (!arc_is_set(c)) return arc_fail(rt, "last: '%s' object is not iterable", arc_type_name(c));
    if (c->n == 1) return arc_first(c); /* first and last of one are one (arc_first reads a lazy set's member) */
    tdm_arc_val *f, *l; /* a small set of a grid's cells or positions: its slot order without a table */
    if (arc_set_is_lazy(c) && c->n <= 4 && arc_bits_small_ends(c, &f, &l)) return l;
    arc_slot *tab = arc_set_slots(c);
    for (int64_t s = c->u.set.mask; s >= 0; s--) {
        tdm_arc_val *key = tab[s].key;
        if (key && key != ARC_DUMMY) return key;
    }
    return arc_fail(rt, "last: max() arg is an empty sequence");
}

static tdm_arc_val *insert_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (!arc_is_set(a[1])) return arc_fail(rt, "insert: '%s' object has no attribute 'union'", arc_type_name(a[1]));
    tdm_arc_val *one = arc_set_from(rt, a, 1);
    ARC_TRY(one);
    return arc_set_union(rt, a[1], one);
}

/* A position (or cell) into a set of them (a centre into its neighbours, say): the union, laid out when
 * read (insert_eager then), so that a deferred set is not laid out to gain one element. */
tdm_arc_val *arc_p_insert(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt) && arc_is_set(a[1]) && a[1]->n) {
        arc_bits b;
        ARC_TRYI(arc_bits_init_wide(rt, &b));
        int r = arc_bits_add(&b, a[1]);
        if (r > 0) r = arc_bits_add_elems(&b, a, 1);
        ARC_TRYI(r);
        if (r) return arc_bits_set(rt, &b, insert_eager, a, 2);
    }
    return insert_eager(rt, a);
}

tdm_arc_val *arc_p_other(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *args[2] = {a[1], a[0]};
    tdm_arc_val *r = arc_p_remove(rt, args);
    ARC_TRY(r);
    return arc_p_first(rt, &r);
}

tdm_arc_val *arc_p_interval(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t start, stop, step;
    ARC_TRYI(arc_get_int(rt, a[0], &start, "interval"));
    ARC_TRYI(arc_get_int(rt, a[1], &stop, "interval"));
    ARC_TRYI(arc_get_int(rt, a[2], &step, "interval"));
    if (!step) return arc_fail(rt, "interval: range() arg 3 must not be zero");
    /* len(range(start, stop, step)) in unsigned arithmetic, which cannot overflow for 64-bit bounds */
    uint64_t span = 0, st = step > 0 ? (uint64_t)step : -(uint64_t)step, un;
    if (step > 0 && start < stop) span = (uint64_t)stop - (uint64_t)start;
    if (step < 0 && start > stop) span = (uint64_t)start - (uint64_t)stop;
    un = span / st + (span % st != 0);
    ARC_TRYI(arc_elems_limit(rt, "interval", un));
    int64_t n = (int64_t)un;
    tdm_arc_val *t = arc_tuple(rt, (uint32_t)n);
    ARC_TRY(t);
    for (int64_t k = 0; k < n; k++) ARC_TRY(t->u.items[k] = arc_int(rt, (int64_t)((uint64_t)start + (uint64_t)k * (uint64_t)step)));
    return t;
}

tdm_arc_val *arc_p_pair(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list la, lb;
    ARC_TRYI(arc_elems(rt, a[0], &la, "pair"));
    ARC_TRYI(arc_elems(rt, a[1], &lb, "pair"));
    uint32_t n = la.n < lb.n ? la.n : lb.n;
    tdm_arc_val *t = arc_tuple(rt, n);
    ARC_TRY(t);
    for (uint32_t k = 0; k < n; k++) ARC_TRY(t->u.items[k] = arc_pair(rt, la.v[k], lb.v[k]));
    return t;
}

static int keep_size(tdm_arc_rt *rt, tdm_arc_val *e, void *ctx) {
    int64_t n = arc_len(rt, e);
    tdm_arc_val *want = ctx;
    return n < 0 ? -2 : arc_is_int(want) && want->u.i == n;
}

tdm_arc_val *arc_p_sizefilter(tdm_arc_rt *rt, tdm_arc_val **a) {
    int deferred;
    tdm_arc_val *d = arc_filter_members(rt, a[0], keep_size, a[1], &deferred);
    if (d || deferred) return d;
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "sizefilter"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t k = 0; k < l.n; k++) {
        int64_t n = arc_len(rt, l.v[k]);
        ARC_TRYI(n);
        if (arc_is_int(a[1]) && a[1]->u.i == n && arc_set_add(rt, s, l.v[k])) return NULL;
    }
    return s;
}
