#include "nd_name.h"

#include "nd_cli.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#define ELL "\xe2\x80\xa6"	/* U+2026 HORIZONTAL ELLIPSIS */
#define ANON "(anonymous namespace)"

static int
is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

static int
is_anon(const char *s, size_t n)
{
	return n >= sizeof ANON - 1 && memcmp(s, ANON, sizeof ANON - 1) == 0;
}

/* Index just past the bracket that closes the one at s[i], or 0 when the
 * brackets do not balance.  All four kinds count alike ("->" is no
 * bracket): demangled names nest them properly. */
static size_t
close_of(const char *s, size_t n, size_t i)
{
	size_t depth = 0;

	for (size_t j = i; j < n; j++) {
		char c = s[j];

		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' && s[j - 1] != '-') || c == ')' ||
		    c == ']' || c == '}') {
			if (depth == 0)
				return 0;
			if (--depth == 0)
				return j + 1;
		}
	}
	return 0;
}

/* Step 2 of the rule: out gets s with its argument lists elided and the
 * return type dropped. */
static void
cxx_short(const char *s, size_t n, nd_buf *out)
{
	size_t base = out->len, param = SIZE_MAX, cut = SIZE_MAX;

	for (size_t i = 0; i < n;) {
		char c = s[i], p = i > 0 ? s[i - 1] : ' ';
		size_t e;

		if (c == '(' && is_anon(s + i, n - i)) {
			nd_buf_adds(out, ANON);
			i += sizeof ANON - 1;
			continue;
		}
		if (!((c == '<' && is_ident(p)) || (c == '(' &&
		    (is_ident(p) || p == '>' || p == ')')))) {
			nd_buf_addc(out, c);
			i++;
			continue;
		}
		if ((e = close_of(s, n, i)) == 0) {
			nd_buf_add(out, s + i, n - i);
			break;
		}
		if (c == '(' && param == SIZE_MAX)
			param = out->len;
		nd_buf_addc(out, c);
		if (e - i > 2)
			nd_buf_adds(out, ELL);
		nd_buf_addc(out, c == '<' ? '>' : ')');
		i = e;
	}
	if (param == SIZE_MAX)
		return;
	for (size_t j = base; j < param; j++) {
		if (out->p[j] == '(' && is_anon(out->p + j, param - j))
			j += sizeof ANON - 2;
		else if (out->p[j] == ' ')
			cut = j;
	}
	if (cut != SIZE_MAX) {
		memmove(out->p + base, out->p + cut + 1, out->len - cut - 1);
		out->len -= cut + 1 - base;
		out->p[out->len] = '\0';
	}
}

/* Step 1: a path, its first component and as many last ones as fit. */
static void
path_short(const char *s, size_t n, size_t width, nd_buf *out)
{
	size_t head = (size_t)((const char *)memchr(s, '/', n) - s);
	size_t hw = nd_text_width(s, head), tw = 0, best = 0, k;

	for (size_t j = n; j-- > head + 1;) {
		if (s[j] == '/') {
			if (hw + 3 + tw > width)
				break;
			best = j + 1;
		}
		if (((unsigned char)s[j] & 0xc0) != 0x80)
			tw++;
	}
	if (best > 0) {
		nd_buf_add(out, s, head);
		nd_buf_adds(out, "/" ELL "/");
		nd_buf_add(out, s + best, n - best);
		return;
	}
	/* the end of the name, width - 1 code points */
	for (k = n, tw = 0; k > 0 && tw < width - 1; k--)
		if (((unsigned char)s[k - 1] & 0xc0) != 0x80)
			tw++;
	while (k < n && ((unsigned char)s[k] & 0xc0) == 0x80)
		k++;
	nd_buf_adds(out, ELL);
	nd_buf_add(out, s + k, n - k);
}

void
nd_name_short(const char *s, size_t n, size_t width, nd_buf *out)
{
	size_t base = out->len, k, w;

	if (width < 8)
		width = 8;
	if (nd_text_width(s, n) <= width) {
		nd_buf_add(out, s, n);
		return;
	}
	if (memchr(s, '/', n) != NULL) {
		path_short(s, n, width, out);
		return;
	}
	cxx_short(s, n, out);
	if (nd_text_width(out->p + base, out->len - base) <= width)
		return;
	/* step 3: the head, width - 1 code points */
	for (k = base, w = 0; k < out->len; k++)
		if (((unsigned char)out->p[k] & 0xc0) != 0x80 &&
		    w++ == width - 1)
			break;
	out->len = k;
	nd_buf_adds(out, ELL);
}

int
nd_bytes_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c != 0 ? (c < 0 ? -1 : 1) : (na > nb) - (na < nb);
}

/* Runs of digits compare by value, the rest byte by byte: GPU:2 before
 * GPU:10; names equal but for leading zeros in byte order. */
int
nd_name_natcmp(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, j = 0;

	while (i < na && j < nb) {
		if (isdigit((unsigned char)a[i]) && isdigit((unsigned char)b[j])) {
			size_t si, sj, ei, ej;

			while (i + 1 < na && a[i] == '0' &&
			    isdigit((unsigned char)a[i + 1]))
				i++;
			while (j + 1 < nb && b[j] == '0' &&
			    isdigit((unsigned char)b[j + 1]))
				j++;
			for (si = i, ei = i; ei < na &&
			    isdigit((unsigned char)a[ei]); ei++)
				;
			for (sj = j, ej = j; ej < nb &&
			    isdigit((unsigned char)b[ej]); ej++)
				;
			if (ei - si != ej - sj)
				return ei - si < ej - sj ? -1 : 1;
			for (; i < ei; i++, j++)
				if (a[i] != b[j])
					return (unsigned char)a[i] <
					    (unsigned char)b[j] ? -1 : 1;
			continue;
		}
		if (a[i] != b[j])
			return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
		i++;
		j++;
	}
	if (na - i != nb - j)
		return na - i < nb - j ? -1 : 1;
	/* equal but for leading zeros: byte order decides */
	return nd_bytes_cmp(a, na, b, nb);
}
