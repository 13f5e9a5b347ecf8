#include "nd_sha256.h"
#include "nd_util.h"

#include <openssl/evp.h>

void
nd_sha256_init(nd_sha256 *s)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (c == NULL || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1)
		nd_die(ND_EXIT_ERROR, "cannot initialise SHA-256");
	s->ctx = c;
}

void
nd_sha256_update(nd_sha256 *s, const void *p, size_t n)
{
	if (n > 0 && EVP_DigestUpdate(s->ctx, p, n) != 1)
		nd_die(ND_EXIT_ERROR, "SHA-256 failed");
}

void
nd_sha256_hex(const nd_sha256 *s, char hex[65])
{
	static const char dig[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	if (c == NULL || EVP_MD_CTX_copy_ex(c, s->ctx) != 1 ||
	    EVP_DigestFinal_ex(c, md, &n) != 1 || n != 32)
		nd_die(ND_EXIT_ERROR, "SHA-256 failed");
	EVP_MD_CTX_free(c);
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = dig[md[i] >> 4];
		hex[2 * i + 1] = dig[md[i] & 15];
	}
	hex[64] = '\0';
}

void
nd_sha256_free(nd_sha256 *s)
{
	EVP_MD_CTX_free(s->ctx);
	s->ctx = NULL;
}
