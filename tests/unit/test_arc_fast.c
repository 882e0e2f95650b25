/* test_arc_fast.c: the shortcuts of the second round on solver calls (issue 5) against the general forms
 * they skip, on seeded random inputs:
 *   - mostcommon/leastcommon on tuples of small ints replay the probes of up to 4 keys, or read the layout
 *     of more as ascending order, instead of building the set (colours counted a byte each, in SSE2 and
 *     portably by turns, up to 255 items): held to the set arc_set_from builds, walked slot by slot as the
 *     reference does;
 *   - dedupe on ints 0..63 keeps first occurrences by a seen mask, and on a grid's rows compares their
 *     bytes: both held to tup.index(e) == i by ==;
 *   - the wide part of a deferred set (bits.c) is sorted (a bitmap over a small box, else its runs merged):
 *     held to qsort + unique, boxes of 63, 64 and 65 columns among them;
 *   - a deferred set's box is computed once (one colour read in place): held to its coordinates' extremes;
 *   - tdm_arc_grid_new builds a grid in one block and tdm_arc_grid_read tells interned ints by address,
 *     both by vector arithmetic on addresses when every cell is interned: held to the ints put in (and
 *     to the interned values), values at and just outside the interned range's ends included; rows
 *     reversed, or one row moved elsewhere, read row by row (the one pass over back-to-back rows is then
 *     wrong);
 *   - tdm_arc_batch_run copies results into per-thread slabs: every cell of many results held to its grid,
 *     also for one-thread batches run from each thread of the caller's own parallel region. */
#include "arc_test_util.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* max/min(set(t), key=t.count) the long way: the laid-out set's slots in order, counts by ==. */
static tdm_arc_val *common_ref(tdm_arc_rt *rt, tdm_arc_val *t, int most) {
    tdm_arc_val *d = arc_set_from(rt, t->u.items, t->n), *best = NULL;
    assert_non_null(d);
    arc_slot *tab = arc_set_slots(d);
    uint32_t bestc = 0;
    for (uint32_t s = 0; s <= d->u.set.mask; s++) {
        tdm_arc_val *key = tab[s].key;
        if (!key || key == ARC_DUMMY) continue;
        uint32_t c = 0;
        for (uint32_t k = 0; k < t->n; k++) c += (uint32_t)arc_eq(t->u.items[k], key);
        if (!best || (most ? c > bestc : c < bestc)) best = key, bestc = c;
    }
    return best;
}

