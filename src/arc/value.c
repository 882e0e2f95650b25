/* value.c: the ARC DSL's values: the per-run arena that owns them, ints (small ones interned), tuples,
 * function values, CPython 3.11's hashes (spec §4.4), Python's == and ordering, len, repr, and the dense
 * grid view the grid primitives work on. Values are immutable once built; only a cached hash is written
 * later, which is why a runtime belongs to one thread at a time. */
#include "arc_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------------------------------------- */

struct arc_chunk {
    arc_chunk *next;
    size_t size;
    max_align_t data[];
};

#define ARC_CHUNK_MIN (256u * 1024u)

/* Memory a runtime keeps across resets; more than this (one huge call) is given back at the next reset. */
#define ARC_KEEP_BYTES ((size_t)64 << 20)

void *arc_alloc_slow(tdm_arc_rt *rt, size_t bytes) {
    {
        /* the next kept chunk if it is large enough, else a fresh one linked after the current one */
        arc_chunk *c = rt->chunk ? rt->chunk->next : rt->chunks;
        if (!c || c->size < bytes) {
            size_t size = bytes > ARC_CHUNK_MIN ? bytes : ARC_CHUNK_MIN;
            int over = rt->bytes > rt->max_bytes || size > rt->max_bytes - rt->bytes;
            arc_chunk *n = over ? NULL : tdm_malloc(sizeof *n + size);
            if (!n) {
                if (!rt->failed) {
                    rt->failed = 1, rt->status = TDM_E_NOMEM;
                    if (over)
                        snprintf(rt->err, sizeof rt->err, "out of memory (%zu more bytes would pass the port's "
                                 "limit of %zu MiB for one run's values)", bytes, rt->max_bytes >> 20);
                    else snprintf(rt->err, sizeof rt->err, "out of memory (%zu bytes)", bytes);
                }
                return NULL;
            }
            n->size = size, n->next = c;
            if (rt->chunk) rt->chunk->next = n;
            else rt->chunks = n;
            rt->bytes += size;
            c = n;
        }
        rt->chunk = c;
        rt->cur = (char *)c->data, rt->end = rt->cur + c->size;
    }
    void *p = rt->cur;
    rt->cur += bytes;
    return p;
}

/* 1 when p is in a chunk filled after at's, or in at's chunk at or past at.cur, before rt's end of use
 * (chunks are listed in the order they are filled). */
static int made_after(const tdm_arc_rt *rt, arc_at at, const void *p) {
    uintptr_t q = (uintptr_t)p;
    if (!rt->chunk) return 0;
    for (const arc_chunk *c = at.chunk ? at.chunk : rt->chunks; c; c = c->next) {
        uintptr_t lo = (uintptr_t)c->data;
        if (q >= lo && q < lo + c->size) return c != at.chunk || q >= (uintptr_t)at.cur;
        if (c == rt->chunk) break;
    }
    return 0;
}

static int fresh_sets(const tdm_arc_rt *rt, arc_at at, const tdm_arc_val *v, int depth) {
    if (v->kind != TDM_ARC_FSET && v->kind != TDM_ARC_TUPLE) return ARC_FRESH_NONE;
    if (!made_after(rt, at, v)) return ARC_FRESH_NONE;
    if (v->kind == TDM_ARC_FSET) return depth ? ARC_FRESH_HELD : ARC_FRESH_SET;
    if (arc_tuple_is_lazy(v) || depth > 32) return ARC_FRESH_HELD;
    for (uint32_t k = 0; k < v->n; k++)
        if (fresh_sets(rt, at, v->u.items[k], depth + 1)) return ARC_FRESH_HELD;
    return ARC_FRESH_NONE;
}

int arc_fresh_sets_slow(const tdm_arc_rt *rt, arc_at at, const tdm_arc_val *v) { return fresh_sets(rt, at, v, 0); }

int arc_grid_limit(tdm_arc_rt *rt, const char *who, const char *what, int64_t h, int64_t w) {
    int64_t cells;
    if (h < 0) h = 0;
    if (w < 0) w = 0;
    if (__builtin_mul_overflow(h, w > 0 ? w : 1, &cells))
        return arc_failf(rt, "%s: a %lldx%lld %s is more than the port allows (at most %d cells)", who,
                         (long long)h, (long long)w, what, ARC_MAX_CELLS);
    if (cells > ARC_MAX_CELLS)
        return arc_failf(rt, "%s: a %lldx%lld %s (%lld cells) is more than the port allows (at most %d cells)",
                         who, (long long)h, (long long)w, what, (long long)cells, ARC_MAX_CELLS);
    return 0;
}

int arc_elems_limit(tdm_arc_rt *rt, const char *who, uint64_t n) {
    if (n <= ARC_MAX_CELLS) return 0;
    return arc_failf(rt, "%s: %llu elements is more than the port allows (at most %d)", who,
                     (unsigned long long)n, ARC_MAX_CELLS);
}

static void vfail(tdm_arc_rt *rt, const char *fmt, va_list ap) {
    if (rt->failed) return;
    rt->failed = 1, rt->status = TDM_E_ARC_RAISE;
    vsnprintf(rt->err, sizeof rt->err, fmt, ap);
}

void *arc_fail(tdm_arc_rt *rt, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(rt, fmt, ap);
    va_end(ap);
    return NULL;
}

int arc_failf(tdm_arc_rt *rt, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(rt, fmt, ap);
    va_end(ap);
    return -1;
}

int tdm_arc_rt_new(tdm_arc_rt **out) {
    if (!out) return tdm_error(TDM_E_INVAL, "tdm_arc_rt_new: out is NULL");
    tdm_arc_rt *rt = tdm_calloc(1, sizeof *rt);
    if (!rt) return tdm_error(TDM_E_NOMEM, "tdm_arc_rt_new: no memory");
    rt->max_bytes = ARC_RT_MAX_BYTES;
    *out = rt;
    return TDM_OK;
}

