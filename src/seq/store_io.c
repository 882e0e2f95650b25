/* store_io.c: saving and loading a pattern store. The file is a fixed header, the vocabulary, the
 * pattern lengths and the symbol arena, followed by an XXH64 checksum of everything before it. Loading
 * checks sizes against the file before allocating, streams the sections into their final arrays while
 * hashing, validates every value, and hands the store out only when all of it checked: a corrupt or
 * truncated file is rejected, never half-loaded. The layout is in docs/seq.md. */
#define _POSIX_C_SOURCE 200809L
#include "seq/seq_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAGIC "TDMSEQST"
#define FORMAT_VERSION 1u
#define ENDIAN_MARK 0x01020304u

typedef struct {
    char magic[8];
    uint32_t version;
    uint32_t endian;
    uint64_t vocab_count;
    uint64_t vocab_bytes;
    uint64_t pattern_count;
    uint64_t symbol_count;
    uint64_t reserved[2];
} file_header; /* 64 bytes */
_Static_assert(sizeof(file_header) == 64, "header layout");

typedef struct {
    FILE *f;
    XXH64_state_t *h;
    const char *path;
} writer;

static int wr(writer *w, const void *p, size_t n) {
    if (n && fwrite(p, 1, n, w->f) != n) return tdm_error(TDM_E_IO, "%s: write failed: %s", w->path, strerror(errno));
    XXH64_update(w->h, p, n);
    return TDM_OK;
}

int tdm_seq_store_save(const tdm_seq_store *s, const char *path) {
    if (!s || !path) return tdm_error(TDM_E_INVAL, "tdm_seq_store_save: NULL argument");
    size_t plen = strlen(path);
    char *tmp = tdm_malloc(plen + 16);
    if (!tmp) return tdm_error(TDM_E_NOMEM, "tdm_seq_store_save: no memory");
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = tdm_error(TDM_E_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        tdm_free(tmp);
        return rc;
    }
    writer w = {fdopen(fd, "wb"), XXH64_createState(), path};
    int rc = w.f && w.h ? TDM_OK : tdm_error(TDM_E_NOMEM, "tdm_seq_store_save: no memory");
    if (w.h) XXH64_reset(w.h, 0);
    const tdm_seq_vocab *v = s->vocab;
    file_header hd = {.version = FORMAT_VERSION, .endian = ENDIAN_MARK, .vocab_count = v->n,
                      .vocab_bytes = v->nbytes, .pattern_count = s->count, .symbol_count = s->nsym};
    memcpy(hd.magic, MAGIC, 8);
    if (!rc) rc = wr(&w, &hd, sizeof hd);
    uint32_t buf[4096];
    for (uint32_t id = 0; id < v->n && !rc; id += 4096) {
        uint32_t k = v->n - id < 4096 ? v->n - id : 4096;
        for (uint32_t i = 0; i < k; i++) buf[i] = (uint32_t)(v->off[id + i + 1] - v->off[id + i]);
        rc = wr(&w, buf, k * sizeof *buf);
    }
    if (!rc) rc = wr(&w, v->bytes, v->nbytes);
    for (uint32_t id = 0; id < s->count && !rc; id += 4096) {
        uint32_t k = s->count - id < 4096 ? s->count - id : 4096;
        for (uint32_t i = 0; i < k; i++) buf[i] = (uint32_t)(s->off[id + i + 1] - s->off[id + i]);
        rc = wr(&w, buf, k * sizeof *buf);
    }
    if (!rc) rc = wr(&w, s->arena, s->nsym * sizeof *s->arena);
    if (!rc) {
        uint64_t sum = XXH64_digest(w.h);
        if (fwrite(&sum, 1, sizeof sum, w.f) != sizeof sum)
            rc = tdm_error(TDM_E_IO, "%s: write failed: %s", path, strerror(errno));
    }
    if (!rc && (fflush(w.f) || fsync(fileno(w.f))))
        rc = tdm_error(TDM_E_IO, "%s: flush failed: %s", path, strerror(errno));
    if (w.f) {
        if (fclose(w.f) && !rc) rc = tdm_error(TDM_E_IO, "%s: close failed: %s", path, strerror(errno));
    } else
        close(fd);
    XXH64_freeState(w.h);
    if (!rc && rename(tmp, path)) rc = tdm_error(TDM_E_IO, "%s: rename failed: %s", path, strerror(errno));
    if (rc) unlink(tmp);
    tdm_free(tmp);
    return rc;
}

