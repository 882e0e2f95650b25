/* prim_color.c: colour statistics and colour selection (spec §3.4). mostcolor/leastcolor break ties by
 * the layout of the CPython set of colours (patch.c), palette freezes a set built in row-major or
 * iteration order, and color/colorfilter read each object's first cell in iteration order. */
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

tdm_arc_val *arc_p_palette(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *e = a[0], *s = arc_set_new(rt);
    ARC_TRY(s);
    int64_t c;
    if (arc_set_uniform_colour(e, &c)) {
        /* every insertion after the first finds c present: the set of one colour, whatever the order */
        if (arc_set_add(rt, s, arc_int(rt, c))) return NULL;
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

tdm_arc_val *arc_p_numcolors(tdm_arc_rt *rt, tdm_arc_val **a) {
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

tdm_arc_val *arc_p_colorfilter(tdm_arc_rt *rt, tdm_arc_val **a) {
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