static void test_common_random(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xc0);
    int ascending = 0, other = 0;
    for (int it = 0; it < 4000; it++) {
        tdm_arc_rt_reset(ta_rt);
        arc_bits_portable = it & 1; /* by turns: the byte counts in SSE2 and the portable counts */
        /* now and then past the 255 items the byte counts hold (the general path then) */
        uint32_t n = (uint32_t)(tu_below(&r, 20) ? tu_range(&r, 1, 40) : tu_range(&r, 250, 260));
        /* value ranges: colours, ints up to 63 (past the first table: probes), a few distinct large ones,
           True/False among them, and now and then an int outside 0..63 (the general path) */
        int mode = (int)tu_below(&r, 5), distinct = (int)tu_range(&r, 1, 24);
        int64_t pick[24];
        for (int k = 0; k < distinct; k++) pick[k] = tu_range(&r, 0, mode == 1 ? 63 : 9);
        tdm_arc_val *t = arc_tuple(ta_rt, n);
        assert_non_null(t);
        for (uint32_t k = 0; k < n; k++) {
            int64_t v = mode == 0 ? tu_range(&r, 0, 9) : pick[tu_below(&r, (uint64_t)distinct)];
            t->u.items[k] = mode == 2 && v < 2 && tu_below(&r, 2) ? arc_bool((int)v) : arc_int(ta_rt, v);
            if (mode == 3 && tu_below(&r, 30) == 0) t->u.items[k] = arc_int(ta_rt, tu_range(&r, -3, 70));
        }
        int top = 0, seen[64] = {0}, d = 0, small = 1;
        for (uint32_t k = 0; k < n; k++) {
            int64_t v = t->u.items[k]->u.i;
            if (v < 0 || v > 63) small = 0;
            else d += !seen[v]++, top = v > top ? (int)v : top;
        }
        if (small && (d <= 4 || top <= (d <= 18 ? 31 : 127))) ascending++; /* replayed or ascending */
        else other++;
        for (int most = 0; most < 2; most++) {
            tdm_arc_val *a[1] = {t};
            tdm_arc_val *got = most ? arc_p_mostcommon(ta_rt, a) : arc_p_leastcommon(ta_rt, a);
            assert_non_null(got);
            assert_ptr_equal(got, common_ref(ta_rt, t, most)); /* the same element: True stays True */
        }
    }
    for (int it = 0; it < 8; it++) { /* a count of 254 to 257 for one key: the byte counts' edge */
        tdm_arc_rt_reset(ta_rt);
        arc_bits_portable = it & 1;
        uint32_t n = 255 + (uint32_t)(it >> 1);
        tdm_arc_val *t = arc_tuple(ta_rt, n);
        assert_non_null(t);
        for (uint32_t k = 0; k < n; k++) t->u.items[k] = arc_int(ta_rt, k + 1 < n ? 3 : 11);
        for (int most = 0; most < 2; most++) {
            tdm_arc_val *a[1] = {t};
            assert_ptr_equal(most ? arc_p_mostcommon(ta_rt, a) : arc_p_leastcommon(ta_rt, a), common_ref(ta_rt, t, most));
        }
    }
    arc_bits_portable = 0;
    assert_true(ascending > 500 && other > 500); /* both paths ran */
}

/* dedupe(t), held to tup.index(e) == i by ==: the same items (True stays True), in order. Returns it. */
static tdm_arc_val *dedupe_held(tdm_arc_val *t) {
    tdm_arc_val *a[1] = {t}, *got = arc_p_dedupe(ta_rt, a);
    assert_non_null(got);
    uint32_t m = 0;
    for (uint32_t k = 0; k < t->n; k++) {
        uint32_t p = 0;
        while (!arc_eq(t->u.items[p], t->u.items[k])) p++;
        if (p == k) assert_ptr_equal(got->u.items[m++], t->u.items[k]);
    }
    assert_int_equal(got->n, m);
    return got;
}

/* dedupe on ints 0..63 by a seen mask: held to tup.index(e) == i by ==, items of other kinds mixed in. */
static void test_dedupe_random(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xc4);
    for (int it = 0; it < 3000; it++) {
        tdm_arc_rt_reset(ta_rt);
        uint32_t n = (uint32_t)tu_range(&r, 0, 30);
        int mode = (int)tu_below(&r, 4);
        tdm_arc_val *t = arc_tuple(ta_rt, n);
        for (uint32_t k = 0; k < n; k++) {
            int64_t v = tu_range(&r, 0, mode == 1 ? 63 : 9);
            t->u.items[k] = v < 2 && tu_below(&r, 3) == 0 ? arc_bool((int)v) : arc_int(ta_rt, v);
            if (mode == 2 && tu_below(&r, 8) == 0) t->u.items[k] = arc_int(ta_rt, tu_range(&r, 60, 70));
            if (mode == 3 && tu_below(&r, 8) == 0) t->u.items[k] = arc_ipair(ta_rt, v, 1);
        }
        dedupe_held(t);
    }
}

/* dedupe of a grid's rows by their bytes: held to tup.index(e) == i by ==, on grids whose rows come from a
 * few distinct ones (some differing only in their last column), now and then a cell that is True or no
 * colour (the general path); the kept view of the result holds its rows' colours. */
