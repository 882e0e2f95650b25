/* xor_batch.c: many small XOR masks through the runtime's batch executor (src/runtime/batch.c). One call
 * per mask pays a placement decision and, on a device, a launch and two transfer latencies per item; here
 * the items are checked once, submitted with their cost (W = bytes, as the router's XOR class counts it)
 * and run as groups: on the CPU as plain loops over tdm_lat_xor_cpu, on a device as one staged launch
 * over the group's job table (tdm_lattice_dev_ops.xor_key_batch). Both compute every byte from its
 * absolute key position, so results equal tdm_lattice_xor's wherever a group ran. */
#include "lattice/lattice_device.h"
#include "lattice/lattice_internal.h"

#include <stdlib.h>

typedef struct {
    const tdm_lattice_xor_item *items;
} xor_batch_ctx;

static int run_group(void *user, const tdm_backend *b, const size_t *idx, size_t count, int *status) {
    const xor_batch_ctx *x = user;
    if (b->kind == TDM_BACKEND_CPU) {
        /* Groups already run on every thread: one thread per item. */
        for (size_t i = 0; i < count; i++) {
            const tdm_lattice_xor_item *it = &x->items[idx[i]];
            tdm_lat_xor_cpu(it->in, it->out, it->n, &it->key, 1);
            status[idx[i]] = TDM_OK;
        }
        return TDM_OK;
    }
    tdm_lattice_xor_job *jobs = tdm_malloc(count * sizeof *jobs);
    if (!jobs) return tdm_error(TDM_E_NOMEM, "tdm_lattice_xor_batch: no memory for a group of %zu", count);
    for (size_t i = 0; i < count; i++) {
        const tdm_lattice_xor_item *it = &x->items[idx[i]];
        jobs[i] = (tdm_lattice_xor_job){it->in, it->out, it->n, it->key.bytes, it->key.len, it->key.offset};
    }
    int rc = b->lattice->xor_key_batch(b, jobs, count);
    tdm_free(jobs);
    if (rc == TDM_OK)
        for (size_t i = 0; i < count; i++) status[idx[i]] = TDM_OK;
    return rc;
}

/* Whether a device backend of ctx can run XOR groups. */
static int device_path(const tdm_ctx *ctx) {
    for (int i = 1; i < tdm_backend_count(ctx); i++) {
        const tdm_backend *b = tdm_backend_get(ctx, i);
        if (b->kind != TDM_BACKEND_CPU && b->lattice && b->lattice->xor_key_batch) return 1;
    }
    return 0;
}

int tdm_lattice_xor_batch(tdm_ctx *ctx, const tdm_lattice_xor_item *items, size_t n, int pref, int *status,
                          tdm_batch_stats *stats) {
    if (stats) tdm_batch_stats_get(NULL, stats);
    if (!ctx || (n && (!items || !status)))
        return tdm_error(TDM_E_INVAL, "tdm_lattice_xor_batch: %s is NULL", !ctx ? "ctx" : !items ? "items" : "status");
    if (pref != TDM_DEVICE_AUTO && pref != TDM_DEVICE_CPU && pref != TDM_DEVICE_CUDA)
        return tdm_error(TDM_E_INVAL, "tdm_lattice_xor_batch: unknown backend preference %d", pref);
    if (!n) return TDM_OK;
    tdm_batch_opts o;
    tdm_batch_opts_init(&o);
    o.hint = (tdm_device_pref)pref;
    tdm_batch *bt;
    int rc = tdm_batch_new(ctx, &o, &bt);
    if (rc) return rc;
    xor_batch_ctx x = {items};
    tdm_batch_family fam = {.op = TDM_OP_LATTICE_XOR, .run = run_group, .user = &x, .device_ok = device_path(ctx)};
    int fid;
    if ((rc = tdm_batch_add_family(bt, &fam, &fid))) goto out;
    /* Items that fail the checks or have nothing to do are answered here; the executor gets the rest, whose
     * submission indices map back through sub[]. */
    size_t *sub = tdm_malloc(n * sizeof *sub), m = 0;
    if (!sub) {
        rc = tdm_error(TDM_E_NOMEM, "tdm_lattice_xor_batch: no memory for %zu items", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const tdm_lattice_xor_item *it = &items[i];
        status[i] = tdm_lat_xor_check("tdm_lattice_xor_batch", it->in, it->out, it->n, &it->key, it->flags);
        if (status[i] || !it->n) continue;
        tdm_batch_cost c = {.work = (double)it->n, .in_bytes = it->n + it->key.len, .out_bytes = it->n};
        if ((rc = tdm_batch_add(bt, fid, &c, NULL))) break;
        sub[m++] = i;
    }
    if (!rc && m) {
        /* The executor's run function sees submission indices; give it items in that numbering. */
        tdm_lattice_xor_item *packed = NULL;
        int *st = status; /* every item submitted: the numberings agree */
        if (m < n) {
            st = tdm_malloc(m * sizeof *st);
            packed = tdm_malloc(m * sizeof *packed);
        }
        if (!st || (m < n && !packed)) {
            rc = tdm_error(TDM_E_NOMEM, "tdm_lattice_xor_batch: no memory for %zu items", m);
        } else {
            if (packed) {
                for (size_t k = 0; k < m; k++) packed[k] = items[sub[k]];
                x.items = packed;
            }
            rc = tdm_batch_run(bt, st);
            if (st != status)
                for (size_t k = 0; k < m && rc != TDM_E_NOMEM && rc != TDM_E_UNSUPPORTED; k++) status[sub[k]] = st[k];
            if (stats) tdm_batch_stats_get(bt, stats);
        }
        if (st != status) tdm_free(st);
        tdm_free(packed);
    }
    tdm_free(sub);
out:
    tdm_batch_free(bt);
    return rc;
}
