/*
 * nd_rx: rules see a bounded prefix of a value (see nd_rx.h).
 */
#include "nd_rx.h"

#include <string.h>

int
nd_rx_exec(const regex_t *re, const char *s, size_t nmatch, regmatch_t *m)
{
	regmatch_t whole;
	size_t n = strnlen(s, ND_RX_MAX + 1);

	if (n <= ND_RX_MAX)
		return regexec(re, s, nmatch, m, 0);
	/* never inside a character: at most 3 continuation bytes back */
	n = ND_RX_MAX;
	for (int k = 0; k < 3 && ((unsigned char)s[n] & 0xc0) == 0x80; k++)
		n--;
	if (nmatch == 0)
		m = &whole;	/* REG_STARTEND reads the range from m[0] */
	m[0].rm_so = 0;
	m[0].rm_eo = (regoff_t)n;
	return regexec(re, s, nmatch, m, REG_STARTEND | REG_NOTEOL);
}
