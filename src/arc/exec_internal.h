/* exec_internal.h: what the batched executor's files share (exec.c, exec_lane.c, exec_cpu.c, exec_sets.c):
 * the table of batched primitives, one lane to and from an interpreter value, and the CPU form of the
 * batched primitives. */
#ifndef TANDEM_ARC_EXEC_INTERNAL_H
#define TANDEM_ARC_EXEC_INTERNAL_H

#include "arc_bops.h"
#include "arc_internal.h"
#include "tandem/backend.h"

typedef struct {
    int prim;       /* ARC_P_* */
    int out;        /* ARC_VK_* of the result */
    int nargs;      /* the primitive's arity */
    int arg[4];     /* ARC_VK_* of each argument */
} arc_bop_info;
extern const arc_bop_info arc_bop_table[ARC_NBOP];
/* The first batched form of primitive id, or -1; the form after bop of the same primitive, or -1. */
int arc_bop_of_prim(int id);
int arc_bop_next(int bop);

/* Writes v into one lane (cells: 900 bytes, hw: 2, iv: 2) as kind ARC_VK_*: 1 when v is representable so,
 * 0 when not (nothing to undo; rt's error stays clear unless memory ran out reading a lazy set). */
int arc_lane_encode(tdm_arc_rt *rt, tdm_arc_val *v, int kind, uint8_t *cells, uint8_t *hw, int64_t *iv);
/* The value a lane of kind ARC_VK_* stands for, made in rt; NULL (rt's error set) out of memory. */
tdm_arc_val *arc_lane_decode(tdm_arc_rt *rt, int kind, const uint8_t *cells, const uint8_t *hw, const int64_t *iv);

/* The CPU form of the batched primitives, as tdm_arc_dev_ops's members (host memory; b unused): each lane is
 * decoded, given to the interpreter's own primitive and encoded back (status 0 where it raises or its result
 * is not representable). threads <= 0: OpenMP's default. */
int arc_cpu_col_alloc(size_t n, arc_col *c);
void arc_cpu_col_free(arc_col *c);
void arc_cpu_col_put(const arc_col *dst, const uint32_t *lanes, size_t m, const arc_col *src);
void arc_cpu_col_get(const arc_col *src, const uint32_t *lanes, size_t m, const arc_col *dst);
int arc_cpu_bop_run(const arc_bop_call *c, const uint8_t *active, uint8_t *status, int threads);
/* The objects-based forms (exec_sets.c: OBJS and COLSET arguments or results), computed natively from the
 * lanes as the GPU computes them (the same bytes): lane l of c: 1 with the result in c->out, 0 where the
 * lane's status is 0; -1 when c->op is not one of them. */
int arc_sets_lane(const arc_bop_call *c, size_t l);

/* tdm_arc_batch_exec on the device ops ops of backend be (be passed to them as is; may be NULL), with the
 * device's chunk size and host-side paths, for tests: a fake device table made of the CPU forms above runs the
 * GPU path's machinery (32,768-lane chunks, every column move through ops) without a GPU. threads <= 0:
 * OpenMP's default. Errors: those of tdm_arc_batch_exec and of ops. */
struct tdm_arc_dev_ops;
int arc_batch_exec_ops(const tdm_backend *be, const struct tdm_arc_dev_ops *ops, const tdm_arc_programs *p,
                       const tdm_arc_call_ref *calls, size_t n, int threads, tdm_arc_batch **out);

#endif
