/* bits.c: frozensets of cells and positions whose CPython layout is deferred (spec §4.11). Most sets that
 * merge, mfilter, mapply, toindices, difference, recolor, shift, normalize, connect, shoot, ofcolor and
 * asindices make are only measured, tested for membership, hashed, compared or painted, and none of that
 * reads an iteration order; building their tables in CPython's insertion order was most of a solver call.
 * So when every element of a result is a position (i, j) or a cell (c, (i, j)), the primitive returns a
 * lazy set holding its contents (arc_bits: interned elements with -2 <= i, j < 30 as row masks, one block
 * of 32 rows per colour; in a wide set, the rest, such as the far end of a shoot, as a sorted list of
 * keys) and its recipe: the primitive's eager form and its arguments. Values are immutable, so running the
 * recipe when something first reads the order (iteration, first, repr, a rebuild in order, ...) gives the
 * table the eager run would have given then; the recipe's own lazy arguments are laid out by it in turn,
 * as reads. tests/unit/test_arc_bits.c holds every such layout to the eager one, slot by slot. */
#include "arc_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct {
    arc_lazy z; /* first: the set points here */
    arc_prim_fn eager;
    tdm_arc_val *arg[3];
    arc_bits b;
    int boxed;       /* box holds b's box (arc_bits_box_of): vline, hline, shape, ... ask one set again */
    int row_major;   /* the recipe adds the elements to a new set in row-major order (arc_bits_row_major) */
    int64_t box[4];
    tdm_arc_val **mem; /* its elements, the interned values, once listed (bset_members) */
    tdm_arc_val *ends[2]; /* first and last of a small set, once found (arc_bits_small_ends) */
    tdm_arc_val set;   /* the set itself, made in the same allocation */
} arc_bset;

int arc_bits_init(tdm_arc_rt *rt, arc_bits *b) {
    b->kind = ARC_BITS_NONE, b->blocks = 0, b->rows = 0;
    b->rt = NULL, b->out = NULL, b->nout = b->cap = 0;
    b->m = arc_alloc(rt, 32 * ARC_COLOURS_N * sizeof *b->m);
    return b->m ? 0 : -1;
}

int arc_bits_init_wide(tdm_arc_rt *rt, arc_bits *b) {
    if (arc_bits_init(rt, b)) return -1;
    b->rt = rt;
    return 0;
}

/* Room for m more wide keys (doubling): 0, or -1 out of memory. */
int arc_bits_reserve(arc_bits *b, uint32_t m) {
    if (b->nout + m <= b->cap) return 0;
    uint32_t cap = b->cap ? 2 * b->cap : 64;
    while (cap < b->nout + m) cap *= 2;
    uint64_t *o = arc_alloc(b->rt, cap * sizeof *o);
    if (!o) return -1;
    if (b->nout) memcpy(o, b->out, b->nout * sizeof *o);
    b->out = o, b->cap = cap;
    return 0;
}

static int push_key(arc_bits *b, uint64_t k) {
    if (b->nout == b->cap && arc_bits_reserve(b, 1)) return -1;
    b->out[b->nout++] = k;
    return 0;
}

int arc_bits_put(arc_bits *b, int64_t c, int64_t i, int64_t j) {
    if (arc_bits_fits(i, j)) {
        arc_bits_block(b, (int)c)[i + ARC_BITS_OFF] |= 1u << (j + ARC_BITS_OFF);
        return 0;
    }
    return push_key(b, arc_bits_key(c, i, j));
}

/* Narrows [*lo, *hi) to the steps k where x + k * d lies in the masks' range (d is -1, 0 or 1). */
static void fit_steps(int64_t x, int64_t d, int64_t *lo, int64_t *hi) {
    const int64_t a = -ARC_BITS_OFF, b = 32 - ARC_BITS_OFF; /* x + k * d in [a, b) */
    int64_t l = 0, h = INT64_MAX;
    if (d == 0) h = x >= a && x < b ? INT64_MAX : 0;
    else if (d > 0) l = a - x, h = b - x;
    else l = x - b + 1, h = x - a + 1;
    *lo = l > *lo ? l : *lo, *hi = h < *hi ? h : *hi;
}

