/* fset.c: an emulation of CPython 3.11's set table (Objects/setobject.c as described in spec §4.5-4.6):
 * the probe sequence with its 10-slot linear runs, growth at 60% fill, resize by clean insertion in old slot
 * order, dummies on delete, and the composite operations (copy, |=, |, -, &) with their layout rules. The
 * DSL reads iteration order (first, last, argmax ties, ...), so every frozenset must be laid out exactly as
 * CPython would lay it out; equality and hashing ignore the layout. Lazy sets (arc_lazy in arc_internal.h)
 * are laid out here, on the first read of their table: every operation below that walks or probes an
 * operand's table lays it out first. */
#include "arc_internal.h"

#include <string.h>

#define LINEAR_PROBES 9
#define PERTURB_SHIFT 5
#define MINSIZE 8
_Static_assert(MINSIZE * sizeof(arc_slot) == 128, "arc_zero128 clears a fresh table");

static arc_slot *new_table(tdm_arc_rt *rt, size_t size) {
    arc_slot *t = arc_alloc(rt, size * sizeof *t);
    if (t && size == MINSIZE) arc_zero128(t);
    else if (t) memset(t, 0, size * sizeof *t);
    return t;
}

tdm_arc_val *arc_set_new(tdm_arc_rt *rt) {
    tdm_arc_val *s = arc_alloc(rt, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->kind = TDM_ARC_FSET;
    s->u.set.mask = MINSIZE - 1;
    if (!(s->u.set.tab = new_table(rt, MINSIZE))) return NULL;
    return s;
}

tdm_arc_val *arc_set_empty(tdm_arc_rt *rt) {
    if (!rt->empty_set && (rt->empty_set = arc_set_new(rt))) arc_hash(rt->empty_set);
    return rt->empty_set;
}

/* First empty slot on h's probe path, with no equality checks (set_insert_clean). */
static void insert_clean(arc_slot *table, size_t mask, tdm_arc_val *key, int64_t hash) {
    size_t perturb = (size_t)(uint64_t)hash, i = (size_t)(uint64_t)hash & mask;
    arc_slot *e;
    for (;;) {
        e = &table[i];
        if (!e->key) goto found;
        if (i + LINEAR_PROBES <= mask) {
            for (int j = 0; j < LINEAR_PROBES; j++) {
                e++;
                if (!e->key) goto found;
            }
        }
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
found:
    e->key = key, e->hash = hash;
}

static int resize(tdm_arc_rt *rt, tdm_arc_val *s, size_t minused) {
    size_t newsize = MINSIZE;
    while (newsize <= minused) newsize <<= 1;
    arc_slot *old = s->u.set.tab, *nt = new_table(rt, newsize);
    if (!nt) return -1;
    size_t oldsize = (size_t)s->u.set.mask + 1;
    for (size_t k = 0; k < oldsize; k++)
        if (old[k].key && old[k].key != ARC_DUMMY) insert_clean(nt, newsize - 1, old[k].key, old[k].hash);
    s->u.set.tab = nt, s->u.set.mask = (uint32_t)(newsize - 1), s->u.set.fill = s->n;
    s->hashed = 0;
    return 0;
}

static int keys_equal(arc_slot *e, tdm_arc_val *key, int64_t hash) {
    return e->hash == hash && e->key != ARC_DUMMY && (e->key == key || arc_eq(e->key, key));
}

/* set_add_entry: 0 added or present, -1 no memory. */
static int add_entry(tdm_arc_rt *rt, tdm_arc_val *s, tdm_arc_val *key, int64_t hash) {
    size_t mask = s->u.set.mask, perturb = (size_t)(uint64_t)hash, i = (size_t)(uint64_t)hash & mask;
    arc_slot *freeslot = NULL, *e;
    for (;;) {
        e = &s->u.set.tab[i];
        size_t probes = (i + LINEAR_PROBES <= mask) ? LINEAR_PROBES : 0;
        do {
            if (!e->key) goto found_unused_or_dummy;
            if (e->key == ARC_DUMMY) {
                if (!freeslot) freeslot = e;
            } else if (keys_equal(e, key, hash)) {
                return 0;
            }
            e++;
        } while (probes--);
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
found_unused_or_dummy:
    s->hashed = 0;
    if (freeslot) {
        s->n++;
        freeslot->key = key, freeslot->hash = hash;
        return 0;
    }
    s->u.set.fill++, s->n++;
    e->key = key, e->hash = hash;
    if ((size_t)s->u.set.fill * 5 < mask * 3) return 0;
    return resize(rt, s, s->n > 50000 ? (size_t)s->n * 2 : (size_t)s->n * 4);
}

static arc_slot empty_tab[MINSIZE]; /* what a set whose layout failed shows its readers */

int arc_set_force(tdm_arc_val *s) {
    arc_lazy *z = s->u.set.lazy;
    if (!z) return 0;
    if (z->op->layout(z, s) == 0 && !s->u.set.lazy) return 0;
    /* no memory (the runtime's error says so and fails the run): an empty set, never a missing table */
    s->u.set.tab = empty_tab, s->u.set.mask = MINSIZE - 1, s->u.set.fill = 0, s->u.set.lazy = NULL, s->n = 0;
    return -1;
}

tdm_arc_val *arc_set_lazy(tdm_arc_rt *rt, arc_lazy *z, uint32_t part, uint32_t n) {
    tdm_arc_val *s = arc_alloc(rt, sizeof *s);
    if (s) arc_lazy_set_init(s, z, part, n);
    return s;
}

void arc_set_take(tdm_arc_val *dst, tdm_arc_val *src) {
    dst->u.set.tab = src->u.set.tab, dst->u.set.mask = src->u.set.mask, dst->u.set.fill = src->u.set.fill;
    dst->u.set.lazy = NULL;
}

tdm_arc_val *arc_set_twin(tdm_arc_rt *rt, const tdm_arc_val *s) {
    tdm_arc_val *r = arc_alloc(rt, sizeof *r);
    if (r) *r = *s;
    return r;
}

int arc_set_take_recipe(tdm_arc_rt *rt, tdm_arc_val *dst, tdm_arc_val *r) {
    if (!r) return -1;
    /* the recipe gives the same contents (the tests hold it to that); anything else is a bug to report */
    if (!arc_is_set(r) || r->n != dst->n) return arc_failf(rt, "internal error: a deferred set's recipe gave other contents");
    arc_set_slots(r);
    arc_set_take(dst, r);
    return 0;
}

int arc_set_add(tdm_arc_rt *rt, tdm_arc_val *s, tdm_arc_val *key) {
    if (!key) return -1;
    return add_entry(rt, s, key, arc_hash_fast(key));
}

/* set_lookkey: the live slot holding key, or NULL. */
static arc_slot *lookup(tdm_arc_val *s, tdm_arc_val *key, int64_t hash) {
    size_t mask = s->u.set.mask, perturb = (size_t)(uint64_t)hash, i = (size_t)(uint64_t)hash & mask;
    for (;;) {
        arc_slot *e = &s->u.set.tab[i];
        size_t probes = (i + LINEAR_PROBES <= mask) ? LINEAR_PROBES : 0;
        do {
            if (!e->key) return NULL;
            if (keys_equal(e, key, hash)) return e;
            e++;
        } while (probes--);
        perturb >>= PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
}

int arc_set_contains(tdm_arc_val *s, tdm_arc_val *key) {
    if (s->u.set.lazy) {
        int in = s->u.set.lazy->op->contains(s->u.set.lazy, s, key);
        if (in >= 0) return in;
        arc_set_force(s);
    }
    return lookup(s, key, arc_hash_fast(key)) != NULL;
}

static void discard(tdm_arc_val *s, tdm_arc_val *key, int64_t hash) {
    arc_slot *e = lookup(s, key, hash);
    if (!e) return;
    e->key = ARC_DUMMY, e->hash = -1;
    s->n--;
    s->hashed = 0;
}

/* set_merge: r |= b, with CPython's shortcuts for an empty r (verbatim copy or clean insertion). */
int arc_set_merge(tdm_arc_rt *rt, tdm_arc_val *r, tdm_arc_val *b) {
    if (r == b || b->n == 0) return 0;
    arc_set_slots(b);
    if (((size_t)r->u.set.fill + b->n) * 5 >= (size_t)r->u.set.mask * 3)
        if (resize(rt, r, ((size_t)r->n + b->n) * 2)) return -1;
    size_t bsize = (size_t)b->u.set.mask + 1;
    r->hashed = 0;
    if (r->u.set.fill == 0 && r->u.set.mask == b->u.set.mask && b->u.set.fill == b->n) {
        memcpy(r->u.set.tab, b->u.set.tab, bsize * sizeof(arc_slot));
        r->u.set.fill = b->u.set.fill, r->n = b->n;
        return 0;
    }
    if (r->u.set.fill == 0) {
        r->u.set.fill = b->n, r->n = b->n;
        for (size_t k = 0; k < bsize; k++) {
            arc_slot *e = &b->u.set.tab[k];
            if (e->key && e->key != ARC_DUMMY) insert_clean(r->u.set.tab, r->u.set.mask, e->key, e->hash);
        }
        return 0;
    }
    for (size_t k = 0; k < bsize; k++) {
        arc_slot *e = &b->u.set.tab[k];
        if (e->key && e->key != ARC_DUMMY && add_entry(rt, r, e->key, e->hash)) return -1;
    }
    return 0;
}

tdm_arc_val *arc_set_copy(tdm_arc_rt *rt, tdm_arc_val *s) {
    tdm_arc_val *r = arc_set_new(rt);
    if (!r || arc_set_merge(rt, r, s)) return NULL;
    return r;
}

tdm_arc_val *arc_set_union(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b) {
    tdm_arc_val *r = arc_set_copy(rt, a);
    /* set_or: a | a is the copy (merging a into it could resize the table and change the layout) */
    if (!r || a == b) return r;
    if (arc_set_merge(rt, r, b)) return NULL;
    return r;
}

tdm_arc_val *arc_set_minus(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b) {
    arc_set_slots(a), arc_set_slots(b);
    if ((a->n >> 2) > b->n) {
        /* set_copy_and_difference: copy, delete b's entries, then drop dummies if over a quarter. */
        tdm_arc_val *r = arc_set_copy(rt, a);
        if (!r) return NULL;
        size_t bsize = (size_t)b->u.set.mask + 1;
        for (size_t k = 0; k < bsize; k++) {
            arc_slot *e = &b->u.set.tab[k];
            if (e->key && e->key != ARC_DUMMY) discard(r, e->key, e->hash);
        }
        if ((size_t)(r->u.set.fill - r->n) > (size_t)r->u.set.mask / 4)
            if (resize(rt, r, r->n > 50000 ? (size_t)r->n * 2 : (size_t)r->n * 4)) return NULL;
        return r;
    }
    tdm_arc_val *r = arc_set_new(rt);
    if (!r) return NULL;
    size_t asize = (size_t)a->u.set.mask + 1;
    for (size_t k = 0; k < asize; k++) {
        arc_slot *e = &a->u.set.tab[k];
        if (e->key && e->key != ARC_DUMMY && !lookup(b, e->key, e->hash) && add_entry(rt, r, e->key, e->hash))
            return NULL;
    }
    return r;
}

tdm_arc_val *arc_set_meet(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b) {
    /* set_intersection: a & a is a copy of a; otherwise walk the smaller operand (b on a tie), looking each
       element up in the other. */
    if (a == b) return arc_set_copy(rt, a);
    arc_set_slots(a), arc_set_slots(b);
    tdm_arc_val *big = a, *small = b;
    if (b->n > a->n) big = b, small = a;
    tdm_arc_val *r = arc_set_new(rt);
    if (!r) return NULL;
    size_t size = (size_t)small->u.set.mask + 1;
    for (size_t k = 0; k < size; k++) {
        arc_slot *e = &small->u.set.tab[k];
        if (e->key && e->key != ARC_DUMMY && lookup(big, e->key, e->hash) && add_entry(rt, r, e->key, e->hash))
            return NULL;
    }
    return r;
}

tdm_arc_val *arc_set_minus_where(tdm_arc_rt *rt, tdm_arc_val *a, uint32_t bn, int (*in)(void *ctx, tdm_arc_val *key),
                                 void *ctx) {
    arc_set_slots(a);
    size_t asize = (size_t)a->u.set.mask + 1;
    if ((a->n >> 2) > bn) {
        /* as set_copy_and_difference: each key of B found in the copy becomes a dummy in its own slot, so
           which keys are deleted decides the table, not the order B is walked in */
        tdm_arc_val *r = arc_set_copy(rt, a);
        if (!r) return NULL;
        size_t rsize = (size_t)r->u.set.mask + 1;
        for (size_t k = 0; k < rsize; k++) {
            arc_slot *e = &r->u.set.tab[k];
            if (e->key && e->key != ARC_DUMMY && in(ctx, e->key)) e->key = ARC_DUMMY, e->hash = -1, r->n--;
        }
        if ((size_t)(r->u.set.fill - r->n) > (size_t)r->u.set.mask / 4)
            if (resize(rt, r, r->n > 50000 ? (size_t)r->n * 2 : (size_t)r->n * 4)) return NULL;
        return r;
    }
    tdm_arc_val *r = arc_set_new(rt);
    if (!r) return NULL;
    for (size_t k = 0; k < asize; k++) {
        arc_slot *e = &a->u.set.tab[k];
        if (e->key && e->key != ARC_DUMMY && !in(ctx, e->key) && add_entry(rt, r, e->key, e->hash)) return NULL;
    }
    return r;
}

tdm_arc_val *arc_set_from(tdm_arc_rt *rt, tdm_arc_val **v, uint32_t n) {
    tdm_arc_val *s = arc_set_new(rt);
    if (!s) return NULL;
    for (uint32_t k = 0; k < n; k++)
        if (arc_set_add(rt, s, v[k])) return NULL;
    return s;
}

tdm_arc_val *arc_set_of1(tdm_arc_rt *rt, tdm_arc_val *e) {
    /* set_add into a fresh 8-slot table: the home slot is free; then frozenset() copies it verbatim */
    struct { tdm_arc_val s; arc_slot tab[MINSIZE]; } *b = arc_alloc(rt, sizeof *b);
    if (!b) return NULL;
    int64_t h = arc_hash_fast(e);
    b->s = (tdm_arc_val){.kind = TDM_ARC_FSET, .n = 1, .u.set = {.tab = b->tab, .mask = MINSIZE - 1, .fill = 1}};
    arc_zero128(b->tab);
    b->tab[(uint64_t)h & (MINSIZE - 1)] = (arc_slot){.hash = h, .key = e};
    return &b->s;
}

tdm_arc_val *arc_rebuild(tdm_arc_rt *rt, const tdm_arc_val *like, tdm_arc_val **v, uint32_t n) {
    if (arc_is_set(like)) return arc_set_from(rt, v, n);
    tdm_arc_val *t = arc_tuple(rt, n);
    if (!t) return NULL;
    if (n) memcpy(t->u.items, v, (size_t)n * sizeof *v);
    return t;
}

int arc_contains(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val *x) {
    if (arc_is_set(c)) return arc_set_contains(c, x);
    if (arc_is_tuple(c)) {
        for (uint32_t k = 0; k < c->n; k++)
            if (arc_eq(c->u.items[k], x)) return 1;
        return 0;
    }
    return arc_failf(rt, "argument of type '%s' is not iterable", arc_type_name(c));
}
