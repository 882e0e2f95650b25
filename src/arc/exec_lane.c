/* exec_lane.c: one lane of a column (src/arc/arc_bops.h) to and from an interpreter value. The batched
 * executor and the CPU form of the batched primitives both move values through these two functions, so a
 * value is representable in exactly one way everywhere: encode refuses whatever a lane cannot hold exactly
 * (the executor then keeps the host value and the interpreter computes with it), and decode builds the
 * value the interpreter's own primitive would have built (a POS as ofcolor's row-major set). */
#include "arc_bops.h"
#include "arc_internal.h"

#include <string.h>

#define SLOT 30
#define SLOT_CELLS (SLOT * SLOT)

static int is_plain_int(const tdm_arc_val *v) { return v->kind == TDM_ARC_INT; }

static int encode_grid(const tdm_arc_val *v, uint8_t *cells, uint8_t *hw) {
    if (!arc_is_tuple(v) || v->n < 1 || v->n > SLOT) return 0;
    const tdm_arc_val *r0 = v->u.items[0];
    if (!arc_is_tuple(r0) || r0->n < 1 || r0->n > SLOT) return 0;
    uint32_t h = v->n, w = r0->n;
    memset(cells, 0, SLOT_CELLS);
    for (uint32_t i = 0; i < h; i++) {
        const tdm_arc_val *r = v->u.items[i];
        if (!arc_is_tuple(r) || r->n != w) return 0;
        for (uint32_t j = 0; j < w; j++) {
            const tdm_arc_val *c = r->u.items[j];
            if (!is_plain_int(c) || c->u.i < 0 || c->u.i > 9) return 0;
            cells[i * SLOT + j] = (uint8_t)c->u.i;
        }
    }
    hw[0] = (uint8_t)h, hw[1] = (uint8_t)w;
    return 1;
}

/* Reading a patch may record an error in rt (it is not a patch): that is "not representable", not a
 * failure of the program, so the error is cleared, unless memory ran out. */
static int patch_refused(tdm_arc_rt *rt) {
    if (rt->failed && rt->status != TDM_E_NOMEM) rt->failed = 0, rt->status = 0, rt->err[0] = '\0';
    return 0;
}

static int encode_pos(tdm_arc_rt *rt, tdm_arc_val *v, uint8_t *cells) {
    if (!arc_is_tuple(v) && !arc_is_set(v)) return 0;
    arc_pos *p;
    uint32_t n;
    if (arc_positions(rt, v, 0, &p, &n, "batch")) return patch_refused(rt);
    memset(cells, 0, SLOT_CELLS);
    for (uint32_t k = 0; k < n; k++)
        if (p[k].i >= 0 && p[k].i < SLOT && p[k].j >= 0 && p[k].j < SLOT) cells[p[k].i * SLOT + p[k].j] = 1;
    return 1;
}

static int encode_obj(tdm_arc_rt *rt, tdm_arc_val *v, uint8_t *cells) {
    if (!arc_is_tuple(v) && !arc_is_set(v)) return 0;
    arc_cellv *c;
    uint32_t n;
    if (arc_cells(rt, v, &c, &n, "batch")) return patch_refused(rt);
    memset(cells, ARC_OBJ_ABSENT, SLOT_CELLS);
    for (uint32_t k = 0; k < n; k++) {
        if (c[k].i < 0 || c[k].i >= SLOT || c[k].j < 0 || c[k].j >= SLOT) continue; /* outside every grid */
        if (c[k].c < 0 || c[k].c > 9) return 0;
        uint8_t *at = &cells[c[k].i * SLOT + c[k].j];
        if (*at != ARC_OBJ_ABSENT && *at != c[k].c) return 0; /* paint order would matter */
        *at = (uint8_t)c[k].c;
    }
    return 1;
}

int arc_lane_encode(tdm_arc_rt *rt, tdm_arc_val *v, int kind, uint8_t *cells, uint8_t *hw, int64_t *iv) {
    switch (kind) {
    case ARC_VK_GRID: return encode_grid(v, cells, hw);
    case ARC_VK_INT:
        if (!is_plain_int(v)) return 0;
        iv[0] = v->u.i;
        return 1;
    case ARC_VK_PAIR:
        if (!arc_is_tuple(v) || v->n != 2 || !is_plain_int(v->u.items[0]) || !is_plain_int(v->u.items[1])) return 0;
        iv[0] = v->u.items[0]->u.i, iv[1] = v->u.items[1]->u.i;
        return 1;
    case ARC_VK_POS: return encode_pos(rt, v, cells);
    case ARC_VK_OBJ: return encode_obj(rt, v, cells);
    default: return 0;
    }
}

tdm_arc_val *arc_lane_decode(tdm_arc_rt *rt, int kind, const uint8_t *cells, const uint8_t *hw, const int64_t *iv) {
    switch (kind) {
    case ARC_VK_GRID: {
        tdm_arc_val *g = arc_tuple(rt, hw[0]);
        if (!g) return NULL;
        for (int i = 0; i < hw[0]; i++) {
            tdm_arc_val *r = arc_tuple(rt, hw[1]);
            if (!r) return NULL;
            for (int j = 0; j < hw[1]; j++) r->u.items[j] = (tdm_arc_val *)(arc_int_zero + cells[i * SLOT + j]);
            g->u.items[i] = r;
        }
        return g;
    }
    case ARC_VK_INT: return arc_int(rt, iv[0]);
    case ARC_VK_PAIR: return arc_ipair(rt, iv[0], iv[1]);
    case ARC_VK_POS:
    case ARC_VK_OBJ: {
        tdm_arc_val *e[SLOT_CELLS];
        uint32_t n = 0;
        for (int s = 0; s < SLOT_CELLS; s++) {
            if (kind == ARC_VK_POS ? !cells[s] : cells[s] == ARC_OBJ_ABSENT) continue;
            e[n] = kind == ARC_VK_POS ? arc_ipair(rt, s / SLOT, s % SLOT) : arc_cell(rt, cells[s], s / SLOT, s % SLOT);
            if (!e[n++]) return NULL;
        }
        return arc_set_from(rt, e, n);
    }
    default: return arc_fail(rt, "batch: a lane of unknown kind %d", kind);
    }
}
