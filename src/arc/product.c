/* product.c: product(a, b) (spec §3.2), with its layout deferred. frozenset((x, y) for y in b for x in a)
 * lays out |a| * |b| pairs in CPython's order, and before that a and b themselves (the objects of an
 * objects() call, say). A solver mostly filters the pairs (sfilter with a condition on first and last:
 * 06df4c85) and maps what is kept; neither reads the order. So when a and b are sets whose elements are
 * known without a layout (arc_set_members, or an eager table), the result is a lazy set that lists its
 * pairs in any order to those readers, hashes and tests membership from a and b, and runs the eager
 * product only when something reads the order. tests/unit/test_arc_bits.c holds it to the eager runtime. */
#include "arc_internal.h"

#include <string.h>

typedef struct {
    arc_lazy z; /* first: the set points here */
    tdm_arc_val *arg[2];
    tdm_arc_val **ma, **mb; /* a's and b's elements, in no particular order */
    uint32_t na, nb;
    tdm_arc_val **pairs; /* (x, y) for each, once listed (na * nb of them) */
} arc_prod;

/* The reference's form: every pair, b's elements outer, a's inner, each set in its iteration order. */
static tdm_arc_val *product_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list la, lb;
    ARC_TRYI(arc_elems(rt, a[0], &la, "product"));
    ARC_TRYI(arc_elems(rt, a[1], &lb, "product"));
    ARC_TRYI(arc_elems_limit(rt, "product", (uint64_t)la.n * lb.n));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t y = 0; y < lb.n; y++)
        for (uint32_t x = 0; x < la.n; x++)
            if (arc_set_add(rt, s, arc_pair(rt, la.v[x], lb.v[y]))) return NULL;
    return s;
}

static int prod_layout(arc_lazy *z, tdm_arc_val *s) {
    arc_prod *p = (arc_prod *)z;
    tdm_arc_val *r = product_eager(z->rt, p->arg);
    if (!r) return -1;
    if (r->n != s->n) return arc_failf(z->rt, "internal error: a deferred product's recipe gave other contents");
    arc_set_slots(r);
    arc_set_take(s, r);
    return 0;
}

static int prod_members(arc_lazy *z, tdm_arc_val *s, tdm_arc_val ***v) {
    arc_prod *p = (arc_prod *)z;
    (void)s;
    if (!p->pairs) {
        tdm_arc_val **t = arc_alloc(z->rt, (size_t)p->na * p->nb * sizeof *t);
        if (!t) return -1;
        for (uint32_t y = 0, k = 0; y < p->nb; y++)
            for (uint32_t x = 0; x < p->na; x++, k++)
                if (!(t[k] = arc_pair(z->rt, p->ma[x], p->mb[y]))) return -1;
        p->pairs = t;
    }
    *v = p->pairs;
    return 1;
}

static int64_t prod_hash(arc_lazy *z, tdm_arc_val *s) {
    tdm_arc_val **v;
    uint64_t acc = 0;
    if (prod_members(z, s, &v) < 0) return -1; /* no memory: rt's error stands, and the run fails */
    for (uint32_t k = 0; k < s->n; k++) acc = arc_fset_hash_add(acc, arc_hash_fast(v[k]));
    return arc_fset_hash_end(acc, s->n);
}

/* (x, y) in product(a, b): a tuple of two whose first is in a and second in b, as tuple == reads them. */
static int prod_contains(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key) {
    arc_prod *p = (arc_prod *)z;
    (void)s;
    if (!arc_is_tuple(key) || key->n != 2) return 0;
    if (arc_tuple_is_lazy(key)) return -1; /* its items are not listed: the layout answers */
    return arc_set_contains(p->arg[0], key->u.items[0]) && arc_set_contains(p->arg[1], key->u.items[1]);
}

/* A set's elements without laying it out: 1 with *v and *n, 0 when only its layout knows them. */
static int elements(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val ***v, uint32_t *n) {
    if (!arc_is_set(c)) return 0;
    *n = c->n;
    if (c->u.set.lazy) return arc_set_members(c, v);
    arc_list l;
    if (arc_elems(rt, c, &l, "product")) return -1;
    *v = l.v;
    return 1;
}

tdm_arc_val *arc_p_product(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val **ma, **mb;
    uint32_t na, nb;
    int r;
    if (!arc_defer(rt) || !arc_is_set(a[0]) || !arc_is_set(a[1]) || !a[0]->n || !a[1]->n ||
        (uint64_t)a[0]->n * a[1]->n > ARC_MAX_CELLS)
        return product_eager(rt, a);
    if ((r = elements(rt, a[0], &ma, &na)) <= 0 || (r = elements(rt, a[1], &mb, &nb)) <= 0)
        return r < 0 ? NULL : product_eager(rt, a);
    arc_prod *p = arc_alloc(rt, sizeof *p);
    ARC_TRY(p);
    memset(p, 0, sizeof *p);
    p->z.rt = rt, p->z.layout = prod_layout, p->z.hash = prod_hash, p->z.contains = prod_contains;
    p->z.members = prod_members;
    p->arg[0] = a[0], p->arg[1] = a[1], p->ma = ma, p->mb = mb, p->na = na, p->nb = nb;
    return arc_set_lazy(rt, &p->z, 0, na * nb);
}
