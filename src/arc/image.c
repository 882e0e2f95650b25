/* image.c: filters and maps over a lazy set, deferred (spec §4.11). sizefilter, colorfilter, sfilter and
 * apply over the result of objects() (or over a set made here) take the elements without reading CPython's
 * iteration order, when they are listed without a layout (arc_lazy.members), and return a lazy set that
 * knows its elements, its hash and its membership, and lists them to the next order-free reader (merge,
 * another filter or map). Its layout is the reference's recipe, frozenset(g(e) for e in c ...): c's elements
 * in CPython's order, each one's image (itself when a filter keeps it, f(e) for apply) added to a fresh
 * set. The images are remembered, so no function is called again. Equal images (two objects that normalize
 * alike) may differ in their own layouts, and the set keeps the first in CPython's order: such a set does
 * not list members (readers take its layout). The tests hold every table to the eager runtime's
 * (tests/unit/test_arc_bits.c, tests/oracle/test_arc_oracle.py). */
#include "arc_internal.h"

#include <string.h>

typedef struct {
    arc_lazy z;          /* first: the lazy set points here */
    tdm_arc_val *parent; /* the set filtered or mapped */
    tdm_arc_val **m;     /* the parent's members, nm of them */
    tdm_arc_val **img;   /* per member: its image (one of v), NULL when dropped */
    uint32_t nm;
    tdm_arc_val **v; /* the distinct images (the first of equal ones), in member order */
    uint32_t n;
    int dups;        /* some images are equal: v's may not be the values the layout holds */
    int filter;      /* a filter's: each image is its member or NULL */
    uint32_t *index; /* v by hash (index + 1, open addressing, 2^ibits slots), made on the first lookups */
    uint32_t *at;    /* a filter's m by address (index + 1, 2^abits slots), made on the first lookup of many */
    int ibits, lookups, abits;
    arc_prim_fn recipe; /* non-NULL: the layout is recipe(args) (a union's), not the parent's order */
    tdm_arc_val *args[2];
} arc_image;

static inline uint64_t addr_key(const void *p) { return (uint64_t)(uintptr_t)p >> 4; }

static int table_bits(uint32_t n) {
    int bits = 3;
    while ((1u << bits) < 2 * n) bits++;
    return bits;
}

/* The members in a table of 2^bits, by address or by hash (open addressing): index + 1, 0 empty. NULL out
 * of memory. */
static uint32_t *member_table(tdm_arc_rt *rt, tdm_arc_val **m, uint32_t nm, int bits, int by_hash) {
    size_t mask = ((size_t)1 << bits) - 1;
    uint32_t *t = arc_alloc(rt, (mask + 1) * sizeof *t);
    if (!t) return NULL;
    memset(t, 0, (mask + 1) * sizeof *t);
    for (uint32_t k = 0; k < nm; k++) {
        size_t i = arc_hash_slot(by_hash ? (uint64_t)arc_hash_fast(m[k]) : addr_key(m[k]), bits);
        while (t[i]) i = (i + 1) & mask;
        t[i] = k + 1;
    }
    return t;
}

int arc_images_in_order(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val **m, tdm_arc_val **img, uint32_t nm,
                        tdm_arc_val **out) {
    int bits = table_bits(nm);
    size_t mask = ((size_t)1 << bits) - 1;
    uint32_t *t = member_table(rt, m, nm, bits, 0), n = 0;
    arc_list l;
    if (!t || arc_elems(rt, c, &l, "image") < 0) return -1;
    /* c's elements in CPython's order (the same values its members are), each one's image */
    uint32_t *tv = NULL; /* member index + 1, by value: made when an element is an equal value elsewhere */
    for (uint32_t k = 0; k < l.n; k++) {
        size_t i = arc_hash_slot(addr_key(l.v[k]), bits);
        while (t[i] && m[t[i] - 1] != l.v[k]) i = (i + 1) & mask;
        uint32_t at = t[i];
        if (!at) { /* a deferred set of positions lists the interned pairs; its recipe may hold equal tuples */
            if (!tv && !(tv = member_table(rt, m, nm, bits, 1))) return -1;
            int64_t h = arc_hash_fast(l.v[k]);
            for (i = arc_hash_slot((uint64_t)h, bits); tv[i]; i = (i + 1) & mask)
                if (arc_eq(m[tv[i] - 1], l.v[k])) break;
            at = tv[i];
        }
        if (at && img[at - 1]) out[n++] = img[at - 1];
    }
    return (int)n;
}