int arc_bits_put_run(arc_bits *b, int64_t c, int64_t i, int64_t j, int64_t di, int64_t dj, uint32_t n) {
    uint32_t *m = arc_bits_block(b, (int)c);
    /* each coordinate moves one way, so the steps inside the masks are one stretch [lo, hi): keys before
       and after it, mask bits within */
    int64_t lo = 0, hi = n;
    fit_steps(i, di, &lo, &hi), fit_steps(j, dj, &lo, &hi);
    if (hi < lo) lo = hi = n; /* none fits: all keys */
    if ((int64_t)n - (hi - lo) > 0 && arc_bits_reserve(b, (uint32_t)((int64_t)n - (hi - lo)))) return -1;
    /* the keys of a run step by a constant: its ends are valid keys, so no field leaves its range */
    uint64_t key = arc_bits_key(c, i, j), step = (uint64_t)(di * ((int64_t)1 << 24) + dj), *o = b->out + b->nout;
    for (int64_t k = 0; k < lo; k++) *o++ = key + (uint64_t)k * step;
    if (di == 0 && hi > lo) { /* along a row: the stretch is one span of bits, set at once */
        int64_t a = j + (dj > 0 ? lo : hi - 1) * dj + ARC_BITS_OFF, z = j + (dj > 0 ? hi - 1 : lo) * dj + ARC_BITS_OFF;
        m[i + ARC_BITS_OFF] |= (uint32_t)((2ull << z) - (1ull << a));
    } else
        for (int64_t k = lo; k < hi; k++) m[i + k * di + ARC_BITS_OFF] |= 1u << (j + k * dj + ARC_BITS_OFF);
    for (int64_t k = hi; k < n; k++) *o++ = key + (uint64_t)k * step;
    b->nout = (uint32_t)(o - b->out);
    return 0;
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

static int want_kind(arc_bits *b, int kind) {
    if (b->kind == kind) return 1;
    if (b->kind != ARC_BITS_NONE) return 0;
    b->kind = kind;
    return 1;
}

/* (i, j) of a tuple of two ints (True counts as 1, as in Python's ==) within the keys' range. */
static int ints_of(const tdm_arc_val *p, int64_t *i, int64_t *j) {
    if (!arc_is_tuple(p) || p->n != 2 || !arc_is_int(p->u.items[0]) || !arc_is_int(p->u.items[1])) return 0;
    *i = p->u.items[0]->u.i, *j = p->u.items[1]->u.i;
    return arc_key_ok(*i, *j);
}

/* Reads key as a position (c 0) or a cell: its kind, or 0 when it is neither. */
static int parse(const tdm_arc_val *key, int64_t *c, int64_t *i, int64_t *j) {
    *c = 0;
    if (ints_of(key, i, j)) return ARC_BITS_POS;
    if (!arc_is_tuple(key) || key->n != 2 || !arc_is_int(key->u.items[0])) return 0;
    *c = key->u.items[0]->u.i;
    return *c >= 0 && *c < ARC_COLOURS_N && ints_of(key->u.items[1], i, j) ? ARC_BITS_CELLS : 0;
}

/* What key is as an element: ARC_BITS_POS or ARC_BITS_CELLS, with its colour (0 for a position) and
 * (i, j); 0 when neither. Interned pairs are told by their address; others are read (a tuple built
 * elsewhere: equal values hash alike, so the contents are what matter). */
static inline int elem_of(const tdm_arc_val *key, int64_t *c, int64_t *i, int64_t *j) {
    long k = pos_index(key);
    int kind = ARC_BITS_POS;
    *c = 0;
    if (k < 0 && (k = cell_index(key)) >= 0) *c = k / (ARC_POS_N * ARC_POS_N), k %= ARC_POS_N * ARC_POS_N, kind = ARC_BITS_CELLS;
    if (k < 0) return parse(key, c, i, j);
    *i = k / ARC_POS_N + ARC_POS_LO, *j = k % ARC_POS_N + ARC_POS_LO;
    return kind;
}

/* Adds the element key of an eager table: 1, 0 when it does not fit b, -1 out of memory. */
static int add_key(arc_bits *b, const tdm_arc_val *key) {
    int64_t c, i, j;
    int kind = elem_of(key, &c, &i, &j);
    if (!kind || !want_kind(b, kind)) return 0;
    if (arc_bits_fits(i, j)) {
        arc_bits_block(b, (int)c)[i + ARC_BITS_OFF] |= 1u << (j + ARC_BITS_OFF);
        return 1;
    }
    if (!b->rt) return 0;
    return arc_bits_put(b, c, i, j) ? -1 : 1;
}

/* b |= src (same kind, or either empty): 1, 0 when src is wide and b is not, -1 out of memory. */
static int or_bits(arc_bits *b, const arc_bits *src) {
    if (src->kind == ARC_BITS_NONE) return 1;
    if ((src->nout && !b->rt) || !want_kind(b, src->kind)) return 0;
    int lo, hi;
    arc_bits_span(src, &lo, &hi);
    for (uint32_t bl = src->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        uint32_t *d = arc_bits_block(b, c);
        const uint32_t *s = src->m + 32 * c;
        for (int i = lo; i < hi; i++) d[i] |= s[i];
    }
    if (!src->nout) return 1;
    if (arc_bits_reserve(b, src->nout)) return -1;
    memcpy(b->out + b->nout, src->out, src->nout * sizeof *src->out); /* a sorted run: arc_bits_set merges */
    b->nout += src->nout;
    return 1;
}

int arc_bits_add_elems(arc_bits *b, tdm_arc_val *const *v, uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        int r = add_key(b, v[k]);
        if (r <= 0) return r;
    }
    return 1;
}

int arc_bits_add(arc_bits *b, tdm_arc_val *s) {
    if (arc_tuple_is_lazy(s)) s = s->u.cat.set; /* a deferred concatenation: its contents */
    if (!arc_is_set(s)) return 0;
    if (!s->n) return 1;
    arc_lazy *z = s->u.set.lazy;
    if (z) return z->op->bits ? z->op->bits(z, s, b) : 0;
    arc_slot *tab = s->u.set.tab;
    for (uint32_t k = 0; k <= s->u.set.mask; k++) {
        tdm_arc_val *key = tab[k].key;
        if (key && key != ARC_DUMMY) {
            int r = add_key(b, key);
            if (r <= 0) return r;
        }
    }
    return 1;
}