static void free_chunks(arc_chunk *c) {
    while (c) {
        arc_chunk *n = c->next;
        tdm_free(c);
        c = n;
    }
}

void tdm_arc_rt_free(tdm_arc_rt *rt) {
    if (!rt) return;
    free_chunks(rt->chunks);
    tdm_free(rt->stats);
    tdm_free(rt->frame);
    tdm_free(rt);
}

void tdm_arc_rt_reset(tdm_arc_rt *rt) {
    if (!rt) return;
    /* Rewind to the first chunk and reuse them all, so steady runs (batches) never call malloc; after a
       call that needed more than ARC_KEEP_BYTES only the first chunk is kept. */
    arc_chunk *first = rt->chunks;
    if (first && rt->bytes > ARC_KEEP_BYTES) {
        free_chunks(first->next);
        first->next = NULL;
        rt->bytes = first->size;
    }
    rt->chunk = first, rt->cur = first ? (char *)first->data : NULL, rt->end = first ? rt->cur + first->size : NULL;
    rt->failed = 0, rt->status = 0, rt->depth = 0, rt->err[0] = '\0';
    rt->serial = 0; /* closures are numbered from 1 in each run: a result never depends on the runs before */
    rt->lazy_args = rt->grid_args = NULL;
    rt->grid_seen = rt->pick_grid = NULL; /* grids were in the arena */
    rt->counts_of = NULL;
    rt->empty_set = NULL;
    rt->memo = NULL; /* in the arena */
    for (int e = 0; rt->rows_any && e < ARC_ROWS_N; e++) rt->rows[e].key = NULL;
    rt->rows_any = 0;
    memset(rt->gview_of, 0, sizeof rt->gview_of);
}

const char *tdm_arc_rt_error(const tdm_arc_rt *rt) { return rt ? rt->err : ""; }
size_t tdm_arc_rt_bytes(const tdm_arc_rt *rt) { return rt ? rt->bytes : 0; }

/* ---- ints, bools, None ------------------------------------------------------------------------------- */

/* Interned ints: grids and coordinates use small values over and over, so most ints cost no memory. */
tdm_arc_val arc_small_ints[ARC_INT_HI - ARC_INT_LO + 1];
#define small_ints arc_small_ints
const tdm_arc_val *const arc_int_zero = &small_ints[0 - ARC_INT_LO];
static tdm_arc_val bool_vals[2];
tdm_arc_val arc_none_val;
tdm_arc_val arc_dummy_key;

int64_t arc_int_hash(int64_t n) {
    /* CPython: sign(n) * (|n| mod (2^61 - 1)), and -1 becomes -2. */
    const uint64_t M = ((uint64_t)1 << 61) - 1;
    if (n > -(int64_t)M && n < (int64_t)M) return n == -1 ? -2 : n; /* no division for the usual ints */
    uint64_t a = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
    int64_t h = (int64_t)(a % M);
    if (n < 0) h = -h;
    return h == -1 ? -2 : h;
}

__attribute__((constructor(101))) static void init_static_values(void) {
    for (int64_t v = ARC_INT_LO; v <= ARC_INT_HI; v++) {
        tdm_arc_val *x = &small_ints[v - ARC_INT_LO];
        x->kind = TDM_ARC_INT, x->u.i = v, x->hash = arc_int_hash(v), x->hashed = 1;
    }
    for (int b = 0; b < 2; b++) bool_vals[b].kind = TDM_ARC_BOOL, bool_vals[b].u.i = b, bool_vals[b].hash = b, bool_vals[b].hashed = 1;
    /* None hashes by address in CPython; any fixed value will do (spec §4.10: never inside a set). */
    arc_none_val.kind = TDM_ARC_NONE, arc_none_val.hash = 0x4e6f6e65, arc_none_val.hashed = 1;
    arc_dummy_key.kind = TDM_ARC_NONE;
}

tdm_arc_val *arc_int_alloc(tdm_arc_rt *rt, int64_t v) {
    tdm_arc_val *x = arc_alloc(rt, sizeof *x);
    if (!x) return NULL;
    memset(x, 0, sizeof *x);
    x->kind = TDM_ARC_INT, x->u.i = v;
    return x;
}

tdm_arc_val *arc_bool(int v) { return &bool_vals[v != 0]; }

/* ---- tuples and functions ----------------------------------------------------------------------------- */

/* x (NULL: out of memory) made a tuple of the n items at items. */
static tdm_arc_val *tuple_head(tdm_arc_val *x, tdm_arc_val **items, uint32_t n) {
    if (!x) return NULL;
    memset(x, 0, sizeof *x);
    x->kind = TDM_ARC_TUPLE, x->n = n, x->u.items = items;
    return x;
}

tdm_arc_val *arc_tuple(tdm_arc_rt *rt, uint32_t n) {
    tdm_arc_val *x = arc_alloc(rt, sizeof *x + (size_t)n * sizeof(tdm_arc_val *));
    return tuple_head(x, x ? (tdm_arc_val **)(x + 1) : NULL, n);
}

tdm_arc_val *arc_tuple_of(tdm_arc_rt *rt, tdm_arc_val **items, uint32_t n) { return tuple_head(arc_alloc(rt, sizeof(tdm_arc_val)), items, n); }

/* Interned positions (i, j) for i, j in POS_LO..POS_HI and cells (c, (i, j)) for colours 0..9 at those
 * positions: the pairs every patch is made of. Shared by all runtimes, immutable and hashed at start, so
 * building a patch allocates and hashes nothing and set lookups end at the pointer test. */
