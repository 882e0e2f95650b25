/* test_arc_lazy.c: objects() with lazy layouts (src/arc/objects_lazy.c) against the eager replay of the
 * reference's set operations (arc_objects_eager), on seeded random grids of 1x1..30x30 in all 8 flag
 * combinations, degenerate grids included (one colour, checkerboards, noise, stripes, palettes that hit
 * mostcolor's 0/8 and 1/9 ties). For each call it checks what needs no layout before any layout exists
 * (len, hash, ==, membership of objects and of cells), then lays the sets out through one of the
 * order-reading paths (iteration, first, last, repr, items, copy, minus, meet, totuple, ...) and compares
 * every table, outer and inner, slot by slot with the eager one. The same for one colour's objects against
 * colorfilter of the eager ones. Last, a layout that runs out of memory. */
#include "arc_test_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { KIND_BLOBS, KIND_ONE, KIND_CHECKER, KIND_NOISE, KIND_STRIPES, KIND_TRICKY, NKINDS };

static void random_grid(tu_rng *r, int kind, int h, int w, int *c) {
    int pal[10], k = 1 + (int)tu_below(r, 10);
    static const int tricky[] = {8, 0, 9, 1, 2, 3};
    for (int x = 0; x < 10; x++) pal[x] = kind == KIND_TRICKY && x < 6 ? tricky[x] : (int)tu_below(r, 10);
    if (kind == KIND_TRICKY) k = 1 + (int)tu_below(r, 5);
    int a = pal[0], b = pal[1] == pal[0] ? (pal[0] + 1) % 10 : pal[1];
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int *v = &c[i * w + j];
            switch (kind) {
            case KIND_ONE: *v = a; break;
            case KIND_CHECKER: *v = (i + j) % 2 ? a : b; break;
            case KIND_NOISE: *v = pal[tu_below(r, (uint64_t)k)]; break;
            case KIND_STRIPES: *v = (tu_below(r, 2) ? i : j) % 3 ? a : b; break;
            default:
                *v = pal[tu_below(r, (uint64_t)k)];
                if (j && tu_below(r, 3)) *v = c[i * w + j - 1];
                if (i && tu_below(r, 2)) *v = c[(i - 1) * w + j];
            }
        }
}

/* same_table (arc_test_util.h: ta_same_table): two tables are the same layout. */
#define same_table ta_same_table

/* The eager object equal to lazy object o (both sets of cells). */
static tdm_arc_val *match(tdm_arc_val *eager, tdm_arc_val *o) {
    arc_slot *t = arc_set_slots(eager);
    for (uint32_t s = 0; s <= eager->u.set.mask; s++)
        if (t[s].key && t[s].key != ARC_DUMMY && arc_eq(t[s].key, o)) return t[s].key;
    fail_msg("lazy object without an eager match");
    return NULL;
}


static int prim_id(const char *name) {
    int id;
    assert_int_equal(tdm_arc_prim_lookup(name, &id), TDM_OK);
    return id;
}

static tdm_arc_val *call(const char *name, int argc, tdm_arc_val **args) {
    int id;
    assert_int_equal(tdm_arc_prim_lookup(name, &id), TDM_OK);
    const tdm_arc_val *out;
    assert_int_equal(tdm_arc_call(ta_rt, tdm_arc_prim_value(id), argc, (const tdm_arc_val *const *)args, &out), TDM_OK);
    return (tdm_arc_val *)out;
}

#define NPATHS 11

/* Lays s (lazy) out through order-reading path p and checks what that path returned against the same path
 * on e (eager, equal to s). */