static int get(tdm_arc_rt *rt, tdm_arc_val *s, arc_bits *b, int wide) {
    const arc_bits *own = arc_bits_of(s);
    if (own) {
        *b = *own;
        return wide || !own->nout;
    }
    if (wide ? arc_bits_init_wide(rt, b) : arc_bits_init(rt, b)) return -1;
    return arc_bits_add(b, s);
}

int arc_bits_get(tdm_arc_rt *rt, tdm_arc_val *s, arc_bits *b) { return get(rt, s, b, 0); }
int arc_bits_get_wide(tdm_arc_rt *rt, tdm_arc_val *s, arc_bits *b) { return get(rt, s, b, 1); }

static uint32_t sort_unique(tdm_arc_rt *rt, uint64_t *a, uint32_t n);

/* 1 when keys a[0..n) are strictly ascending (sorted, no repeats). */
static int ascending(const uint64_t *a, uint32_t n) {
    for (uint32_t k = 1; k < n; k++)
        if (a[k - 1] >= a[k]) return 0;
    return 1;
}

/* Sorted, unique keys of b's wide part: b's own when made, else a sorted copy in rt's arena. NULL out of
 * memory. */
static const uint64_t *sorted_keys(tdm_arc_rt *rt, const arc_bits *b, uint32_t *n) {
    *n = b->nout;
    if (ascending(b->out, b->nout)) return b->out;
    uint64_t *o = arc_alloc(rt, b->nout * sizeof *o);
    if (!o) return NULL;
    memcpy(o, b->out, b->nout * sizeof *o);
    *n = sort_unique(rt, o, b->nout);
    return o;
}

int arc_bits_meet(tdm_arc_rt *rt, const arc_bits *x, const arc_bits *y, arc_bits *d) {
    if (arc_bits_init_wide(rt, d)) return -1;
    d->kind = x->kind;
    for (uint32_t bl = x->blocks & y->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        uint32_t *m = arc_bits_block(d, c);
        const uint32_t *p = x->m + 32 * c, *q = y->m + 32 * c;
        for (int i = 0; i < 32; i++) m[i] = p[i] & q[i];
    }
    if (!x->nout || !y->nout) return 0;
    uint32_t n, m, i = 0, j = 0;
    const uint64_t *p = sorted_keys(rt, x, &n), *q = p ? sorted_keys(rt, y, &m) : NULL;
    if (!q || arc_bits_reserve(d, n < m ? n : m)) return -1;
    while (i < n && j < m) {
        if (p[i] < q[j]) i++;
        else if (q[j] < p[i]) j++;
        else d->out[d->nout++] = p[i], i++, j++;
    }
    return 0;
}

uint32_t arc_rows_nonzero(const uint32_t rows[32]) {
#if defined(__SSE2__)
    /* each row's compare with 0 narrowed to a byte (saturating packs keep -1 and 0), 16 rows a mask */
    const __m128i zero = _mm_setzero_si128();
    __m128i w[4];
    for (int k = 0; k < 4; k++)
        w[k] = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(rows + 8 * k)), zero),
                               _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(rows + 8 * k + 4)), zero));
    uint32_t lo = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(w[0], w[1]));
    uint32_t hi = (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(w[2], w[3]));
    return ~(lo | hi << 16);
#else
    uint32_t u = 0;
    for (int i = 0; i < 32; i++) u |= (uint32_t)(rows[i] != 0) << i;
    return u;
#endif
}

int arc_bits_rows(tdm_arc_val *s, uint32_t rows[32], uint32_t *used) {
    uint32_t m[32 * ARC_COLOURS_N];
    arc_bits b = {.kind = ARC_BITS_NONE, .m = m};
    const arc_bits *src = arc_bits_of(s);
    if (!src && s->u.set.lazy && s->u.set.lazy->op->rows) { /* an object of objects(): its rows are kept */
        int r = s->u.set.lazy->op->rows(s->u.set.lazy, s, rows, used);
        if (r) return r;
    }
    if (!src && s->u.set.lazy) { /* a lazy set answers through its bits hook */
        int r = arc_bits_add(&b, s);
        if (r <= 0) return r;
        src = &b;
    }
    if (src) {
        if (src->nout) return 0;
        arc_bits_positions(src, rows);
        *used = src->rows ? src->rows : arc_rows_nonzero(rows); /* a made set knows its rows */
        return 1;
    }
    /* an eager table: straight into the rows, without colour blocks (each row zeroed when first met) */
    int kind = ARC_BITS_NONE;
    uint32_t u = 0;
    for (uint32_t k = 0; k <= s->u.set.mask; k++) {
        const tdm_arc_val *key = s->u.set.tab[k].key;
        if (!key || key == ARC_DUMMY) continue;
        int64_t c, i, j;
        int kk = elem_of(key, &c, &i, &j);
        if (!kk || (kind != kk && kind != ARC_BITS_NONE) || !arc_bits_fits(i, j)) return 0;
        kind = kk;
        uint32_t bit = 1u << (i + ARC_BITS_OFF);
        rows[i + ARC_BITS_OFF] = (u & bit ? rows[i + ARC_BITS_OFF] : 0) | 1u << (j + ARC_BITS_OFF);
        u |= bit;
    }
    *used = u;
    return 1;
}

