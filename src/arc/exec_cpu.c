/* exec_cpu.c: the batched primitives on the CPU, and the table of them. Each lane is decoded into an
 * interpreter value, given to the interpreter's own primitive (arc_call, so arity, errors and statistics
 * are the interpreter's) and encoded back. This is the reference every device kernel is compared with
 * (tests/unit/test_arc_bops.c) and the CPU path of the executor, so the executor's machinery (columns,
 * conversions, fallback) runs in CI without a GPU. The objects-based forms are the exception: their lanes
 * are computed natively (exec_sets.c), and the tests hold them to the interpreter through decode. */
#include "exec_internal.h"

#include <omp.h>
#include <string.h>

#define SLOT_CELLS 900

const arc_bop_info arc_bop_table[ARC_NBOP] = {
#define ARC_X_INFO(name, p, r, a0, a1, a2, a3)                                                             \
    {ARC_P_##p, ARC_VK_##r,                                                                                \
     (ARC_VK_##a0 != ARC_VK_NONE) + (ARC_VK_##a1 != ARC_VK_NONE) + (ARC_VK_##a2 != ARC_VK_NONE) +           \
         (ARC_VK_##a3 != ARC_VK_NONE),                                                                     \
     {ARC_VK_##a0, ARC_VK_##a1, ARC_VK_##a2, ARC_VK_##a3}},
    ARC_BOP_LIST(ARC_X_INFO)
#undef ARC_X_INFO
};

int arc_bop_of_prim(int id) {
    for (int k = 0; k < ARC_NBOP; k++)
        if (arc_bop_table[k].prim == id) return k;
    return -1;
}

int arc_bop_next(int bop) {
    for (int k = bop + 1; k < ARC_NBOP; k++)
        if (arc_bop_table[k].prim == arc_bop_table[bop].prim) return k;
    return -1;
}

int arc_cpu_col_alloc(size_t n, arc_col *c) {
    memset(c, 0, sizeof *c);
    c->cells = tdm_malloc(n * SLOT_CELLS + 1);
    c->hw = tdm_malloc(n * 2 + 1);
    c->iv = tdm_malloc((n * 2 + 1) * sizeof *c->iv);
    if (c->cells && c->hw && c->iv) return TDM_OK;
    arc_cpu_col_free(c);
    return tdm_error(TDM_E_NOMEM, "batch: no memory for a column of %zu lanes", n);
}

void arc_cpu_col_free(arc_col *c) {
    tdm_free(c->cells), tdm_free(c->hw), tdm_free(c->iv);
    memset(c, 0, sizeof *c);
}

static void lane_copy(const arc_col *dst, size_t d, const arc_col *src, size_t s) {
    memcpy(dst->cells + d * SLOT_CELLS, src->cells + s * SLOT_CELLS, SLOT_CELLS);
    memcpy(dst->hw + 2 * d, src->hw + 2 * s, 2);
    memcpy(dst->iv + 2 * d, src->iv + 2 * s, 2 * sizeof *dst->iv);
}

void arc_cpu_col_put(const arc_col *dst, const uint32_t *lanes, size_t m, const arc_col *src) {
    for (size_t k = 0; k < m; k++) lane_copy(dst, lanes[k], src, k);
}

void arc_cpu_col_get(const arc_col *src, const uint32_t *lanes, size_t m, const arc_col *dst) {
    for (size_t k = 0; k < m; k++) lane_copy(dst, k, src, lanes[k]);
}

/* One lane: 1 computed and representable, 0 not, -1 out of memory. *rt is made on first need (the native
 * forms need none). */
static int run_lane(tdm_arc_rt **rtp, const arc_bop_call *c, size_t l) {
    const arc_bop_info *info = &arc_bop_table[c->op];
    tdm_arc_val *args[4];
    int native = arc_sets_lane(c, l);
    if (native >= 0) return native;
    if (!*rtp && tdm_arc_rt_new(rtp)) return -1;
    tdm_arc_rt *rt = *rtp;
    tdm_arc_rt_reset(rt);
    for (int a = 0; a < info->nargs; a++) {
        const arc_col *col = &c->arg[a];
        if (col->iv) args[a] = arc_lane_decode(rt, info->arg[a], col->cells + l * SLOT_CELLS, col->hw + 2 * l, col->iv + 2 * l);
        else args[a] = arc_lane_decode(rt, info->arg[a], NULL, NULL, c->k[a]);
        if (!args[a]) return -1;
    }
    tdm_arc_val *r = arc_call(rt, arc_prim_val(info->prim), info->nargs, args);
    if (!r) return rt->status == TDM_E_NOMEM ? -1 : 0;
    int ok = arc_lane_encode(rt, r, info->out, c->out.cells + l * SLOT_CELLS, c->out.hw + 2 * l, c->out.iv + 2 * l);
    return rt->failed && rt->status == TDM_E_NOMEM ? -1 : ok;
}

int arc_cpu_bop_run(const arc_bop_call *c, const uint8_t *active, uint8_t *status, int threads) {
    if (threads <= 0) threads = omp_get_max_threads();
    int nomem = 0;
#pragma omp parallel num_threads(threads) reduction(| : nomem) if (c->n >= 64)
    {
        tdm_arc_rt *rt = NULL;
#pragma omp for schedule(dynamic, 16)
        for (size_t l = 0; l < c->n; l++) {
            if (!active[l]) continue;
            int r = run_lane(&rt, c, l);
            if (r < 0) nomem = 1;
            status[l] = r == 1;
        }
        tdm_arc_rt_free(rt);
    }
    return nomem ? tdm_error(TDM_E_NOMEM, "batch: out of memory in %s", tdm_arc_prim_name(arc_bop_table[c->op].prim)) : TDM_OK;
}