static void lay_out_by(int p, tdm_arc_val *s, tdm_arc_val *e, int keys) {
    tdm_arc_rt *rt = ta_rt;
    switch (p) {
    case 0: { /* iteration (arc_elems: apply, sfilter, merge, ... all walk this way) */
        arc_list ls, le;
        assert_int_equal(arc_elems(rt, s, &ls, "t"), 0);
        assert_int_equal(arc_elems(rt, e, &le, "t"), 0);
        assert_int_equal(ls.n, le.n);
        for (uint32_t k = 0; k < ls.n; k++) assert_true(arc_eq(ls.v[k], le.v[k]));
        break;
    }
    case 1: assert_true(arc_eq(arc_first(s), arc_first(e))); break;
    case 2: { /* the public items accessor */
        const tdm_arc_val *is[900], *ie[900];
        size_t n = tdm_arc_val_items(s, is, 900);
        assert_int_equal(n, tdm_arc_val_items(e, ie, 900));
        for (size_t k = 0; k < n && k < 900; k++) assert_true(arc_eq((tdm_arc_val *)is[k], (tdm_arc_val *)ie[k]));
        break;
    }
    case 3: { /* repr: every nesting level in iteration order */
        char *rs = ta_repr(s), *re = ta_repr(e);
        assert_string_equal(rs, re);
        free(rs), free(re);
        break;
    }
    case 4: assert_true(arc_eq(call("last", 1, &s), call("last", 1, &e))); break;
    case 5: same_table(arc_set_copy(rt, s), arc_set_copy(rt, e), keys); break;
    case 6: { /* minus by a small set (copy-and-delete branch) and by itself (fresh-table branch) */
        tdm_arc_val *first = arc_first(e), *one = arc_set_from(rt, &first, 1);
        same_table(arc_set_minus(rt, s, one), arc_set_minus(rt, e, one), keys);
        break;
    }
    case 7: { /* meet walks b on a tie: the lazy operand */
        tdm_arc_val *e2 = arc_set_copy(rt, e);
        same_table(arc_set_meet(rt, e2, s), arc_set_meet(rt, e2, e), keys);
        break;
    }
    case 8: { /* totuple: order into a tuple */
        tdm_arc_val *ts = call("totuple", 1, &s), *te = call("totuple", 1, &e);
        assert_true(arc_eq(ts, te));
        break;
    }
    case 9: { /* union: freeze of the lazy set, then |= */
        tdm_arc_val *x = arc_set_new(rt);
        same_table(arc_set_union(rt, s, x), arc_set_union(rt, e, x), keys);
        break;
    }
    default: { /* Python's < (subset walks the smaller operand) */
        tdm_arc_val *big = arc_set_union(rt, e, arc_set_from(rt, (tdm_arc_val *[]){arc_int(rt, 1000)}, 1));
        assert_int_equal(arc_cmp(rt, s, big, 0), 1);
        arc_set_force(s);
    }
    }
}

/* What needs no layout, checked while both the outer set and its objects are still lazy. */
static void check_unlaid(tdm_arc_val *lazy, tdm_arc_val *eager) {
    assert_int_equal(lazy->n, eager->n);
    assert_true(arc_hash(lazy) == arc_hash(eager));
    assert_true(arc_eq(lazy, eager) && arc_eq(eager, lazy));
    assert_true(arc_set_is_lazy(lazy));
    arc_slot *t = arc_set_slots(eager);
    for (uint32_t s = 0; s <= eager->u.set.mask; s++) {
        tdm_arc_val *o = t[s].key;
        if (!o || o == ARC_DUMMY) continue;
        assert_true(arc_set_contains(lazy, o));
        /* a set equal to no object: the eager object less one cell, or with a foreign cell */
        tdm_arc_val *c0 = arc_first(o), *one = arc_set_from(ta_rt, &c0, 1), *less = arc_set_minus(ta_rt, o, one);
        if (less->n) assert_false(arc_set_contains(lazy, less));
        tdm_arc_val *odd = arc_set_union(ta_rt, o, arc_set_from(ta_rt, (tdm_arc_val *[]){arc_cell(ta_rt, 3, 40, 40)}, 1));
        assert_false(arc_set_contains(lazy, odd));
    }
    assert_true(arc_set_is_lazy(lazy));
    assert_false(arc_set_contains(lazy, arc_int(ta_rt, 3)));
}

