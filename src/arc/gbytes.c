/* gbytes.c: the grid primitives that only move cells (the mirrors and rotations of a grid, hconcat, vconcat,
 * upscale of a grid) on grids' bytes (arc_gview), for a line whose result may be a grid of bytes
 * (arc_take_grid) or whose grid argument is one (arc_grid_is_lazy). They give the cells the tuple forms
 * (prim_grid.c, prim_geom.c) give, for grids of colours of 1..30 rows of one width 1..30 whose result is
 * such a grid too; anything else goes the tuple way, a grid of bytes among the arguments made into rows
 * first. hmirror and vconcat of rows share them, which costs less than copying bytes (and a result made of
 * the input's rows is read as its bytes): the interpreter marks their lines only when an argument may be
 * a grid of bytes (program.c mark_grid). */
#include "arc_device.h"
#include "arc_internal.h"

#include <string.h>

/* The views of args a[0..n) when each has one (1), else 0 with every grid of bytes among them made into
 * rows (the tuple form reads them next); -1 out of memory. */
static int views(tdm_arc_rt *rt, tdm_arc_val **a, int n, arc_gview *v) {
    int all = 1;
    for (int k = 0; k < n && all; k++) {
        int r = arc_is_tuple(a[k]) ? arc_grid_view(rt, a[k], &v[k]) : 0;
        if (r < 0) return -1;
        all = r;
    }
    for (int k = 0; k < n && !all; k++)
        if (arc_grid_force(rt, a[k])) return -1;
    return all;
}

#if defined(__SSE2__)
/* c (w rows of h) = the transpose of s (h rows of w), 16 x 16 blocks at a time: 16 rows read, four perfect
 * shuffles of their bytes (each pairs row k with row k + 8) make them the block's 16 columns. A block's
 * rows are stored 16 bytes each, so a row shorter than that runs into the next one, or into c's slack:
 * blocks of columns 16.. (bi 16) go first and every row is written again after its neighbour's overrun;
 * the slack is set again at the end. Reads stay within s's rows and slack (32 bytes). */
static void transpose_bytes(uint8_t *c, const uint8_t *s, int h, int w) {
    for (int bi = h > 16 ? 16 : 0; bi >= 0; bi -= 16)
        for (int bj = 0; bj < w; bj += 16) {
            __m128i r[16], o[16];
            for (int q = 0; q < 16; q++)
                r[q] = bi + q < h ? _mm_loadu_si128((const __m128i *)(s + (bi + q) * w + bj)) : _mm_setzero_si128();
            for (int round = 0; round < 4; round++) {
                for (int k = 0; k < 8; k++) o[2 * k] = _mm_unpacklo_epi8(r[k], r[k + 8]), o[2 * k + 1] = _mm_unpackhi_epi8(r[k], r[k + 8]);
                memcpy(r, o, sizeof r);
            }
            for (int k = 0; k < 16 && bj + k < w; k++) _mm_storeu_si128((__m128i *)(c + (bj + k) * h + bi), r[k]);
        }
    memset(c + h * w, 0xff, 32); /* arc_grid_view_bytes' slack, as it was */
}
#endif

