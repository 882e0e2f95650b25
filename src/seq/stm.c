/* stm.c: encoding a short-term memory (a query) against a vocabulary without growing it. Unknown symbols
 * keep their place (they count in |S| and never match), and the code points of the space-joined symbols
 * are prepared once for the character metric. */
#include "seq/seq_internal.h"

#include <string.h>

void tdm_seq_stm_clear(tdm_seq_stm *stm) {
    if (!stm) return;
    tdm_free(stm->ids);
    tdm_free(stm->cps);
    memset(stm, 0, sizeof *stm);
}

int tdm_seq_stm_encode(const tdm_seq_vocab *v, const char *const *syms, const size_t *lens, size_t n,
                       tdm_seq_stm *out) {
    if (!v || !out || (n && (!syms || !lens))) return tdm_error(TDM_E_INVAL, "tdm_seq_stm_encode: NULL argument");
    size_t ncp = n ? n - 1 : 0; /* separators */
    for (size_t i = 0; i < n; i++) {
        int rc = tdm_seq_utf8_check(syms[i], lens[i]);
        if (rc) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", tdm_last_error());
            return tdm_error(TDM_E_UTF8, "STM symbol %zu: %s", i, msg);
        }
        if (lens[i] > SIZE_MAX / 8 - ncp) return tdm_error(TDM_E_OVERFLOW, "STM too large");
        ncp += lens[i]; /* upper bound: one code point per byte */
    }
    tdm_seq_stm s = {0};
    s.ids = tdm_malloc((n ? n : 1) * sizeof *s.ids);
    s.cps = tdm_malloc((ncp ? ncp : 1) * sizeof *s.cps);
    if (!s.ids || !s.cps) {
        tdm_seq_stm_clear(&s);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_stm_encode: no memory for %zu symbols", n);
    }
    for (size_t i = 0; i < n; i++) {
        if (tdm_seq_vocab_find(v, syms[i], lens[i], &s.ids[i])) s.ids[i] = TDM_SEQ_UNKNOWN;
        if (i) s.cps[s.ncp++] = ' ';
        s.ncp += tdm_seq_utf8_decode(syms[i], lens[i], s.cps + s.ncp);
    }
    s.n = n;
    tdm_clear_error();
    *out = s;
    return TDM_OK;
}

int tdm_seq_stm_from_ids(const tdm_seq_vocab *v, const uint32_t *ids, size_t n, tdm_seq_stm *out) {
    if (!v || !out || (n && !ids)) return tdm_error(TDM_E_INVAL, "tdm_seq_stm_from_ids: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (ids[i] >= v->n) return tdm_error(TDM_E_RANGE, "STM symbol %zu is %u, not a vocabulary id", i, ids[i]);
    size_t ncp = tdm_seq_joined_length(v, ids, n);
    tdm_seq_stm s = {0};
    s.ids = tdm_malloc((n ? n : 1) * sizeof *s.ids);
    s.cps = tdm_malloc((ncp ? ncp : 1) * sizeof *s.cps);
    if (!s.ids || !s.cps) {
        tdm_seq_stm_clear(&s);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_stm_from_ids: no memory");
    }
    if (n) memcpy(s.ids, ids, n * sizeof *ids);
    s.ncp = tdm_seq_joined_write(v, ids, n, s.cps);
    s.n = n;
    *out = s;
    return TDM_OK;
}
