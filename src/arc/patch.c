/* patch.c: how primitives read patches (spec §1.4): telling Objects from Indices by the first element in
 * iteration order, toindices with its layout rule, unpacking positions and cells the way Python's
 * `for i, j in ...` and `for v, (i, j) in ...` do (with the same failures), and the mostcolor/leastcolor
 * tie rule over the CPython set of colours, which objects, fgpartition and the under- primitives share. */
#include "arc_device.h"
#include "arc_internal.h"

#include <string.h>

int arc_patch_kind(tdm_arc_rt *rt, tdm_arc_val *patch, const char *who) {
    if (!arc_is_tuple(patch) && !arc_is_set(patch))
        return arc_failf(rt, "%s: object of type '%s' has no len()", who, arc_type_name(patch));
    int64_t box[4];
    const arc_bits *b = arc_bits_of(patch);
    if (b) return !patch->n ? 2 : b->kind == ARC_BITS_CELLS ? 1 : 0; /* a deferred set knows its kind */
    if (patch->n && arc_set_is_lazy(patch) && patch->u.set.lazy->op->bbox && patch->u.set.lazy->op->bbox(patch->u.set.lazy, patch, box))
        return 1; /* a lazy set of cells: an Object, whichever cell comes first */
    tdm_arc_val *e = arc_first(patch);
    if (!e) return 2;
    if (!arc_is_tuple(e)) return arc_failf(rt, "%s: '%s' object is not subscriptable", who, arc_type_name(e));
    if (e->n < 2) return arc_failf(rt, "%s: tuple index out of range", who);
    return arc_is_tuple(e->u.items[1]) ? 1 : 0;
}

tdm_arc_val *arc_toindices(tdm_arc_rt *rt, tdm_arc_val *patch) {
    int kind = arc_patch_kind(rt, patch, "toindices");
    if (kind < 0) return NULL;
    if (kind == 2) return arc_set_new(rt);
    if (kind == 0) return patch;
    arc_list l;
    if (arc_elems(rt, patch, &l, "toindices")) return NULL;
    tdm_arc_val *s = arc_set_new(rt);
    if (!s) return NULL;
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *e = l.v[k];
        if (!arc_is_tuple(e) || e->n != 2) return arc_fail(rt, "toindices: cannot unpack an element into value, index");
        if (arc_set_add(rt, s, e->u.items[1])) return NULL;
    }
    return s;
}

int arc_positions(tdm_arc_rt *rt, tdm_arc_val *patch, int dedup, arc_pos **out, uint32_t *n, const char *who) {
    int kind = arc_patch_kind(rt, patch, who);
    if (kind < 0) return -1;
    *n = 0, *out = NULL;
    if (kind == 2) return 0;
    tdm_arc_val *src = patch;
    int take_second = 0;
    if (kind == 1) {
        if (dedup) {
            if (!(src = arc_toindices(rt, patch))) return -1;
        } else {
            take_second = 1;
        }
    }
    arc_list l;
    if (arc_elems(rt, src, &l, who)) return -1;
    arc_pos *p = arc_alloc(rt, (size_t)(l.n ? l.n : 1) * sizeof *p);
    if (!p) return -1;
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *e = l.v[k];
        if (take_second) {
            if (!arc_is_tuple(e) || e->n != 2) return arc_failf(rt, "%s: cannot unpack an element into value, index", who);
            e = e->u.items[1];
        }
        if (arc_get_ipair(rt, e, &p[k].i, &p[k].j, who)) return -1;
    }
    *out = p, *n = l.n;
    return 0;
}

int arc_cells(tdm_arc_rt *rt, tdm_arc_val *obj, arc_cellv **out, uint32_t *n, const char *who) {
    arc_list l;
    if (arc_elems(rt, obj, &l, who)) return -1;
    arc_cellv *c = arc_alloc(rt, (size_t)(l.n ? l.n : 1) * sizeof *c);
    if (!c) return -1;
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *e = l.v[k];
        if (!arc_is_tuple(e) || e->n != 2) return arc_failf(rt, "%s: cannot unpack an element into value, (i, j)", who);
        if (arc_get_ipair(rt, e->u.items[1], &c[k].i, &c[k].j, who)) return -1;
        if (!arc_is_int(e->u.items[0]))
            return arc_failf(rt, "%s: cell value is a %s (not supported by the port)", who, arc_type_name(e->u.items[0]));
        c[k].c = e->u.items[0]->u.i;
    }
    *out = c, *n = l.n;
    return 0;
}

void arc_bbox(const arc_pos *p, uint32_t n, int64_t *u, int64_t *l, int64_t *d, int64_t *r) {
    int64_t a = p[0].i, b = p[0].j, c = p[0].i, e = p[0].j;
    for (uint32_t k = 1; k < n; k++) {
        if (p[k].i < a) a = p[k].i;
        if (p[k].i > c) c = p[k].i;
        if (p[k].j < b) b = p[k].j;
        if (p[k].j > e) e = p[k].j;
    }
    *u = a, *l = b, *d = c, *r = e;
}

