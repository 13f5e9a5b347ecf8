#include "nd_peak.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define M(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Sources: NVIDIA B200/H200/H100/A100/V100 and AMD MI300X datasheets, Google
 * Cloud TPU system architecture pages (per chip).  Dense, no sparsity. */
static const nd_peak table[] = {
	{ "B200", 2250.0, "bf16", M("B200") },
	{ "GH200", 989.0, "bf16", M("GH200") },
	{ "H200", 989.0, "bf16", M("H200") },
	{ "H100 PCIe", 756.0, "bf16", M("H100 PCIe", "H100-PCIe") },
	{ "H100 NVL", 835.0, "bf16", M("H100 NVL") },
	{ "H100", 989.0, "bf16", M("H100") },
	{ "A100", 312.0, "bf16", M("A100") },
	{ "V100 PCIe", 112.0, "fp16", M("V100-PCIE", "V100 PCIe") },
	{ "V100", 125.0, "fp16", M("V100") },
	{ "MI300X", 1307.4, "bf16", M("MI300X") },
	{ "TPU v4", 275.0, "bf16", M("TPU v4") },
	{ "TPU v5e", 197.0, "bf16", M("TPU v5 lite", "TPU v5e", "v5litepod") },
	{ "TPU v5p", 459.0, "bf16", M("TPU v5p", "TPU v5") },
	{ "TPU v6e", 918.0, "bf16", M("TPU v6 lite", "TPU v6e", "Trillium") },
};

#define NTABLE (sizeof table / sizeof table[0])

/* pat occurs in s[0..n) case-insensitively, not preceded by a letter or
 * digit and not followed by a digit. */
static int
has_word(const char *s, size_t n, const char *pat)
{
	size_t m = strlen(pat);

	for (size_t i = 0; i + m <= n; i++) {
		if (strncasecmp(s + i, pat, m) != 0)
			continue;
		if (i > 0 && isalnum((unsigned char)s[i - 1]))
			continue;
		if (i + m < n && isdigit((unsigned char)s[i + m]))
			continue;
		return 1;
	}
	return 0;
}

const nd_peak *
nd_peak_find(const char *name, size_t n)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < NTABLE; i++)
		if (strlen(table[i].key) == n &&
		    strncasecmp(table[i].key, name, n) == 0)
			return &table[i];
	for (size_t i = 0; i < NTABLE; i++)
		for (const char *const *p = table[i].match; *p != NULL; p++)
			if (has_word(name, n, *p))
				return &table[i];
	return NULL;
}

const nd_peak *
nd_peak_table(size_t *n)
{
	*n = NTABLE;
	return table;
}