#define POS_LO ARC_POS_LO
#define POS_HI ARC_POS_HI
#define POS_N ARC_POS_N
tdm_arc_val arc_pos_vals[POS_N * POS_N], arc_cell_vals[10 * POS_N * POS_N];
#define pos_vals arc_pos_vals
#define cell_vals arc_cell_vals
static tdm_arc_val *pos_items[POS_N * POS_N][2], *cell_items[10 * POS_N * POS_N][2];

__attribute__((constructor(200))) static void init_pairs(void) {
    for (int i = 0; i < POS_N; i++)
        for (int j = 0; j < POS_N; j++) {
            int k = i * POS_N + j;
            tdm_arc_val *p = &pos_vals[k];
            pos_items[k][0] = &small_ints[i + POS_LO - ARC_INT_LO], pos_items[k][1] = &small_ints[j + POS_LO - ARC_INT_LO];
            p->kind = TDM_ARC_TUPLE, p->n = 2, p->u.items = pos_items[k];
            arc_hash(p);
            for (int c = 0; c < 10; c++) {
                tdm_arc_val *x = &cell_vals[c * POS_N * POS_N + k];
                cell_items[c * POS_N * POS_N + k][0] = &small_ints[c - ARC_INT_LO], cell_items[c * POS_N * POS_N + k][1] = p;
                x->kind = TDM_ARC_TUPLE, x->n = 2, x->u.items = cell_items[c * POS_N * POS_N + k];
                arc_hash(x);
            }
        }
}

static inline int is_pos(const tdm_arc_val *b) { return b >= pos_vals && b < pos_vals + POS_N * POS_N; }

tdm_arc_val *arc_pair(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b) {
    if (!a || !b) return NULL;
    if (a->kind == TDM_ARC_INT) {
        if (is_pos(b) && a->u.i >= 0 && a->u.i <= 9) return &cell_vals[a->u.i * POS_N * POS_N + (b - pos_vals)];
        if (b->kind == TDM_ARC_INT && a->u.i >= POS_LO && a->u.i <= POS_HI && b->u.i >= POS_LO && b->u.i <= POS_HI)
            return &pos_vals[(a->u.i - POS_LO) * POS_N + (b->u.i - POS_LO)];
    }
    tdm_arc_val *t = arc_tuple(rt, 2);
    if (!t) return NULL;
    t->u.items[0] = a, t->u.items[1] = b;
    return t;
}

tdm_arc_val *arc_ipair(tdm_arc_rt *rt, int64_t a, int64_t b) {
    if (a >= POS_LO && a <= POS_HI && b >= POS_LO && b <= POS_HI) return &pos_vals[(a - POS_LO) * POS_N + (b - POS_LO)];
    return arc_pair(rt, arc_int(rt, a), arc_int(rt, b));
}

tdm_arc_val *arc_cell(tdm_arc_rt *rt, int64_t c, int64_t i, int64_t j) {
    return arc_pair(rt, arc_int(rt, c), arc_ipair(rt, i, j));
}

tdm_arc_val *arc_closure(tdm_arc_rt *rt, int fkind, int arity, tdm_arc_val *a, tdm_arc_val *b, tdm_arc_val *c) {
    tdm_arc_val *x = arc_alloc(rt, sizeof *x);
    if (!x) return NULL;
    memset(x, 0, sizeof *x);
    x->kind = TDM_ARC_FUNC, x->fkind = (uint8_t)fkind, x->arity = (uint8_t)arity;
    x->u.fn.prim = ++rt->serial;
    x->u.fn.cap[0] = a, x->u.fn.cap[1] = b, x->u.fn.cap[2] = c;
    return x;
}

/* ---- hashing ------------------------------------------------------------------------------------------ */

int64_t arc_fset_hash_end(uint64_t acc, uint32_t n) {
    acc ^= ((uint64_t)n + 1) * 1927868237ull;
    acc ^= (acc >> 11) ^ (acc >> 25);
    acc = acc * 69069u + 907133923ull;
    return acc == UINT64_MAX ? 590923713 : (int64_t)acc;
}

static uint64_t rotl31(uint64_t x) { return (x << 31) | (x >> 33); }

int64_t arc_pair_hash(int64_t h0, int64_t h1) {
    const uint64_t P1 = 11400714785074694791ull, P2 = 14029467366897019727ull, P5 = 2870177450012600261ull;
    uint64_t acc = P5;
    acc = rotl31(acc + (uint64_t)h0 * P2) * P1;
    acc = rotl31(acc + (uint64_t)h1 * P2) * P1;
    acc += (uint64_t)2 ^ (P5 ^ 3527539ull);
    return acc == UINT64_MAX ? 1546275796 : (int64_t)acc;
}

int64_t arc_hash(tdm_arc_val *v) {
    if (v->hashed) return v->hash;
    int64_t h;
    switch (v->kind) {
    case TDM_ARC_INT:
    case TDM_ARC_BOOL: h = arc_int_hash(v->u.i); break;
    case TDM_ARC_TUPLE: {
        if (v->fkind) arc_cat_force(v); /* a deferred concatenation's items first (arc_internal.h) */
        const uint64_t P1 = 11400714785074694791ull, P2 = 14029467366897019727ull, P5 = 2870177450012600261ull;
        uint64_t acc = P5;
        for (uint32_t k = 0; k < v->n; k++) {
            acc += (uint64_t)arc_hash(v->u.items[k]) * P2;
            acc = rotl31(acc);
            acc *= P1;
        }
        acc += (uint64_t)v->n ^ (P5 ^ 3527539ull);
        h = acc == UINT64_MAX ? 1546275796 : (int64_t)acc;
        break;
    }
    case TDM_ARC_FSET: {
        if (v->u.set.lazy) { /* the hash ignores the layout: the maker knows it without one */
            h = v->u.set.lazy->op->hash(v->u.set.lazy, v);
            break;
        }
        uint64_t acc = 0;
        for (uint32_t s = 0; s <= v->u.set.mask; s++) {
            tdm_arc_val *k = v->u.set.tab[s].key;
            if (k && k != ARC_DUMMY) acc = arc_fset_hash_add(acc, v->u.set.tab[s].hash);
        }
        h = arc_fset_hash_end(acc, v->n);
        break;
    }
    case TDM_ARC_FUNC:
        /* CPython hashes functions by address; a serial number is as good and the same on every run. */
        h = v->fkind == ARC_FN_PRIM ? 1000003 + v->u.fn.prim : 2000003 + (int64_t)v->u.fn.prim * 7919;
        break;
    default: h = 0x4e6f6e65; break;
    }
    v->hash = h, v->hashed = 1;
    return h;
}