/* mostcolor (leastcolor) of a lazy set of cells from its contents, when one colour alone has the best
 * count (a tie is broken by an iteration order, so it is left to the layout): 1 and *out, 0 when not
 * told this way, -1 out of memory. */
static int colour_counts(tdm_arc_rt *rt, tdm_arc_val *s, int least, int64_t *out) {
    arc_bits b;
    if (!arc_defer(rt) || !arc_set_is_lazy(s) || !s->n) return 0;
    int r = arc_bits_get_wide(rt, s, &b);
    if (r <= 0 || b.kind != ARC_BITS_CELLS) return r < 0 ? -1 : 0;
    uint32_t cnt[ARC_COLOURS_N] = {0};
    int lo, hi;
    arc_bits_span(&b, &lo, &hi);
    for (uint32_t bl = b.blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        for (int i = lo; i < hi; i++) cnt[c] += (uint32_t)arc_popc(b.m[32 * c + i]);
    }
    for (uint32_t k = 0; k < b.nout; k++) cnt[arc_key_c(b.out[k])]++;
    int best = -1, ties = 0;
    for (int c = 0; c < ARC_COLOURS_N; c++) {
        if (!cnt[c]) continue;
        if (best < 0 || (least ? cnt[c] < cnt[best] : cnt[c] > cnt[best])) best = c, ties = 0;
        else if (cnt[c] == cnt[best]) ties = 1;
    }
    if (best < 0 || ties) return 0;
    *out = best;
    return 1;
}

/* Colour counts and first positions (in the flattened values list) of a grid whose cells are all ints 0..9:
 * 1, or 0 when it is not such (or empty); the general way below then reads it (and raises what it raises). */
static int grid_counts(const tdm_arc_val *g, uint32_t count[ARC_COLOURS], uint32_t first[ARC_COLOURS]) {
    uint32_t pos = 0;
    for (int c = 0; c < ARC_COLOURS; c++) count[c] = 0, first[c] = UINT32_MAX;
    for (uint32_t i = 0; i < g->n; i++) {
        const tdm_arc_val *r = g->u.items[i];
        if (!arc_is_tuple(r)) return 0;
        for (uint32_t j = 0; j < r->n; j++, pos++) {
            const tdm_arc_val *v = r->u.items[j];
            int c = arc_interned_colour(v); /* an interned int 0..9: not read */
            if (c < 0) {
                if (!arc_is_int(v) || (uint64_t)v->u.i >= ARC_COLOURS) return 0;
                c = (int)v->u.i;
            }
            if (!count[c]++) first[c] = pos;
        }
    }
    return pos > 0;
}

void arc_pick_keep(tdm_arc_rt *rt, tdm_arc_val *g, int least, int c) {
    if (g != rt->pick_grid) rt->pick_grid = g, rt->pick[0] = rt->pick[1] = ARC_PICK_UNKNOWN;
    rt->pick[least] = (int8_t)c;
}

/* mostcolor/leastcolor of a grid of colours 0..9 from its counts (arc_pick_colour_of_counts: the reference's
 * set order). The last grid asked keeps its answers (rt->pick_grid: cover, underfill and fgpartition ask
 * of the grid objects() labelled). 1 with *out, 0 when the grid is not such, -1 out of memory. */
static int grid_pick(tdm_arc_rt *rt, tdm_arc_val *g, int least, int64_t *out) {
    if (g != rt->pick_grid || rt->pick[least] == ARC_PICK_UNKNOWN) {
        uint32_t count[ARC_COLOURS], first[ARC_COLOURS];
        arc_gview v;
        int view = arc_grid_view(rt, g, &v);
        if (view < 0) return -1;
        arc_pick_keep(rt, g, least, view ? arc_bytes_pick_counted(v.c, (uint32_t)(v.h * v.w), arc_grid_view_counts(rt, g, &v), least)
                                    : grid_counts(g, count, first) ? arc_pick_colour_of_counts(count, first, least) : -1);
    }
    if (rt->pick[least] < 0) return 0;
    *out = rt->pick[least];
    return 1;
}

/* max(set(values), key=values.count) (or min): D = seq(values) has the layout of its distinct values in
 * first-seen order, so only those are inserted; the first colour of iter(D) with the best count wins. */