int arc_bits_point(const tdm_arc_val *s, int *row, uint32_t *bits) {
    if (!arc_is_set(s) || s->n != 1 || s->u.set.lazy) return 0;
    for (uint32_t k = 0; k <= s->u.set.mask; k++) {
        const tdm_arc_val *key = s->u.set.tab[k].key;
        if (!key || key == ARC_DUMMY) continue;
        int64_t c, i, j;
        if (!elem_of(key, &c, &i, &j) || !arc_bits_fits(i, j)) return 0;
        *row = (int)i + ARC_BITS_OFF, *bits = 1u << (j + ARC_BITS_OFF);
        return 1;
    }
    return 0;
}

void arc_bits_positions(const arc_bits *b, uint32_t rows[32]) {
    int lo, hi;
    arc_bits_span(b, &lo, &hi);
    arc_zero128(rows);
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        const uint32_t *m = b->m + 32 * __builtin_ctz(bl);
        for (int i = lo; i < hi; i++) rows[i] |= m[i];
    }
}

void arc_bits_box(const arc_bits *b, int64_t box[4]) {
    uint32_t cols = 0;
    int64_t u = INT64_MAX, l = INT64_MAX, d = INT64_MIN, r = INT64_MIN;
    int top, bot;
    if (b->rows) { /* made: the rows are known, the columns are those of rows top..bot of every block */
        top = __builtin_ctz(b->rows), bot = 31 - __builtin_clz(b->rows);
        for (uint32_t bl = b->blocks; bl; bl &= bl - 1)
            for (int i = top, c = __builtin_ctz(bl); i <= bot; i++) cols |= b->m[32 * c + i];
    } else {
        uint32_t tmp[32];
        const uint32_t *rows = tmp;
        if (b->blocks && !(b->blocks & (b->blocks - 1))) rows = b->m + 32 * __builtin_ctz(b->blocks); /* one colour */
        else arc_bits_positions(b, tmp);
        for (top = 0; top < 32 && !rows[top];) top++;
        for (bot = 31; bot >= top && !rows[bot];) bot--;
        for (int i = top; i <= bot; i++) cols |= rows[i];
    }
    if (cols) {
        u = top - ARC_BITS_OFF, d = bot - ARC_BITS_OFF;
        l = __builtin_ctz(cols) - ARC_BITS_OFF, r = 31 - __builtin_clz(cols) - ARC_BITS_OFF;
    }
    for (uint32_t k = 0; k < b->nout; k++) {
        int64_t i = arc_key_i(b->out[k]), j = arc_key_j(b->out[k]);
        u = i < u ? i : u, d = i > d ? i : d, l = j < l ? j : l, r = j > r ? j : r;
    }
    box[0] = u, box[1] = l, box[2] = d, box[3] = r;
}

/* ---- the deferred set's hooks (arc_lazy) ------------------------------------------------------------- */

static int bset_layout(arc_lazy *z, tdm_arc_val *s) {
    arc_bset *x = (arc_bset *)z;
    return arc_set_take_recipe(z->rt, s, x->eager(z->rt, x->arg));
}

/* Each mask element's part of a frozenset's hash (arc_fset_hash_add of its hash) as prefix xors per mask
 * row: elem_pxor[k][i][j] = the xor over bits 0..j-1 of row i (k: colour k of cells, ARC_COLOURS_N for
 * positions), so that a run of bits adds its part in two reads. Made once per process. */
static uint64_t elem_pxor[ARC_COLOURS_N + 1][32][33];
static pthread_once_t elem_pxor_once = PTHREAD_ONCE_INIT;
static atomic_int elem_pxor_ready; /* set when made: a load, where pthread_once is a call */

static void elem_pxor_make(void) {
    for (int k = 0; k <= ARC_COLOURS_N; k++)
        for (int i = 0; i < 32; i++)
            for (int j = 0; j < 32; j++) {
                tdm_arc_val *e = arc_bits_elem(k < ARC_COLOURS_N ? ARC_BITS_CELLS : ARC_BITS_POS, k % ARC_COLOURS_N, i, j);
                elem_pxor[k][i][j + 1] = arc_fset_hash_add(elem_pxor[k][i][j], arc_hash(e));
            }
    atomic_store_explicit(&elem_pxor_ready, 1, memory_order_release);
}

void arc_elem_pxor_make(void) {
    if (!atomic_load_explicit(&elem_pxor_ready, memory_order_acquire)) pthread_once(&elem_pxor_once, elem_pxor_make);
}

