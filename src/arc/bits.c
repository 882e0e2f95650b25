/* bits.c: frozensets of cells and positions whose CPython layout is deferred (spec §4.11). Most sets that
 * merge, mfilter, mapply, toindices, difference, recolor, shift, normalize, ofcolor and asindices make are
 * only measured, tested for membership, hashed, compared or painted, and none of that reads an iteration
 * order; building their tables in CPython's insertion order was most of a solver call. So when every
 * element of a result is an interned position (i, j) or cell (c, (i, j)) with -2 <= i, j < 30, the
 * primitive returns a lazy set holding its contents as row masks (arc_bits, one block of 32 rows per
 * colour) and its recipe: the primitive's eager form and its arguments. Values are immutable, so running
 * the recipe when something first reads the order (iteration, first, repr, a rebuild in order, ...) gives
 * the table the eager run would have given then; the recipe's own lazy arguments are laid out by it in
 * turn, as reads. tests/unit/test_arc_bits.c holds every such layout to the eager one, slot by slot. */
#include "arc_internal.h"

#include <string.h>

typedef struct {
    arc_lazy z; /* first: the set points here */
    arc_prim_fn eager;
    tdm_arc_val *arg[3];
    arc_bits b;
} arc_bset;

static inline int popc(uint32_t v) {
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    return (int)((((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}

int arc_bits_init(tdm_arc_rt *rt, arc_bits *b) {
    b->kind = ARC_BITS_NONE, b->blocks = 0;
    b->m = arc_alloc(rt, 32 * ARC_COLOURS_N * sizeof *b->m);
    return b->m ? 0 : -1;
}

/* Where an interned position or cell lies: its index in arc_pos_vals / arc_cell_vals, or -1. */
static inline long pos_index(const tdm_arc_val *v) {
    uintptr_t d = (uintptr_t)v - (uintptr_t)arc_pos_vals;
    return d < sizeof arc_pos_vals ? (long)(d / sizeof *v) : -1;
}
static inline long cell_index(const tdm_arc_val *v) {
    uintptr_t d = (uintptr_t)v - (uintptr_t)arc_cell_vals;
    return d < sizeof arc_cell_vals ? (long)(d / sizeof *v) : -1;
}

/* Adds the element key of an eager table: 1, or 0 when it does not fit b. */
static int add_key(arc_bits *b, const tdm_arc_val *key) {
    long k = pos_index(key);
    int c = 0, want = ARC_BITS_POS;
    if (k < 0) {
        if ((k = cell_index(key)) < 0) return 0;
        c = (int)(k / (ARC_POS_N * ARC_POS_N)), k %= ARC_POS_N * ARC_POS_N, want = ARC_BITS_CELLS;
    }
    int i = (int)(k / ARC_POS_N) + ARC_POS_LO, j = (int)(k % ARC_POS_N) + ARC_POS_LO;
    if (!arc_bits_fits(i, j)) return 0;
    if (b->kind != want) {
        if (b->kind != ARC_BITS_NONE) return 0;
        b->kind = want;
    }
    arc_bits_block(b, c)[i + ARC_BITS_OFF] |= 1u << (j + ARC_BITS_OFF);
    return 1;
}

/* b |= src (same kind, or either empty). */
static int or_bits(arc_bits *b, const arc_bits *src) {
    if (src->kind == ARC_BITS_NONE) return 1;
    if (b->kind != src->kind) {
        if (b->kind != ARC_BITS_NONE) return 0;
        b->kind = src->kind;
    }
    for (uint32_t bl = src->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        uint32_t *d = arc_bits_block(b, c);
        const uint32_t *s = src->m + 32 * c;
        for (int i = 0; i < 32; i++) d[i] |= s[i];
    }
    return 1;
}

int arc_bits_add(arc_bits *b, tdm_arc_val *s) {
    if (!arc_is_set(s)) return 0;
    if (!s->n) return 1;
    arc_lazy *z = s->u.set.lazy;
    if (z) return z->bits ? z->bits(z, s, b) : 0;
    arc_slot *tab = s->u.set.tab;
    for (uint32_t k = 0; k <= s->u.set.mask; k++) {
        tdm_arc_val *key = tab[k].key;
        if (key && key != ARC_DUMMY && !add_key(b, key)) return 0;
    }
    return 1;
}

int arc_bits_get(tdm_arc_rt *rt, tdm_arc_val *s, arc_bits *b) {
    const arc_bits *own = arc_bits_of(s);
    if (own) {
        *b = *own;
        return 1;
    }
    if (arc_bits_init(rt, b)) return -1;
    return arc_bits_add(b, s);
}

uint32_t arc_bits_count(const arc_bits *b) {
    uint32_t n = 0;
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        const uint32_t *m = b->m + 32 * __builtin_ctz(bl);
        for (int i = 0; i < 32; i++) n += (uint32_t)popc(m[i]);
    }
    return n;
}

void arc_bits_positions(const arc_bits *b, uint32_t rows[32]) {
    memset(rows, 0, 32 * sizeof *rows);
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        const uint32_t *m = b->m + 32 * __builtin_ctz(bl);
        for (int i = 0; i < 32; i++) rows[i] |= m[i];
    }
}

void arc_bits_box(const arc_bits *b, int64_t box[4]) {
    uint32_t rows[32], cols = 0;
    arc_bits_positions(b, rows);
    int u = 32, d = -1;
    for (int i = 0; i < 32; i++)
        if (rows[i]) {
            if (u == 32) u = i;
            d = i, cols |= rows[i];
        }
    box[0] = u - ARC_BITS_OFF, box[1] = __builtin_ctz(cols) - ARC_BITS_OFF, box[2] = d - ARC_BITS_OFF;
    box[3] = 31 - __builtin_clz(cols) - ARC_BITS_OFF;
}

/* ---- the deferred set's hooks (arc_lazy) ------------------------------------------------------------- */

static int bset_layout(arc_lazy *z, tdm_arc_val *s) {
    arc_bset *x = (arc_bset *)z;
    tdm_arc_val *r = x->eager(z->rt, x->arg);
    if (!r) return -1;
    /* the recipe gives the same contents (the tests hold it to that); anything else is a bug to report */
    if (!arc_is_set(r) || r->n != s->n) return arc_failf(z->rt, "internal error: a deferred set's recipe gave other contents");
    arc_set_slots(r);
    arc_set_take(s, r);
    return 0;
}

/* The interned element at bit j of row i of block c. */
static inline const tdm_arc_val *elem_at(int kind, int c, int i, int j) {
    int p = (i - ARC_BITS_OFF - ARC_POS_LO) * ARC_POS_N + (j - ARC_BITS_OFF - ARC_POS_LO);
    return kind == ARC_BITS_POS ? &arc_pos_vals[p] : &arc_cell_vals[c * ARC_POS_N * ARC_POS_N + p];
}

static int64_t bset_hash(arc_lazy *z, tdm_arc_val *s) {
    const arc_bits *b = &((arc_bset *)z)->b;
    uint64_t acc = 0;
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        const uint32_t *m = b->m + 32 * c;
        for (int i = 0; i < 32; i++)
            for (uint32_t r = m[i]; r; r &= r - 1) acc = arc_fset_hash_add(acc, elem_at(b->kind, c, i, __builtin_ctz(r))->hash);
    }
    return arc_fset_hash_end(acc, s->n);
}

static int small_int(const tdm_arc_val *v, int lim, int *out) {
    if (!arc_is_int(v) || v->u.i < 0 || v->u.i >= lim) return 0;
    *out = (int)v->u.i;
    return 1;
}

/* Membership by value (Python's ==: a key need not be interned, and True == 1). */
static int bset_contains(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key) {
    (void)s;
    const arc_bits *b = &((arc_bset *)z)->b;
    int c = 0, i, j;
    if (!arc_is_tuple(key) || key->n != 2) return 0;
    tdm_arc_val *x = key->u.items[0], *y = key->u.items[1];
    if (b->kind == ARC_BITS_CELLS) {
        if (!small_int(x, ARC_COLOURS_N, &c) || !arc_is_tuple(y) || y->n != 2) return 0;
        x = y->u.items[0], y = y->u.items[1];
    } else if (b->kind != ARC_BITS_POS) {
        return 0;
    }
    if (!arc_is_int(x) || !arc_is_int(y) || !arc_bits_fits(x->u.i, y->u.i) || !(b->blocks >> c & 1)) return 0;
    i = (int)x->u.i + ARC_BITS_OFF, j = (int)y->u.i + ARC_BITS_OFF;
    return (int)(b->m[32 * c + i] >> j & 1);
}

static int bset_uniform(arc_lazy *z, tdm_arc_val *s, int64_t *c) {
    const arc_bits *b = &((arc_bset *)z)->b;
    if (b->kind != ARC_BITS_CELLS || !s->n || popc(b->blocks) != 1) return 0;
    *c = __builtin_ctz(b->blocks);
    return 1;
}

static int bset_bbox(arc_lazy *z, tdm_arc_val *s, int64_t box[4]) {
    const arc_bits *b = &((arc_bset *)z)->b;
    if (b->kind != ARC_BITS_CELLS || !s->n) return 0;
    arc_bits_box(b, box);
    return 1;
}

static int bset_bits(arc_lazy *z, tdm_arc_val *s, arc_bits *dst) {
    (void)s;
    return or_bits(dst, &((arc_bset *)z)->b);
}

const arc_bits *arc_bits_of(const tdm_arc_val *s) {
    if (!arc_is_set(s) || !s->u.set.lazy || s->u.set.lazy->layout != bset_layout) return NULL;
    return &((arc_bset *)s->u.set.lazy)->b;
}

tdm_arc_val *arc_bits_set(tdm_arc_rt *rt, arc_bits *b, arc_prim_fn eager, tdm_arc_val **args, int nargs) {
    arc_bset *x = arc_alloc(rt, sizeof *x);
    if (!x) return NULL;
    /* blocks that ended up empty (a difference) are dropped, so blocks names exactly the colours present */
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl), any = 0;
        for (int i = 0; i < 32; i++) any |= b->m[32 * c + i] != 0;
        if (!any) b->blocks &= ~(1u << c);
    }
    if (!b->blocks) b->kind = ARC_BITS_NONE;
    memset(x, 0, sizeof *x);
    x->z.rt = rt, x->z.layout = bset_layout, x->z.hash = bset_hash, x->z.contains = bset_contains;
    x->z.uniform = bset_uniform, x->z.bbox = bset_bbox, x->z.bits = bset_bits;
    x->eager = eager, x->b = *b;
    for (int k = 0; k < nargs; k++) x->arg[k] = args[k];
    return arc_set_lazy(rt, &x->z, 0, arc_bits_count(b));
}

int arc_bits_same(const arc_bits *a, const arc_bits *b) {
    if (a->kind != b->kind) return a->kind == ARC_BITS_NONE ? !arc_bits_count(b) : b->kind == ARC_BITS_NONE && !arc_bits_count(a);
    for (uint32_t bl = a->blocks | b->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        for (int i = 0; i < 32; i++) {
            uint32_t x = a->blocks >> c & 1 ? a->m[32 * c + i] : 0, y = b->blocks >> c & 1 ? b->m[32 * c + i] : 0;
            if (x != y) return 0;
        }
    }
    return 1;
}

int arc_bits_equal(tdm_arc_val *a, tdm_arc_val *b) {
    const arc_bits *x = arc_bits_of(a), *y = arc_bits_of(b);
    if (!x && !y) return -1;
    uint32_t m[32 * ARC_COLOURS_N];
    arc_bits t = {ARC_BITS_NONE, 0, m};
    if (!x) {
        if (!arc_bits_add(&t, a)) return -1;
        x = &t;
    } else if (!y) {
        if (!arc_bits_add(&t, b)) return -1;
        y = &t;
    }
    return arc_bits_same(x, y);
}