/* ---- equality and ordering ------------------------------------------------------------------------- */

/* == of two frozensets of one size (arc_eq's set case, kept out of it: arc_eq recurses through tuples, hot,
 * and this part's locals cost every call a longer entry). */
static __attribute__((noinline)) int set_eq(tdm_arc_val *a, tdm_arc_val *b) {
    if (a->hashed && b->hashed && a->hash != b->hash) return 0;
    if (a->u.set.lazy || b->u.set.lazy) { /* a deferred set (bits.c) compares masks, with no layout */
        int same = arc_bits_equal(a, b);
        if (same >= 0) return same;
    }
    if (a->u.set.lazy && !b->u.set.lazy) { /* walk the one with a table; ask the lazy one */
        tdm_arc_val *t = a;
        a = b, b = t;
    }
    if (a->u.set.lazy) { /* both lazy: walk one that lists its members, so neither is laid out */
        tdm_arc_val **m;
        int ma = arc_set_members(a, &m) > 0, mb = !ma && arc_set_members(b, &m) > 0;
        if (ma || mb) {
            tdm_arc_val *other = ma ? b : a;
            for (uint32_t k = 0; k < a->n; k++)
                if (!arc_set_contains(other, m[k])) return 0;
            return 1;
        }
    }
    arc_set_slots(a);
    for (uint32_t s = 0; s <= a->u.set.mask; s++) {
        tdm_arc_val *k = a->u.set.tab[s].key;
        if (k && k != ARC_DUMMY && !arc_set_contains(b, k)) return 0;
    }
    return 1;
}

int arc_eq_slow(tdm_arc_val *a, tdm_arc_val *b) {
    if (a->kind != b->kind) return 0;
    switch (a->kind) {
    case TDM_ARC_TUPLE:
        if (a->n != b->n) return 0;
        if (a->fkind | b->fkind) arc_cat_force(a), arc_cat_force(b); /* deferred concatenations: listed */
        for (uint32_t k = 0; k < a->n; k++)
            if (!arc_eq(a->u.items[k], b->u.items[k])) return 0;
        return 1;
    case TDM_ARC_FSET: return a->n == b->n && set_eq(a, b);
    case TDM_ARC_NONE: return 1;
    default: return 0; /* functions: identity only */
    }
}

const char *arc_type_name(const tdm_arc_val *v) {
    switch (v->kind) {
    case TDM_ARC_INT: return "int";
    case TDM_ARC_BOOL: return "bool";
    case TDM_ARC_NONE: return "NoneType";
    case TDM_ARC_TUPLE: return "tuple";
    case TDM_ARC_FSET: return "frozenset";
    default: return "function";
    }
}

/* a is a subset of b */
static int subset(tdm_arc_val *a, tdm_arc_val *b) {
    if (a->n > b->n) return 0;
    arc_set_slots(a);
    for (uint32_t s = 0; s <= a->u.set.mask; s++) {
        tdm_arc_val *k = a->u.set.tab[s].key;
        if (k && k != ARC_DUMMY && !arc_set_contains(b, k)) return 0;
    }
    return 1;
}

int arc_cmp(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b, int gt) {
    if (arc_is_int(a) && arc_is_int(b)) return gt ? a->u.i > b->u.i : a->u.i < b->u.i;
    if (arc_is_tuple(a) && arc_is_tuple(b)) {
        /* Python: the first position whose items differ under == decides, by that items' comparison. */
        uint32_t n = a->n < b->n ? a->n : b->n;
        if (arc_cat_listed(a) || arc_cat_listed(b)) return -1;
        for (uint32_t k = 0; k < n; k++)
            if (!arc_eq(a->u.items[k], b->u.items[k])) return arc_cmp(rt, a->u.items[k], b->u.items[k], gt);
        return gt ? a->n > b->n : a->n < b->n;
    }
    if (arc_is_set(a) && arc_is_set(b)) return gt ? (a->n > b->n && subset(b, a)) : (a->n < b->n && subset(a, b));
    return arc_failf(rt, "'%s' not supported between instances of '%s' and '%s'", gt ? ">" : "<", arc_type_name(a),
                     arc_type_name(b));
}

int arc_truthy(const tdm_arc_val *v) {
    switch (v->kind) {
    case TDM_ARC_INT:
    case TDM_ARC_BOOL: return v->u.i != 0;
    case TDM_ARC_NONE: return 0;
    case TDM_ARC_TUPLE:
    case TDM_ARC_FSET: return v->n != 0;
    default: return 1;
    }
}

int64_t arc_len(tdm_arc_rt *rt, const tdm_arc_val *v) {
    if (v->kind == TDM_ARC_TUPLE || v->kind == TDM_ARC_FSET) return v->n;
    return arc_failf(rt, "object of type '%s' has no len()", arc_type_name(v));
}

