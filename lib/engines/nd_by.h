/*
 * nd_by: group-by keys of records (the --by KEYS option): which keys a
 * spec names, the key bytes of a record (nd_agg.h's nd_aggkey_* format),
 * and the fields back for output.  The rules are trace-topk(1)'s --by:
 *
 *   name, cat, class, family, scope, process, thread, device   the typed
 *       string fields;
 *   rank, step, pid, tid   the typed integers (rank falls back to the
 *       rank of the source);
 *   args.X   the argument X;
 *   anything else   the top-level member of that name.
 * Strings are decoded; a missing value (or null) is its own group, shown
 * as "(none)" in text and omitted (JSON) or empty (CSV) in records.
 *
 * Ownership: an nd_by owns its key names; nd_by_key's result is in the
 * caller's buffer.
 */
#ifndef ND_BY_H
#define ND_BY_H

#include "nd_agg.h"
#include "nd_buf.h"
#include "nd_err.h"
#include "nd_event.h"
#include "nd_json.h"
#include "nd_stream.h"

#include <stddef.h>

typedef struct nd_by nd_by;

/* Parse "name,args.stream": NULL with *bad set to the first key that is in
 * reserved[0..nreserved) (output keys of the caller's rows), or to "" when
 * the spec holds no key. */
nd_by *nd_by_parse(const char *spec, const char *const *reserved,
    size_t nreserved, const char **bad);
void nd_by_free(nd_by *b);
size_t nd_by_count(const nd_by *b);
/* Key i as given ("args.stream"); *arg its part after "args." or NULL. */
const char *nd_by_name(const nd_by *b, size_t i, const char **arg);
/* Append the key fields of ev to k (not reset). */
void nd_by_key(const nd_by *b, const nd_event *ev, const nd_source_info *si,
    nd_buf *k, nd_buf *tmp);
/* The same key as the ids (nd_event_sid) of its fields, into ids[0..
 * nd_by_count): 1, or 0 when a key is not a field that has ids (then
 * nd_by_key it).  Keeps nd_by_check's bookkeeping as nd_by_key does. */
int nd_by_sids(const nd_by *b, const nd_event *ev, uint32_t *ids);
/* The value in m of ev's key led by `lead` (a tag of the caller's), by
 * those ids: 1 with *id; 0 when new (nd_idmemo_put(m, *ik, ...) it once
 * found by its bytes); -1 when the key has no ids (nd_by_key it). */
int nd_by_memo(const nd_by *b, const nd_event *ev, nd_idmemo *m,
    uint32_t lead, uint32_t *id, uint64_t *ik);
/* After the last nd_by_key: when a key had no value on any of the records
 * given to nd_by_key (a typo, most likely), -1 with the error "OPT KEY: no
 * span has this key; the spans have: a, b, args.c" (saying too when KEY is
 * not a standard key) in err, else 0.  No record at all is no error. */
int nd_by_check(const nd_by *b, const char *opt, nd_err *err);
/* Forget what the records given so far had (the caller forgot their
 * figures: nd_scan's reset), so that nd_by_check speaks of the records
 * counted, whatever order they came in. */
void nd_by_reset(const nd_by *b);
/* The same bookkeeping for callers that look the keys up themselves: key
 * i of b had a value on ev (had != 0) or not; call it for i = 0 first. */
void nd_by_note(const nd_by *b, const nd_event *ev, size_t i, int had);
/* Append a JSON value as one key field: strings decoded, null as absent
 * (how --merge reads back the key arrays of partial results). */
void nd_by_jval(nd_buf *k, nd_buf *tmp, const nd_jval *v);
/* Field i of key bytes k[0..n): 1 with tag/s/len, 0 when absent. */
int nd_by_field(const char *k, size_t n, size_t i, int *tag, const char **s,
    size_t *len);
/* Write the fields of key k as members of the open JSON object w: plain
 * keys as "key":value, args.X ones in an "args" object; absent fields are
 * left out. */
void nd_by_json(const nd_by *b, nd_jw *w, const char *k, size_t n);
/* The two head lines of an aligned table (the --table of trace-topk and
 * trace-roofline): ncol right-aligned figure columns of widths wd, then the
 * keys left-aligned in widths kw (the last one unpadded), each column
 * separated by two blanks; then a rule of dashes under each. */
void nd_by_table_head(const nd_by *b, nd_buf *out, const char *const *head,
    const size_t *wd, size_t ncol, const size_t *kw);
/* Key cell k of nk in a row of that table: two blanks, then s[0..n),
 * padded to kw[k] unless it is the last. */
void nd_by_table_key(nd_buf *out, const char *s, size_t n, size_t k,
    size_t nk, const size_t *kw);
/* End a row of that table: no trailing blanks, then a newline. */
void nd_by_table_eol(nd_buf *out);
/* Field i as one line of text for a table cell: "(none)" when absent,
 * shortened by nd_name_short to ND_NAME_WIDTH, control characters as
 * blanks. */
void nd_by_text(const char *k, size_t n, size_t i, nd_buf *out);

#endif