static void test_dedupe_rows_random(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xc5);
    int viewed = 0;
    for (int it = 0; it < 2000; it++) {
        tdm_arc_rt_reset(ta_rt);
        int h = (int)tu_range(&r, 1, 30), w = (int)tu_range(&r, 1, 30), kinds = (int)tu_range(&r, 1, 5);
        int64_t pool[5][30];
        for (int p = 0; p < kinds; p++)
            for (int j = 0; j < w; j++) pool[p][j] = p && tu_below(&r, 2) ? pool[p - 1][j] : tu_range(&r, 0, 9);
        for (int p = 1; p < kinds; p++) pool[p][w - 1] = (pool[p - 1][w - 1] + p) % 10; /* rows differ at the end */
        tdm_arc_val *t = arc_tuple(ta_rt, (uint32_t)h);
        assert_non_null(t);
        for (int i = 0; i < h; i++) {
            tdm_arc_val *row = arc_tuple(ta_rt, (uint32_t)w);
            assert_non_null(row);
            const int64_t *src = pool[tu_below(&r, (uint64_t)kinds)];
            for (int j = 0; j < w; j++) row->u.items[j] = arc_int(ta_rt, src[j]);
            if (tu_below(&r, 40) == 0) row->u.items[tu_below(&r, (uint64_t)w)] = tu_below(&r, 2) ? arc_bool(1) : arc_int(ta_rt, 12);
            t->u.items[i] = row;
        }
        tdm_arc_val *got = dedupe_held(t);
        uint32_t m = got->n;
        arc_gview v;
        if (arc_grid_view_kept(ta_rt, got, &v) == 1) {
            viewed++;
            assert_int_equal(v.h, (int)m), assert_int_equal(v.w, w);
            for (uint32_t i = 0; i < m; i++)
                for (int j = 0; j < w; j++) assert_int_equal(v.c[i * w + j], got->u.items[i]->u.items[j]->u.i);
        }
    }
    assert_true(viewed > 1000); /* the rows' path ran */
}

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_wide_sort(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xc1);
    for (int it = 0; it < 3000; it++) {
        tdm_arc_rt_reset(ta_rt);
        arc_bits b;
        assert_int_equal(arc_bits_init_wide(ta_rt, &b), 0);
        b.kind = ARC_BITS_CELLS;
        uint64_t want[1800];
        uint32_t nw = 0;
        /* runs as merges and lines make them: ascending, descending, repeated keys, or random order; a
           third of the time many runs packed in a small box, often the same keys (the bitmap's case) */
        int dense = tu_below(&r, 3) == 0, runs = dense ? (int)tu_range(&r, 6, 40) : (int)tu_range(&r, 1, 12);
        /* half the dense cases one colour over columns 40 .. 40 + W - 1, both ends present, W 63, 64 or 65:
           the edge of a word a row */
        int edge = dense && tu_below(&r, 2), wide = 63 + (int)tu_below(&r, 3);
        for (int q = 0; q < runs; q++) {
            int len = (int)tu_range(&r, 1, 45), how = (int)tu_below(&r, 4), c = edge ? 0 : (int)tu_range(&r, 0, dense ? 1 : 9);
            int64_t i = tu_range(&r, -44, 74), j = tu_range(&r, 31 + len, 80 + len); /* j - k stays past the masks */
            if (dense) i = tu_range(&r, 40, 47), j = tu_range(&r, 76, 80);
            for (int k = 0; k < len; k++) {
                int64_t ii = how == 3 ? tu_range(&r, dense ? 40 : -44, dense ? 47 : 74) : i;
                int64_t jj = how == 0 ? j + k : how == 1 ? j - k : how == 2 ? j + k / 2 : tu_range(&r, 31, dense ? 40 : 74);
                if (edge) jj = q == 0 && k == 0 ? 40 : q == 0 && k == 1 ? 40 + wide - 1 : 40 + (int64_t)tu_below(&r, (uint64_t)wide);
                assert_int_equal(arc_bits_put(&b, c, ii, jj), 0);
                want[nw++] = arc_bits_key(c, ii, jj);
            }
        }
        qsort(want, nw, sizeof *want, u64_cmp);
        uint32_t m = 1;
        for (uint32_t k = 1; k < nw; k++)
            if (want[k] != want[m - 1]) want[m++] = want[k];
        tdm_arc_val *s = arc_bits_set(ta_rt, &b, arc_p_merge, NULL, 0);
        assert_non_null(s);
        const arc_bits *got = arc_bits_of(s);
        assert_non_null(got);
        assert_int_equal(got->nout, m);
        assert_int_equal(s->n, m);
        assert_memory_equal(got->out, want, m * sizeof *want);
    }
}