int arc_get_int(tdm_arc_rt *rt, const tdm_arc_val *v, int64_t *out, const char *who) {
    if (!arc_is_int(v)) return arc_failf(rt, "%s: expected an int, got %s", who, arc_type_name(v));
    *out = v->u.i;
    return 0;
}

int arc_get_ipair(tdm_arc_rt *rt, const tdm_arc_val *v, int64_t *a, int64_t *b, const char *who) {
    if (!arc_is_tuple(v) && !arc_is_set(v)) return arc_failf(rt, "%s: cannot unpack non-iterable %s", who, arc_type_name(v));
    if (v->n != 2) return arc_failf(rt, "%s: expected 2 values to unpack, got %u", who, v->n);
    tdm_arc_val *x, *y;
    if (arc_is_tuple(v)) {
        x = v->u.items[0], y = v->u.items[1];
    } else {
        tdm_arc_val *e[2];
        int k = 0;
        arc_slot *tab = arc_set_slots((tdm_arc_val *)v);
        for (uint32_t s = 0; s <= v->u.set.mask && k < 2; s++)
            if (tab[s].key && tab[s].key != ARC_DUMMY) e[k++] = tab[s].key;
        x = e[0], y = e[1];
    }
    if (arc_get_int(rt, x, a, who) || arc_get_int(rt, y, b, who)) return -1;
    return 0;
}

int arc_elems(tdm_arc_rt *rt, tdm_arc_val *c, arc_list *out, const char *who) {
    if (arc_is_tuple(c)) {
        if (arc_cat_listed(c)) return -1;
        out->v = c->u.items, out->n = c->n;
        return 0;
    }
    if (!arc_is_set(c)) return arc_failf(rt, "%s: '%s' object is not iterable", who, arc_type_name(c));
    if (arc_set_force(c)) return -1;
    out->n = c->n;
    out->v = arc_alloc(rt, (size_t)(c->n ? c->n : 1) * sizeof *out->v);
    if (!out->v) return -1;
    /* out->v is n entries long; while fewer than n are found the next write is in bounds, and the slots
       are gathered without a branch on each one (occupancy is random: a branch mispredicts) */
    uint32_t k = 0, n = c->n;
    arc_slot *tab = c->u.set.tab;
    for (uint32_t s = 0; s <= c->u.set.mask && k < n; s++) {
        tdm_arc_val *key = tab[s].key;
        out->v[k] = key;
        k += key != NULL && key != ARC_DUMMY;
    }
    return 0;
}

tdm_arc_val *arc_first(tdm_arc_val *c) {
    if (arc_is_tuple(c)) return !arc_cat_listed(c) && c->n ? c->u.items[0] : NULL;
    tdm_arc_val **v; /* a lazy set of one that lists its member (a filter that kept one object): every
                        layout's first slot holds it, so none is made */
    if (arc_set_is_lazy(c) && c->n == 1 && arc_set_members(c, &v) > 0) return v[0];
    tdm_arc_val *f, *l; /* a small set of a grid's cells or positions: its slot order without a table */
    if (arc_set_is_lazy(c) && c->n <= 4 && arc_bits_small_ends(c, &f, &l)) return f;
    arc_slot *tab = arc_set_slots(c);
    for (uint32_t s = 0; s <= c->u.set.mask; s++) {
        tdm_arc_val *key = tab[s].key;
        if (key && key != ARC_DUMMY) return key;
    }
    return NULL;
}

/* ---- grids -------------------------------------------------------------------------------------------- */

static int read_grid(tdm_arc_rt *rt, tdm_arc_val *v, arc_grid *g, const char *who) {
    arc_gview gv;
    int view = arc_grid_view(rt, v, &gv);
    if (view < 0) return -1;
    if (view) { /* its bytes, widened */
        size_t n = (size_t)gv.h * (size_t)gv.w;
        if (!(g->c = arc_alloc(rt, n * sizeof *g->c))) return -1;
        for (size_t k = 0; k < n; k++) g->c[k] = gv.c[k];
        g->h = gv.h, g->w = gv.w;
        return 0;
    }
    if (!arc_is_tuple(v)) return arc_failf(rt, "%s: expected a grid (tuple of rows), got %s", who, arc_type_name(v));
    g->h = (int)v->n, g->w = 0, g->c = NULL;
    if (!v->n) return 0;
    tdm_arc_val *r0 = v->u.items[0];
    if (!arc_is_tuple(r0)) return arc_failf(rt, "%s: grid row 0 is a %s, not a tuple", who, arc_type_name(r0));
    g->w = (int)r0->n;
    g->c = arc_alloc(rt, (size_t)g->h * (size_t)(g->w ? g->w : 1) * sizeof *g->c);
    if (!g->c) return -1;
    for (int i = 0; i < g->h; i++) {
        tdm_arc_val *r = v->u.items[i];
        if (!arc_is_tuple(r) || (int)r->n != g->w)
            return arc_failf(rt, "%s: grid rows differ in length (not supported by the port)", who);
        for (int j = 0; j < g->w; j++) {
            tdm_arc_val *c = r->u.items[j];
            if (!arc_is_int(c)) return arc_failf(rt, "%s: grid cell (%d, %d) is a %s (not supported by the port)", who, i, j, arc_type_name(c));
            g->c[(size_t)i * g->w + j] = c->u.i;
        }
    }
    return 0;
}

int arc_read_grid(tdm_arc_rt *rt, tdm_arc_val *v, arc_grid *g, const char *who) {
    if (v == rt->grid_seen) { /* occurrences over many templates reads one grid again and again */
        g->h = rt->grid_h, g->w = rt->grid_w, g->c = rt->grid_c;
        return 0;
    }
    if (read_grid(rt, v, g, who)) return -1;
    rt->grid_seen = v, rt->grid_h = g->h, rt->grid_w = g->w, rt->grid_c = g->c, rt->grid_colours = NULL;
    return 0;
}

