/* exec_sets.c: the objects-based batched primitives on the CPU (arc_bops.h: the forms with OBJS or COLSET
 * arguments or results), computed natively from the lanes, byte for byte as the GPU computes them
 * (src/cuda/arc_bops.cu, arc_bops_sets.cu). The generic CPU form (exec_cpu.c: decode, the interpreter's
 * primitive, encode) cannot serve them: no host value is encoded into an OBJS or COLSET lane, since the
 * lane stands for a recipe (exec_lane.c decodes it by running the interpreter's primitives) that a value
 * does not reveal. So these forms only ever compute what needs no iteration order: marks, sizes, colours
 * and components of the grid the flags define (by objects()'s own labelling, arc_objs_label_slot), and
 * colour sets through spec 4.9's closed form; a lane where the answer would
 * depend on an order (a size tie in argmax, the colour of a many-coloured object) gets status 0, and the
 * interpreter answers. tests/unit/test_arc_sets.c holds every lane these make to the interpreter's own
 * primitive, value and layout, through decode. */
#include "exec_internal.h"

#include "arc_device.h"

#include <string.h>

#define SLOT ARC_SLOT
#define CELLS ARC_SLOT_CELLS

static int64_t karg(const arc_bop_call *c, int a, size_t l, int part) {
    return c->arg[a].iv ? c->arg[a].iv[2 * l + part] : c->k[a][part];
}

/* One lane of a column: cells, shape, ints. */
typedef struct {
    uint8_t *cells;
    int h, w;
    int64_t *iv;
} lane;

static lane at(const arc_col *col, size_t l) {
    lane x = {col->cells + l * CELLS, col->hw[2 * l], col->hw[2 * l + 1], col->iv + 2 * l};
    return x;
}

/* Where a lane's result goes. */
typedef struct {
    uint8_t *cells, *hw;
    int64_t *iv;
} out_lane;

static int inside(int s, int h, int w) { return s / SLOT < h && s % SLOT < w; }

/* mostcolor of a grid lane (colours: cells & mask), by the interpreter's tie rule. */
static int most_colour(const uint8_t *cells, int h, int w, uint8_t mask) {
    uint32_t count[ARC_COLOURS] = {0}, first[ARC_COLOURS];
    for (int c = 0; c < ARC_COLOURS; c++) first[c] = UINT32_MAX;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int v = cells[i * SLOT + j] & mask;
            if (!count[v]++) first[v] = (uint32_t)(i * w + j);
        }
    return arc_mostcolor_of_counts(count, first);
}

/* The objects among the marked cells of an OBJS lane of maker `maker`: per cell inside the grid, its
 * object's id (-1 unmarked); per id its size and colours (bit c); the ids in ids[0..n), n returned.
 * objects()'s components come from objects()'s own labelling (arc_objs_label_slot); marked cells are always
 * whole objects, and the components of a union of components are those components, so the labels of the
 * grid serve a SUB too. */
static int os_label(const lane *x, int maker, int16_t *root, uint16_t *size, uint16_t *cmask, int16_t *ids) {
    uint8_t col[CELLS], seen[CELLS];
    int16_t lab[CELLS];
    int n = 0;
    for (int i = 0; i < x->h; i++)
        for (int j = 0; j < x->w; j++) col[i * SLOT + j] = x->cells[i * SLOT + j] & ARC_OS_COLOUR;
    if (maker < ARC_OS_PARTITION) arc_objs_label_slot(col, x->h, x->w, maker, lab);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < x->h; i++)
        for (int j = 0; j < x->w; j++) {
            int s = i * SLOT + j, r = x->cells[s] & ARC_OS_MARK ? maker < ARC_OS_PARTITION ? lab[s] : col[s] : -1;
            root[s] = (int16_t)r;
            if (r < 0) continue;
            if (!seen[r]) seen[r] = 1, size[r] = 0, cmask[r] = 0, ids[n++] = (int16_t)r;
            size[r]++, cmask[r] |= (uint16_t)(1u << col[s]);
        }
    return n;
}

/* Writes an OBJS result: x's colours with the marks of the cells whose object is selected (sel NULL: keep
 * every mark; else sel[id]), zeros outside the grid. */
static void os_write(const lane *x, const int16_t *root, const uint8_t *sel, const out_lane *o, int64_t iv0, int64_t iv1) {
    memset(o->cells, 0, CELLS);
    for (int i = 0; i < x->h; i++)
        for (int j = 0; j < x->w; j++) {
            int s = i * SLOT + j;
            uint8_t v = x->cells[s] & ARC_OS_COLOUR;
            if (x->cells[s] & ARC_OS_MARK && (!sel || (root[s] >= 0 && sel[root[s]]))) v |= ARC_OS_MARK;
            o->cells[s] = v;
        }
    o->hw[0] = (uint8_t)x->h, o->hw[1] = (uint8_t)x->w;
    o->iv[0] = iv0, o->iv[1] = iv1;
}