/* hmirror .. rot270 */
static int move(tdm_arc_rt *rt, tdm_arc_val **a, int kind, int bytes, tdm_arc_val **out) {
    arc_gview v;
    int r = views(rt, a, 1, &v);
    if (r <= 0) return r;
    int h = v.h, w = v.w, across = kind == ARC_GB_DMIRROR || kind == ARC_GB_CMIRROR || kind == ARC_GB_ROT90 ||
                                   kind == ARC_GB_ROT270; /* w x h */
    int oh = across ? w : h, ow = across ? h : w;
    uint8_t *c = arc_grid_view_bytes(rt, oh, ow);
    if (!c) return -1;
    const uint8_t *s = v.c;
#if defined(__SSE2__)
    if (kind == ARC_GB_DMIRROR && !arc_bits_portable) {
        transpose_bytes(c, s, h, w);
        return (*out = arc_grid_result(rt, c, oh, ow, bytes)) ? 1 : -1;
    }
#endif
    for (int i = 0; i < oh; i++) {
        uint8_t *o = c + i * ow;
        switch (kind) {
        case ARC_GB_HMIRROR: memcpy(o, s + (h - 1 - i) * w, (size_t)w); break;
        case ARC_GB_VMIRROR: for (int j = 0; j < ow; j++) o[j] = s[i * w + w - 1 - j]; break;
        case ARC_GB_ROT180: for (int j = 0; j < ow; j++) o[j] = s[(h - 1 - i) * w + w - 1 - j]; break;
        case ARC_GB_DMIRROR: for (int j = 0; j < ow; j++) o[j] = s[j * w + i]; break;
        case ARC_GB_CMIRROR: for (int j = 0; j < ow; j++) o[j] = s[(h - 1 - j) * w + w - 1 - i]; break;
        case ARC_GB_ROT90: for (int j = 0; j < ow; j++) o[j] = s[(h - 1 - j) * w + i]; break;
        default: for (int j = 0; j < ow; j++) o[j] = s[j * w + w - 1 - i]; break; /* rot270 */
        }
    }
    return (*out = arc_grid_result(rt, c, oh, ow, bytes)) ? 1 : -1;
}

static int concat(tdm_arc_rt *rt, tdm_arc_val **a, int vertical, int bytes, tdm_arc_val **out) {
    arc_gview v[2];
    int r = views(rt, a, 2, v);
    if (r <= 0) return r;
    /* hconcat: zip's rows (the fewer), each both rows; vconcat: the rows of both, which must be as wide */
    int h = vertical ? v[0].h + v[1].h : v[0].h < v[1].h ? v[0].h : v[1].h, w = vertical ? v[0].w : v[0].w + v[1].w;
    if ((vertical && v[0].w != v[1].w) || h > ARC_SLOT || w > ARC_SLOT) /* not such a grid: the tuple form */
        return arc_grid_force(rt, a[0]) || arc_grid_force(rt, a[1]) ? -1 : 0;
    uint8_t *c = arc_grid_view_bytes(rt, h, w);
    if (!c) return -1;
    if (vertical) {
        memcpy(c, v[0].c, (size_t)v[0].h * (size_t)w);
        memcpy(c + (size_t)v[0].h * w, v[1].c, (size_t)v[1].h * (size_t)w);
    } else {
        for (int i = 0; i < h; i++) {
            memcpy(c + i * w, v[0].c + i * v[0].w, (size_t)v[0].w);
            memcpy(c + i * w + v[0].w, v[1].c + i * v[1].w, (size_t)v[1].w);
        }
    }
    return (*out = arc_grid_result(rt, c, h, w, bytes)) ? 1 : -1;
}

static int upscale(tdm_arc_rt *rt, tdm_arc_val **a, int bytes, tdm_arc_val **out) {
    arc_gview v;
    int r = views(rt, a, 1, &v);
    if (r <= 0) return r;
    int64_t f = arc_is_int(a[1]) ? a[1]->u.i : 0;
    if (f < 1 || f > ARC_SLOT || v.h * f > ARC_SLOT || v.w * f > ARC_SLOT) /* no cells, too many, or no int */
        return arc_grid_force(rt, a[0]) ? -1 : 0;
    int h = v.h * (int)f, w = v.w * (int)f;
    uint8_t *c = arc_grid_view_bytes(rt, h, w);
    if (!c) return -1;
    for (int i = 0; i < v.h; i++) {
        uint8_t *o = c + i * (int)f * w;
        for (int j = 0; j < w; j++) o[j] = v.c[i * v.w + j / (int)f];
        for (int k = 1; k < f; k++) memcpy(o + k * w, o, (size_t)w);
    }
    return (*out = arc_grid_result(rt, c, h, w, bytes)) ? 1 : -1;
}

int arc_gbytes_run(tdm_arc_rt *rt, tdm_arc_val **a, int op, tdm_arc_val **out) {
    int bytes = arc_take_grid(rt, a);
    if (op == ARC_GB_UPSCALE) return upscale(rt, a, bytes, out);
    if (op >= ARC_GB_HCONCAT) return concat(rt, a, op == ARC_GB_VCONCAT, bytes, out);
    return move(rt, a, op, bytes, out);
}
