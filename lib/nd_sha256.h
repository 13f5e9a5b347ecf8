/*
 * nd_sha256: SHA-256 (FIPS 180-4), for the provenance hash of each input as
 * stored on disk.  Small and dependency-free; checked against sha256sum.
 */
#ifndef ND_SHA256_H
#define ND_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct nd_sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char blk[64];
	size_t used;
} nd_sha256;

void nd_sha256_init(nd_sha256 *s);
void nd_sha256_update(nd_sha256 *s, const void *p, size_t n);
/* Write 64 lowercase hex digits and a NUL into hex. */
void nd_sha256_hex(nd_sha256 *s, char hex[65]);

#endif