static int64_t bset_hash(arc_lazy *z, tdm_arc_val *s) {
    const arc_bits *b = &((arc_bset *)z)->b;
    uint64_t acc = 0;
    arc_elem_pxor_make();
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        const uint32_t *m = b->m + 32 * c;
        const uint64_t(*px)[33] = elem_pxor[b->kind == ARC_BITS_POS ? ARC_COLOURS_N : c];
        for (uint32_t used = arc_rows_nonzero(m); used; used &= used - 1)
            for (uint32_t i = (uint32_t)__builtin_ctz(used), r = m[i]; r;) { /* run by run: bits j0..j1 - 1 */
                int j0 = __builtin_ctz(r);
                uint32_t t = r + (1u << j0); /* the run cleared and bit j1 set (0 when the run ends at bit 31) */
                int j1 = t ? __builtin_ctz(t) : 32;
                acc ^= px[i][j1] ^ px[i][j0], r &= t;
            }
    }
    for (uint32_t k = 0; k < b->nout; k++) { /* the wide part: the tuples' hashes as arc_hash computes them */
        uint64_t key = b->out[k];
        int64_t h = arc_pair_hash(arc_int_hash(arc_key_i(key)), arc_int_hash(arc_key_j(key)));
        if (b->kind == ARC_BITS_CELLS) h = arc_pair_hash(arc_int_hash(arc_key_c(key)), h);
        acc = arc_fset_hash_add(acc, h);
    }
    return arc_fset_hash_end(acc, s->n);
}

