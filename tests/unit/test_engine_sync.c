/* test_engine_sync.c: unit tests of the dual-tier engine's syncs (src/seq/engine_sync.c): each of the
 * four triggers (count inside a learn when there is no background thread, the background thread's count
 * and interval wake-ups, manual, leaving training mode) runs when and only when due; training mode holds
 * the automatic ones back; with a background thread a learn never does device work itself; and while
 * threads learn, query and sync at once every query sees every pattern learned before it started, exactly
 * once, and the end state answers as a fresh tdm_seq_query does. The device is the fake of engine_fake.h. */
#define _POSIX_C_SOURCE 200809L
#include "engine_fake.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- triggers and training -------------------------------------------------------------------------- */

static void check_all_lcs(tdm_seq_engine *e, const char *what) {
    const char *syms[] = {"s0", "s1", "s2", "s3"};
    const size_t lens[] = {2, 2, 2, 2};
    tdm_seq_stm q;
    assert_int_equal(tdm_seq_engine_encode(e, syms, lens, 4, &q), TDM_OK);
    for (size_t c = 0; c < NCONFIG; c++) {
        tdm_seq_query_opts o = opts_for(configs[c], c == 0 ? 0.0 : 0.4, c == 3 ? 7 : 0);
        tdm_seq_result got, want;
        assert_int_equal(tdm_seq_engine_query(e, &q, &o, &got), TDM_OK);
        assert_int_equal(tdm_seq_query(tdm_seq_engine_store(e), &q, &o, &want), TDM_OK);
        same_hits(&got, &want, what, configs[c].name, 0, o.threshold, o.top_k);
        if (c == 0) assert_int_equal(got.n, tdm_seq_store_count(tdm_seq_engine_store(e))); /* threshold 0: all */
        tdm_seq_result_clear(&got);
        tdm_seq_result_clear(&want);
    }
    tdm_seq_stm_clear(&q);
}

/* Without a background thread: count (inside the learn), training (held back, then its own trigger),
 * manual. */
static void test_engine_triggers_inline(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(21);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 6, 50), 5, 0.0, 0);
    learn_some(e, &r, 6, 4, 1);
    tdm_seq_engine_stats st = stats_of(e);
    assert_int_equal(st.recent_patterns, 4);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_COUNT], 0);
    check_all_lcs(e, "4 recent");
    learn_some(e, &r, 6, 1, 2); /* the fifth reaches the threshold: synced inside the learn */
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_COUNT], 1);
    assert_int_equal(st.recent_patterns, 0);
    assert_int_equal(st.device_patterns, 55);
    assert_int_equal(st.synced_patterns, 55);
    assert_true(st.last_sync_ms >= 0.0 && st.sync_ms >= st.last_sync_ms);

    /* Training holds the count trigger back; leaving it without syncing leaves the patterns recent. */
    assert_int_equal(tdm_seq_engine_training(e, 1, 0), TDM_OK);
    assert_true(stats_of(e).training);
    learn_some(e, &r, 6, 12, 3);
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_COUNT], 1);
    assert_int_equal(st.recent_patterns, 12);
    check_all_lcs(e, "training");
    assert_int_equal(tdm_seq_engine_training(e, 0, 0), TDM_OK);
    st = stats_of(e);
    assert_false(st.training);
    assert_int_equal(st.recent_patterns, 12);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_TRAINING], 0);
    learn_some(e, &r, 6, 1, 4); /* out of training, the next learn applies the count rule */
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_COUNT], 2);
    assert_int_equal(st.recent_patterns, 0);

    /* Leaving training with sync = 1 is the fourth trigger; with nothing pending it does nothing. */
    assert_int_equal(tdm_seq_engine_training(e, 1, 0), TDM_OK);
    learn_some(e, &r, 6, 7, 5);
    assert_int_equal(stats_of(e).recent_patterns, 7);
    assert_int_equal(tdm_seq_engine_training(e, 0, 1), TDM_OK);
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_TRAINING], 1);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_COUNT], 2);
    assert_int_equal(st.recent_patterns, 0);
    assert_int_equal(tdm_seq_engine_training(e, 0, 1), TDM_OK);
    assert_int_equal(stats_of(e).syncs[TDM_SEQ_SYNC_TRAINING], 1);

    /* Manual: below the threshold, and in training mode too. */
    learn_some(e, &r, 6, 2, 6);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_MANUAL], 1);
    assert_int_equal(st.recent_patterns, 0);
    assert_int_equal(tdm_seq_engine_training(e, 1, 0), TDM_OK);
    learn_some(e, &r, 6, 3, 7);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_MANUAL], 2);
    assert_int_equal(st.recent_patterns, 0);
    assert_int_equal(st.synced_patterns, st.patterns);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_INTERVAL], 0);
    check_all_lcs(e, "after syncs");
    assert_int_equal(atomic_load(&fake.overlaps), 0);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);
}