/* Per object, before its layout: hash, ==, membership of its cells and of cells it does not hold, the
 * measures (bounding box) and the colour readers. */
static void check_object_unlaid(tdm_arc_val *o, tdm_arc_val *e, tdm_arc_val *grid) {
    assert_true(arc_set_is_lazy(o));
    assert_true(arc_hash(o) == arc_hash(e));
    assert_true(arc_eq(o, e) && arc_eq(e, o));
    arc_slot *t = arc_set_slots(e);
    for (uint32_t s = 0; s <= e->u.set.mask; s++) {
        tdm_arc_val *c = t[s].key;
        if (!c || c == ARC_DUMMY) continue;
        assert_true(arc_set_contains(o, c));
        int64_t v = c->u.items[0]->u.i;
        tdm_arc_val *p = c->u.items[1];
        assert_false(arc_set_contains(o, arc_cell(ta_rt, (v + 1) % 10, p->u.items[0]->u.i, p->u.items[1]->u.i)));
        assert_false(arc_set_contains(o, p));
    }
    assert_true(arc_set_is_lazy(o));
    /* measures: without a layout */
    static const char *measures[] = {"uppermost", "lowermost", "leftmost", "rightmost", "ulcorner", "urcorner",
                                     "llcorner",  "lrcorner",  "height",   "width",     "shape",    "center"};
    for (int m = 0; m < 12; m++) assert_true(arc_eq(call(measures[m], 1, &o), call(measures[m], 1, &e)));
    tdm_arc_val *bo[2] = {o, grid}, *be[2] = {e, grid};
    assert_true(arc_eq(call("bordering", 2, bo), call("bordering", 2, be)));
    static const char *outlines[] = {"backdrop", "delta", "box", "inbox", "outbox"};
    for (int m = 0; m < 5; m++) {
        /* inbox of a thin object raises in both */
        const tdm_arc_val *ro, *re;
        int so = tdm_arc_call(ta_rt, tdm_arc_prim_value(prim_id(outlines[m])), 1, (const tdm_arc_val *const *)&o, &ro);
        int se = tdm_arc_call(ta_rt, tdm_arc_prim_value(prim_id(outlines[m])), 1, (const tdm_arc_val *const *)&e, &re);
        assert_int_equal(so, se);
        if (!so) same_table((tdm_arc_val *)ro, (tdm_arc_val *)re, KEYS_PTR);
    }
    assert_true(arc_set_is_lazy(o));
    /* colour readers: without a layout when the object has one colour, with one otherwise */
    int64_t c;
    int uniform = arc_set_uniform_colour(o, &c);
    if (uniform)
        for (uint32_t s = 0; s <= e->u.set.mask; s++)
            if (t[s].key && t[s].key != ARC_DUMMY) assert_int_equal(t[s].key->u.items[0]->u.i, c);
    assert_true(arc_eq(call("color", 1, &o), call("color", 1, &e)));
    same_table(call("palette", 1, &o), call("palette", 1, &e), KEYS_PTR);
    tdm_arc_val *cf[2] = {arc_set_from(ta_rt, &o, 1), call("color", 1, &e)}, *cfe[2] = {arc_set_from(ta_rt, &e, 1), cf[1]};
    assert_int_equal(call("colorfilter", 2, cf)->n, call("colorfilter", 2, cfe)->n);
    assert_int_equal(arc_set_is_lazy(o), uniform);
    if (!uniform) same_table(o, e, KEYS_PTR);
}