static int has_key(const arc_bits *b, uint64_t key) {
    uint32_t lo = 0, hi = b->nout;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (b->out[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < b->nout && b->out[lo] == key;
}

/* Membership by value (Python's ==: a key need not be interned, and True == 1). */
static int bset_contains(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key) {
    (void)s;
    const arc_bits *b = &((arc_bset *)z)->b;
    int64_t c, i, j;
    if (!b->kind || parse(key, &c, &i, &j) != b->kind) return 0;
    if (!arc_bits_fits(i, j)) return has_key(b, arc_bits_key(c, i, j));
    return b->blocks >> c & 1 && b->m[32 * c + i + ARC_BITS_OFF] >> (j + ARC_BITS_OFF) & 1;
}

/* The elements without a layout (arc_lazy.members), for the order-free filters and maps (image.c): the
 * interned positions or cells of the masks. A wide set lists none (its other elements are not values yet). */
static int bset_members(arc_lazy *z, tdm_arc_val *s, tdm_arc_val ***v) {
    arc_bset *x = (arc_bset *)z;
    const arc_bits *b = &x->b;
    if (b->nout || !b->kind) return 0;
    if (!x->mem) {
        uint32_t n = 0;
        int lo, hi;
        if (!(x->mem = arc_alloc(z->rt, (size_t)s->n * sizeof *x->mem))) return -1;
        arc_bits_span(b, &lo, &hi);
        for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
            int c = __builtin_ctz(bl);
            for (int i = lo; i < hi; i++)
                for (uint32_t r = b->m[32 * c + i]; r; r &= r - 1)
                    x->mem[n++] = arc_bits_elem(b->kind, c, i, __builtin_ctz(r));
        }
    }
    *v = x->mem;
    return 1;
}

static int bset_uniform(arc_lazy *z, tdm_arc_val *s, int64_t *c) {
    const arc_bits *b = &((arc_bset *)z)->b;
    if (b->kind != ARC_BITS_CELLS || !s->n || arc_popc(b->blocks) > 1) return 0;
    int64_t col = b->blocks ? __builtin_ctz(b->blocks) : arc_key_c(b->out[0]);
    for (uint32_t k = 0; k < b->nout; k++)
        if (arc_key_c(b->out[k]) != col) return 0;
    *c = col;
    return 1;
}

static void bset_box(arc_bset *x, int64_t box[4]) {
    if (!x->boxed) arc_bits_box(&x->b, x->box), x->boxed = 1;
    memcpy(box, x->box, sizeof x->box);
}

static int bset_bbox(arc_lazy *z, tdm_arc_val *s, int64_t box[4]) {
    arc_bset *x = (arc_bset *)z;
    if (x->b.kind != ARC_BITS_CELLS || !s->n) return 0;
    bset_box(x, box);
    return 1;
}

static int bset_bits(arc_lazy *z, tdm_arc_val *s, arc_bits *dst) {
    (void)s;
    return or_bits(dst, &((arc_bset *)z)->b);
}

static const arc_lazy_ops bset_ops; /* the hooks, defined after them */

const arc_bits *arc_bits_of(const tdm_arc_val *s) {
    if (!arc_is_set(s) || !s->u.set.lazy || s->u.set.lazy->op != &bset_ops) return NULL;
    return &((arc_bset *)s->u.set.lazy)->b;
}

void arc_bits_box_of(tdm_arc_val *s, int64_t box[4]) { bset_box((arc_bset *)s->u.set.lazy, box); }

void arc_bits_row_major(tdm_arc_val *s) { ((arc_bset *)s->u.set.lazy)->row_major = 1; }

int arc_bits_small_ends(tdm_arc_val *s, tdm_arc_val **first, tdm_arc_val **last) {
    const arc_bits *b = arc_bits_of(s);
    if (!b) return 0;
    arc_bset *x = (arc_bset *)s->u.set.lazy;
    if (x->ends[0]) return *first = x->ends[0], *last = x->ends[1], 1; /* first's, now asked for last, say */
    if (s->n > 4 || b->nout || (b->blocks & (b->blocks - 1)) || !x->row_major) return 0;
    tdm_arc_val *v[4];
    uint32_t n = 0;
    int c = __builtin_ctz(b->blocks | 1u << 31); /* one colour, or positions: its rows in order, each row's bits */
    const uint32_t *m = b->m + 32 * c;
    for (uint32_t used = b->rows; used; used &= used - 1)
        for (uint32_t i = (uint32_t)__builtin_ctz(used), r = m[i]; r && n < 4; r &= r - 1)
            v[n++] = arc_bits_elem(b->kind, c, (int)i, __builtin_ctz(r));
    if (n != s->n || !n) return 0;
    /* added in that order: the lowest and the highest slot taken */
    uint32_t taken = 0;
    int lo = 8, hi = -1;
    for (uint32_t k = 0; k < n; k++) {
        int i = arc_slot8(&taken, (uint64_t)arc_hash_fast(v[k]));
        if (i < lo) lo = i, *first = v[k];
        if (i > hi) hi = i, *last = v[k];
    }
    x->ends[0] = *first, x->ends[1] = *last;
    return 1;
}

void arc_bits_box_for(tdm_arc_val *s, const arc_bits *b, int64_t box[4]) {
    if (arc_bits_of(s)) arc_bits_box_of(s, box);
    else if (!(arc_is_set(s) && s->u.set.lazy && s->u.set.lazy->op->bbox && s->u.set.lazy->op->bbox(s->u.set.lazy, s, box)))
        arc_bits_box(b, box); /* not an object of objects(), which keeps its box */
}

static int key_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* sort_unique of many keys packed in a small box of (c, i, j), repeats common (lines shot off the grid
 * from cells of one column, say): each key marks its bit of a bitmap over the box, read back in order (a
 * box at most 64 wide: a word per row, no division per key). The count left, or 0 when the box holds more
 * than 8 bits per key (or no memory). */
static uint32_t by_bitmap(tdm_arc_rt *rt, uint64_t *a, uint32_t n) {
    /* first the (c, i) rows and the j span of the raw keys (k >> 24 and k & 0xffffff, both ascending with
       the key's fields): keys of one colour in at most n rows and 64 columns take a word a row */
    uint64_t r0 = UINT64_MAX, r1 = 0, jl = UINT64_MAX, jh = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t r = a[k] >> 24, j = a[k] & 0xffffff;
        r0 = r < r0 ? r : r0, r1 = r > r1 ? r : r1, jl = j < jl ? j : jl, jh = j > jh ? j : jh;
    }
    if (jh - jl < 64 && r1 - r0 < (uint64_t)n) {
        uint64_t nrows = r1 - r0 + 1, *row = arc_alloc(rt, (size_t)nrows * sizeof *row);
        if (!row) return 0;
        memset(row, 0, (size_t)nrows * sizeof *row);
        for (uint32_t k = 0; k < n; k++) row[(a[k] >> 24) - r0] |= 1ull << ((a[k] & 0xffffff) - jl);
        uint32_t m = 0;
        for (uint64_t r = 0; r < nrows; r++) /* rows in key order, bits in order */
            for (uint64_t v = row[r], base = (r0 + r) << 24 | jl; v; v &= v - 1) a[m++] = base + (uint64_t)__builtin_ctzll(v);
        return m;
    }
    int64_t c0 = INT64_MAX, c1 = INT64_MIN, i0 = INT64_MAX, i1 = INT64_MIN, j0 = INT64_MAX, j1 = INT64_MIN;
    for (uint32_t k = 0; k < n; k++) {
        int64_t c = arc_key_c(a[k]), i = arc_key_i(a[k]), j = arc_key_j(a[k]);
        c0 = c < c0 ? c : c0, c1 = c > c1 ? c : c1, i0 = i < i0 ? i : i0, i1 = i > i1 ? i : i1;
        j0 = j < j0 ? j : j0, j1 = j > j1 ? j : j1;
    }
    uint64_t hi = (uint64_t)(i1 - i0 + 1), wj = (uint64_t)(j1 - j0 + 1), bits = (uint64_t)(c1 - c0 + 1) * hi * wj;
    if (wj <= 64 && (uint64_t)(c1 - c0 + 1) * hi <= (uint64_t)n) { /* narrow (lines shot along columns): a word a row */
        uint64_t nrows = (uint64_t)(c1 - c0 + 1) * hi, *row = arc_alloc(rt, (size_t)nrows * sizeof *row);
        if (!row) return 0;
        memset(row, 0, (size_t)nrows * sizeof *row);
        for (uint32_t k = 0; k < n; k++)
            row[(uint64_t)(arc_key_c(a[k]) - c0) * hi + (uint64_t)(arc_key_i(a[k]) - i0)] |= 1ull << (arc_key_j(a[k]) - j0);
        uint32_t m = 0;
        for (uint64_t r = 0; r < nrows; r++) /* keys ascend with (c, i), then j: the rows in order, bits in order */
            for (uint64_t v = row[r], base = arc_bits_key(c0 + (int64_t)(r / hi), i0 + (int64_t)(r % hi), j0); v; v &= v - 1)
                a[m++] = base + (uint64_t)__builtin_ctzll(v);
        return m;
    }
    if (bits > 8 * (uint64_t)n) return 0; /* sparse: the box's words would cost more than merging runs */
    uint64_t *map = arc_alloc(rt, (size_t)(bits + 63) / 64 * sizeof *map);
    if (!map) return 0;
    memset(map, 0, (size_t)(bits + 63) / 64 * sizeof *map);
    for (uint32_t k = 0; k < n; k++) {
        uint64_t x = ((uint64_t)(arc_key_c(a[k]) - c0) * hi + (uint64_t)(arc_key_i(a[k]) - i0)) * wj + (uint64_t)(arc_key_j(a[k]) - j0);
        map[x / 64] |= 1ull << (x % 64);
    }
    uint32_t m = 0;
    for (uint64_t w = 0; w < (bits + 63) / 64; w++)
        for (uint64_t v = map[w]; v; v &= v - 1) {
            uint64_t x = w * 64 + (uint64_t)__builtin_ctzll(v), j = x % wj, i = x / wj % hi, c = x / wj / hi;
            a[m++] = arc_bits_key(c0 + (int64_t)c, i0 + (int64_t)i, j0 + (int64_t)j);
        }
    return m;
}

