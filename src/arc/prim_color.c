/* prim_color.c: colour statistics and colour selection (spec §3.4). mostcolor/leastcolor break ties by
 * the layout of the CPython set of colours (patch.c), palette freezes a set built in row-major or
 * iteration order (of a lazy set's contents, when that order cannot change the table), and color/colorfilter read each object's first cell in iteration order. */
#include "arc_device.h"
#include "arc_internal.h"

tdm_arc_val *arc_p_mostcolor(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t c;
    ARC_TRYI(arc_mostcolor_of(rt, a[0], 0, &c));
    return arc_int(rt, c);
}

tdm_arc_val *arc_p_leastcolor(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t c;
    ARC_TRYI(arc_mostcolor_of(rt, a[0], 1, &c));
    return arc_int(rt, c);
}

tdm_arc_val *arc_p_colorcount(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *e = a[0];
    int64_t n = 0;
    if (arc_is_tuple(e)) {
        for (uint32_t i = 0; i < e->n; i++) {
            tdm_arc_val *r = e->u.items[i];
            if (!arc_is_tuple(r)) return arc_fail(rt, "colorcount: '%s' object has no attribute 'count'", arc_type_name(r));
            for (uint32_t j = 0; j < r->n; j++) n += arc_eq(r->u.items[j], a[1]);
        }
        return arc_int(rt, n);
    }
    arc_list l;
    ARC_TRYI(arc_elems(rt, e, &l, "colorcount"));
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *x = l.v[k];
        if (!arc_is_tuple(x) || x->n != 2) return arc_fail(rt, "colorcount: cannot unpack an element into v, _");
        n += arc_eq(x->u.items[0], a[1]);
    }
    return arc_int(rt, n);
}

/* Whether the layout of the set of colours cols (bit k: colour k) does not depend on the order they are
 * inserted in: 1 when at most 4 colours sit in distinct home slots of the first 8-slot table (k & 7), or
 * when there are 5 or more (the fifth grows the table to 32 slots, re-inserting each in its home slot,
 * and the copy of it puts each in its home slot again). Else 0. */
static int colours_order_free(uint32_t cols) {
    uint32_t homes = 0;
    for (int k = 0; k < ARC_COLOURS_N; k++)
        if (cols >> k & 1) homes |= 1u << (k & 7);
    int n = arc_popc(cols);
    return n >= 5 || arc_popc(homes) == n;
}

/* The colours of cells b (bit k of *cols: colour k), and colours_order_free of them. */
static int palette_order_free(const arc_bits *b, int64_t *cols) {
    uint32_t c = b->blocks;
    for (uint32_t k = 0; k < b->nout; k++) c |= 1u << arc_key_c(b->out[k]);
    *cols = c;
    return colours_order_free(c);
}

int arc_view_palette_order(tdm_arc_rt *rt, const tdm_arc_val *g, const arc_gview *v, int *order) {
    uint32_t first[ARC_COLOURS_N], cols = 0;
    const uint32_t *count = arc_grid_view_counts(rt, g, v);
    for (int k = 0; k < ARC_COLOURS_N; k++) cols |= (uint32_t)(count[k] != 0) << k;
    if (colours_order_free(cols)) { /* any order gives the table: ascending, with no first cells sought */
        int n = 0;
        for (int k = 0; k < ARC_COLOURS_N; k++)
            if (cols >> k & 1) order[n++] = k;
        return n;
    }
    arc_colour_firsts(v->c, (uint32_t)(v->h * v->w), count, first);
    return arc_colours_by_first(count, first, order);
}