/* objects(), partition(), fgpartition() of a grid: the SET lane. */
static int make(const arc_bop_call *c, size_t l, const out_lane *o) {
    lane g = at(&c->arg[0], l);
    int maker = c->op == ARC_BOP_partition ? ARC_OS_PARTITION : c->op == ARC_BOP_fgpartition ? ARC_OS_FGPARTITION : 0;
    if (c->op == ARC_BOP_objects)
        maker = (karg(c, 1, l, 0) ? ARC_OBJ_UNIVALUED : 0) | (karg(c, 2, l, 0) ? ARC_OBJ_DIAGONAL : 0) |
                (karg(c, 3, l, 0) ? ARC_OBJ_WITHOUT_BG : 0);
    int bg = (maker < ARC_OS_PARTITION && maker & ARC_OBJ_WITHOUT_BG) || maker == ARC_OS_FGPARTITION
                 ? most_colour(g.cells, g.h, g.w, 0xFF)
                 : -1;
    for (int s = 0; s < CELLS; s++)
        o->cells[s] = inside(s, g.h, g.w) ? (uint8_t)(g.cells[s] | (g.cells[s] != bg ? ARC_OS_MARK : 0)) : 0;
    o->hw[0] = (uint8_t)g.h, o->hw[1] = (uint8_t)g.w;
    int16_t root[CELLS], ids[CELLS];
    uint16_t size[CELLS], cmask[CELLS];
    lane x = {o->cells, g.h, g.w, o->iv};
    o->iv[0] = ARC_OS_IV0(maker, ARC_OS_SET), o->iv[1] = os_label(&x, maker, root, size, cmask, ids);
    return 1;
}

/* sizefilter, colorfilter (of a SET: a SUB), argmax, argmin by size (of a SET or SUB: a ONE). */
static int pick(const arc_bop_call *c, size_t l, const out_lane *o) {
    lane x = at(&c->arg[0], l);
    int maker = ARC_OS_MAKER(x.iv[0]), form = ARC_OS_FORM(x.iv[0]);
    int filter = c->op == ARC_BOP_sizefilter_os || c->op == ARC_BOP_colorfilter_os;
    if (filter ? form != ARC_OS_SET : form != ARC_OS_SET && form != ARC_OS_SUB) return 0;
    int16_t root[CELLS], ids[CELLS];
    uint16_t size[CELLS], cmask[CELLS];
    uint8_t sel[CELLS];
    int n = os_label(&x, maker, root, size, cmask, ids), kept = 0, best = -1, ties = 0;
    if (!filter && !n) return 0; /* max() of nothing raises */
    int64_t k = filter ? karg(c, 1, l, 0) : 0;
    for (int q = 0; q < n; q++) {
        int r = ids[q];
        sel[r] = 0;
        if (c->op == ARC_BOP_sizefilter_os) {
            sel[r] = size[r] == k;
        } else if (c->op == ARC_BOP_colorfilter_os) {
            /* color(obj) is its first cell's colour: known when the object has one colour; an object of
               several, one of them k, may or may not be kept */
            if (cmask[r] & (cmask[r] - 1)) {
                if (k >= 0 && k < ARC_COLOURS && cmask[r] >> k & 1) return 0;
            } else {
                sel[r] = cmask[r] == 1u << (k >= 0 && k < ARC_COLOURS ? k : 15);
            }
        } else if (best < 0 || (c->op == ARC_BOP_argmax_os ? size[r] > size[best] : size[r] < size[best])) {
            best = r, ties = 0;
        } else if (size[r] == size[best]) {
            ties++; /* the first in the set's iteration order would win: an order we do not have */
        }
        kept += sel[r];
    }
    if (!filter) {
        if (ties) return 0;
        sel[best] = 1;
    }
    os_write(&x, root, sel, o, ARC_OS_IV0(maker, filter ? ARC_OS_SUB : ARC_OS_ONE), filter ? kept : 0);
    return 1;
}

static int is_patch_form(int form) { return form == ARC_OS_ONE || form == ARC_OS_MSET || form == ARC_OS_MSUB; }

/* The marked cells' count and colours (bit c) of an OBJS lane. */
static int marked(const lane *x, uint32_t *colours) {
    int n = 0;
    *colours = 0;
    for (int s = 0; s < CELLS; s++)
        if (x->cells[s] & ARC_OS_MARK && inside(s, x->h, x->w)) n++, *colours |= 1u << (x->cells[s] & ARC_OS_COLOUR);
    return n;
}

