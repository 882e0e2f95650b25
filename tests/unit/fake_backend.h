/* fake_backend.h: a stand-in GPU for unit tests that need a device without having one: a backend of kind
 * CUDA registered on a context that has only the CPU (TANDEM_DEVICE=cpu, so a real GPU on the test machine
 * stays out), answering the ops its `supports` function accepts, with whatever engine entry points the test
 * gives it (lattice, arc) and optionally a memory monitor. Plus cost-model classes fitted from synthetic
 * ladder "measurements" of a known line, as calibration would fit them, so that a test knows where the
 * router must send each size. Header-only, like unit_common.h; include after it. */
#ifndef TANDEM_FAKE_BACKEND_H
#define TANDEM_FAKE_BACKEND_H

#include "core/internal.h"
#include "tandem/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Frees the fake and the monitor a test gave it. */
static void tu_fake_destroy(tdm_backend *b) {
    tdm_mem_monitor_free(b->mem);
    free(b);
}

/* Registers a stand-in GPU named name (device 0) on ctx, which owns it from then on (tdm_destroy frees it).
 * The caller may set ->lattice, ->arc, ->mem on the returned backend. */
static inline tdm_backend *tu_fake_gpu(tdm_ctx *ctx, const char *name, int (*supports)(const tdm_backend *, tdm_op)) {
    tdm_backend *b = calloc(1, sizeof *b);
    assert_non_null(b);
    b->name = name;
    b->kind = TDM_BACKEND_CUDA;
    b->device = 0;
    b->supports = supports;
    b->destroy = tu_fake_destroy;
    assert_true(ctx->nbackends < TDM_MAX_BACKENDS);
    ctx->backends[ctx->nbackends++] = b;
    return b;
}

/* The configuration fake-device tests start from: CPU backends only, calibration off, no model file (the
 * user's is never read or written), expected fallback warnings not logged. */
static inline void tu_fake_config(tdm_config *c) {
    tdm_config_init(c);
    c->device = TDM_DEVICE_CPU;
    c->calibrate = TDM_CALIBRATE_OFF;
    c->costmodel_path = "";
    c->log_level = TDM_LOG_ERROR;
}

static inline tdm_ctx *tu_fake_ctx(const tdm_config *c) {
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, c), TDM_OK);
    return ctx;
}

/* Fits m's class (op, gpu) to T = t0 + W * per_work + levels * lambda measured at W = 1024 * 4^i (i < 12);
 * with lambda > 0 the points carry varied level counts, as a level-synchronous op's calibration does. The
 * class must come out trusted. */
static inline void tu_model_line(tdm_costmodel *m, tdm_op op, int gpu, double t0, double per_work, double lambda) {
    double w[12], l[12], t[12];
    for (int i = 0; i < 12; i++) {
        w[i] = 1024.0 * pow(4.0, i);
        l[i] = lambda > 0 ? (double)(3 + 7 * (i % 3)) : 0.0;
        t[i] = t0 + w[i] * per_work + l[i] * lambda;
    }
    assert_int_equal(tdm_costmodel_fit(&m->cls[op][gpu ? 1 : 0], w, l, t, 12, 120), TDM_OK);
    assert_true(m->cls[op][gpu ? 1 : 0].trusted);
}

#endif