/* Sorts keys a[0..n) ascending and drops repeats: the count left. The wide part is mostly a few sorted
 * runs (each merged set's list, or a line's keys one way or the other), often overlapping (lines shot
 * from cells of one column), so the runs are found, the descending ones reversed, and the runs merged
 * pairwise, repeats dropped as they meet; many keys packed in a small box go through a bitmap instead, and
 * many short runs, or no scratch memory, to qsort. */
static uint32_t sort_unique(tdm_arc_rt *rt, uint64_t *a, uint32_t n) {
    if (n < 2) return n;
    uint32_t left = n >= 256 ? by_bitmap(rt, a, n) : 0;
    if (left) return left;
    uint32_t nruns = 0, *run = arc_alloc(rt, (size_t)(n + 1) * sizeof *run), *end = arc_alloc(rt, (size_t)(n + 1) * sizeof *end);
    uint64_t *tmp = arc_alloc(rt, (size_t)n * sizeof *tmp);
    if (!run || !end || !tmp) goto fallback;
    for (uint32_t k = 0; k < n;) {
        uint32_t e = k + 1;
        if (e < n && a[e] < a[k]) { /* strictly descending: reversed, it is an ascending run */
            while (e < n && a[e] < a[e - 1]) e++;
            for (uint32_t x = k, y = e - 1; x < y; x++, y--) {
                uint64_t t = a[x];
                a[x] = a[y], a[y] = t;
            }
        } else {
            while (e < n && a[e] >= a[e - 1]) e++;
        }
        run[nruns] = k, end[nruns++] = e, k = e;
    }
    if (nruns > 16 && nruns * 4 > n) goto fallback;
    uint64_t *src = a, *dst = tmp;
    do { /* runs r and r + 1 into one, packed from dst[0]; a last odd run is copied (repeats dropped too) */
        uint32_t m = 0, o = 0;
        for (uint32_t r = 0; r < nruns; r += 2, m++) {
            uint32_t x = run[r], xe = end[r], y = r + 1 < nruns ? run[r + 1] : 0, ye = r + 1 < nruns ? end[r + 1] : 0;
            uint32_t o0 = o;
            while (x < xe || y < ye) {
                uint64_t v = y >= ye || (x < xe && src[x] <= src[y]) ? src[x++] : src[y++];
                if (o == o0 || dst[o - 1] != v) dst[o++] = v;
            }
            run[m] = o0, end[m] = o;
        }
        nruns = m;
        uint64_t *t = src;
        src = dst, dst = t;
    } while (nruns > 1);
    n = end[0];
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
    return n;
fallback:
    qsort(a, n, sizeof *a, key_cmp);
    uint32_t m = n ? 1 : 0;
    for (uint32_t k = 1; k < n; k++)
        if (a[k] != a[m - 1]) a[m++] = a[k];
    return m;
}

/* A deferred set's hooks. */
static const arc_lazy_ops bset_ops = {.layout = bset_layout, .hash = bset_hash, .contains = bset_contains,
                                    .uniform = bset_uniform, .bbox = bset_bbox, .bits = bset_bits,
                                    .members = bset_members};

/* arc_bits_set_known's set in x (its value with it: one allocation). */
static inline __attribute__((always_inline)) tdm_arc_val *bset_make(arc_bset *x, tdm_arc_rt *rt, arc_bits *b, uint32_t n,
                                                                    const int64_t box[4], arc_prim_fn eager,
                                                                    tdm_arc_val **args, int nargs) {
    b->rt = NULL, b->cap = b->nout; /* made: nothing is added any more */
    /* every field written (box only when boxed), not the struct cleared first */
    x->z.rt = rt, x->z.op = &bset_ops;
    x->eager = eager, x->b = *b, x->mem = NULL, x->ends[0] = NULL, x->boxed = box != NULL, x->row_major = 0;
    for (int k = 0; k < 3; k++) x->arg[k] = k < nargs ? args[k] : NULL;
    if (box) memcpy(x->box, box, sizeof x->box);
    arc_lazy_set_init(&x->set, &x->z, 0, n);
    return &x->set;
}