static int img_layout(arc_lazy *z, tdm_arc_val *s) {
    arc_image *x = (arc_image *)z;
    if (x->recipe) return arc_set_take_recipe(z->rt, s, x->recipe(z->rt, x->args));
    tdm_arc_val **out = arc_alloc(z->rt, (size_t)(x->nm ? x->nm : 1) * sizeof *out);
    int n = out ? arc_images_in_order(z->rt, x->parent, x->m, x->img, x->nm, out) : -1;
    tdm_arc_val *r = n < 0 ? NULL : arc_set_from(z->rt, out, (uint32_t)n); /* frozenset(g(e) for e in c) */
    if (!r) return -1;
    arc_set_take(s, r);
    return 0;
}

static int64_t img_hash(arc_lazy *z, tdm_arc_val *s) {
    arc_image *x = (arc_image *)z;
    uint64_t acc = 0;
    (void)s;
    for (uint32_t k = 0; k < x->n; k++) acc = arc_fset_hash_add(acc, arc_hash_fast(x->v[k]));
    return arc_fset_hash_end(acc, x->n);
}

/* The index in a filter's m of key by address, -1 when not there, -2 out of memory: a scan of a few, else a
 * table made on the first lookup. */
static int member_at(arc_image *x, const tdm_arc_val *key) {
    if (x->nm <= 16) {
        for (uint32_t k = 0; k < x->nm; k++)
            if (x->m[k] == key) return (int)k;
        return -1;
    }
    if (!x->at) {
        x->abits = table_bits(x->nm);
        if (!(x->at = member_table(x->z.rt, x->m, x->nm, x->abits, 0))) return -2;
    }
    size_t mask = ((size_t)1 << x->abits) - 1;
    for (size_t i = arc_hash_slot(addr_key(key), x->abits); x->at[i]; i = (i + 1) & mask)
        if (x->m[x->at[i] - 1] == key) return (int)x->at[i] - 1;
    return -1;
}

/* Membership: a filter's member by address (member_at); else by value, a scan of the distinct images, or,
 * once a set of many is asked often (difference filters one set by another), a table of them by hash. */
static int img_contains(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key) {
    arc_image *x = (arc_image *)z;
    (void)s;
    if (x->filter) {
        /* key one of the parent's members (the same value): they are distinct values, so key is in s exactly
           when the filter kept it, and no hash is made (an object's needs its maker's hashes) */
        int k = member_at(x, key);
        if (k < -1) return -1;
        if (k >= 0) return x->img[k] != NULL;
    }
    int64_t h = arc_hash_fast(key);
    if (!x->index && x->n > 8 && ++x->lookups > 4) {
        x->ibits = table_bits(x->n);
        x->index = member_table(z->rt, x->v, x->n, x->ibits, 1);
        if (!x->index) return -1; /* no memory: the layout answers (and reports it) */
    }
    if (x->index) {
        size_t mask = ((size_t)1 << x->ibits) - 1;
        for (size_t i = arc_hash_slot((uint64_t)h, x->ibits); x->index[i]; i = (i + 1) & mask) {
            tdm_arc_val *e = x->v[x->index[i] - 1];
            if (arc_hash_fast(e) == h && arc_eq(e, key)) return 1;
        }
        return 0;
    }
    for (uint32_t k = 0; k < x->n; k++)
        if (arc_hash_fast(x->v[k]) == h && arc_eq(x->v[k], key)) return 1;
    return 0;
}

static int img_members(arc_lazy *z, tdm_arc_val *s, tdm_arc_val ***v) {
    arc_image *x = (arc_image *)z;
    (void)s;
    if (x->dups) return 0;
    *v = x->v;
    return 1;
}

/* The contents as positions or cells (arc_lazy.bits): equal images are equal values, so the distinct ones
 * are the contents even when the layout keeps another of them. */
static int img_bits(arc_lazy *z, tdm_arc_val *s, arc_bits *dst) {
    arc_image *x = (arc_image *)z;
    (void)s;
    return arc_bits_add_elems(dst, x->v, x->n);
}

static const arc_lazy_ops img_ops = {.layout = img_layout, .hash = img_hash, .contains = img_contains, .members = img_members,
                                       .bits = img_bits};