#define WAIT_UNTIL(cond)                                                                                   \
    do {                                                                                                   \
        for (int tries_ = 0; !(cond) && tries_ < 500; tries_++) sleep_ms(10);                              \
        tu_check(cond, "still false after 5 s");                                                           \
    } while (0)

/* With a background thread (0.3 s interval): a learn that reaches the threshold only wakes the thread
 * (the append never runs on the learning thread), the interval syncs what is pending, training holds both
 * back. */
static void test_engine_triggers_background(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(22);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 6, 40), 5, 0.3, 0);
    fake.forbidden = pthread_self();
    atomic_store(&fake.forbid, 1);
    learn_some(e, &r, 6, 5, 1);
    WAIT_UNTIL(stats_of(e).syncs[TDM_SEQ_SYNC_COUNT] == 1 && stats_of(e).recent_patterns == 0);
    assert_int_equal(stats_of(e).device_patterns, 45);
    learn_some(e, &r, 6, 2, 2); /* below the threshold: the timer moves them */
    WAIT_UNTIL(stats_of(e).syncs[TDM_SEQ_SYNC_INTERVAL] == 1 && stats_of(e).recent_patterns == 0);
    assert_int_equal(atomic_load(&fake.bad_thread), 0);
    atomic_store(&fake.forbid, 0);
    check_all_lcs(e, "background");

    tdm_seq_engine_stats before = stats_of(e);
    assert_int_equal(tdm_seq_engine_training(e, 1, 0), TDM_OK);
    learn_some(e, &r, 6, 8, 3); /* over the threshold: held back */
    sleep_ms(800);              /* more than two intervals */
    tdm_seq_engine_stats st = stats_of(e);
    for (int t = 0; t < TDM_SEQ_SYNC_TRIGGERS; t++) assert_int_equal(st.syncs[t], before.syncs[t]);
    assert_int_equal(st.recent_patterns, 8);
    check_all_lcs(e, "background training");
    assert_int_equal(tdm_seq_engine_training(e, 0, 1), TDM_OK);
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_TRAINING], 1);
    assert_int_equal(st.recent_patterns, 0);
    assert_int_equal(st.synced_patterns, st.patterns);
    assert_int_equal(atomic_load(&fake.overlaps), 0);
    tdm_seq_engine_free(e); /* stops and joins the thread */
    tdm_destroy(ctx);
}

/* ---- concurrency ------------------------------------------------------------------------------------ */

typedef struct {
    tdm_seq_engine *e;
    uint32_t salt, n;
    uint32_t *ids;      /* the id each learn got */
    uint32_t (*pat)[8]; /* what each learn stored */
    size_t *len;
    const tdm_seq_stm *stms;
    size_t nstm;
    atomic_int *done;   /* learners finished */
    int errors;
} worker;

static void *learner(void *arg) {
    worker *w = arg;
    tu_rng r = tu_rng_for(100 + w->salt);
    for (uint32_t k = 0; k < w->n; k++) {
        size_t n = (size_t)tu_below(&r, 8);
        char names[8][24];
        const char *syms[8];
        size_t lens[8];
        for (size_t i = 0; i < n; i++) {
            if (w->salt == 2 && tu_below(&r, 6) == 0) snprintf(names[i], sizeof names[i], "c%u_%u", w->salt, k);
            else tdm_seq_gen_symbol_name((uint32_t)tu_below(&r, 6), names[i]);
            syms[i] = names[i], lens[i] = strlen(names[i]);
        }
        w->errors += tdm_seq_engine_learn_strings(w->e, syms, lens, n, &w->ids[k]) != TDM_OK;
        /* Read back under the engine's own lock through a query would be heavy: keep the symbols' ids. */
        tdm_seq_stm enc;
        w->errors += tdm_seq_engine_encode(w->e, syms, lens, n, &enc) != TDM_OK;
        memcpy(w->pat[k], enc.ids, n * sizeof *enc.ids);
        w->len[k] = n;
        tdm_seq_stm_clear(&enc);
    }
    atomic_fetch_add(w->done, 1);
    return NULL;
}

/* Threshold 0 returns every pattern: a query that starts after a learn returned must see it, whichever
 * tier holds it, and never a pattern twice. */
