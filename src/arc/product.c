/* product.c: product(a, b) (spec §3.2) and prapply(connect, a, b) (§3.3), with their layouts deferred.
 * frozenset((x, y) for y in b for x in a)
 * lays out |a| * |b| pairs in CPython's order, and before that a and b themselves (the objects of an
 * objects() call, say). A solver mostly filters the pairs (sfilter with a condition on first and last:
 * 06df4c85) and maps what is kept; neither reads the order. So when a and b are sets whose elements are
 * known without a layout (arc_set_members, or an eager table), the result is a lazy set that lists its
 * pairs in any order to those readers, hashes and tests membership from a and b, and runs the eager
 * product only when something reads the order. prapply(connect, a, b) over two sets of positions (the
 * segments between cells of a colour: dbc1a6ce, 253bf280) is deferred the same way, its distinct lines
 * told apart by their ends (of one set with itself, each pair once). tests/unit/test_arc_bits.c holds both to
 * the eager runtime. */
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

/* s takes the table of r, what its recipe made (NULL: failed): 0, or -1 with rt's error set. */
static int take_layout(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *r, const char *who) {
    if (!r) return -1;
    if (r->n != s->n) return arc_failf(z->rt, "internal error: a deferred %s's recipe gave other contents", who);
    arc_set_slots(r);
    arc_set_take(s, r);
    return 0;
}

static int prod_layout(arc_lazy *z, tdm_arc_val *s) {
    return take_layout(z, s, product_eager(z->rt, ((arc_prod *)z)->arg), "product");
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

static const arc_lazy_ops prod_ops = {.layout = prod_layout, .hash = prod_hash, .contains = prod_contains, .members = prod_members};

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
    p->z.rt = rt, p->z.op = &prod_ops;
    p->arg[0] = a[0], p->arg[1] = a[1], p->ma = ma, p->mb = mb, p->na = na, p->nb = nb;
    return arc_set_lazy(rt, &p->z, 0, na * nb);
}

/* ---- prapply(connect, a, b) ------------------------------------------------------------------------- */

/* The reference makes |a| * |b| lines and hashes each into its set. But most pairs lie on no common line
 * and give the one empty set, connect(x, y) == connect(y, x), and a segment's ends are its least and
 * greatest points, so two lines are equal exactly when their ends are. The distinct lines are told apart
 * by their ends, and each is made once. */
typedef struct {
    arc_lazy z;
    tdm_arc_val *arg[3];
    tdm_arc_val **lines; /* the distinct lines, in no particular order */
    tdm_arc_val *lookup;  /* lines_contains' set of them, once made */
} arc_lines;

static int lines_layout(arc_lazy *z, tdm_arc_val *s) {
    /* the reference's loop, each connect made in place: it cannot raise on two positions, and a late layout
       then meets no recursion limit */
    return take_layout(z, s, arc_prapply_eager(z->rt, ((arc_lines *)z)->arg, 1), "prapply");
}

static int lines_members(arc_lazy *z, tdm_arc_val *s, tdm_arc_val ***v) {
    (void)s;
    *v = ((arc_lines *)z)->lines;
    return 1;
}

static int64_t lines_hash(arc_lazy *z, tdm_arc_val *s) {
    uint64_t acc = 0;
    for (uint32_t k = 0; k < s->n; k++) acc = arc_fset_hash_add(acc, arc_hash_fast(((arc_lines *)z)->lines[k]));
    return arc_fset_hash_end(acc, s->n);
}

/* key in the lines: by a set of them, made on the first lookup (== of two such sets looks up every element
 * of one in the other); its table is for lookups only, not the reference's layout. */
static int lines_contains(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key) {
    arc_lines *l = (arc_lines *)z;
    if (!arc_is_set(key)) return 0; /* a line is a frozenset, and only one can equal one */
    if (!l->lookup && !(l->lookup = arc_set_from(z->rt, l->lines, s->n))) return -1; /* the layout answers, or fails */
    return arc_set_contains(l->lookup, key);
}

/* A position (i, j) of two ints within +-30000, packed in 32 bits: 1, or 0 when v is not such. */
static int packed_pos(const tdm_arc_val *v, uint32_t *key) {
    if (!arc_is_tuple(v) || v->n != 2 || arc_tuple_is_lazy(v)) return 0;
    const tdm_arc_val *i = v->u.items[0], *j = v->u.items[1];
    if (i->kind != TDM_ARC_INT || j->kind != TDM_ARC_INT || i->u.i < -30000 || i->u.i > 30000 || j->u.i < -30000 ||
        j->u.i > 30000)
        return 0;
    *key = (uint32_t)(i->u.i + 32768) << 16 | (uint32_t)(j->u.i + 32768); /* ordered as (i, j) */
    return 1;
}

static int packed_on_line(uint32_t p, uint32_t q) { return arc_on_line(p >> 16, p & 0xffff, q >> 16, q & 0xffff); }

/* key's slot in table tab of cap (a power of 2) nonzero keys: where it is, or the empty slot it would take. */
static uint32_t slot_of(const uint64_t *tab, uint32_t cap, uint64_t key) {
    uint32_t h = (uint32_t)arc_hash_slot(key, __builtin_ctz(cap));
    while (tab[h] && tab[h] != key) h = (h + 1) & (cap - 1);
    return h;
}

