/* test_store_lmdb.c: the durable store (src/store, include/tandem/store.h) and the knowledge base's
 * export/restore hooks (src/kato/kb_persist.c). A seeded knowledge base with re-learns, emotives, metadata
 * and affinities is saved learn by learn, loaded into a fresh knowledge base, and must be the same: every
 * pattern, every symbol's statistics and affinities, the totals, and the predictions for random STMs
 * byte for byte as the service prints them. Also: nodes kept apart, clear, one process per directory, and
 * a damaged record reported as corrupt rather than loaded. */
#define _POSIX_C_SOURCE 200809L
#include "kato_util.h"

#include <lmdb.h>
#include <stdlib.h>
#include <unistd.h>

#include "server/internal.h"
#include "tandem/store.h"

static tdm_ctx *ctx;
static char dir[256];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tandem-store-test-%d", (int)getpid());
    return tdm_init(&ctx, NULL);
}

static int teardown(void **state) {
    (void)state;
    tdm_destroy(ctx);
    return 0;
}

static void rm_dir(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) { return rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; }

static const char *alphabet[] = {"a", "b", "c", "d", "e", "it's", "ü", "x y", "", "back\\slash"};
#define NA (sizeof alphabet / sizeof *alphabet)

/* Learns a random pattern (with emotives and metadata sometimes) into kb and saves it. */
static void learn_one(tdm_store *st, const char *kb_id, tdm_kato_kb *kb) {
    tdm_kato_event ev[4];
    const char *syms[4][3];
    size_t lens[4][3];
    size_t ne = 1 + next() % 3;
    for (size_t e = 0; e < ne; e++) {
        ev[e].n = 1 + next() % 3;
        for (size_t i = 0; i < ev[e].n; i++) {
            syms[e][i] = alphabet[next() % 5 + (next() % 4 == 0 ? 5 : 0)];
            lens[e][i] = strlen(syms[e][i]);
        }
        ev[e].syms = syms[e], ev[e].lens = lens[e];
    }
    tdm_kato_emotive items[2][2] = {{{"joy", (double)(next() % 100) / 7.0}, {"fear", -0.5}}, {{"joy", 0.25}, {"calm", 3.0}}};
    tdm_kato_emotives emo[2] = {{items[0], 1 + next() % 2}, {items[1], 2}};
    tdm_kato_meta mitems[2] = {{"source", next() % 2 ? "web" : "app"}, {"n", "3"}};
    tdm_kato_metadata meta[1] = {{mitems, 1 + next() % 2}};
    size_t nemo = next() % 3, nmeta = next() % 2;
    char name[41];
    int learned;
    assert_int_equal(tdm_kato_kb_learn(kb, ev, ne, emo, nemo, meta, nmeta, 3, name, &learned), TDM_OK);
    if (learned) assert_int_equal(tdm_store_save_learn(st, kb_id, "node-a", kb, name), TDM_OK);
}

