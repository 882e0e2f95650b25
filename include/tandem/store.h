/* store.h: the durable store of KATO knowledge bases, on LMDB (an embedded, crash-safe, memory-mapped
 * key-value database). A data directory holds one LMDB environment with every node's patterns, symbol
 * statistics and totals. Each learn is written in one transaction that has committed (and reached the
 * disk) before tdm_store_save_learn returns, so a caller that acknowledges a learn only after that call
 * never acknowledges a learn that a crash can lose, and a crash never leaves half a learn behind (LMDB's
 * copy-on-write pages: a transaction is all there or not at all).
 *
 * Layout (docs/service.md, "Store"): a node record per knowledge-base id (its number, the node id it was made for, the
 * totals), one record per pattern keyed by (node number, pattern index) and one per symbol keyed by (node
 * number, 128-bit hash of the symbol), whose value also holds the symbol's bytes.
 *
 * Thread safety: every function may be called from any thread; writes are serialised by LMDB. The caller
 * keeps learns of one knowledge base in order (save each learn before the next learn of that knowledge
 * base starts), so that the stored record is the latest. One process at a time may open a directory. */
#ifndef TANDEM_STORE_H
#define TANDEM_STORE_H

#include "tandem/kato.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tdm_store tdm_store;

/* Opens (creating it and the directory when missing) the store in dir. map_bytes is the largest size the
 * database may grow to (address space only; 0 = 64 GiB). Errors: TDM_E_INVAL, TDM_E_IO (message names the
 * path and the reason), TDM_E_BUSY (another process has the directory open), TDM_E_VERSION (a store of
 * another format version), TDM_E_NOMEM. The caller owns *out. */
int tdm_store_open(const char *dir, uint64_t map_bytes, tdm_store **out);
void tdm_store_close(tdm_store *s);
/* The directory the store was opened on (owned by s). */
const char *tdm_store_dir(const tdm_store *s);

/* One stored knowledge base. */
typedef struct {
    char *kb_id;      /* owned */
    char *node_id;    /* owned: the node id it was first made for */
    uint64_t patterns;
} tdm_store_node;

/* Every stored knowledge base, in kb_id order. The caller frees the list with tdm_store_nodes_free.
 * Errors: TDM_E_IO, TDM_E_CORRUPT, TDM_E_NOMEM. */
int tdm_store_nodes(tdm_store *s, tdm_store_node **out, size_t *n);
void tdm_store_nodes_free(tdm_store_node *nodes, size_t n);

/* Progress of a load: called every 100000 patterns and at the end. */
typedef void (*tdm_store_progress_fn)(const char *kb_id, uint64_t done, uint64_t total, void *user);

/* Loads the knowledge base kb_id into kb, which must be empty: patterns in index order, then symbol
 * statistics and totals. A kb_id never stored loads nothing. progress may be NULL. Errors: TDM_E_IO,
 * TDM_E_CORRUPT (message says which record), TDM_E_NOMEM, and tdm_kato_kb_restore_*'s errors. */
int tdm_store_load(tdm_store *s, const char *kb_id, tdm_kato_kb *kb, tdm_store_progress_fn progress, void *user);

/* Writes what the learn of pattern `name` (40 hex, "PTRN|" accepted) changed in kb: the pattern, the
 * statistics of its distinct symbols and kb's totals, under kb_id (node_id is recorded when the node is
 * new). Returns after the transaction has committed to disk. Errors: TDM_E_NOTFOUND (no such pattern in
 * kb), TDM_E_IO (the disk, or the map size reached: the message says), TDM_E_CORRUPT (a stored record of
 * another symbol under the same hash), TDM_E_NOMEM. Nothing is written on error. */
int tdm_store_save_learn(tdm_store *s, const char *kb_id, const char *node_id, tdm_kato_kb *kb, const char *name);

/* Bulk loading, for building a store offline (`tandem store import`); the service uses neither.
 * With durable = 0 commits no longer wait for the disk (LMDB's MDB_NOSYNC) until tdm_store_sync or a
 * durable = 1 call, which flush everything. Between tdm_store_batch_begin and tdm_store_batch_commit every
 * tdm_store_save_learn of the calling thread goes into one transaction (no other thread may write then);
 * a failing save aborts the whole batch. Errors: TDM_E_IO, TDM_E_BUSY (a batch is already open),
 * TDM_E_INVAL (commit without a batch). */
int tdm_store_set_durable(tdm_store *s, int durable);
int tdm_store_sync(tdm_store *s);
int tdm_store_batch_begin(tdm_store *s);
int tdm_store_batch_commit(tdm_store *s);

/* The same in two steps, for several learns in one commit (the service's group commit): prepare reads
 * what the learns of names[0..n) changed out of kb into records (call it while kb cannot change, so that
 * the records are one consistent state), write puts them into one transaction and commits it, and frees
 * *p whatever happens. Errors: as tdm_store_save_learn. */
typedef struct tdm_store_pending tdm_store_pending;
int tdm_store_prepare(tdm_store *s, const char *kb_id, const char *node_id, tdm_kato_kb *kb, const char *const *names, size_t n,
                      tdm_store_pending **p);
int tdm_store_write(tdm_store *s, tdm_store_pending *p);
void tdm_store_pending_free(tdm_store_pending *p);

/* Deletes every record of kb_id in one transaction (committed on return). Errors: TDM_E_IO. */
int tdm_store_clear(tdm_store *s, const char *kb_id);

#ifdef __cplusplus
}
#endif
#endif
