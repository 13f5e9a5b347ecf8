/*
 * nd_pickle: a reader for the plain-data subset of Python's pickle format
 * (protocols 0 to 5), enough for PyTorch's memory snapshots
 * (torch.cuda.memory._dump_snapshot) and anything else made only of dicts,
 * lists, tuples, sets, str, bytes, int, float, bool and None.
 *
 * Safety rules (a pickle is a program for a stack machine that can import
 * and call any Python object; this reader only builds values):
 *   - Opcodes that import, call or construct objects are refused with an
 *     error naming the opcode and its byte offset: GLOBAL, STACK_GLOBAL,
 *     REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, PERSID, BINPERSID,
 *     EXT1, EXT2, EXT4, and the out-of-band buffers of protocol 5
 *     (NEXT_BUFFER, READONLY_BUFFER).  Nothing is ever treated as an opaque
 *     object instead: PyTorch's snapshots need none of these opcodes.
 *   - Every length is checked against the bytes that remain before
 *     anything is allocated; memo indices must be below the input size.
 *   - Values form a tree with sharing, never a cycle: a container can be
 *     filled (APPEND(S), SETITEM(S), ADDITEMS) only until it is placed in
 *     another container, and never with itself.  Python's pickler writes
 *     every acyclic value that way; a self-referencing structure is refused.
 *   - Containers nest at most ND_PICKLE_MAX_DEPTH deep, and the result,
 *     counting a shared value each time it is reached, has at most
 *     ND_PICKLE_NODES_PER_BYTE nodes per input byte (plus 2^20), so walking
 *     the whole result costs time linear in the input ("billion laughs"
 *     pickles are refused).
 *   - Errors are returned, never fatal (the fuzz harness relies on it);
 *     only an allocation failure ends the program, as everywhere.
 *
 * Semantics kept from Python: integers of any size are read (those beyond
 * int64 as ND_PK_BIGINT, their digits kept but not interpreted); protocol 0
 * strings are decoded (STRING escapes, UNICODE raw-unicode-escape); text is
 * kept as the UTF-8 bytes the pickle holds, not validated (writers replace
 * invalid UTF-8).  Differences: a dict that sets the same key twice keeps
 * both pairs and lookups return the last; sets keep their items in order.
 *
 * Ownership: nd_pickle_load() returns a document the caller frees with
 * nd_pickle_free(); every value belongs to the document.  Strings may point
 * into the input, so the input must outlive the document.
 */
#ifndef ND_PICKLE_H
#define ND_PICKLE_H

#include "nd_json.h"

#include <stddef.h>
#include <stdint.h>

#define ND_PICKLE_MAX_DEPTH 100
#define ND_PICKLE_NODES_PER_BYTE 64

typedef enum {
	ND_PK_NONE = 1, ND_PK_BOOL, ND_PK_INT, ND_PK_BIGINT, ND_PK_FLOAT,
	ND_PK_STR, ND_PK_BYTES, ND_PK_LIST, ND_PK_TUPLE, ND_PK_SET, ND_PK_DICT
} nd_pktype;

typedef struct nd_pkv nd_pkv;
struct nd_pkv {
	uint8_t type;		/* nd_pktype */
	uint8_t frozen;		/* placed in a container: no longer mutable */
	uint8_t text;		/* BIGINT: s is decimal text, else LE bytes */
	uint16_t depth;		/* containers: 1 + deepest child */
	uint64_t nodes;		/* size of the expanded tree (saturating) */
	size_t n;		/* STR/BYTES/BIGINT: bytes; LIST/TUPLE/SET:
				 * items; DICT: pairs */
	size_t cap;		/* internal */
	union {
		int64_t i;	/* INT; BOOL 0 or 1 */
		double f;	/* FLOAT */
		const char *s;	/* STR, BYTES, BIGINT */
		nd_pkv **items;	/* containers; DICT: key0, value0, key1, ... */
	} u;
};

typedef struct nd_pkerr {
	uint64_t off;		/* byte offset of the opcode at fault */
	char msg[200];		/* "refused pickle opcode GLOBAL (0x63): ..." */
} nd_pkerr;

typedef struct nd_pickle nd_pickle;

/* Read one pickle from data[0..n) (bytes after its STOP are ignored, as
 * Python does).  NULL with err filled on any error. */
nd_pickle *nd_pickle_load(const void *data, size_t n, nd_pkerr *err);
const nd_pkv *nd_pickle_root(const nd_pickle *pk);
void nd_pickle_free(nd_pickle *pk);

/* The opcode's name in pickletools ("BINUNICODE"), or NULL if unknown. */
const char *nd_pickle_opname(unsigned char op);

/* --- reading values (all accept NULL and return "absent") --- */
/* dict[key] for a str key (the last pair with that key), or NULL. */
const nd_pkv *nd_pk_get(const nd_pkv *dict, const char *key);
/* LIST or TUPLE (or SET): number of items, item i. */
int nd_pk_isseq(const nd_pkv *v);
size_t nd_pk_len(const nd_pkv *v);
const nd_pkv *nd_pk_item(const nd_pkv *v, size_t i);
/* INT (or BOOL) into *out: 0, else -1. */
int nd_pk_int(const nd_pkv *v, int64_t *out);
/* INT, BOOL or FLOAT as a double: 0, else -1. */
int nd_pk_num(const nd_pkv *v, double *out);
/* STR (or BYTES) bytes: 0, else -1. */
int nd_pk_str(const nd_pkv *v, const char **p, size_t *n);
/* 1 if v is a STR equal to s. */
int nd_pk_streq(const nd_pkv *v, const char *s);
/* Python's name of the type with its article, for messages: "a dict",
 * "an int", "None". */
const char *nd_pk_typename(const nd_pkv *v);

/* Append v as JSON text to b: tuples and sets as arrays, bytes as base64
 * strings, dict keys that are not str as Python's json.dumps writes them
 * (ints as decimal text, True as "true", None as "null"; any other key as
 * its own JSON text), integers beyond +-2^53 as exact decimal strings (as
 * ndtrace writes them everywhere), NaN and infinities as null.  (Insert it
 * in an nd_jw with nd_jw_raw.) */
void nd_pk_json(nd_buf *b, const nd_pkv *v);

#endif