const uint32_t *arc_grid_colour_rows(tdm_arc_rt *rt, tdm_arc_val *v, const arc_grid *g) {
    if (v == rt->grid_seen && rt->grid_colours) return rt->grid_colours;
    size_t n = (size_t)(g->h ? g->h : 1) * ARC_COLOURS_N;
    uint32_t *m = arc_alloc(rt, n * sizeof *m);
    if (!m) return NULL;
    arc_gview gv;
    int view = arc_grid_view(rt, v, &gv);
    if (view < 0) return NULL;
    if (!view) memset(m, 0, n * sizeof *m);
    for (int i = 0; view && i < g->h; i++) /* the grid's bytes: a compare per row and colour */
        for (int c = 0; c < ARC_COLOURS_N; c++) m[(size_t)i * ARC_COLOURS_N + c] = arc_gview_row_mask(&gv, i, c);
    for (int i = 0; !view && i < g->h; i++)
        for (int j = 0; j < g->w; j++) {
            int64_t c = g->c[(size_t)i * g->w + j];
            if (c >= 0 && c < ARC_COLOURS_N) m[(size_t)i * ARC_COLOURS_N + c] |= 1u << j;
        }
    if (v == rt->grid_seen) rt->grid_colours = m;
    return m;
}

int arc_read_grid0(tdm_arc_rt *rt, tdm_arc_val *v, arc_grid *g, const char *who) {
    if (arc_read_grid(rt, v, g, who)) return -1;
    if (!g->h) return arc_failf(rt, "%s: tuple index out of range (empty grid)", who);
    return 0;
}

tdm_arc_val *arc_make_grid(tdm_arc_rt *rt, int h, int w, const int64_t *c) {
    tdm_arc_val *g = arc_tuple(rt, (uint32_t)h);
    if (!g) return NULL;
    for (int i = 0; i < h; i++) {
        tdm_arc_val *r = arc_tuple(rt, (uint32_t)w);
        if (!r) return NULL;
        for (int j = 0; j < w; j++)
            if (!(r->u.items[j] = arc_int(rt, c[(size_t)i * w + j]))) return NULL;
        g->u.items[i] = r;
    }
    return g;
}

tdm_arc_val *arc_grid_rows0(tdm_arc_rt *rt, int h) {
    tdm_arc_val *g = arc_tuple(rt, (uint32_t)h), *e = arc_tuple(rt, 0);
    if (!g || !e) return NULL;
    for (int i = 0; i < h; i++) g->u.items[i] = e;
    return g;
}

/* ---- public accessors --------------------------------------------------------------------------------- */

tdm_arc_kind tdm_arc_val_kind(const tdm_arc_val *v) { return (tdm_arc_kind)v->kind; }
int64_t tdm_arc_val_int(const tdm_arc_val *v) { return arc_is_int(v) ? v->u.i : 0; }
size_t tdm_arc_val_len(const tdm_arc_val *v) { return arc_is_tuple(v) || arc_is_set(v) ? v->n : 0; }

size_t tdm_arc_val_items(const tdm_arc_val *v, const tdm_arc_val **out, size_t cap) {
    if (arc_is_tuple(v)) {
        for (size_t k = 0; k < v->n && k < cap; k++) out[k] = v->u.items[k];
        return v->n;
    }
    if (!arc_is_set(v)) return 0;
    size_t k = 0;
    arc_slot *tab = arc_set_slots((tdm_arc_val *)v);
    for (uint32_t s = 0; s <= v->u.set.mask; s++) {
        const tdm_arc_val *key = tab[s].key;
        if (key && key != ARC_DUMMY) {
            if (k < cap) out[k] = key;
            k++;
        }
    }
    return k;
}

int tdm_arc_val_equal(const tdm_arc_val *a, const tdm_arc_val *b) {
    return arc_eq((tdm_arc_val *)a, (tdm_arc_val *)b);
}
int64_t tdm_arc_val_hash(const tdm_arc_val *v) { return arc_hash((tdm_arc_val *)v); }

void tdm_arc_val_print(FILE *out, const tdm_arc_val *v) {
    switch (v->kind) {
    case TDM_ARC_INT: fprintf(out, "%lld", (long long)v->u.i); break;
    case TDM_ARC_BOOL: fputs(v->u.i ? "True" : "False", out); break;
    case TDM_ARC_NONE: fputs("None", out); break;
    case TDM_ARC_TUPLE:
        fputc('(', out);
        for (uint32_t k = 0; k < v->n; k++) {
            if (k) fputs(", ", out);
            tdm_arc_val_print(out, v->u.items[k]);
        }
        fputs(v->n == 1 ? ",)" : ")", out);
        break;
    case TDM_ARC_FSET: {
        if (!v->n) {
            fputs("frozenset()", out);
            break;
        }
        fputs("frozenset({", out);
        int k = 0;
        arc_slot *tab = arc_set_slots((tdm_arc_val *)v);
        for (uint32_t s = 0; s <= v->u.set.mask; s++) {
            const tdm_arc_val *key = tab[s].key;
            if (!key || key == ARC_DUMMY) continue;
            if (k++) fputs(", ", out);
            tdm_arc_val_print(out, key);
        }
        fputs("})", out);
        break;
    }
    default:
        if (v->fkind == ARC_FN_PRIM) fprintf(out, "<function %s>", tdm_arc_prim_name(v->u.fn.prim));
        else fprintf(out, "<function <lambda> #%d>", v->u.fn.prim);
    }
}

/* Grid rows <-> interned ints. Every call converts its input grid and its result, most cells are interned
 * colours, and a cell's value is its address: &arc_small_ints[v - ARC_INT_LO]. So both directions are
 * vector arithmetic on addresses (four cells at a time with SSE2), after one check that they all are. */