/* The images made: the distinct ones listed, and the lazy set (an empty set when there are none). */
static tdm_arc_val *image_set(tdm_arc_rt *rt, tdm_arc_val *parent, tdm_arc_val **m, tdm_arc_val **img, uint32_t nm,
                              int distinct) {
    tdm_arc_val **v = arc_alloc(rt, (size_t)(nm ? nm : 1) * sizeof *v);
    if (!v) return NULL;
    uint32_t n = 0;
    if (distinct) { /* a filter's images are members: distinct already */
        for (uint32_t k = 0; k < nm; k++) v[n] = img[k], n += img[k] != NULL; /* no branch: kept at random */
    } else {
        int bits = table_bits(nm);
        size_t mask = ((size_t)1 << bits) - 1;
        uint32_t *t = arc_alloc(rt, (mask + 1) * sizeof *t); /* index + 1 into v, by hash */
        if (!t) return NULL;
        memset(t, 0, (mask + 1) * sizeof *t);
        for (uint32_t k = 0; k < nm; k++) {
            int64_t h = arc_hash_fast(img[k]);
            size_t i = arc_hash_slot((uint64_t)h, bits);
            while (t[i] && !(arc_hash_fast(v[t[i] - 1]) == h && arc_eq(v[t[i] - 1], img[k]))) i = (i + 1) & mask;
            if (!t[i]) v[n] = img[k], t[i] = ++n;
        }
    }
    if (!n) return arc_set_new(rt); /* frozenset() of nothing: a fresh empty table */
    arc_image *x = arc_alloc(rt, sizeof *x);
    if (!x) return NULL;
    memset(x, 0, sizeof *x);
    x->z.rt = rt, x->z.op = &img_ops;
    x->parent = parent, x->m = m, x->img = img, x->nm = nm, x->v = v, x->n = n;
    x->dups = !distinct && n < nm, x->filter = distinct;
    return arc_set_lazy(rt, &x->z, 0, n);
}

int arc_keep_true(tdm_arc_rt *rt, tdm_arc_val *e, void *f) {
    tdm_arc_val *r = arc_call1(rt, f, e);
    return r ? arc_truthy(r) : -1;
}

int arc_put_back(tdm_arc_rt *rt, arc_mark mk) {
    if (rt->failed && rt->status != TDM_E_NOMEM) rt->failed = 0, rt->status = 0, rt->err[0] = '\0';
    if (rt->failed) return -1;
    rt->serial = mk.serial, rt->depth = mk.depth;
    return 0;
}

/* c's members when the order-free forms apply to it (a deferring runtime, a set that lists them): 1 with
 * *m, 0 when not, -1 out of memory. */
static int members_of(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val ***m) {
    return arc_defer(rt) && arc_is_set(c) && c->n ? arc_set_members(c, m) : 0;
}

tdm_arc_val *arc_filter_members(tdm_arc_rt *rt, tdm_arc_val *c, int (*keep)(tdm_arc_rt *, tdm_arc_val *, void *),
                                void *ctx, int *deferred) {
    tdm_arc_val **m;
    int r = members_of(rt, c, &m);
    *deferred = r < 0;
    if (r <= 0) return NULL;
    tdm_arc_val **img = arc_alloc(rt, (size_t)c->n * sizeof *img);
    if (!img) return *deferred = 1, NULL;
    arc_mark mk = arc_mark_of(rt);
    int col = keep == arc_keep_true ? arc_call_column(rt, ctx, c->n, m, img, 0) : 0; /* the calls by column */
    if (col < 0) return *deferred = 1, NULL;
    for (uint32_t k = 0; col && k < c->n; k++) img[k] = arc_truthy(img[k]) ? m[k] : NULL;
    for (uint32_t k = 0; !col && k < c->n; k++) {
        int y = keep(rt, m[k], ctx);
        if (y < 0) return arc_put_back(rt, mk) ? (*deferred = 1, NULL) : NULL; /* memory, or the ordered path */
        img[k] = y ? m[k] : NULL;
    }
    *deferred = 1;
    return image_set(rt, c, m, img, c->n, 1);
}

/* s's filter image, or NULL when s is not a deferred filter's set. */
static arc_image *filter_of(tdm_arc_val *s) {
    if (!arc_set_is_lazy(s) || s->u.set.lazy->op != &img_ops) return NULL;
    arc_image *x = (arc_image *)s->u.set.lazy;
    return x->filter ? x : NULL;
}