/* palette of a grid, or of an object (ONE, MSET, MSUB): the colours in an order that gives its layout. */
static int palette(const arc_bop_call *c, size_t l, const out_lane *o) {
    int ins[ARC_COLOURS], n = 0;
    lane x = at(&c->arg[0], l);
    if (c->op == ARC_BOP_palette) {
        uint32_t count[ARC_COLOURS] = {0}, first[ARC_COLOURS];
        for (int q = 0; q < ARC_COLOURS; q++) first[q] = UINT32_MAX;
        for (int i = 0; i < x.h; i++)
            for (int j = 0; j < x.w; j++) {
                int v = x.cells[i * SLOT + j];
                if (!count[v]++) first[v] = (uint32_t)(i * x.w + j);
            }
        n = arc_colours_by_first(count, first, ins);
    } else {
        if (!is_patch_form(ARC_OS_FORM(x.iv[0]))) return 0;
        uint32_t colours;
        int cells = marked(&x, &colours);
        if (cells && x.iv[0] & ARC_OS_RECOLOURED) {
            if (x.iv[1] < 0 || x.iv[1] >= ARC_COLOURS) return 0;
            colours = 1u << x.iv[1];
        }
        for (int q = 0; q < ARC_COLOURS; q++)
            if (colours >> q & 1) ins[n++] = q;
        if (n > 1 && n < 5) return 0; /* the order the object's cells insert them in would matter */
    }
    arc_cs_pack(ins, n, 1, o->iv);
    return 1;
}

static int colset(const arc_bop_call *c, size_t l, const out_lane *o) {
    int it[ARC_COLOURS], r[ARC_COLOURS], n, m;
    int64_t v = 0;
    switch (c->op) {
    case ARC_BOP_size_cs: v = ARC_CS_N(c->arg[0].iv[2 * l]); break;
    case ARC_BOP_first_cs: case ARC_BOP_last_cs:
        if (!(n = arc_cs_iter(c->arg[0].iv + 2 * l, it))) return 0;
        v = it[c->op == ARC_BOP_first_cs ? 0 : n - 1];
        break;
    case ARC_BOP_other_cs: /* first(remove(v, S)): the survivors, inserted afresh in S's order */
        if (!(m = arc_cs_without(c->arg[0].iv + 2 * l, karg(c, 1, l, 0), r))) return 0;
        arc_colour_set_order(r, m, it);
        v = it[0];
        break;
    case ARC_BOP_remove_cs:
        m = arc_cs_without(c->arg[1].iv + 2 * l, karg(c, 0, l, 0), r);
        arc_cs_pack(r, m, 0, o->iv);
        return 1;
    default: return -1;
    }
    o->iv[0] = v, o->iv[1] = 0;
    return 1;
}

/* merge, size, color, recolor of an OBJS lane. */
static int reshape(const arc_bop_call *c, size_t l, const out_lane *o) {
    lane x = at(&c->arg[c->op == ARC_BOP_recolor_os], l);
    int form = ARC_OS_FORM(x.iv[0]), rec = (x.iv[0] & ARC_OS_RECOLOURED) != 0;
    uint32_t colours;
    int cells;
    switch (c->op) {
    case ARC_BOP_size_os:
        o->iv[0] = form == ARC_OS_SET || form == ARC_OS_SUB ? x.iv[1] : marked(&x, &colours), o->iv[1] = 0;
        return 1;
    case ARC_BOP_color_os: /* the first cell's colour: one colour for all, or no answer */
        if (!is_patch_form(form) || !(cells = marked(&x, &colours))) return 0;
        if (rec) {
            o->iv[0] = x.iv[1];
        } else {
            if (colours & (colours - 1)) return 0;
            o->iv[0] = __builtin_ctz(colours);
        }
        o->iv[1] = 0;
        return 1;
    case ARC_BOP_merge_os:
        if (form != ARC_OS_SET && form != ARC_OS_SUB) return 0; /* merge of an object's cells: tuples, not sets */
        memcpy(o->cells, x.cells, CELLS);
        o->iv[0] = ARC_OS_IV0(ARC_OS_MAKER(x.iv[0]), form == ARC_OS_SET ? ARC_OS_MSET : ARC_OS_MSUB), o->iv[1] = 0;
        break;
    case ARC_BOP_recolor_os:
        if (!is_patch_form(form) || rec) return 0; /* a second recolor walks the first one's layout */
        memcpy(o->cells, x.cells, CELLS);
        o->iv[0] = x.iv[0] | ARC_OS_RECOLOURED, o->iv[1] = karg(c, 0, l, 0);
        break;
    default: return -1;
    }
    o->hw[0] = (uint8_t)x.h, o->hw[1] = (uint8_t)x.w;
    return 1;
}