static void check_grid(int h, int w, const int *cells, int flags, int path) {
    tdm_arc_rt *rt = ta_rt;
    tdm_arc_val *g;
    assert_int_equal(tdm_arc_grid_new(rt, h, w, cells, &g), TDM_OK);
    tdm_arc_val *a[4] = {g, arc_bool(flags & 4), arc_bool(flags & 2), arc_bool(flags & 1)};
    int fallback = 1;
    tdm_arc_val *lazy = arc_objects_lazy(rt, a, &fallback), *eager = arc_objects_eager(rt, a);
    assert_int_equal(fallback, 0);
    assert_non_null(lazy), assert_non_null(eager);
    if (!eager->n) {
        same_table(lazy, eager, KEYS_LAYOUT);
        return;
    }
    check_unlaid(lazy, eager);
    /* the outer layout through one path, then each object: checks without a layout, then a path */
    lay_out_by(path, lazy, eager, KEYS_EQ);
    same_table(lazy, eager, KEYS_EQ); /* objects' layouts compared below, after their own checks */
    arc_slot *t = lazy->u.set.tab;
    int k = 0;
    for (uint32_t s = 0; s <= lazy->u.set.mask; s++) {
        tdm_arc_val *o = t[s].key;
        if (!o || o == ARC_DUMMY) continue;
        if (!arc_set_is_lazy(o)) continue; /* laid out by the path already (repr, copy, ...) */
        tdm_arc_val *e = match(eager, o);
        check_object_unlaid(o, e, g);
        if (arc_set_is_lazy(o)) lay_out_by((path + ++k) % NPATHS, o, e, KEYS_PTR);
        same_table(o, e, KEYS_PTR);
    }
    same_table(lazy, eager, KEYS_LAYOUT);
}

static void test_lazy_vs_eager(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0x1a27);
    int cells[900], path = 0, grids = 0;
    for (int kind = 0; kind < NKINDS; kind++)
        for (int rep = 0; rep < 40; rep++) {
            int h = 1 + (int)tu_below(&r, 30), w = 1 + (int)tu_below(&r, 30);
            if (rep < 4) h = 1 + rep % 2, w = 1 + rep / 2; /* 1x1, 2x1, 1x2, 2x2 */
            if (rep == 4) h = w = 30;
            random_grid(&r, kind, h, w, cells);
            for (int f = 0; f < 8; f++) {
                check_grid(h, w, cells, f, path++ % NPATHS);
                tdm_arc_rt_reset(ta_rt);
            }
            grids++;
        }
    print_message("lazy objects() = eager on %d grids x 8 flag combinations\n", grids);
}

/* The labelling and the object values on many more grids than test_lazy_vs_eager lays out: per grid and
 * flag combination, len, hash and == of the result before any layout; then the outer layout (the discovery
 * order) against the eager one, slot by slot; and per object, still without its own layout, its hash,
 * size, corners and colour against the eager object equal to it. */
static void test_values_many(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0x1b0b);
    int cells[900], grids = 0;
    static const char *measures[] = {"ulcorner", "lrcorner", "size", "color"};
    for (int rep = 0; rep < 1200; rep++) {
        int kind = (int)tu_below(&r, NKINDS), h = 1 + (int)tu_below(&r, 30), w = 1 + (int)tu_below(&r, 30);
        if (rep % 10 == 0) h = w = 30;
        random_grid(&r, kind, h, w, cells);
        for (int f = 0; f < 8; f++) {
            tdm_arc_val *g;
            assert_int_equal(tdm_arc_grid_new(ta_rt, h, w, cells, &g), TDM_OK);
            tdm_arc_val *a[4] = {g, arc_bool(f & 4), arc_bool(f & 2), arc_bool(f & 1)};
            int fallback = 1;
            tdm_arc_val *lazy = arc_objects_lazy(ta_rt, a, &fallback), *eager = arc_objects_eager(ta_rt, a);
            assert_int_equal(fallback, 0);
            if (lazy->n != eager->n)
                fail_msg("grid %d (%dx%d, kind %d), flags %d: %u objects, eager %u", rep, h, w, kind, f, lazy->n, eager->n);
            if (eager->n) {
                assert_true(arc_set_is_lazy(lazy));
                assert_true(arc_hash(lazy) == arc_hash(eager));
                assert_true(arc_eq(lazy, eager) && arc_eq(eager, lazy));
                same_table(lazy, eager, KEYS_EQ);
                arc_slot *t = arc_set_slots(lazy);
                for (uint32_t s = 0; s <= lazy->u.set.mask; s++) {
                    tdm_arc_val *o = t[s].key;
                    if (!o || o == ARC_DUMMY) continue;
                    tdm_arc_val *e = match(eager, o);
                    assert_true(arc_set_is_lazy(o));
                    assert_true(arc_hash(o) == arc_hash(e));
                    for (int m = 0; m < 4; m++) assert_true(arc_eq(call(measures[m], 1, &o), call(measures[m], 1, &e)));
                }
            }
            tdm_arc_rt_reset(ta_rt);
        }
        grids++;
    }
    print_message("lazy objects() values = eager on %d grids x 8 flag combinations\n", grids);
}

