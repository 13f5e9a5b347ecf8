/*
 * libFuzzer harness: the pipeline engine (nd_pipe) on a stream (NDJSON
 * lines; a meta record starts the next source).  Every output mode runs:
 * the records (each line a JSON object), the table and the SVG chart of
 * every step; and the partial round trip: what nd_pipe_partial_write
 * writes must read back (nd_pipe_partial_add) into an engine that writes
 * the same records, byte for byte.  The engine must never end the process
 * on a stream record.
 */
#include "fuzz_lines.h"
#include "ndtrace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every step of p in every mode; the records go to recs. */
static void
answer(nd_pipe *p, nd_buf *recs)
{
	const nd_pipe_step *st;
	size_t n = nd_pipe_finish(p, &st);
	nd_buf b = ND_BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		nd_pipe_write_step(recs, &st[i]);
		nd_pipe_table_step(&b, &st[i]);
		nd_buf_reset(&b);
		nd_pipe_svg_step(&b, &st[i]);
		if (b.len == 0)
			abort();
		nd_buf_reset(&b);
	}
	if (n > 0 && nd_pipe_typical(st, n) == NULL)
		abort();
	nd_buf_free(&b);
	check_json_lines(recs);
}

struct held {
	nd_buf text;
};

static void
hold(void *ctx, nd_buf *line)
{
	struct held *h = ctx;

	nd_buf_add(&h->text, line->p, line->len);
	nd_buf_addc(&h->text, '\n');
}

/* The partial of p read back into a new engine. */
static nd_pipe *
round_trip(nd_pipe *p)
{
	static nd_event ev;
	static nd_buf scratch;
	struct held h = { ND_BUF_INIT };
	nd_pipe *q = nd_pipe_new(NULL, NULL, 0);
	nd_everr err;
	nd_err perr;
	char *s, *end;

	nd_buf_adds(&h.text, "{\"type\":\"" ND_PIPE_PARTIAL "\"}\n");
	nd_pipe_partial_write(p, hold, &h);
	s = h.text.p;
	end = h.text.p + h.text.len;
	while (s < end) {
		char *nl = memchr(s, '\n', (size_t)(end - s));

		*nl = '\0';
		if (nd_event_decode(&ev, s, (size_t)(nl - s), &scratch,
		    &err) != 0)
			abort();	/* the engine wrote what it cannot read */
		nd_err_clear(&perr);
		if (nd_pipe_partial_add(q, &ev, "fuzz", 0, &perr) != 0)
			abort();	/* what it wrote, refused */
		s = nl + 1;
	}
	nd_buf_free(&h.text);
	return q;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static nd_event ev;
	static nd_buf scratch;
	nd_buf a = ND_BUF_INIT, b = ND_BUF_INIT;
	nd_everr err;
	char *text = malloc(size + 1), *p, *end;
	nd_pipe *pp, *q;
	uint32_t metas = 0;

	nd_die_hook = die_is_a_bug;
	memcpy(text, data, size);
	text[size] = '\0';
	pp = nd_pipe_new(NULL, NULL, 0);
	p = text;
	end = text + size;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl == NULL)
			nl = end;
		*nl = '\0';
		if (nd_event_decode(&ev, p, (size_t)(nl - p), &scratch,
		    &err) == 0) {
			if (ev.type == ND_EV_META)
				metas++;
			ev.source = metas > 0 ? metas - 1 : 0;
			nd_pipe_add(pp, &ev);
		}
		p = nl + 1;
	}
	nd_pipe_sources(pp, metas > 0 ? metas : 1);
	q = round_trip(pp);
	nd_pipe_sources(q, metas > 0 ? metas : 1);
	answer(pp, &a);
	answer(q, &b);
	if (a.len != b.len || (a.len > 0 && memcmp(a.p, b.p, a.len) != 0))
		abort();	/* a partial is not the engine's answer */
	nd_pipe_free(pp);
	nd_pipe_free(q);
	nd_buf_free(&a);
	nd_buf_free(&b);
	free(text);
	return 0;
}
