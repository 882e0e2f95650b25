/* bfs_ws.c: the BFS workspace (distance and queue arrays) a context keeps between shortest-path calls.
 *
 * Why: a query on a 10^6-vertex lattice otherwise allocates and clears 8 MB per call (fresh pages, a
 * page fault per 4 KB, then a full -1 fill), and a query that stops early at a near target would still
 * pay the full O(V) clear. The kept workspace holds its distances at -1 between calls; a caller resets
 * only the entries it labelled (they are exactly queue[0..labelled)), so a short query costs what it
 * visits. One workspace is kept per context (the largest recently returned, up to TDM_LAT_WS_KEEP_MAX
 * vertices); concurrent callers that find it taken allocate their own, which is freed when returned. */
#include "lattice/lattice_internal.h"

#include <string.h>

/* 2^25 vertices = 256 MB of dist + queue: larger workspaces are freed when returned, not kept. */
#define TDM_LAT_WS_KEEP_MAX ((size_t)1 << 25)

static void ws_free(tdm_lat_ws *ws) {
    if (!ws) return;
    tdm_free(ws->dist);
    tdm_free(ws->queue);
    tdm_free(ws);
}

void tdm_lat_ws_free(struct tdm_lat_ws *ws) { ws_free(ws); }

tdm_lat_ws *tdm_lat_ws_take(tdm_ctx *ctx, size_t V) {
    tdm_lat_ws *ws = atomic_exchange(&ctx->lattice_ws, NULL);
    if (ws && ws->cap >= V) return ws;
    ws_free(ws);
    const size_t cap = V ? V : 1;
    ws = tdm_calloc(1, sizeof *ws);
    if (!ws) return NULL;
    ws->cap = cap;
    ws->dist = tdm_malloc(cap * sizeof *ws->dist);
    ws->queue = tdm_malloc(cap * sizeof *ws->queue);
    if (!ws->dist || !ws->queue) {
        ws_free(ws);
        return NULL;
    }
    memset(ws->dist, 0xff, cap * sizeof *ws->dist);
    return ws;
}

void tdm_lat_ws_clean(tdm_lat_ws *ws, int64_t labelled) {
    /* Scattered resets beat a sequential fill only while they are few. */
    if ((size_t)labelled > ws->cap / 8) {
        memset(ws->dist, 0xff, ws->cap * sizeof *ws->dist);
        return;
    }
    for (int64_t i = 0; i < labelled; i++) ws->dist[ws->queue[i]] = -1;
}

void tdm_lat_ws_give(tdm_ctx *ctx, tdm_lat_ws *ws) {
    if (!ws) return;
    if (ws->cap > TDM_LAT_WS_KEEP_MAX) {
        ws_free(ws);
        return;
    }
    tdm_lat_ws *old = atomic_exchange(&ctx->lattice_ws, ws);
    if (old && old->cap > ws->cap && atomic_compare_exchange_strong(&ctx->lattice_ws, &ws, old)) {
        ws_free(ws); /* keep the larger one */
        return;
    }
    ws_free(old);
}