#define SMALL_N (ARC_INT_HI - ARC_INT_LO + 1)

/* 1 when every one of n ints is in ARC_INT_LO..ARC_INT_HI. */
static int all_small(const int *c, size_t n) {
    size_t k = 0;
    int ok = 1;
#if defined(ARC_VEC_ADDR)
    /* (v - LO) as unsigned < SMALL_N: signed compare after moving the range to start at INT32_MIN */
    const __m128i shift = _mm_set1_epi32((int)((unsigned)INT32_MIN - (unsigned)ARC_INT_LO)),
                  top = _mm_set1_epi32((int)((unsigned)INT32_MIN + SMALL_N));
    __m128i in = _mm_set1_epi32(-1);
    for (; k + 4 <= n; k += 4)
        in = _mm_and_si128(in, _mm_cmplt_epi32(_mm_add_epi32(_mm_loadu_si128((const __m128i *)(c + k)), shift), top));
    ok = _mm_movemask_epi8(in) == 0xffff;
#endif
    for (; k < n; k++) ok &= (unsigned)(c[k] - ARC_INT_LO) < SMALL_N;
    return ok;
}

#if defined(ARC_VEC_ADDR)
/* out[0..3] = base + v[k] * sizeof(tdm_arc_val) for the four 32-bit indices of v: values of an array at base. */
static inline void addr4(tdm_arc_val **out, __m128i v, __m128i base) {
    const __m128i size = _mm_set1_epi64x((int64_t)sizeof(tdm_arc_val)), zero = _mm_setzero_si128();
    _mm_storeu_si128((__m128i *)out, _mm_add_epi64(_mm_mul_epu32(_mm_unpacklo_epi32(v, zero), size), base));
    _mm_storeu_si128((__m128i *)(out + 2), _mm_add_epi64(_mm_mul_epu32(_mm_unpackhi_epi32(v, zero), size), base));
}
#endif

/* out[j] = the interned int c[j], for n ints all in range (all_small). */
static void small_cells(tdm_arc_val **out, const int *c, size_t n) {
    size_t j = 0;
#if defined(ARC_VEC_ADDR)
    const __m128i lo = _mm_set1_epi32(ARC_INT_LO), base = _mm_set1_epi64x((int64_t)(uintptr_t)arc_small_ints);
    for (; j + 4 <= n; j += 4) addr4(out + j, _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(c + j)), lo), base); /* 0..SMALL_N-1 */
#endif
    for (; j < n; j++) out[j] = &arc_small_ints[c[j] - ARC_INT_LO];
}

/* c[j] = the value of out[j] for n cells that are all interned ints: 1, or 0 when one is not (c partly
 * written). */
static int small_read(int *c, tdm_arc_val *const *cells, size_t n) {
    const uintptr_t base = (uintptr_t)arc_small_ints;
    size_t j = 0;
    uintptr_t bad = 0;
#if defined(ARC_VEC_ADDR)
    _Static_assert(sizeof arc_small_ints < ((size_t)1 << 31), "small_read's arithmetic");
    const __m128i lo = _mm_set1_epi32(ARC_INT_LO);
    __m128i in = _mm_set1_epi32(-1);
    for (; j + 4 <= n; j += 4)
        _mm_storeu_si128((__m128i *)(c + j), _mm_add_epi32(arc_addr_index4(cells + j, base, sizeof arc_small_ints, &in), lo));
    bad = _mm_movemask_epi8(in) != 0xffff;
#endif
    /* an address is interned when its offset is below the array's size (unsigned: below base wraps) */
    for (; j < n; j++) {
        uintptr_t d = (uintptr_t)cells[j] - base;
        bad |= d >= sizeof arc_small_ints;
        c[j] = (int)(d / sizeof(tdm_arc_val)) + ARC_INT_LO;
    }
    return !bad;
}

/* out[j] = the interned colour c[j] for n bytes 0..9 (small_cells' arithmetic, from bytes). */
static void colour_cells(tdm_arc_val **out, const uint8_t *c, size_t n) {
    size_t j = 0;
#if defined(ARC_VEC_ADDR)
    const __m128i zero = _mm_setzero_si128(), base = _mm_set1_epi64x((int64_t)(uintptr_t)&arc_small_ints[-ARC_INT_LO]);
    for (; j + 4 <= n; j += 4) {
        uint32_t four;
        memcpy(&four, c + j, 4);
        addr4(out + j, _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128((int)four), zero), zero), base);
    }
#endif
    for (; j < n; j++) out[j] = &arc_small_ints[c[j] - ARC_INT_LO];
}

/* An h x w grid in one block of rt's arena: the grid's tuple, its items, the rows' tuples, then every row's
 * items back to back, row i's at *items + i * w (left unwritten). NULL out of memory. */
tdm_arc_val *arc_grid_block(tdm_arc_rt *rt, int h, int w, tdm_arc_val ***items) {
    size_t n = (size_t)h * (size_t)w;
    tdm_arc_val *g = arc_alloc(rt, sizeof *g + (size_t)h * (sizeof(tdm_arc_val *) + sizeof *g) + n * sizeof(tdm_arc_val *));
    if (!g) return NULL;
    memset(g, 0, sizeof *g);
    g->kind = TDM_ARC_TUPLE, g->n = (uint32_t)h, g->u.items = (tdm_arc_val **)(g + 1);
    tdm_arc_val *rows = (tdm_arc_val *)(g->u.items + h);
    *items = (tdm_arc_val **)(rows + h);
    memset(rows, 0, (size_t)h * sizeof *rows);
    for (int i = 0; i < h; i++) {
        rows[i].kind = TDM_ARC_TUPLE, rows[i].n = (uint32_t)w, rows[i].u.items = *items + (size_t)i * w;
        g->u.items[i] = &rows[i];
    }
    return g;
}

