/*
 * nd_rx: rules see a bounded prefix of a value (see nd_rx.h).
 */
#include "nd_rx.h"

#include <string.h>

int
nd_rx_exec(const regex_t *re, const char *s, size_t n, size_t nmatch,
    regmatch_t *m)
{
	regmatch_t whole;
	int flags = REG_STARTEND;

	if (s == NULL)
		s = "";
	if (n > ND_RX_MAX) {
		/* never inside a character: at most 3 continuation bytes
		 * back */
		n = ND_RX_MAX;
		for (int k = 0; k < 3 && ((unsigned char)s[n] & 0xc0) == 0x80;
		    k++)
			n--;
		flags |= REG_NOTEOL;
	}
	if (nmatch == 0)
		m = &whole;	/* REG_STARTEND reads the range from m[0] */
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)n;
	return regexec(re, s, nmatch, m, flags);
}