int arc_filter_minus(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val *d, tdm_arc_val **out) {
    arc_image *x = arc_defer(rt) ? filter_of(d) : NULL, *y = x ? filter_of(c) : NULL;
    tdm_arc_val **held; /* per member of x->m: itself when c holds it, else NULL */
    if (!x) return 0;
    if (y && y->m == x->m && y->nm == x->nm) { /* siblings: c a filter over the same members as d */
        held = y->img;
    } else { /* or d's parent */
        int r = members_of(rt, c, &held);
        if (r <= 0 || held != x->m || c->n != x->nm) return r < 0 ? -1 : 0;
    }
    tdm_arc_val **img = arc_alloc(rt, (size_t)x->nm * sizeof *img);
    if (!img) return -1;
    for (uint32_t k = 0; k < x->nm; k++) img[k] = x->img[k] ? NULL : held[k];
    return (*out = image_set(rt, c, x->m, img, x->nm, 1)) ? 1 : -1;
}

int arc_filter_union(tdm_arc_rt *rt, tdm_arc_val **a, arc_prim_fn recipe, tdm_arc_val **out) {
    arc_image *x = arc_defer(rt) ? filter_of(a[0]) : NULL, *y = x ? filter_of(a[1]) : NULL;
    if (!y || y->m != x->m || y->nm != x->nm) return 0;
    tdm_arc_val **img = arc_alloc(rt, (size_t)x->nm * sizeof *img);
    if (!img) return -1;
    for (uint32_t k = 0; k < x->nm; k++) img[k] = x->img[k] ? x->img[k] : y->img[k];
    if (!(*out = image_set(rt, a[0], x->m, img, x->nm, 1))) return -1;
    arc_image *u = (arc_image *)(*out)->u.set.lazy; /* a lazy filter: a[0] kept some */
    u->recipe = recipe, u->args[0] = a[0], u->args[1] = a[1];
    return 1;
}

int arc_holds_function_deep(tdm_arc_val *v) {
    if (arc_is_tuple(v)) {
        if (arc_tuple_is_lazy(v)) return 0; /* its parts are sets of positions or cells */
        for (uint32_t k = 0; k < v->n; k++) /* ints (most items: a cell's colour, a position's two) not called on */
            if (!arc_is_int(v->u.items[k]) && arc_holds_function(v->u.items[k])) return 1;
        return 0;
    }
    for (uint32_t s = 0; s <= v->u.set.mask; s++) {
        tdm_arc_val *e = v->u.set.tab[s].key;
        if (e && e != ARC_DUMMY && !arc_is_int(e) && arc_holds_function(e)) return 1;
    }
    return 0;
}

int arc_call_members(tdm_arc_rt *rt, tdm_arc_val *f, tdm_arc_val *c, tdm_arc_val ***m, tdm_arc_val ***img,
                     arc_mark *mk, int lazy) {
    int r = members_of(rt, c, m);
    if (r <= 0) return r;
    tdm_arc_val **v = arc_alloc(rt, (size_t)c->n * sizeof *v);
    if (!v) return -1;
    *mk = arc_mark_of(rt);
    int col = arc_call_column(rt, f, c->n, *m, v, lazy);
    if (col < 0) return -1;
    /* (when the column made closures, arc_call_column has looked already) */
    for (uint32_t k = 0; col && rt->serial == mk->serial && k < c->n; k++)
        if (arc_holds_function(v[k])) return arc_put_back(rt, *mk) ? -1 : 0;
    for (uint32_t k = 0; !col && k < c->n; k++) {
        /* a raise, or a function among the images: the ordered path decides */
        if (!(v[k] = arc_call_ex(rt, f, 1, &(*m)[k], lazy)) || arc_holds_function(v[k])) return arc_put_back(rt, *mk) ? -1 : 0;
    }
    *img = v;
    return 1;
}

tdm_arc_val *arc_map_members(tdm_arc_rt *rt, tdm_arc_val *f, tdm_arc_val *c, int *deferred) {
    tdm_arc_val **m, **img;
    arc_mark mk;
    int r = arc_call_members(rt, f, c, &m, &img, &mk, 0);
    *deferred = r != 0;
    return r > 0 ? image_set(rt, c, m, img, c->n, 0) : NULL;
}