/* A deferred set's box (one colour, several, positions, wide keys), asked twice: the coordinates' extremes. */
static void test_box_cache(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xc3);
    for (int it = 0; it < 3000; it++) {
        tdm_arc_rt_reset(ta_rt);
        arc_bits b;
        assert_int_equal(arc_bits_init_wide(ta_rt, &b), 0);
        int pos = tu_below(&r, 3) == 0, colours = (int)tu_range(&r, 1, 3), far = tu_below(&r, 3) == 0;
        b.kind = pos ? ARC_BITS_POS : ARC_BITS_CELLS;
        int64_t want[4] = {INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN};
        int n = (int)tu_range(&r, 1, 40);
        for (int k = 0; k < n; k++) {
            int64_t c = pos ? 0 : tu_range(&r, 0, colours - 1) * 3, i = tu_range(&r, -2, 29), j = tu_range(&r, -2, 29);
            if (far && tu_below(&r, 4) == 0) i = tu_range(&r, -44, 74), j = tu_range(&r, 30, 74);
            assert_int_equal(arc_bits_put(&b, c, i, j), 0);
            want[0] = i < want[0] ? i : want[0], want[1] = j < want[1] ? j : want[1];
            want[2] = i > want[2] ? i : want[2], want[3] = j > want[3] ? j : want[3];
        }
        tdm_arc_val *s = arc_bits_set(ta_rt, &b, arc_p_merge, NULL, 0);
        assert_non_null(s);
        for (int again = 0; again < 2; again++) {
            int64_t got[4] = {0, 0, 0, 0};
            arc_bits_box_of(s, got);
            assert_memory_equal(got, want, sizeof want);
            uint32_t nn;
            int64_t u, l, d, rr;
            assert_int_equal(arc_patch_box(ta_rt, s, &nn, &u, &l, &d, &rr, "test"), 0);
            assert_int_equal(nn, s->n);
            assert_true(u == want[0] && l == want[1] && d == want[2] && rr == want[3]);
        }
    }
}