typedef struct {
    FILE *f;
    XXH64_state_t *h;
    const char *path;
} reader;

static int rd(reader *r, void *p, size_t n, const char *what) {
    if (n && fread(p, 1, n, r->f) != n)
        return tdm_error(TDM_E_CORRUPT, "%s: truncated in the %s", r->path, what);
    XXH64_update(r->h, p, n);
    return TDM_OK;
}

/* Reads and checks the header against the file size. */
static int read_header(reader *r, uint64_t fsize, file_header *hd) {
    if (fsize < sizeof *hd + 8) return tdm_error(TDM_E_CORRUPT, "%s: %llu bytes, too short for a store file", r->path, (unsigned long long)fsize);
    int rc = rd(r, hd, sizeof *hd, "header");
    if (rc) return rc;
    if (memcmp(hd->magic, MAGIC, 8)) return tdm_error(TDM_E_CORRUPT, "%s: not a tandem store file (bad magic)", r->path);
    if (hd->endian != ENDIAN_MARK) return tdm_error(TDM_E_CORRUPT, "%s: written on a machine of other byte order", r->path);
    if (hd->version != FORMAT_VERSION)
        return tdm_error(TDM_E_VERSION, "%s: format version %u; this build reads version %u", r->path, hd->version, FORMAT_VERSION);
    if (hd->vocab_count >= UINT32_MAX || hd->pattern_count >= UINT32_MAX)
        return tdm_error(TDM_E_CORRUPT, "%s: header counts out of range", r->path);
    /* Every size must be consistent with the file before anything is allocated. */
    long double want = (long double)sizeof *hd + 4.0L * hd->vocab_count + hd->vocab_bytes +
                       4.0L * hd->pattern_count + 4.0L * hd->symbol_count + 8.0L;
    if (want != (long double)fsize)
        return tdm_error(TDM_E_CORRUPT, "%s: header announces %.0Lf bytes but the file has %llu (truncated or damaged)",
                         r->path, want, (unsigned long long)fsize);
    return TDM_OK;
}