tdm_arc_val *arc_p_palette(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *e = a[0], *s = arc_set_new(rt);
    ARC_TRY(s);
    int64_t c;
    arc_bits b;
    arc_gview gv;
    int known = 0;
    if (arc_set_uniform_colour(e, &c)) {
        /* every insertion after the first finds c present: the set of one colour, whatever the order */
        if (arc_set_add(rt, s, arc_int(rt, c))) return NULL;
    } else if (arc_set_is_lazy(e) && (known = arc_bits_get_wide(rt, e, &b)) > 0 && b.kind == ARC_BITS_CELLS &&
               palette_order_free(&b, &c)) {
        /* the colours in increasing order: the table their insertion in any order gives */
        for (int k = 0; k < ARC_COLOURS_N; k++)
            if (c >> k & 1 && arc_set_add(rt, s, arc_int(rt, k))) return NULL;
    } else if (known < 0) {
        return NULL;
    } else if (arc_is_tuple(e) && (known = arc_grid_view(rt, e, &gv)) != 0) {
        /* a grid's bytes: its colours inserted in the order they are first met, the table that inserting
           every cell gives (a set ignores an element it holds) */
        ARC_TRYI(known);
        int order[ARC_COLOURS_N], m = arc_view_palette_order(rt, e, &gv, order);
        for (int k = 0; k < m; k++)
            if (arc_set_add(rt, s, arc_int(rt, order[k]))) return NULL;
    } else if (arc_is_tuple(e)) {
        for (uint32_t i = 0; i < e->n; i++) {
            tdm_arc_val *r = e->u.items[i];
            if (!arc_is_tuple(r) && !arc_is_set(r)) return arc_fail(rt, "palette: '%s' object is not iterable", arc_type_name(r));
            arc_list l;
            ARC_TRYI(arc_elems(rt, r, &l, "palette"));
            for (uint32_t j = 0; j < l.n; j++)
                if (arc_set_add(rt, s, l.v[j])) return NULL;
        }
    } else {
        arc_list l;
        ARC_TRYI(arc_elems(rt, e, &l, "palette"));
        for (uint32_t k = 0; k < l.n; k++) {
            tdm_arc_val *x = l.v[k];
            if (!arc_is_tuple(x) || x->n != 2) return arc_fail(rt, "palette: cannot unpack an element into v, _");
            if (arc_set_add(rt, s, x->u.items[0])) return NULL;
        }
    }
    return arc_set_copy(rt, s);
}

/* len(palette(e)): a grid's bytes are counted (no set made), anything else goes through palette. */
tdm_arc_val *arc_p_numcolors(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_gview gv;
    int known = arc_is_tuple(a[0]) ? arc_grid_view(rt, a[0], &gv) : 0;
    ARC_TRYI(known);
    if (known) {
        const uint32_t *count = arc_grid_view_counts(rt, a[0], &gv);
        int n = 0;
        for (int k = 0; k < ARC_COLOURS_N; k++) n += count[k] != 0;
        return arc_int(rt, n);
    }
    tdm_arc_val *p = arc_p_palette(rt, a);
    ARC_TRY(p);
    return arc_int(rt, p->n);
}

/* next(iter(obj))[0] */
static tdm_arc_val *first_color(tdm_arc_rt *rt, tdm_arc_val *obj, const char *who) {
    if (!arc_is_tuple(obj) && !arc_is_set(obj)) return arc_fail(rt, "%s: '%s' object is not iterable", who, arc_type_name(obj));
    int64_t c;
    if (arc_set_uniform_colour(obj, &c)) return arc_int(rt, c); /* any cell is the first as far as colour goes */
    tdm_arc_val *e = arc_first(obj);
    if (!e) return arc_fail(rt, "%s: StopIteration (empty object)", who);
    if (!arc_is_tuple(e)) return arc_fail(rt, "%s: '%s' object is not subscriptable", who, arc_type_name(e));
    if (!e->n) return arc_fail(rt, "%s: tuple index out of range", who);
    return e->u.items[0];
}

tdm_arc_val *arc_p_color(tdm_arc_rt *rt, tdm_arc_val **a) { return first_color(rt, a[0], "color"); }

/* An object's colour without its layout when its cells share one (else the first cell decides: -2). */
static int keep_colour(tdm_arc_rt *rt, tdm_arc_val *e, void *ctx) {
    int64_t c;
    tdm_arc_val *want = ctx;
    (void)rt;
    if (!arc_set_uniform_colour(e, &c)) return -2;
    return arc_is_int(want) && want->u.i == c;
}

tdm_arc_val *arc_p_colorfilter(tdm_arc_rt *rt, tdm_arc_val **a) {
    int deferred;
    tdm_arc_val *d = arc_filter_members(rt, a[0], keep_colour, a[1], &deferred);
    if (d || deferred) return d;
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "colorfilter"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *c = first_color(rt, l.v[k], "colorfilter");
        ARC_TRY(c);
        if (arc_eq(c, a[1]) && arc_set_add(rt, s, l.v[k])) return NULL;
    }
    return s;
}
