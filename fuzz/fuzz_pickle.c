/*
 * libFuzzer harness: the restricted pickle reader (nd_pickle), its JSON
 * writer, and the memory-snapshot analysis (nd_mem) in every output mode.
 * Errors must come back as values, never end the process; whatever is
 * written must be valid JSON, one object per line.  An input that starts
 * with '{' is instead a stream (NDJSON lines) for nd_mem's stream side:
 * samples, attribution, peaks and top rows; one that starts with '[' a
 * PyTorch memory timeline (nd_memtl) and its records.
 */
#include "fuzz_lines.h"
#include "ndtrace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void
stream(const uint8_t *data, size_t size)
{
	static nd_event ev;
	static nd_buf scratch;
	nd_buf out = ND_BUF_INIT;
	nd_source_info si;
	nd_everr err;
	char *text = malloc(size + 1);
	char *p = text, *end = text + size;
	uint32_t source = 0;
	int seen = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	memset(&si, 0, sizeof si);
	si.path = "fuzz";
	for (int mode = 0; mode < 3; mode++) {
		nd_mem_opts o;
		nd_mem *m;

		memset(&o, 0, sizeof o);
		o.top = 2;
		o.sort_total = mode == 1;
		o.timeline = mode == 1;
		o.table = mode == 2;
		nd_buf_reset(&out);
		m = nd_mem_new(&o, &out, NULL, NULL);
		p = text;
		source = 0;
		seen = 0;
		while (p < end) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

			p[n] = '\0';
			if (nd_event_decode(&ev, p, n, &scratch, &err) == 0) {
				if (ev.type == ND_EV_META && seen) {
					nd_mem_end_source(m);
					source++;
				}
				seen = 1;
				ev.source = source;
				nd_mem_record(m, &ev, &si);
			}
			p += n + 1;
		}
		nd_mem_finish(m);
		nd_mem_free(m);
		if (mode != 2)
			check_json_lines(&out);
		memcpy(text, data, size);	/* the NULs put in */
	}
	nd_buf_free(&out);
	free(text);
}

static void
timeline(const uint8_t *data, size_t size)
{
	nd_buf out = ND_BUF_INIT;
	nd_memtl tl;
	char msg[256];
	uint64_t off;

	if (nd_memtl_parse((const char *)data, size, &tl, msg, sizeof msg,
	    &off) != 0) {
		if (msg[0] == '\0' || off > size)
			abort();
		return;
	}
	for (int mode = 0; mode < 3; mode++) {
		nd_mem_opts o;
		nd_mem *m;

		memset(&o, 0, sizeof o);
		o.timeline = mode == 1;
		o.table = mode == 2;
		nd_buf_reset(&out);
		m = nd_mem_new(&o, &out, NULL, NULL);
		nd_mem_timeline(m, "fuzz", &tl);
		nd_mem_finish(m);
		nd_mem_free(m);
		if (mode != 2)
			check_json_lines(&out);
	}
	nd_buf_free(&out);
	nd_memtl_free(&tl);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nd_pkerr err;
	nd_pickle *pk;
	nd_buf b = ND_BUF_INIT;
	const char *q;
	nd_jval v;
	nd_jerr e;

	nd_die_hook = die_is_a_bug;
	if (size > 0 && data[0] == '{') {
		stream(data, size);
		return 0;
	}
	if (size > 0 && data[0] == '[') {
		timeline(data, size);
		return 0;
	}
	pk = nd_pickle_load(data, size, &err);
	if (pk == NULL) {
		if (err.msg[0] == '\0' || err.off > size)
			abort();
		return 0;
	}
	nd_pk_json(&b, nd_pickle_root(pk));
	q = b.p;
	if (nd_json_value(&q, b.p, b.p + b.len, &v, &e) != 0 ||
	    q != b.p + b.len)
		abort();	/* --dump wrote invalid JSON */
	for (int mode = 0; mode < 3; mode++) {
		nd_mem_opts o;
		nd_mem *m;
		char msg[256];

		memset(&o, 0, sizeof o);
		o.top = 3;
		o.frames = 2;
		o.timeline = mode == 1;
		o.table = mode == 2;
		nd_buf_reset(&b);
		m = nd_mem_new(&o, &b, NULL, NULL);
		if (nd_mem_snapshot(m, "fuzz", nd_pickle_root(pk), msg,
		    sizeof msg) != 0 && msg[0] == '\0')
			abort();
		nd_mem_finish(m);
		nd_mem_free(m);
		if (mode != 2)
			check_json_lines(&b);
	}
	nd_buf_free(&b);
	nd_pickle_free(pk);
	return 0;
}