static int load_body(reader *r, const file_header *hd, tdm_seq_store *s) {
    int rc;
    size_t nv = (size_t)hd->vocab_count, np = (size_t)hd->pattern_count, ns = (size_t)hd->symbol_count;
    uint32_t *vlen = tdm_malloc((nv ? nv : 1) * sizeof *vlen);
    char *vbytes = tdm_malloc(hd->vocab_bytes ? (size_t)hd->vocab_bytes : 1);
    uint32_t *plen = tdm_malloc((np ? np : 1) * sizeof *plen);
    if (!vlen || !vbytes || !plen) {
        rc = tdm_error(TDM_E_NOMEM, "%s: no memory to load the store", r->path);
        goto out;
    }
    if ((rc = rd(r, vlen, nv * sizeof *vlen, "vocabulary lengths"))) goto out;
    if ((rc = rd(r, vbytes, (size_t)hd->vocab_bytes, "vocabulary"))) goto out;
    if ((rc = rd(r, plen, np * sizeof *plen, "pattern lengths"))) goto out;
    s->capsym = ns ? ns : 1;
    s->arena = tdm_malloc(s->capsym * sizeof *s->arena);
    if (!s->arena) {
        rc = tdm_error(TDM_E_NOMEM, "%s: no memory for %zu symbols", r->path, ns);
        goto out;
    }
    if ((rc = rd(r, s->arena, ns * sizeof *s->arena, "symbol arena"))) goto out;
    uint64_t stored, sum = XXH64_digest(r->h);
    if (fread(&stored, 1, sizeof stored, r->f) != sizeof stored) {
        rc = tdm_error(TDM_E_CORRUPT, "%s: truncated before the checksum", r->path);
        goto out;
    }
    if (stored != sum) {
        rc = tdm_error(TDM_E_CORRUPT, "%s: checksum mismatch (file damaged)", r->path);
        goto out;
    }
    /* The bytes are intact; now check that they mean a valid store. */
    uint64_t at = 0;
    for (size_t i = 0; i < nv; i++) {
        uint32_t id;
        if (vlen[i] > hd->vocab_bytes - at) {
            rc = tdm_error(TDM_E_CORRUPT, "%s: vocabulary entry %zu runs past the vocabulary", r->path, i);
            goto out;
        }
        rc = tdm_seq_vocab_intern(s->vocab, vbytes + at, vlen[i], &id);
        if (rc == TDM_OK && id != i) rc = tdm_error(TDM_E_CORRUPT, "%s: vocabulary entry %zu repeats entry %u", r->path, i, id);
        else if (rc == TDM_E_UTF8) rc = tdm_error(TDM_E_CORRUPT, "%s: vocabulary entry %zu is not valid UTF-8", r->path, i);
        if (rc) goto out;
        at += vlen[i];
    }
    if (at != hd->vocab_bytes) {
        rc = tdm_error(TDM_E_CORRUPT, "%s: vocabulary lengths do not add up to its size", r->path);
        goto out;
    }
    for (size_t k = 0; k < ns; k++)
        if (s->arena[k] >= nv) {
            rc = tdm_error(TDM_E_CORRUPT, "%s: symbol %zu of the arena is %u, outside the vocabulary", r->path, k, s->arena[k]);
            goto out;
        }
    uint64_t total = 0;
    for (size_t i = 0; i < np; i++) total += plen[i];
    if (total != ns) {
        rc = tdm_error(TDM_E_CORRUPT, "%s: pattern lengths add up to %llu symbols, the arena has %zu", r->path,
                       (unsigned long long)total, ns);
        goto out;
    }
    /* Rebuild offsets and the length index over the arena already in place (each append finds its
     * symbols where they already are). */
    size_t nsym_keep = ns;
    s->nsym = 0;
    uint32_t *arena = s->arena;
    for (size_t i = 0; i < np && !rc; i++) {
        rc = tdm_seq_store_append_checked(s, arena + s->nsym, plen[i], NULL);
    }
    if (!rc && s->nsym != nsym_keep) rc = tdm_error(TDM_E_CORRUPT, "%s: internal size mismatch", r->path);
    if (!rc) tdm_seq_store_shrink(s);
out:
    tdm_free(vlen);
    tdm_free(vbytes);
    tdm_free(plen);
    return rc;
}

int tdm_seq_store_load(tdm_ctx *ctx, const char *path, tdm_seq_store **out) {
    if (!ctx || !path || !out) return tdm_error(TDM_E_INVAL, "tdm_seq_store_load: NULL argument");
    reader r = {fopen(path, "rb"), NULL, path};
    if (!r.f) return tdm_error(TDM_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int bad = fstat(fileno(r.f), &st) ? tdm_error(TDM_E_IO, "%s: cannot stat: %s", path, strerror(errno))
              : !S_ISREG(st.st_mode)   ? tdm_error(TDM_E_IO, "%s: not a regular file", path)
                                       : TDM_OK;
    if (bad) {
        fclose(r.f);
        return bad;
    }
    r.h = XXH64_createState();
    tdm_seq_store *s = NULL;
    int rc = r.h ? tdm_seq_store_new(ctx, &s) : tdm_error(TDM_E_NOMEM, "tdm_seq_store_load: no memory");
    file_header hd;
    if (!rc) {
        XXH64_reset(r.h, 0);
        rc = read_header(&r, (uint64_t)st.st_size, &hd);
    }
    if (!rc) rc = load_body(&r, &hd, s);
    fclose(r.f);
    XXH64_freeState(r.h);
    if (rc) {
        tdm_seq_store_free(s);
        return rc;
    }
    *out = s;
    return TDM_OK;
}