static void same_pattern(tdm_kato_kb *a, tdm_kato_kb *b, uint32_t i) {
    tdm_kato_pattern p, q;
    assert_int_equal(tdm_kato_kb_get(a, i, &p), TDM_OK);
    assert_int_equal(tdm_kato_kb_get(b, i, &q), TDM_OK);
    assert_string_equal(p.name, q.name);
    assert_int_equal(p.frequency, q.frequency);
    assert_int_equal(p.nevents, q.nevents);
    assert_int_equal(p.nsyms, q.nsyms);
    for (size_t e = 0; e < p.nevents; e++) assert_int_equal(p.event_sizes[e], q.event_sizes[e]);
    for (size_t k = 0; k < p.nsyms; k++) {
        assert_int_equal(p.sym_lens[k], q.sym_lens[k]);
        assert_memory_equal(p.syms[k], q.syms[k], p.sym_lens[k]);
    }
    assert_int_equal(p.nemotive_dicts, q.nemotive_dicts);
    size_t nent = 0, nval = 0;
    for (size_t d = 0; d < p.nemotive_dicts; d++) assert_int_equal(p.emotive_sizes[d], q.emotive_sizes[d]), nent += p.emotive_sizes[d];
    for (size_t k = 0; k < nent; k++) {
        assert_string_equal(p.emotives[k].key, q.emotives[k].key);
        assert_memory_equal(&p.emotives[k].value, &q.emotives[k].value, sizeof(double));
    }
    assert_int_equal(p.nmeta, q.nmeta);
    for (size_t m = 0; m < p.nmeta; m++) {
        assert_string_equal(p.meta_keys[m], q.meta_keys[m]);
        assert_int_equal(p.meta_nvalues[m], q.meta_nvalues[m]);
        for (size_t v = 0; v < p.meta_nvalues[m]; v++, nval++) assert_string_equal(p.meta_values[nval], q.meta_values[nval]);
    }
    /* every symbol's statistics and affinities */
    for (size_t k = 0; k < p.nsyms; k++) {
        tdm_kato_symbol x, y;
        assert_int_equal(tdm_kato_kb_symbol_find(a, p.syms[k], p.sym_lens[k], &x), TDM_OK);
        assert_int_equal(tdm_kato_kb_symbol_find(b, p.syms[k], p.sym_lens[k], &y), TDM_OK);
        assert_int_equal(x.len, p.sym_lens[k]);
        assert_memory_equal(x.sym, p.syms[k], x.len);
        assert_int_equal(x.frequency, y.frequency);
        assert_int_equal(x.pattern_member_frequency, y.pattern_member_frequency);
        assert_int_equal(x.naff, y.naff);
        for (size_t j = 0; j < x.naff; j++) {
            assert_string_equal(x.aff_keys[j], y.aff_keys[j]);
            assert_memory_equal(&x.aff_values[j], &y.aff_values[j], sizeof(double));
        }
        tdm_kato_symbol_free(&x), tdm_kato_symbol_free(&y);
    }
    tdm_kato_pattern_free(&p), tdm_kato_pattern_free(&q);
}

static char *predictions_text(tdm_kato_kb *kb, const char *stm, const tdm_kato_config *cfg) {
    ku_events e;
    ku_parse(&e, stm);
    tdm_kato_result *r;
    assert_int_equal(tdm_kato_predict(kb, e.ev, e.n, cfg, &r), TDM_OK);
    sbuf b = {0};
    sb_predictions(&b, r);
    tdm_kato_result_free(r);
    assert_false(b.failed);
    return b.p;
}

static void test_roundtrip(void **state) {
    (void)state;
    rm_dir();
    tdm_store *st;
    assert_int_equal(tdm_store_open(dir, 0, &st), TDM_OK);
    tdm_kato_kb *kb, *kb2;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb), TDM_OK);
    for (int i = 0; i < 400; i++) learn_one(st, "node_a_kato", kb);
    tdm_store_close(st); /* as a restart would */
    assert_int_equal(tdm_store_open(dir, 0, &st), TDM_OK);
    tdm_store_node *nodes;
    size_t nn;
    assert_int_equal(tdm_store_nodes(st, &nodes, &nn), TDM_OK);
    assert_int_equal(nn, 1);
    assert_string_equal(nodes[0].kb_id, "node_a_kato");
    assert_string_equal(nodes[0].node_id, "node-a");
    assert_int_equal(nodes[0].patterns, tdm_kato_kb_count(kb));
    tdm_store_nodes_free(nodes, nn);
    assert_int_equal(tdm_kato_kb_new(ctx, &kb2), TDM_OK);
    assert_int_equal(tdm_store_load(st, "node_a_kato", kb2, NULL, NULL), TDM_OK);
    assert_true(tdm_kato_kb_count(kb) > 50);
    assert_int_equal(tdm_kato_kb_count(kb), tdm_kato_kb_count(kb2));
    tdm_kato_kb_totals t1, t2;
    tdm_kato_kb_totals_get(kb, &t1), tdm_kato_kb_totals_get(kb2, &t2);
    assert_memory_equal(&t1, &t2, sizeof t1);
    assert_true(t1.total_pattern_frequencies > t1.patterns); /* re-learns happened */
    for (uint32_t i = 0; i < tdm_kato_kb_count(kb); i++) same_pattern(kb, kb2, i);
    /* predictions: every field as the service prints it */
    const char *stms[] = {"a|b c", "a", "c d|e|a b", "it's|ü|x y", "|a b", "e d c b a", "back\\slash|a"};
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    for (int aff = 0; aff < 2; aff++)
        for (size_t i = 0; i < sizeof stms / sizeof *stms; i++) {
            cfg.affinity_emotive = aff ? "joy" : NULL;
            cfg.recall_threshold = aff ? 0.0 : 0.1;
            char *x = predictions_text(kb, stms[i], &cfg), *y = predictions_text(kb2, stms[i], &cfg);
            assert_string_equal(x, y);
            free(x), free(y);
        }
    /* an empty kb loads a node that was never stored as nothing */
    tdm_kato_kb *kb3;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb3), TDM_OK);
    assert_int_equal(tdm_store_load(st, "nobody_kato", kb3, NULL, NULL), TDM_OK);
    assert_int_equal(tdm_kato_kb_count(kb3), 0);
    /* loading into a kb that is not empty is refused */
    assert_int_equal(tdm_store_load(st, "node_a_kato", kb2, NULL, NULL), TDM_E_INVAL);
    tdm_kato_kb_free(kb), tdm_kato_kb_free(kb2), tdm_kato_kb_free(kb3);
    tdm_store_close(st);
    rm_dir();
}