static void test_grid_round_trip(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xc2);
    static int cells[30 * 30], back[30 * 30];
    for (int it = 0; it < 2000; it++) {
        tdm_arc_rt_reset(ta_rt);
        /* colours; any ints; the whole interned range (the vector path, its edges); that range and one cell
           just outside it (the vector path's check must send the grid down the general one) */
        int h = (int)tu_range(&r, 0, 30), w = (int)tu_range(&r, 0, 30), kind = (int)tu_below(&r, 4);
        for (int k = 0; k < h * w; k++)
            cells[k] = kind == 0 ? (int)tu_range(&r, 0, 9) : kind == 1 ? (int)tu_range(&r, -2000, 2000)
                     : tu_below(&r, 8) == 0 ? (tu_below(&r, 2) ? ARC_INT_LO : ARC_INT_HI)
                                            : (int)tu_range(&r, ARC_INT_LO, ARC_INT_HI);
        if (kind == 3 && h > 0 && w > 0) cells[tu_below(&r, (uint64_t)(h * w))] = tu_below(&r, 2) ? ARC_INT_LO - 1 : ARC_INT_HI + 1;
        tdm_arc_val *g;
        assert_int_equal(tdm_arc_grid_new(ta_rt, h, w, cells, &g), TDM_OK);
        assert_int_equal(g->n, (uint32_t)h);
        for (int i = 0; i < h; i++) {
            assert_int_equal(g->u.items[i]->kind, TDM_ARC_TUPLE);
            assert_int_equal(g->u.items[i]->n, (uint32_t)w);
            for (int j = 0; j < w; j++) {
                tdm_arc_val *c = g->u.items[i]->u.items[j];
                assert_int_equal(c->kind, TDM_ARC_INT);
                assert_int_equal(c->u.i, cells[i * w + j]);
                assert_ptr_equal(c->u.i >= ARC_INT_LO && c->u.i <= ARC_INT_HI ? arc_int(ta_rt, c->u.i) : c, c);
                assert_int_equal(arc_hash(c), arc_int_hash(cells[i * w + j]));
            }
        }
        int hh = -1, ww = -1;
        memset(back, 0x55, sizeof back);
        assert_int_equal(tdm_arc_grid_read(g, &hh, &ww, back, sizeof back / sizeof *back), TDM_OK);
        assert_int_equal(hh, h);
        assert_int_equal(ww, h ? w : 0);
        if (h) assert_memory_equal(back, cells, (size_t)h * w * sizeof *cells);
        if (h < 2) continue;
        /* rows no longer back to back (one pass over all cells is then wrong): the rows reversed, or one
           row (any, the last included) swapped for a copy of itself elsewhere */
        tdm_arc_val *other = arc_tuple(ta_rt, (uint32_t)h);
        int rev = (int)tu_below(&r, 2), moved = (int)tu_below(&r, (uint64_t)h);
        for (int i = 0; i < h; i++) other->u.items[i] = g->u.items[rev ? h - 1 - i : i];
        if (!rev) {
            tdm_arc_val *copy = arc_tuple(ta_rt, (uint32_t)w);
            for (int j = 0; j < w; j++) copy->u.items[j] = g->u.items[moved]->u.items[j];
            other->u.items[moved] = copy;
        }
        memset(back, 0x55, sizeof back);
        assert_int_equal(tdm_arc_grid_read(other, &hh, &ww, back, sizeof back / sizeof *back), TDM_OK);
        for (int i = 0; i < h; i++)
            assert_memory_equal(back + (size_t)i * w, cells + (size_t)(rev ? h - 1 - i : i) * w, (size_t)w * sizeof *cells);
    }
    /* ints that are not interned at addresses near the interned ones (a static value and one from the
       heap, whose offsets from the interned array fit in 32 bits where arena blocks' may not): read by
       value, in every position of a row that the vector path reads four cells at a time */
    static tdm_arc_val near = {.kind = TDM_ARC_INT, .u.i = 7000};
    tdm_arc_val *heap = calloc(1, sizeof *heap);
    assert_non_null(heap);
    heap->kind = TDM_ARC_INT, heap->u.i = -7000;
    for (int pos = 0; pos < 9; pos++)
        for (int which = 0; which < 2; which++) {
            tdm_arc_val *row = arc_tuple(ta_rt, 9), *grid = arc_tuple(ta_rt, 1);
            for (int j = 0; j < 9; j++) row->u.items[j] = arc_int(ta_rt, j);
            row->u.items[pos] = which ? heap : &near;
            grid->u.items[0] = row;
            int vals[9], hh, ww;
            assert_int_equal(tdm_arc_grid_read(grid, &hh, &ww, vals, 9), TDM_OK);
            for (int j = 0; j < 9; j++) assert_int_equal(vals[j], j == pos ? (which ? -7000 : 7000) : j);
        }
    free(heap);
    /* a bool cell reads as its int; a tuple cell is no grid */
    tdm_arc_val *g = ta_parse("((True, 2), (3, 4))");
    int out[4], hh, ww;
    assert_int_equal(tdm_arc_grid_read(g, &hh, &ww, out, 4), TDM_OK);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[3], 4);
    assert_int_not_equal(tdm_arc_grid_read(ta_parse("((1, (2,)),)"), &hh, &ww, out, 4), TDM_OK);
}