/* arc_bits_set_known when the arena's chunk is full: apart, so that the common path makes no call. */
static __attribute__((noinline)) tdm_arc_val *bset_make_slow(tdm_arc_rt *rt, arc_bits *b, uint32_t n, const int64_t box[4],
                                                            arc_prim_fn eager, tdm_arc_val **args, int nargs) {
    arc_bset *x = arc_alloc(rt, sizeof *x);
    return x ? bset_make(x, rt, b, n, box, eager, args, nargs) : NULL;
}

tdm_arc_val *arc_bits_set_known(tdm_arc_rt *rt, arc_bits *b, uint32_t n, const int64_t box[4], arc_prim_fn eager,
                                tdm_arc_val **args, int nargs) {
    arc_bset *x = arc_alloc_bump(rt, sizeof *x);
    return x ? bset_make(x, rt, b, n, box, eager, args, nargs) : bset_make_slow(rt, b, n, box, eager, args, nargs);
}

/* The elements in b's masks (0 unless count), with b->rows set and the blocks that ended up empty (a
 * difference, or a line off the masks) dropped, so that blocks names exactly the colours present. count
 * and hw (constants): counting at all, and with the CPU's popcnt instruction (count_masks_hw, built for
 * it), else portably. */
static inline __attribute__((always_inline)) uint32_t count_masks_body(arc_bits *b, const int count, const int hw) {
    uint32_t n = 0, rows = 0;
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        const uint32_t *m = b->m + 32 * c;
        uint32_t used = arc_rows_nonzero(m);
        if (!used) {
            b->blocks &= ~(1u << c);
            continue;
        }
        rows |= used;
        for (; count && used; used &= used - 1) {
            uint32_t row = m[__builtin_ctz(used)];
            n += (uint32_t)(hw ? __builtin_popcount(row) : arc_popc(row));
        }
    }
    b->rows = rows;
    return n;
}

tdm_arc_val *arc_bits_set_counted(tdm_arc_rt *rt, arc_bits *b, uint32_t n, const int64_t box[4], arc_prim_fn eager,
                                  tdm_arc_val **args, int nargs) {
    count_masks_body(b, 0, 0); /* the rows and blocks only */
    return arc_bits_set_known(rt, b, n, box, eager, args, nargs);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt"))) static uint32_t count_masks_hw(arc_bits *b) { return count_masks_body(b, 1, 1); }
#endif

int arc_bits_portable;

/* count_masks_body with popcnt where the CPU has it (almost every x86-64 since 2008). */
static uint32_t count_masks(arc_bits *b) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (!arc_bits_portable && __builtin_cpu_supports("popcnt")) return count_masks_hw(b);
#endif
    return count_masks_body(b, 1, 0);
}

tdm_arc_val *arc_bits_set(tdm_arc_rt *rt, arc_bits *b, arc_prim_fn eager, tdm_arc_val **args, int nargs) {
    /* the masks counted (and their rows noted); the wide part is sorted, without repeats */
    uint32_t n = count_masks(b);
    if (!ascending(b->out, b->nout)) b->nout = sort_unique(rt, b->out, b->nout);
    n += b->nout;
    if (!n) b->kind = ARC_BITS_NONE;
    return arc_bits_set_known(rt, b, n, NULL, eager, args, nargs);
}

/* The 32 rows at x equal those at y (NULL: all empty): 1 or 0. */
static int block_same(const uint32_t *x, const uint32_t *y) {
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    __m128i d = zero;
    for (int i = 0; i < 32; i += 4)
        d = _mm_or_si128(d, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(x + i)), y ? _mm_loadu_si128((const __m128i *)(y + i)) : zero));
    return _mm_movemask_epi8(_mm_cmpeq_epi8(d, zero)) == 0xffff;
#else
    for (int i = 0; i < 32; i++)
        if (x[i] != (y ? y[i] : 0)) return 0;
    return 1;
#endif
}

/* Same contents, for made sets (or masks-only ones): 1 or 0. */
static int same(const arc_bits *a, const arc_bits *b) {
    if (a->nout != b->nout || (a->nout && memcmp(a->out, b->out, a->nout * sizeof *a->out))) return 0;
    uint32_t both = a->blocks | b->blocks;
    if (both && a->kind != b->kind) return 0;
    for (uint32_t bl = both; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        const uint32_t *x = a->blocks >> c & 1 ? a->m + 32 * c : NULL, *y = b->blocks >> c & 1 ? b->m + 32 * c : NULL;
        if (!block_same(x ? x : y, x ? y : NULL)) return 0;
    }
    return a->nout || both ? a->kind == b->kind : 1;
}

int arc_bits_equal(tdm_arc_val *a, tdm_arc_val *b) {
    const arc_bits *x = arc_bits_of(a), *y = arc_bits_of(b);
    if (!x && !y) return -1;
    uint32_t m[32 * ARC_COLOURS_N];
    arc_bits t = {.kind = ARC_BITS_NONE, .blocks = 0, .m = m, .rt = NULL, .out = NULL, .nout = 0, .cap = 0};
    if (!x) {
        if (arc_bits_add(&t, a) != 1) return -1;
        x = &t;
    } else if (!y) {
        if (arc_bits_add(&t, b) != 1) return -1;
        y = &t;
    }
    return same(x, y);
}
