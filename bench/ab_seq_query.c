/* ab_seq_query.c: a small driver for A/B comparisons of the CPU query paths (bench/ab-seq.sh builds it
 * against two trees and alternates them). It builds the benchmark's 1M-pattern store (seed 42, 50,000
 * symbols), takes 16 of its STMs, answers them REPS times one at a time or in one batch call, and prints
 * the best wall time and the best process CPU time per query, with a digest of every answer (ids and
 * similarities) that two trees must share.
 *
 * usage: ab_seq_query s|b REPS THRESHOLD lcs|difflib
 * AB_THREADS: query threads (default 2); AB_QUERIES: STMs (default 16; the benchmark's batch is 200) */
#define BENCH_NAME "ab_seq_query"
#include "bench_common.h"
#include "tandem/tandem.h"

#include <string.h>

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[1], "s") && strcmp(argv[1], "b")) || (strcmp(argv[4], "lcs") && strcmp(argv[4], "difflib"))) {
        fprintf(stderr, "usage: ab_seq_query s|b REPS THRESHOLD lcs|difflib\n");
        return 2;
    }
    int batch = argv[1][0] == 'b', reps = atoi(argv[2]);
    const char *th = getenv("AB_THREADS"), *nqs = getenv("AB_QUERIES");
    unsigned nq = nqs ? (unsigned)atoi(nqs) : 16, n = 1000000;
    if (nq < 1 || nq > 10000) {
        fprintf(stderr, "ab_seq_query: AB_QUERIES must be 1..10000\n");
        return 2;
    }
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, NULL);
    if (rc) die("tdm_init", rc);
    patterns p;
    generate(42, n, &p);
    tdm_seq_store *s;
    if ((rc = tdm_seq_store_new(ctx, &s))) die("store", rc);
    tdm_seq_vocab *v = tdm_seq_store_vocab(s);
    char name[16];
    for (uint32_t r = 0; r < 50000; r++) {
        uint32_t id;
        size_t len = tdm_seq_gen_symbol_name(r, name);
        if ((rc = tdm_seq_vocab_intern(v, name, len, &id))) die("vocabulary", rc);
    }
    for (uint32_t k = 0; k < n; k++)
        if ((rc = tdm_seq_store_add(s, p.sym + p.off[k], (size_t)(p.off[k + 1] - p.off[k]), NULL))) die("store add", rc);
    tdm_seq_store_shrink(s);
    size_t *sl;
    uint32_t **stm = make_stms(42, nq, &p, n, &sl);
    tdm_seq_stm *stms = xmalloc(nq * sizeof *stms);
    for (unsigned i = 0; i < nq; i++)
        if ((rc = tdm_seq_stm_from_ids(tdm_seq_store_vocab_const(s), stm[i], sl[i], &stms[i]))) die("stm", rc);
    tdm_seq_query_opts qo;
    tdm_seq_query_opts_init(&qo);
    qo.metric = argv[4][0] == 'd' ? TDM_SEQ_DIFFLIB : TDM_SEQ_LCS;
    qo.threshold = atof(argv[3]);
    qo.threads = th ? atoi(th) : 2;
    tdm_seq_result *out = xmalloc(nq * sizeof *out);
    double best = 1e300, best_cpu = 1e300;
    unsigned long digest = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s(), c0 = cpu_ms();
        if (batch) {
            if ((rc = tdm_seq_query_batch(s, stms, nq, &qo, out))) die("batch", rc);
        } else {
            for (unsigned i = 0; i < nq; i++)
                if ((rc = tdm_seq_query(s, &stms[i], &qo, &out[i]))) die("query", rc);
        }
        double wall = (now_s() - t0) * 1e3 / nq, cpu = (cpu_ms() - c0) / nq;
        best = wall < best ? wall : best, best_cpu = cpu < best_cpu ? cpu : best_cpu;
        digest = 0;
        for (unsigned i = 0; i < nq; i++) {
            for (size_t h = 0; h < out[i].n; h++)
                digest = digest * 1000003u + out[i].hits[h].id * 31u + (unsigned long)(out[i].hits[h].similarity * 1e9);
            tdm_seq_result_clear(&out[i]);
        }
    }
    printf("best %.3f ms/query, cpu best %.3f ms/query, digest %lx\n", best, best_cpu, digest);
    return 0;
}
