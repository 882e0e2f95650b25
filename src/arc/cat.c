/* cat.c: deferred concatenations (arc_internal.h): merge over a tuple of sets, as a tuple whose length and
 * contents are known while its items, each set's elements in that set's iteration order, are listed only
 * when something reads them. mapply over a tuple (0e206a2e's rapply of mirrors, 99fa7670's order) then
 * costs no set layouts when the result is only unioned or painted. */
#include "arc_internal.h"

#include <string.h>

/* The layout of the contents set: frozenset(t) of the listed items, as a set built from the tuple would be. */
static tdm_arc_val *cat_set_layout(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_cat_force(a[0])) return NULL;
    return arc_set_from(rt, a[0]->u.items, a[0]->n);
}

int arc_cat(tdm_arc_rt *rt, tdm_arc_val *parts, tdm_arc_val **out) {
    arc_bits b;
    uint64_t n = 0;
    if (arc_bits_init_wide(rt, &b)) return -1;
    for (uint32_t k = 0; k < parts->n; k++) {
        tdm_arc_val *p = parts->u.items[k];
        int r = arc_is_set(p) || arc_tuple_is_lazy(p) ? arc_bits_add(&b, p)
                : arc_is_tuple(p)                      ? arc_bits_add_elems(&b, p->u.items, p->n)
                                                       : 0;
        if (r <= 0) return r;
        n += p->n;
    }
    if (!n || n > ARC_MAX_CELLS) return 0; /* nothing to defer, or too long: the eager merge says so */
    tdm_arc_val *t = arc_alloc(rt, sizeof *t);
    if (!t) return -1;
    memset(t, 0, sizeof *t);
    t->kind = TDM_ARC_TUPLE, t->fkind = ARC_TUP_LAZY, t->n = (uint32_t)n;
    t->u.cat.parts = parts, t->u.cat.rt = rt;
    if (!(t->u.cat.set = arc_bits_set(rt, &b, cat_set_layout, &t, 1))) return -1;
    *out = t;
    return 1;
}

int arc_cat_force(tdm_arc_val *t) {
    if (!arc_tuple_is_lazy(t)) return 0;
    tdm_arc_rt *rt = t->u.cat.rt;
    tdm_arc_val *parts = t->u.cat.parts, **v = arc_alloc(rt, (size_t)t->n * sizeof *v);
    uint32_t m = 0;
    t->fkind = 0; /* from here on a plain tuple, even while its parts are listed */
    for (uint32_t k = 0; v && k < parts->n; k++) {
        arc_list l;
        if (arc_elems(rt, parts->u.items[k], &l, "merge")) {
            v = NULL;
            break;
        }
        memcpy(v + m, l.v, (size_t)l.n * sizeof *v);
        m += l.n;
    }
    if (!v) { /* no memory: an empty tuple, with the error pending (the program run fails) */
        static tdm_arc_val *none[1];
        t->u.items = none, t->n = 0;
        return -1;
    }
    t->u.items = v;
    return 0;
}
