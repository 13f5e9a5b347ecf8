/*
 * nd_ascend: torch_npu / CANN trace conventions (see nd_ascend.h).
 */
#include "nd_ascend.h"

#include <string.h>

static int
digits(const char **pp, const char *e)
{
	const char *p = *pp;

	while (p < e && *p >= '0' && *p <= '9')
		p++;
	if (p == *pp)
		return 0;
	*pp = p;
	return 1;
}

int
nd_ascend_strnum(const nd_jval *v, nd_jval *num)
{
	const char *b, *p, *e;

	if (v->type != ND_JSTR || v->esc || v->len < 3)
		return -1;
	b = p = v->raw + 1;
	e = v->raw + v->len - 1;
	/* the grammar of a JSON number: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
	if (*p == '-')
		p++;
	if (p < e && *p == '0')
		p++;
	else if (!digits(&p, e))
		return -1;
	if (p < e && *p == '.') {
		p++;
		if (!digits(&p, e))
			return -1;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (!digits(&p, e))
			return -1;
	}
	if (p != e)
		return -1;
	memset(num, 0, sizeof *num);
	num->type = ND_JNUM;
	num->raw = b;
	num->len = (size_t)(e - b);
	return 0;
}

/* n is 12 to 16: nd_ascend_lane rules out the other lengths */
int
nd_ascend_lane_of(const char *p, size_t n)
{
	static const struct {
		const char *s;
		size_t n;
		int lane;
	} lanes[] = {
		{ "AI Core Freq", 12, ND_ASC_DERIVED },
		{ "Communication", 13, ND_ASC_COMM },
		{ "Ascend Hardware", 15, ND_ASC_DEVICE },
		{ "Overlap Analysis", 16, ND_ASC_DERIVED }
	};

	for (size_t i = 0; i < sizeof lanes / sizeof *lanes; i++)
		if (n == lanes[i].n && memcmp(p, lanes[i].s, n) == 0)
			return lanes[i].lane;
	return ND_ASC_NONE;
}

int
nd_ascend_devno(int64_t pid)
{
	return (int)(pid & 31);
}