/* arc_objects_of_colour (one colour's objects, program.c's objects line read only by colorfilter(·, c))
 * against colorfilter(eager objects(), c), for univalued flags and every colour, present or not: what needs
 * no layout first, then the outer layout through one of the paths (read from the full objects() made then),
 * then each object's, table by table. */
static void test_of_colour(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0x0c01);
    int cells[900], path = 0, sets = 0;
    for (int rep = 0; rep < 60; rep++) {
        int kind = rep % NKINDS, h = 1 + (int)tu_below(&r, 30), w = 1 + (int)tu_below(&r, 30);
        if (rep % 10 == 0) h = w = 30;
        random_grid(&r, kind, h, w, cells);
        for (int f = 4; f < 8; f++)
            for (int c = 0; c < 10; c++) {
                tdm_arc_val *g;
                assert_int_equal(tdm_arc_grid_new(ta_rt, h, w, cells, &g), TDM_OK);
                tdm_arc_val *a[4] = {g, arc_bool(f & 4), arc_bool(f & 2), arc_bool(f & 1)};
                int fallback = 1;
                tdm_arc_val *only = arc_objects_of_colour(ta_rt, a, c, &fallback);
                assert_int_equal(fallback, 0);
                tdm_arc_val *cf[2] = {arc_objects_eager(ta_rt, a), arc_int(ta_rt, c)}, *e = call("colorfilter", 2, cf);
                if (only->n != e->n)
                    fail_msg("grid %d (%dx%d), flags %d, colour %d: %u objects, colorfilter %u", rep, h, w, f, c, only->n, e->n);
                if (e->n) {
                    assert_true(arc_objects_only(only, c) && !arc_objects_only(only, (c + 1) % 10));
                    check_unlaid(only, e);
                    lay_out_by(path++ % NPATHS, only, e, KEYS_EQ);
                    same_table(only, e, KEYS_EQ);
                    arc_slot *t = only->u.set.tab;
                    for (uint32_t s = 0; s <= only->u.set.mask; s++) {
                        tdm_arc_val *o = t[s].key;
                        if (!o || o == ARC_DUMMY) continue;
                        tdm_arc_val *oe = match(e, o);
                        if (arc_set_is_lazy(o)) lay_out_by(path++ % NPATHS, o, oe, KEYS_PTR);
                        same_table(o, oe, KEYS_PTR);
                    }
                    same_table(only, e, KEYS_LAYOUT);
                    sets++;
                }
                tdm_arc_rt_reset(ta_rt);
            }
    }
    print_message("one colour's objects = colorfilter(objects()) for %d non-empty sets\n", sets);
}

