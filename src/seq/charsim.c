/* charsim.c: KATO's character mode for one pair: the LCS over the code points of the two space-joined
 * symbol lists (RapidFuzz's fuzz.ratio is InDel, i.e. LCS-based, on those strings). */
#include "seq/seq_internal.h"

/* Code points of the space-joined symbols; *out owned by the caller. */
static int joined(const tdm_seq_vocab *v, const uint32_t *syms, size_t n, uint32_t **out, size_t *len) {
    for (size_t i = 0; i < n; i++)
        if (syms[i] >= v->n) return tdm_error(TDM_E_RANGE, "symbol %zu is %u, not a vocabulary id", i, syms[i]);
    size_t total = tdm_seq_joined_length(v, syms, n);
    uint32_t *cp = tdm_malloc((total ? total : 1) * sizeof *cp);
    if (!cp) return tdm_error(TDM_E_NOMEM, "char metric: no memory for %zu code points", total);
    *len = tdm_seq_joined_write(v, syms, n, cp);
    *out = cp;
    return TDM_OK;
}

int tdm_seq_char_lcs(const tdm_seq_vocab *v, const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                     size_t *lcs, size_t *len_a, size_t *len_b) {
    if (!v || (na && !a) || (nb && !b) || !lcs) return tdm_error(TDM_E_INVAL, "tdm_seq_char_lcs: NULL argument");
    uint32_t *ca = NULL, *cb = NULL;
    size_t la = 0, lb = 0;
    int rc = joined(v, a, na, &ca, &la);
    if (!rc) rc = joined(v, b, nb, &cb, &lb);
    if (!rc) rc = tdm_seq_lcs_length(ca, la, cb, lb, lcs);
    tdm_free(ca);
    tdm_free(cb);
    if (!rc) {
        if (len_a) *len_a = la;
        if (len_b) *len_b = lb;
    }
    return rc;
}
