/* inputs.c: input grids made into values once (tdm_arc_inputs), for batches that run many programs over
 * the same grids (a search over candidate programs; a timing run's passes). A call whose grid ref is one of
 * the set's starts from the kept value and its bytes instead of converting its cells (tdm_arc_grid_new, about
 * a tenth of a light solver's call). The values live in a runtime of their own that is never reset while
 * the set lives, and are hashed when made, so the threads of a batch only ever read them. */
#include "arc_internal.h"

#include <stdio.h>

typedef struct {
    const int *cells; /* the ref's cells pointer: the key with h and w (NULL: an empty slot) */
    int h, w;
    tdm_arc_val *g;   /* the grid, in the set's runtime */
    const uint8_t *c; /* its view's bytes (gview.c), NULL when its cells are not all colours */
} arc_input;

struct tdm_arc_inputs {
    tdm_arc_rt *rt;
    arc_input *tab; /* open addressing by the cells pointer, mask + 1 slots, at most half full */
    size_t mask, n;
};

/* g's slot: where the set keeps it, or the empty slot it would take. */
static arc_input *slot_of(const tdm_arc_inputs *in, const tdm_arc_grid_ref *g) {
    size_t s = (size_t)(((uintptr_t)g->cells >> 4) * 0x9e3779b97f4a7c15ull >> 20) & in->mask;
    for (;; s = (s + 1) & in->mask) {
        arc_input *e = &in->tab[s];
        if (!e->cells || (e->cells == g->cells && e->h == g->h && e->w == g->w)) return e;
    }
}

int tdm_arc_inputs_new(const tdm_arc_grid_ref *grids, size_t n, tdm_arc_inputs **out) {
    if (!out || (n && !grids)) return tdm_error(TDM_E_INVAL, "tdm_arc_inputs_new: NULL argument");
    *out = NULL;
    for (size_t k = 0; k < n; k++)
        if (!arc_grid_ref_ok(&grids[k]))
            return tdm_error(TDM_E_INVAL, "tdm_arc_inputs_new: grid %zu has a bad size or no cells", k);
    tdm_arc_inputs *in = tdm_calloc(1, sizeof *in);
    size_t slots = 16;
    while (slots < 2 * n) slots *= 2;
    if (!in || !(in->tab = tdm_calloc(slots, sizeof *in->tab)) || tdm_arc_rt_new(&in->rt)) {
        tdm_arc_inputs_free(in);
        return tdm_error(TDM_E_NOMEM, "tdm_arc_inputs_new: no memory for %zu grids", n);
    }
    in->mask = slots - 1;
    for (size_t k = 0; k < n; k++) {
        const tdm_arc_grid_ref *g = &grids[k];
        arc_input *e = g->h && g->w ? slot_of(in, g) : NULL;
        if (!e || e->cells) continue; /* an empty grid costs nothing to make; a repeat is kept once */
        tdm_arc_val *v;
        arc_gview view;
        int st = tdm_arc_grid_new(in->rt, g->h, g->w, g->cells, &v);
        if (st) {
            char why[256]; /* the message, copied: tdm_error writes where tdm_last_error reads */
            snprintf(why, sizeof why, "%s", tdm_last_error());
            tdm_arc_inputs_free(in);
            return tdm_error(st, "tdm_arc_inputs_new: grid %zu (%dx%d): %s", k, g->h, g->w, why);
        }
        arc_hash(v); /* the grid's, its rows' and cells' hashes written now, never by a batch's threads */
        *e = (arc_input){g->cells, g->h, g->w, v, arc_grid_view_kept(in->rt, v, &view) ? view.c : NULL};
        in->n++;
    }
    *out = in;
    return TDM_OK;
}

void tdm_arc_inputs_free(tdm_arc_inputs *in) {
    if (!in) return;
    tdm_arc_rt_free(in->rt);
    tdm_free(in->tab);
    tdm_free(in);
}

size_t tdm_arc_inputs_count(const tdm_arc_inputs *in) { return in ? in->n : 0; }

int arc_inputs_take(tdm_arc_rt *rt, const tdm_arc_inputs *in, const tdm_arc_grid_ref *g, const tdm_arc_val **out) {
    const arc_input *e = in && g->cells ? slot_of(in, g) : NULL;
    if (!e || !e->cells) return 0;
    if (e->c) arc_grid_view_keep_input(rt, e->g, e->c, e->h, e->w);
    *out = e->g;
    return 1;
}