/* fill, underfill, cover, paint, underpaint of a grid with an object lane (ONE, MSET, MSUB: its cells are
 * distinct positions, so the order of writes never matters); subgrid of such an object. */
static int grid_out(const arc_bop_call *c, size_t l, const out_lane *o) {
    int sub = c->op == ARC_BOP_subgrid_os;
    lane g = at(&c->arg[sub ? 1 : 0], l);
    lane p = at(&c->arg[sub ? 0 : c->op == ARC_BOP_fill_os || c->op == ARC_BOP_underfill_os ? 2 : 1], l);
    if (!is_patch_form(ARC_OS_FORM(p.iv[0]))) return 0;
    if (sub) {
        int u = SLOT, lft = SLOT, d = -1, r = -1;
        for (int s = 0; s < CELLS; s++)
            if (p.cells[s] & ARC_OS_MARK && inside(s, p.h, p.w)) {
                int i = s / SLOT, j = s % SLOT;
                u = i < u ? i : u, lft = j < lft ? j : lft, d = i > d ? i : d, r = j > r ? j : r;
            }
        if (d < 0) return 0; /* ulcorner of nothing is (): crop cannot index it */
        int oh = (d + 1 < g.h ? d + 1 : g.h) - u, ow = (r + 1 < g.w ? r + 1 : g.w) - lft;
        if (oh < 1 || ow < 1) return 0;
        memset(o->cells, 0, CELLS);
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) o->cells[i * SLOT + j] = g.cells[(u + i) * SLOT + lft + j];
        o->hw[0] = (uint8_t)oh, o->hw[1] = (uint8_t)ow;
        return 1;
    }
    int under = c->op == ARC_BOP_underfill_os || c->op == ARC_BOP_underpaint_os || c->op == ARC_BOP_cover_os;
    int paint = c->op == ARC_BOP_paint_os || c->op == ARC_BOP_underpaint_os;
    int bg = under ? most_colour(g.cells, g.h, g.w, 0xFF) : -1;
    int64_t v = c->op == ARC_BOP_fill_os || c->op == ARC_BOP_underfill_os ? karg(c, 1, l, 0) : bg;
    if (paint && p.iv[0] & ARC_OS_RECOLOURED) v = p.iv[1];
    memset(o->cells, 0, CELLS);
    for (int s = 0; s < CELLS; s++) {
        if (!inside(s, g.h, g.w)) continue;
        int64_t x = g.cells[s];
        if (p.cells[s] & ARC_OS_MARK && inside(s, p.h, p.w) && (c->op == ARC_BOP_cover_os || !under || x == bg))
            x = paint && !(p.iv[0] & ARC_OS_RECOLOURED) ? p.cells[s] & ARC_OS_COLOUR : v;
        if (x < 0 || x >= ARC_COLOURS) return 0;
        o->cells[s] = (uint8_t)x;
    }
    o->hw[0] = (uint8_t)g.h, o->hw[1] = (uint8_t)g.w;
    return 1;
}

int arc_sets_lane(const arc_bop_call *c, size_t l) {
    out_lane o = {c->out.cells + l * CELLS, c->out.hw + 2 * l, c->out.iv + 2 * l};
    switch (c->op) {
    case ARC_BOP_objects: case ARC_BOP_partition: case ARC_BOP_fgpartition: return make(c, l, &o);
    case ARC_BOP_sizefilter_os: case ARC_BOP_colorfilter_os: case ARC_BOP_argmax_os: case ARC_BOP_argmin_os:
        return pick(c, l, &o);
    case ARC_BOP_merge_os: case ARC_BOP_size_os: case ARC_BOP_color_os: case ARC_BOP_recolor_os: return reshape(c, l, &o);
    case ARC_BOP_palette: case ARC_BOP_palette_os: return palette(c, l, &o);
    case ARC_BOP_size_cs: case ARC_BOP_first_cs: case ARC_BOP_last_cs: case ARC_BOP_other_cs: case ARC_BOP_remove_cs:
        return colset(c, l, &o);
    case ARC_BOP_fill_os: case ARC_BOP_underfill_os: case ARC_BOP_cover_os: case ARC_BOP_paint_os:
    case ARC_BOP_underpaint_os: case ARC_BOP_subgrid_os: return grid_out(c, l, &o);
    default: return -1;
    }
}