/* Grids the lazy path does not take go to the eager one (through the primitive, with its errors). */
static void test_fallback(void **state) {
    (void)state;
    static const char *grids[] = {"((1, 12), (12, 1))", "((), ())", "((1, 2), (3,))", "((1, (2,)),)", "((-1, 0),)"};
    for (int k = 0; k < 5; k++) {
        int fallback = 0;
        tdm_arc_val *a[4] = {ta_parse(grids[k]), arc_bool(0), arc_bool(0), arc_bool(1)};
        assert_null(arc_objects_lazy(ta_rt, a, &fallback));
        assert_int_equal(fallback, 1);
    }
    int cells[31] = {0}, fallback = 0;
    tdm_arc_val *tall;
    assert_int_equal(tdm_arc_grid_new(ta_rt, 31, 1, cells, &tall), TDM_OK);
    tdm_arc_val *a[4] = {tall, arc_bool(0), arc_bool(0), arc_bool(0)};
    assert_null(arc_objects_lazy(ta_rt, a, &fallback));
    assert_int_equal(fallback, 1);
    tdm_arc_val *c[4] = {ta_parse(grids[0]), arc_bool(1), arc_bool(0), arc_bool(1)};
    assert_int_equal(call("objects", 4, c)->n, 2);
    TA_CHECK("ERROR", "objects", "((), ())", "False", "False", "True");
    /* bools are ints to the lazy path as to the eager one */
    tdm_arc_val *b[4] = {ta_parse("((True, 0), (0, True))"), arc_bool(1), arc_bool(0), arc_bool(0)};
    tdm_arc_val *lazy = arc_objects_lazy(ta_rt, b, &fallback), *eager = arc_objects_eager(ta_rt, b);
    assert_int_equal(fallback, 0);
    same_table(lazy, eager, KEYS_LAYOUT);
}

/* A layout that cannot be built (no memory) fails the call with TDM_E_NOMEM and leaves an empty set, never
 * a set without a table: the arena is made full and the address space capped at what is mapped now. */
static void test_no_memory(void **state) {
    (void)state;
    tdm_arc_rt *rt;
    assert_int_equal(tdm_arc_rt_new(&rt), TDM_OK);
    tu_rng r = tu_rng_for(0x0e0e);
    int cells[900];
    random_grid(&r, KIND_BLOBS, 30, 30, cells);
    tdm_arc_val *g;
    assert_int_equal(tdm_arc_grid_new(rt, 30, 30, cells, &g), TDM_OK);
    tdm_arc_val *a[4] = {g, arc_bool(0), arc_bool(0), arc_bool(1)};
    int fallback = 1;
    tdm_arc_val *objs = arc_objects_lazy(rt, a, &fallback);
    assert_int_equal(fallback, 0);
    assert_true(objs->n > 0 && arc_set_is_lazy(objs));
    /* one chunk so far (a fresh runtime takes 256 KiB at a time): filling it leaves nothing to reuse */
    assert_true(rt->chunk == rt->chunks && rt->bytes <= 256u * 1024u);
    rt->cur = rt->end;
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld", &pages) != 1) {
        if (f) fclose(f);
        tdm_arc_rt_free(rt);
        skip();
    }
    fclose(f);
    struct rlimit old, cap;
    assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
    cap = old;
    cap.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
    assert_int_equal(setrlimit(RLIMIT_AS, &cap), 0);
    int id;
    tdm_arc_prim_lookup("first", &id);
    const tdm_arc_val *arg = objs, *out = NULL;
    int st = tdm_arc_call(rt, tdm_arc_prim_value(id), 1, &arg, &out);
    assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
    assert_int_equal(st, TDM_E_NOMEM);
    assert_false(arc_set_is_lazy(objs));
    assert_int_equal(objs->n, 0);
    assert_null(arc_first(objs));
    tdm_arc_rt_free(rt);
}

int main(void) {
    tu_init_seed("test_arc_lazy");
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lazy_vs_eager), cmocka_unit_test(test_values_many), cmocka_unit_test(test_of_colour),
                                       cmocka_unit_test(test_fallback),
                                       cmocka_unit_test(test_no_memory)};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