static void test_nodes_and_clear(void **state) {
    (void)state;
    rm_dir();
    tdm_store *st;
    assert_int_equal(tdm_store_open(dir, 0, &st), TDM_OK);
    tdm_kato_kb *a, *b;
    assert_int_equal(tdm_kato_kb_new(ctx, &a), TDM_OK);
    assert_int_equal(tdm_kato_kb_new(ctx, &b), TDM_OK);
    char n[41];
    ku_learn(a, "a b|c", n);
    assert_int_equal(tdm_store_save_learn(st, "a_kato", "a", a, n), TDM_OK);
    ku_learn(b, "x|y", n);
    assert_int_equal(tdm_store_save_learn(st, "b_kato", "b", b, n), TDM_OK);
    assert_int_equal(tdm_store_save_learn(st, "b_kato", "b", b, "0000000000000000000000000000000000000000"), TDM_E_NOTFOUND);
    assert_int_equal(tdm_store_clear(st, "a_kato"), TDM_OK);
    assert_int_equal(tdm_store_clear(st, "never_kato"), TDM_OK);
    tdm_kato_kb *a2, *b2;
    assert_int_equal(tdm_kato_kb_new(ctx, &a2), TDM_OK);
    assert_int_equal(tdm_kato_kb_new(ctx, &b2), TDM_OK);
    assert_int_equal(tdm_store_load(st, "a_kato", a2, NULL, NULL), TDM_OK);
    assert_int_equal(tdm_store_load(st, "b_kato", b2, NULL, NULL), TDM_OK);
    assert_int_equal(tdm_kato_kb_count(a2), 0);
    assert_int_equal(tdm_kato_kb_count(b2), 1);
    same_pattern(b, b2, 0);
    /* a second open of the same directory (here: same process, another descriptor) is refused */
    tdm_store *again;
    assert_int_equal(tdm_store_open(dir, 0, &again), TDM_E_BUSY);
    tdm_kato_kb_free(a), tdm_kato_kb_free(b), tdm_kato_kb_free(a2), tdm_kato_kb_free(b2);
    tdm_store_close(st);
    rm_dir();
}

/* Overwrites the first pattern record with its first bytes only: a load must say it is damaged. */
static void test_corrupt_record(void **state) {
    (void)state;
    rm_dir();
    tdm_store *st;
    assert_int_equal(tdm_store_open(dir, 0, &st), TDM_OK);
    tdm_kato_kb *kb;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb), TDM_OK);
    char n[41];
    ku_learn(kb, "a b|c", n);
    assert_int_equal(tdm_store_save_learn(st, "a_kato", "a", kb, n), TDM_OK);
    tdm_store_close(st);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *c;
    MDB_val k, v;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_set_mapsize(env, 1ull << 30), 0); /* fits under valgrind too */
    assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "patterns", 0, &dbi), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    assert_int_equal(mdb_cursor_get(c, &k, &v, MDB_FIRST), 0);
    unsigned char head[50];
    memcpy(head, v.mv_data, sizeof head);
    mdb_cursor_close(c);
    v.mv_size = sizeof head, v.mv_data = head;
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    assert_int_equal(tdm_store_open(dir, 0, &st), TDM_OK);
    tdm_kato_kb *kb2;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb2), TDM_OK);
    assert_int_equal(tdm_store_load(st, "a_kato", kb2, NULL, NULL), TDM_E_CORRUPT);
    assert_non_null(strstr(tdm_last_error(), "damaged"));
    tdm_kato_kb_free(kb), tdm_kato_kb_free(kb2);
    tdm_store_close(st);
    rm_dir();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_nodes_and_clear),
        cmocka_unit_test(test_corrupt_record),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