tdm_arc_val *arc_grid_cells(tdm_arc_rt *rt, const uint8_t *c, int h, int w) {
    tdm_arc_val **items, *g = arc_grid_block(rt, h, w, &items);
    if (g) colour_cells(items, c, (size_t)h * (size_t)w);
    return g;
}

tdm_arc_val *arc_grid_of_bytes(tdm_arc_rt *rt, const uint8_t *c, int h, int w) {
    tdm_arc_val *g = arc_grid_cells(rt, c, h, w);
    if (g) arc_grid_view_keep(rt, g, c, h, w);
    return g;
}

tdm_arc_val *arc_grid_result(tdm_arc_rt *rt, const uint8_t *c, int h, int w, int bytes) {
    return bytes ? arc_grid_lazy(rt, c, h, w) : arc_grid_of_bytes(rt, c, h, w);
}

tdm_arc_val *arc_grid_lazy(tdm_arc_rt *rt, const uint8_t *c, int h, int w) {
    tdm_arc_val *g = arc_alloc(rt, sizeof *g);
    if (g) *g = (tdm_arc_val){.kind = TDM_ARC_TUPLE, .fkind = ARC_TUP_GRID, .n = (uint32_t)h, .u.grid = {.c = c, .w = w}};
    return g;
}

int arc_grid_force(tdm_arc_rt *rt, tdm_arc_val *g) {
    if (!arc_grid_is_lazy(g)) return 0;
    const uint8_t *c = g->u.grid.c;
    int h = (int)g->n, w = g->u.grid.w;
    tdm_arc_val *m = arc_grid_cells(rt, c, h, w);
    if (!m) return -1;
    g->u.items = m->u.items, g->fkind = 0; /* m's rows, under g's header: g now reads as any grid */
    arc_grid_view_keep(rt, g, c, h, w);
    return 0;
}

int tdm_arc_grid_new(tdm_arc_rt *rt, int h, int w, const int *cells, tdm_arc_val **out) {
    if (!rt || !out || h < 0 || w < 0 || (h && w && !cells)) return tdm_error(TDM_E_INVAL, "tdm_arc_grid_new: bad arguments");
    /* one block (every call starts with this, so one allocation and straight copies) */
    size_t n = (size_t)h * (size_t)w;
    tdm_arc_val **items, *g = arc_grid_block(rt, h, w, &items);
    if (!g) return tdm_error(TDM_E_NOMEM, "tdm_arc_grid_new: no memory for a %dx%d grid", h, w);
    /* its bytes, for the readers that scan it (objects(), ofcolor, ...): a pass over the ints here costs
       less than one over the cells' addresses there; colours all, its ints are all interned */
    int view = arc_grid_view_ints(rt, g, h, w, cells);
    if (view < 0) return tdm_error(TDM_E_NOMEM, "tdm_arc_grid_new: no memory for a %dx%d grid", h, w);
    if (view || all_small(cells, n)) {
        small_cells(items, cells, n);
    } else {
        for (size_t j = 0; j < n; j++) {
            int v = cells[j];
            if (v >= ARC_INT_LO && v <= ARC_INT_HI) items[j] = &arc_small_ints[v - ARC_INT_LO];
            else if (!(items[j] = arc_int_alloc(rt, v)))
                return tdm_error(TDM_E_NOMEM, "tdm_arc_grid_new: no memory for a %dx%d grid", h, w);
        }
    }
    *out = g;
    return TDM_OK;
}

int tdm_arc_grid_read(const tdm_arc_val *v, int *h, int *w, int *cells, size_t cap) {
    if (!v || !arc_is_tuple(v)) return tdm_error(TDM_E_INVAL, "not a grid: not a tuple");
    int hh = (int)v->n, ww = hh ? (arc_is_tuple(v->u.items[0]) ? (int)v->u.items[0]->n : -1) : 0;
    if (ww < 0) return tdm_error(TDM_E_INVAL, "not a grid: row 0 is not a tuple");
    uint32_t rw;
    /* rows whose items lie back to back (as tdm_arc_grid_new lays them out): one pass over all cells */
    if (cells && hh && (size_t)hh * ww <= cap && arc_grid_rows_shape(v, &rw) == 2 &&
        small_read(cells, v->u.items[0]->u.items, (size_t)hh * ww)) {
        if (h) *h = hh;
        if (w) *w = ww;
        return TDM_OK;
    }
    for (int i = 0; i < hh; i++) {
        const tdm_arc_val *r = v->u.items[i];
        if (!arc_is_tuple(r) || (int)r->n != ww) return tdm_error(TDM_E_INVAL, "not a grid: row %d differs", i);
        if (cells && (size_t)hh * ww <= cap && small_read(cells + (size_t)i * ww, r->u.items, (size_t)ww)) continue;
        for (int j = 0; j < ww; j++) {
            const tdm_arc_val *c = r->u.items[j];
            /* an interned int is told by its address (most cells are) */
            uintptr_t d = (uintptr_t)c - (uintptr_t)arc_small_ints;
            if (d < sizeof arc_small_ints) {
                if (cells && (size_t)hh * ww <= cap) cells[(size_t)i * ww + j] = (int)(d / sizeof *c) + ARC_INT_LO;
                continue;
            }
            if (!arc_is_int(c) || c->u.i < INT32_MIN || c->u.i > INT32_MAX)
                return tdm_error(TDM_E_INVAL, "not a grid: cell (%d, %d) is not an int", i, j);
            if (cells && (size_t)hh * ww <= cap) cells[(size_t)i * ww + j] = (int)c->u.i;
        }
    }
    if (h) *h = hh;
    if (w) *w = ww;
    return TDM_OK;
}
