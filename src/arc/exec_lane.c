/* exec_lane.c: one lane of a column (src/arc/arc_bops.h) to and from an interpreter value. The batched
 * executor and the CPU form of the batched primitives both move values through these two functions, so a
 * value is representable in exactly one way everywhere: encode refuses whatever a lane cannot hold exactly
 * (the executor then keeps the host value and the interpreter computes with it), and decode builds the
 * value the interpreter's own primitive would have built (a POS as ofcolor's row-major set). Lanes made
 * from objects (OBJS, COLSET) decode by replaying their recipe through the interpreter's own primitives
 * (objects(), partition(), merge(), recolor(), a seq filter, a seq and a freeze), so their layouts are the
 * interpreter's by construction; no host value is ever encoded into them (only kernels make them). */
#include "arc_bops.h"
#include "arc_device.h"
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
    case ARC_VK_TRUTH: iv[0] = arc_truthy(v), iv[1] = 0; return 1;
    case ARC_VK_SIZEFN: return v == arc_prim_val(ARC_P_size);
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

/* The grid of a GRID or OBJS lane (colours: cells & mask). */
static tdm_arc_val *decode_grid(tdm_arc_rt *rt, const uint8_t *cells, const uint8_t *hw, uint8_t mask) {
    tdm_arc_val *g = arc_tuple(rt, hw[0]);
    if (!g) return NULL;
    for (int i = 0; i < hw[0]; i++) {
        tdm_arc_val *r = arc_tuple(rt, hw[1]);
        if (!r) return NULL;
        for (int j = 0; j < hw[1]; j++) r->u.items[j] = (tdm_arc_val *)(arc_int_zero + (cells[i * SLOT + j] & mask));
        g->u.items[i] = r;
    }
    return g;
}

/* The marked elements of set, the maker's value (arc_bops.h, OBJS), in its iteration order: objects are
 * told apart by the cells they hold (the lazy set's own partition, read before anything lays it out),
 * partition's by their colour. */
static int os_marked(tdm_arc_rt *rt, tdm_arc_val *set, int maker, const uint8_t *cells, int h, int w, int one,
                     arc_list *out) {
    uint8_t *sel = NULL;
    const int16_t *comp = NULL;
    tdm_arc_val *objs = NULL;
    uint32_t colours = 0;
    if (set->n && maker < ARC_OS_PARTITION) {
        if (arc_objects_lazy_parts(set, &comp, &objs)) return rt->failed ? -1 : arc_failf(rt, "batch: an objects lane without lazy objects");
        if (!(sel = arc_alloc(rt, set->n))) return -1;
        memset(sel, 0, set->n);
    }
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            if (!(cells[i * SLOT + j] & ARC_OS_MARK)) continue;
            if (!sel) {
                colours |= 1u << (cells[i * SLOT + j] & ARC_OS_COLOUR);
            } else {
                if (comp[i * w + j] < 0) return arc_failf(rt, "batch: a mark on no object");
                sel[comp[i * w + j]] = 1;
            }
        }
    out->n = 0;
    if (one && sel) { /* the object itself: no need to lay the outer set out */
        int part = -1;
        for (uint32_t k = 0; k < set->n; k++)
            if (sel[k]) out->n++, part = part < 0 ? (int)k : part;
        if (out->n && !(out->v = arc_alloc(rt, sizeof *out->v))) return -1;
        if (out->n) out->v[0] = objs + part;
        return 0;
    }
    arc_list l;
    if (arc_elems(rt, set, &l, "batch")) return -1;
    if (!(out->v = arc_alloc(rt, (size_t)(l.n + 1) * sizeof *out->v))) return -1;
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *e = l.v[k];
        int keep;
        if (sel) {
            keep = sel[e - objs];
        } else {
            tdm_arc_val *c = arc_first(e); /* partition's objects: cells of one colour */
            keep = c && arc_is_tuple(c) && c->n == 2 && (colours >> (c->u.items[0]->u.i & 15) & 1);
        }
        if (keep) out->v[out->n++] = e;
    }
    return 0;
}

static tdm_arc_val *decode_objs(tdm_arc_rt *rt, const uint8_t *cells, const uint8_t *hw, const int64_t *iv) {
    int maker = ARC_OS_MAKER(iv[0]), form = ARC_OS_FORM(iv[0]);
    tdm_arc_val *g = decode_grid(rt, cells, hw, ARC_OS_COLOUR), *set;
    if (!g) return NULL;
    if (maker < ARC_OS_PARTITION) {
        tdm_arc_val *a[4] = {g, arc_bool(maker & ARC_OBJ_UNIVALUED), arc_bool(maker & ARC_OBJ_DIAGONAL),
                             arc_bool(maker & ARC_OBJ_WITHOUT_BG)};
        set = arc_p_objects(rt, a);
    } else {
        set = maker == ARC_OS_PARTITION ? arc_p_partition(rt, &g) : arc_p_fgpartition(rt, &g);
    }
    if (!set) return NULL;
    tdm_arc_val *v = set;
    if (form != ARC_OS_SET && form != ARC_OS_MSET) {
        arc_list m = {NULL, 0};
        if (os_marked(rt, set, maker, cells, hw[0], hw[1], form == ARC_OS_ONE, &m)) return NULL;
        if (form == ARC_OS_ONE) {
            if (m.n != 1) return arc_fail(rt, "batch: an object lane with %u objects marked", m.n);
            v = m.v[0];
        } else if (!(v = arc_set_from(rt, m.v, m.n))) {
            return NULL;
        }
    }
    if ((form == ARC_OS_MSET || form == ARC_OS_MSUB) && !(v = arc_merge(rt, &v, 0))) return NULL;
    if (iv[0] & ARC_OS_RECOLOURED) {
        tdm_arc_val *a[2] = {arc_int(rt, iv[1]), v};
        if (!a[0]) return NULL;
        v = arc_p_recolor(rt, a);
    }
    return v;
}

static tdm_arc_val *decode_colset(tdm_arc_rt *rt, const int64_t *iv) {
    tdm_arc_val *e[16];
    int n = ARC_CS_N(iv[0]);
    for (int k = 0; k < n; k++) e[k] = (tdm_arc_val *)(arc_int_zero + ARC_CS_AT(iv[1], k));
    tdm_arc_val *s = arc_set_from(rt, e, (uint32_t)n);
    return s && (iv[0] & ARC_CS_FROZEN) ? arc_set_copy(rt, s) : s;
}

tdm_arc_val *arc_lane_decode(tdm_arc_rt *rt, int kind, const uint8_t *cells, const uint8_t *hw, const int64_t *iv) {
    switch (kind) {
    case ARC_VK_GRID: return decode_grid(rt, cells, hw, 0xFF);
    case ARC_VK_INT: return arc_int(rt, iv[0]);
    case ARC_VK_PAIR: return arc_ipair(rt, iv[0], iv[1]);
    case ARC_VK_TRUTH: return arc_bool(iv[0] != 0);
    case ARC_VK_SIZEFN: return arc_prim_val(ARC_P_size);
    case ARC_VK_OBJS: return decode_objs(rt, cells, hw, iv);
    case ARC_VK_COLSET: return decode_colset(rt, iv);
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
