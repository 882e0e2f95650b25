/* hit_blocks_check.h: the check every test of tdm_seq_query_opts.blocks shares (test_hit_blocks.c, the
 * engine tests through engine_fake.h, test_cuda_seq.c): a result's block summaries against the matcher's
 * own blocks, recomputed here field by field from tdm_seq_matcher_blocks (which the difflib oracle checks
 * against CPython), so that a wrong summary anywhere fails. Header-only, like unit_common.h. */
#ifndef TANDEM_HIT_BLOCKS_CHECK_H
#define TANDEM_HIT_BLOCKS_CHECK_H

#include "unit_common.h"

#include "tandem/seq.h"

/* The summary of SequenceMatcher(None, P, b, autojunk) with b already set on m, from the block list:
 * sizes summed, blocks counted, the block of the smallest i first, the largest end last, and a_repeat
 * by a backward scan. */
static inline tdm_seq_hit_blocks hb_expect(tdm_seq_matcher *m, const uint32_t *P, size_t np) {
    const tdm_seq_block *bl;
    size_t nb, total;
    assert_int_equal(tdm_seq_matcher_blocks(m, P, np, &bl, &nb, &total), TDM_OK);
    tdm_seq_hit_blocks x = {0};
    size_t sum = 0;
    for (size_t k = 0; k < nb; k++) {
        sum += bl[k].n;
        if (k == 0 || bl[k].i < x.a_first) x.a_first = bl[k].i, x.b_first = bl[k].j;
        if (bl[k].i + bl[k].n > x.a_end) x.a_end = bl[k].i + bl[k].n;
    }
    assert_int_equal(sum, total);
    x.matched = (uint32_t)sum;
    x.nblocks = (uint32_t)nb;
    if (nb)
        for (size_t t = 0; t < x.a_first; t++)
            if (P[t] == P[x.a_first]) x.a_repeat = x.a_first - (uint32_t)t; /* the last one wins */
    return x;
}

static inline int hb_same(tdm_seq_hit_blocks a, tdm_seq_hit_blocks b) {
    return a.matched == b.matched && a.nblocks == b.nblocks && a.a_first == b.a_first && a.b_first == b.b_first &&
           a.a_end == b.a_end && a.a_repeat == b.a_repeat;
}

/* Fails unless r (a query over s's patterns with STM stm and blocks asked for) carries the summary of
 * every hit. Returns the number of hits with at least one block (callers check their inputs reach some). */
static inline size_t hb_check(const tdm_seq_store *s, const tdm_seq_stm *stm, int autojunk, const tdm_seq_result *r,
                              const char *what) {
    tu_check(r->blocks != NULL, "%s: %zu hits but no block summaries", what, r->n);
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    assert_int_equal(tdm_seq_matcher_set_b(m, stm->ids, stm->n, autojunk), TDM_OK);
    size_t with = 0;
    for (size_t h = 0; h < r->n; h++) {
        const uint32_t *P;
        size_t np;
        assert_int_equal(tdm_seq_store_get(s, r->hits[h].id, &P, &np), TDM_OK);
        tdm_seq_hit_blocks want = hb_expect(m, P, np), got = r->blocks[h];
        tu_check(hb_same(got, want),
                 "%s: hit %zu (pattern %u): summary {%u, %u, %u, %u, %u, %u}, want {%u, %u, %u, %u, %u, %u}", what, h,
                 r->hits[h].id, got.matched, got.nblocks, got.a_first, got.b_first, got.a_end, got.a_repeat,
                 want.matched, want.nblocks, want.a_first, want.b_first, want.a_end, want.a_repeat);
        with += want.nblocks > 0;
    }
    tdm_seq_matcher_free(m);
    return with;
}

#endif