/* tab of *cap keys, rehashed into twice the room (*cap doubled); NULL out of memory. */
static uint64_t *grow_keys(tdm_arc_rt *rt, uint64_t *tab, uint32_t *cap) {
    uint64_t *t = arc_alloc(rt, 2 * (size_t)*cap * sizeof *t);
    if (!t) return NULL;
    memset(t, 0, 2 * (size_t)*cap * sizeof *t);
    for (uint32_t k = 0; k < *cap; k++)
        if (tab[k]) t[slot_of(t, 2 * *cap, tab[k])] = tab[k];
    *cap *= 2;
    return t;
}

static tdm_arc_val **grow_lines(tdm_arc_rt *rt, tdm_arc_val **v, uint32_t *cap) {
    tdm_arc_val **t = arc_alloc(rt, 2 * (size_t)*cap * sizeof *t);
    if (!t) return NULL;
    memcpy(t, v, *cap * sizeof *t);
    *cap *= 2;
    return t;
}

static const arc_lazy_ops lines_ops = {.layout = lines_layout, .hash = lines_hash, .contains = lines_contains,
                                        .members = lines_members};

/* The deferred set of the n distinct lines (a: connect and the two sets). */
static tdm_arc_val *lines_set(tdm_arc_rt *rt, tdm_arc_val **a, tdm_arc_val **lines, uint32_t n) {
    arc_lines *z = arc_alloc(rt, sizeof *z);
    if (!z) return NULL;
    memset(z, 0, sizeof *z);
    z->z.rt = rt, z->z.op = &lines_ops;
    z->arg[0] = a[0], z->arg[1] = a[1], z->arg[2] = a[2], z->lines = lines;
    return arc_set_lazy(rt, &z->z, 0, n);
}

/* prapply(connect, s, s): the na distinct positions m of s (packed in p) give one line per unordered pair
 * on a line, {x} per x, and the empty set when some pair is on none. Pair {x, y} and {y, x} give the same
 * line and two pairs of other ends never do, so each pair x < y is made once and no table is needed. NULL
 * out of memory. */
static tdm_arc_val *same_pairs(tdm_arc_rt *rt, tdm_arc_val **a, tdm_arc_val **m, const uint32_t *p, uint32_t na) {
    uint32_t n = 0, off = 0;
    tdm_arc_val **lines = arc_alloc(rt, ((size_t)na * (na + 1) / 2 + 1) * sizeof *lines);
    ARC_TRY(lines);
    for (uint32_t x = 0; x < na; x++)
        for (uint32_t y = x; y < na; y++) {
            if (!packed_on_line(p[x], p[y])) {
                off = 1;
                continue;
            }
            tdm_arc_val *two[2] = {m[x], m[y]};
            ARC_TRY(lines[n++] = arc_p_connect(rt, two));
        }
    if (off) ARC_TRY(lines[n++] = arc_set_empty(rt)); /* what connect gives the pairs on no line */
    return lines_set(rt, a, lines, n);
}

tdm_arc_val *arc_connect_pairs(tdm_arc_rt *rt, tdm_arc_val **a, int *done) {
    tdm_arc_val **ma, **mb;
    uint32_t na, nb;
    int r;
    *done = 0;
    if (!arc_is_set(a[1]) || !arc_is_set(a[2]) || !a[1]->n || !a[2]->n || (uint64_t)a[1]->n * a[2]->n > ARC_MAX_CELLS)
        return NULL;
    if ((r = elements(rt, a[1], &ma, &na)) <= 0 || (r = elements(rt, a[2], &mb, &nb)) <= 0) return *done = r < 0, NULL;
    uint32_t *pa = arc_alloc(rt, ((size_t)na + nb) * sizeof *pa), *pb = pa ? pa + na : NULL;
    if (!pa) return *done = 1, NULL;
    for (uint32_t k = 0; k < na; k++)
        if (!packed_pos(ma[k], &pa[k])) return NULL;
    if (a[1] == a[2]) return *done = 1, same_pairs(rt, a, ma, pa, na); /* NULL: out of memory */
    for (uint32_t k = 0; k < nb; k++)
        if (!packed_pos(mb[k], &pb[k])) return NULL;
    /* the pairs on a line (most are not: they all give the one empty set), their ends least first, into a
       table of the distinct ones (doubled at half full) */
    uint32_t n = 0, off = 0, cap = 64, lcap = 64;
    uint64_t *tab = arc_alloc(rt, cap * sizeof *tab);
    tdm_arc_val **lines = arc_alloc(rt, lcap * sizeof *lines);
    *done = 1; /* from here on, NULL is out of memory */
    if (!tab || !lines) return NULL;
    memset(tab, 0, cap * sizeof *tab);
    for (uint32_t y = 0; y < nb; y++)
        for (uint32_t x = 0; x < na; x++) {
            uint32_t p = pa[x], q = pb[y];
            if (n == lcap) ARC_TRY(lines = grow_lines(rt, lines, &lcap));
            if (!packed_on_line(p, q)) {
                if (!off++) ARC_TRY(lines[n++] = arc_set_empty(rt)); /* what connect gives them */
                continue;
            }
            uint64_t key = p < q ? (uint64_t)p << 32 | q : (uint64_t)q << 32 | p, h = slot_of(tab, cap, key);
            if (tab[h]) continue;
            tab[h] = key;
            tdm_arc_val *two[2] = {ma[x], mb[y]};
            ARC_TRY(lines[n++] = arc_p_connect(rt, two));
            if (2 * (n - (off != 0)) > cap) ARC_TRY(tab = grow_keys(rt, tab, &cap)); /* the table holds all but {} */
        }
    return lines_set(rt, a, lines, n);
}