enum { SLAB_CALLS = 400 };
static int slab_cells[SLAB_CALLS][100];

/* Every result of b, a batch of calls over slab_cells by test_batch_slabs' programs, held to its program. */
static void check_slab_batch(const tdm_arc_batch *b, const tdm_arc_call_ref *calls) {
    for (int c = 0; c < SLAB_CALLS; c++) {
        const tdm_arc_result *x = tdm_arc_batch_result(b, (size_t)c);
        int h = calls[c].grid.h, w = calls[c].grid.w;
        if (calls[c].prog == 1) {
            assert_int_equal(x->status, TDM_OK);
            assert_null(x->cells);
            assert_non_null(x->repr);
            continue;
        }
        if (calls[c].prog == 2) { /* crop's second argument is a pair: FIVE is an int */
            assert_int_not_equal(x->status, TDM_OK);
            assert_null(x->cells);
            continue;
        }
        assert_int_equal(x->status, TDM_OK);
        assert_int_equal(x->h, 3 * h);
        assert_int_equal(x->w, 3 * w);
        for (int i = 0; i < 3 * h; i++)
            for (int j = 0; j < 3 * w; j++) assert_int_equal(x->cells[i * 3 * w + j], slab_cells[c][(i / 3) * w + j / 3]);
    }
}

/* tdm_arc_batch_run's result cells in per-thread slabs: enough calls to fill several, results that are
 * not grids and calls that raise among them, on 1 and 2 threads; each grid checked cell by cell. Then
 * batches of one thread each from the two threads of a caller's own parallel region (one thread's batch
 * must take no worksharing construct, which would bind to that region and share its calls out). */
static void test_batch_slabs(void **state) {
    (void)state;
    static const char *progs = "def solve_up(I):\n    O = upscale(I, THREE)\n    return O\n"
                               "def solve_pal(I):\n    O = palette(I)\n    return O\n"
                               "def solve_bad(I):\n    O = crop(I, ORIGIN, FIVE)\n    return O\n";
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(progs, strlen(progs), "t", &p), TDM_OK);
    tu_rng r = tu_rng_for(0xc5);
    static tdm_arc_call_ref calls[SLAB_CALLS];
    for (int c = 0; c < SLAB_CALLS; c++) {
        int h = (int)tu_range(&r, 1, 10), w = (int)tu_range(&r, 1, 10);
        for (int k = 0; k < h * w; k++) slab_cells[c][k] = (int)tu_below(&r, 10);
        calls[c].prog = tu_below(&r, 8) == 0 ? (size_t)tu_range(&r, 1, 2) : 0;
        calls[c].grid = (tdm_arc_grid_ref){h, w, slab_cells[c]};
    }
    for (int threads = 1; threads <= 2; threads++) {
        tdm_arc_batch *b;
        assert_int_equal(tdm_arc_batch_run(p, calls, SLAB_CALLS, threads, 0, &b), TDM_OK);
        check_slab_batch(b, calls);
        tdm_arc_batch_free(b);
    }
    tdm_arc_batch *own[2] = {NULL, NULL};
    int st[2] = {-1, -1};
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        if (t < 2) st[t] = tdm_arc_batch_run(p, calls, SLAB_CALLS, 1, 0, &own[t]);
    }
    for (int t = 0; t < 2; t++) {
        if (st[t] == -1) continue; /* the region ran on fewer threads */
        assert_int_equal(st[t], TDM_OK);
        check_slab_batch(own[t], calls);
        tdm_arc_batch_free(own[t]);
    }
    tdm_arc_programs_free(p);
}

int main(void) {
    tu_init_seed("test_arc_fast");
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_common_random), cmocka_unit_test(test_dedupe_random),
                                       cmocka_unit_test(test_dedupe_rows_random),
                                       cmocka_unit_test(test_wide_sort),
                                       cmocka_unit_test(test_box_cache), cmocka_unit_test(test_batch_slabs),
                                                                              cmocka_unit_test(test_grid_round_trip)};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