static void *querier(void *arg) {
    worker *w = arg;
    tu_rng r = tu_rng_for(200 + w->salt);
    while (atomic_load(w->done) < 2) {
        tdm_seq_engine_stats before = stats_of(w->e);
        const tdm_seq_stm *q = &w->stms[tu_below(&r, w->nstm)];
        config c = configs[tu_below(&r, NCONFIG)];
        tdm_seq_query_opts o = opts_for(c, 0.0, 0);
        tdm_seq_result res;
        if (tdm_seq_engine_query(w->e, q, &o, &res)) {
            w->errors++;
            continue;
        }
        tdm_seq_engine_stats after = stats_of(w->e);
        w->errors += res.n < before.patterns || res.n > after.patterns;
        uint8_t *seen = calloc(res.n + 1, 1);
        for (size_t h = 0; h < res.n; h++) {
            w->errors += res.hits[h].id >= res.n || seen[res.hits[h].id];
            if (res.hits[h].id < res.n) seen[res.hits[h].id] = 1;
            w->errors += h && (res.hits[h - 1].similarity < res.hits[h].similarity ||
                               (res.hits[h - 1].similarity == res.hits[h].similarity && res.hits[h - 1].id > res.hits[h].id));
        }
        w->errors += res.stats.patterns != res.n;
        w->errors += res.stats.device_patterns + res.stats.recent_patterns != res.stats.patterns;
        free(seen);
        tdm_seq_result_clear(&res);
        if (tu_below(&r, 4) == 0) { /* top-k through the batch path */
            tdm_seq_result b[2];
            o.top_k = 3;
            w->errors += tdm_seq_engine_query_batch(w->e, w->stms, 2, &o, b) != TDM_OK;
            for (int i = 0; i < 2; i++) w->errors += b[i].n > 3, tdm_seq_result_clear(&b[i]);
        }
    }
    return NULL;
}

static void *syncer(void *arg) {
    worker *w = arg;
    tu_rng r = tu_rng_for(300);
    while (atomic_load(w->done) < 2) {
        switch (tu_below(&r, 4)) {
        case 0: w->errors += tdm_seq_engine_sync(w->e) != TDM_OK; break;
        case 1:
            w->errors += tdm_seq_engine_training(w->e, 1, 0) != TDM_OK;
            sleep_ms(2);
            w->errors += tdm_seq_engine_training(w->e, 0, 1) != TDM_OK;
            break;
        case 2: {
            tdm_seq_engine_stats st = stats_of(w->e);
            w->errors += st.device_patterns + st.recent_patterns != st.patterns;
            break;
        }
        default: sleep_ms(1); break;
        }
    }
    return NULL;
}

/* Two learners, a querier and a syncer at once, with the background thread running too; the device
 * fills up half way. Afterwards every learned pattern is where its learn said, and the engine answers
 * as a fresh tdm_seq_query does. */
static void test_engine_concurrency(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(31);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    atomic_store(&fake.capacity, 450);
    tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 6, 300), 7, 0.05, 0);
    tdm_seq_stm stms[6];
    size_t n = make_stms(e, &r, 6, stms, 6);
    enum { PER = 200 };
    atomic_int done = 0;
    worker w[4];
    static uint32_t ids[2][PER], pat[2][PER][8];
    static size_t len[2][PER];
    for (int i = 0; i < 4; i++)
        w[i] = (worker){.e = e, .salt = (uint32_t)i + 1, .n = PER, .ids = ids[i % 2], .pat = pat[i % 2],
                        .len = len[i % 2], .stms = stms, .nstm = n, .done = &done};
    pthread_t t[4];
    assert_int_equal(pthread_create(&t[0], NULL, learner, &w[0]), 0);
    assert_int_equal(pthread_create(&t[1], NULL, learner, &w[1]), 0);
    assert_int_equal(pthread_create(&t[2], NULL, querier, &w[2]), 0);
    assert_int_equal(pthread_create(&t[3], NULL, syncer, &w[3]), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++) tu_check(w[i].errors == 0, "worker %d: %d errors", i, w[i].errors);
    assert_int_equal(atomic_load(&fake.overlaps), 0);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK); /* fills the device up to its capacity */
    const tdm_seq_store *s = tdm_seq_engine_store(e);
    assert_int_equal(tdm_seq_store_count(s), 300 + 2 * PER);
    for (int l = 0; l < 2; l++)
        for (uint32_t k = 0; k < PER; k++) {
            const uint32_t *p;
            size_t np;
            assert_int_equal(tdm_seq_store_get(s, ids[l][k], &p, &np), TDM_OK);
            assert_int_equal(np, len[l][k]);
            assert_memory_equal(p, pat[l][k], np * sizeof *p);
        }
    tdm_seq_engine_stats st = stats_of(e);
    assert_int_equal(st.device_patterns, 450);
    assert_int_equal(st.recent_patterns, 2 * PER - 150);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "after concurrency");
    atomic_store(&fake.capacity, UINT32_MAX);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    assert_int_equal(stats_of(e).recent_patterns, 0);
    check_all_lcs(e, "after concurrency, synced");
    clear_stms(stms, n);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_engine_sync");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_triggers_inline),
        cmocka_unit_test(test_engine_triggers_background),
        cmocka_unit_test(test_engine_concurrency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