int arc_mostcolor_of(tdm_arc_rt *rt, tdm_arc_val *elem, int least, int64_t *out) {
    const char *who = least ? "leastcolor" : "mostcolor";
    int64_t *vals;
    size_t nv = 0;
    int picked = arc_is_tuple(elem) && arc_defer(rt) ? grid_pick(rt, elem, least, out) : 0; /* eager: the tests' reference */
    if (picked) return picked > 0 ? 0 : -1;
    if (arc_is_tuple(elem)) {
        size_t total = 0;
        for (uint32_t i = 0; i < elem->n; i++) {
            tdm_arc_val *r = elem->u.items[i];
            if (!arc_is_tuple(r)) return arc_failf(rt, "%s: grid row is not a tuple", who);
            total += r->n;
        }
        if (!(vals = arc_alloc(rt, (total ? total : 1) * sizeof *vals))) return -1;
        for (uint32_t i = 0; i < elem->n; i++) {
            tdm_arc_val *r = elem->u.items[i];
            for (uint32_t j = 0; j < r->n; j++) {
                if (!arc_is_int(r->u.items[j])) return arc_failf(rt, "%s: grid cell is not an int (not supported by the port)", who);
                vals[nv++] = r->u.items[j]->u.i;
            }
        }
    } else {
        int r = colour_counts(rt, elem, least, out);
        if (r) return r > 0 ? 0 : -1;
        arc_list l;
        if (arc_elems(rt, elem, &l, who)) return -1;
        if (!(vals = arc_alloc(rt, (size_t)(l.n ? l.n : 1) * sizeof *vals))) return -1;
        for (uint32_t k = 0; k < l.n; k++) {
            tdm_arc_val *e = l.v[k];
            if (!arc_is_tuple(e) || e->n != 2) return arc_failf(rt, "%s: cannot unpack an element into v, _", who);
            if (!arc_is_int(e->u.items[0])) return arc_failf(rt, "%s: colour is not an int (not supported by the port)", who);
            vals[nv++] = e->u.items[0]->u.i;
        }
    }
    if (!nv) return arc_failf(rt, "%s: max() arg is an empty sequence", who);
    /* distinct values in first-seen order with their counts */
    int64_t dv[64];
    size_t dc[64], nd = 0;
    int64_t *dvp = dv;
    size_t *dcp = dc;
    for (size_t k = 0; k < nv; k++) {
        size_t d = 0;
        while (d < nd && dvp[d] != vals[k]) d++;
        if (d == nd) {
            if (nd == 64 && dvp == dv) {
                /* many distinct values: move to the arena */
                int64_t *nvv = arc_alloc(rt, nv * sizeof *nvv);
                size_t *ncc = arc_alloc(rt, nv * sizeof *ncc);
                if (!nvv || !ncc) return -1;
                memcpy(nvv, dv, sizeof dv), memcpy(ncc, dc, sizeof dc);
                dvp = nvv, dcp = ncc;
            }
            dvp[nd] = vals[k], dcp[nd] = 0, nd++;
        }
        dcp[d]++;
    }
    tdm_arc_val *D = arc_set_new(rt);
    if (!D) return -1;
    for (size_t d = 0; d < nd; d++)
        if (arc_set_add(rt, D, arc_int(rt, dvp[d]))) return -1;
    int have = 0;
    int64_t best = 0;
    size_t bestc = 0;
    arc_slot *tab = arc_set_slots(D);
    for (uint32_t s = 0; s <= D->u.set.mask; s++) {
        tdm_arc_val *key = tab[s].key;
        if (!key || key == ARC_DUMMY) continue;
        size_t d = 0;
        while (dvp[d] != key->u.i) d++;
        if (!have || (least ? dcp[d] < bestc : dcp[d] > bestc)) best = key->u.i, bestc = dcp[d], have = 1;
    }
    *out = best;
    return 0;
}

int arc_patch_box(tdm_arc_rt *rt, tdm_arc_val *patch, uint32_t *n, int64_t *u, int64_t *l, int64_t *d, int64_t *r,
                  const char *who) {
    int64_t b[4];
    const arc_bits *bits = arc_bits_of(patch);
    if (bits) {
        if ((*n = patch->n)) arc_bits_box_of(patch, b), *u = b[0], *l = b[1], *d = b[2], *r = b[3];
        return 0;
    }
    if (arc_set_is_lazy(patch) && patch->u.set.lazy->op->bbox && patch->u.set.lazy->op->bbox(patch->u.set.lazy, patch, b)) {
        *n = patch->n, *u = b[0], *l = b[1], *d = b[2], *r = b[3];
        return 0;
    }
    if (arc_set_is_lazy(patch) && patch->n && patch->u.set.lazy->op->bits) { /* a filter's result, say */
        arc_bits x;
        int fit = arc_bits_get_wide(rt, patch, &x);
        if (fit < 0) return -1;
        if (fit && x.kind != ARC_BITS_NONE) {
            arc_bits_box(&x, b);
            *n = patch->n, *u = b[0], *l = b[1], *d = b[2], *r = b[3];
            return 0;
        }
    }
    arc_pos *p;
    if (arc_positions(rt, patch, 0, &p, n, who)) return -1;
    if (*n) arc_bbox(p, *n, u, l, d, r);
    return 0;
}
