/* seq_configs.h: the query configurations the sequence tests run (test_query.c, and the engine tests through
 * engine_fake.h): every metric, and difflib with autojunk and argument order both ways. */
#ifndef TANDEM_SEQ_CONFIGS_H
#define TANDEM_SEQ_CONFIGS_H

#include "tandem/seq.h"

typedef struct {
    tdm_seq_metric metric;
    int autojunk, stm_first;
    const char *name;
} config;

static const config configs[] = {
    {TDM_SEQ_LCS, 0, 0, "lcs"},
    {TDM_SEQ_CHAR, 0, 0, "char"},
    {TDM_SEQ_DIFFLIB, 0, 0, "difflib"},
    {TDM_SEQ_DIFFLIB, 1, 0, "difflib autojunk"},
    {TDM_SEQ_DIFFLIB, 0, 1, "difflib stm-first"},
    {TDM_SEQ_DIFFLIB, 1, 1, "difflib autojunk stm-first"},
};
#define NCONFIG (sizeof configs / sizeof *configs)

#endif
