#include "nd_in.h"
#include "nd_err.h"
#include "nd_sha256.h"
#include "nd_spool.h"
#include "nd_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifdef ND_IN_BLOCK
#define RAW_BLOCK ND_IN_BLOCK	/* the fuzz build: small reads */
#else
#define RAW_BLOCK (1 << 20)
#endif

struct nd_in {
	char *name;
	int fd;
	int eof;		/* raw input exhausted */
	int gz;
	int gz_end;		/* inflate reached the end of all members */
	z_stream zs;
	unsigned char *raw;	/* raw block */
	size_t raw_len, raw_pos;
	uint64_t raw_off;	/* raw bytes read from fd */
	uint64_t off;		/* decompressed bytes delivered */
	uint64_t inflated;	/* decompressed bytes produced (peek too) */
	uint64_t max;		/* nd_in_max() */
	nd_sha256 sha;
	int hashing;		/* nd_in_sha256 will be asked */
	unsigned char peek[64];
	size_t peek_len, peek_pos;
	int sniffed;
	nd_spool *tee;		/* nd_in_tee */
	nd_spool *replay;	/* nd_in_replay: read from here, not fd */
	uint64_t replay_off;
	const unsigned char *mem;	/* nd_in_open_mem: read from here */
	size_t mem_len, mem_pos;
	nd_err err;		/* the first error; reads then return 0 */
};

/* "16 GiB", "300 MiB" or "1000 bytes": the cap as the user may write it. */
static void
fmt_size(char *s, size_t n, uint64_t v)
{
	static const char *const unit[] = { "TiB", "GiB", "MiB", "KiB" };

	for (int i = 0; i < 4; i++) {
		uint64_t u = (uint64_t)1 << (10 * (4 - i));

		if (v >= u && v % u == 0) {
			snprintf(s, n, "%llu %s", (unsigned long long)(v / u),
			    unit[i]);
			return;
		}
	}
	snprintf(s, n, "%llu bytes", (unsigned long long)v);
}

uint64_t
nd_in_max(void)
{
	static uint64_t max;
	const char *e;
	char *end;
	unsigned long long v;
	int shift = 0;

	if (max != 0)
		return max;
	e = getenv("NDTRACE_MAX_INPUT");
	if (e == NULL || *e == '\0')
		return max = ND_IN_MAX_DEFAULT;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (end == e || *e < '0' || *e > '9')
		end = (char *)"?";	/* no digits first: invalid */
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' && shift != 0)	/* 64GiB as well as 64G */
		end++;
	if (*end == 'B' && shift != 0)
		end++;
	if (*end != '\0' || errno != 0 || v > (UINT64_MAX >> shift))
		nd_die(ND_EXIT_ERROR, "NDTRACE_MAX_INPUT: invalid size '%s' "
		    "(bytes, or with K, M, G or T, e.g. 64G; 0 for no cap)", e);
	v <<= shift;
	return max = v == 0 ? UINT64_MAX : (uint64_t)v;
}

/* "NAME: <pre>more than CAP<post>, the input cap (...)" */
static void
over_cap(nd_err *e, const char *name, const char *pre, const char *post,
    uint64_t cap)
{
	char c[32];

	fmt_size(c, sizeof c, cap);
	nd_err_set(e, name, ND_ERR_NONE, ND_ERR_NONE, "%s: %smore than %s%s, "
	    "the input cap (set NDTRACE_MAX_INPUT higher to read it)", name,
	    pre, c, post);
}

int
nd_in_check_held(const char *name, uint64_t n, const char *why, nd_err *err)
{
	uint64_t cap = nd_in_max();
	char post[256];

	if (n <= cap)
		return 0;
	snprintf(post, sizeof post, " to hold in memory%s%s%s",
	    why != NULL ? " (" : "", why != NULL ? why : "",
	    why != NULL ? ")" : "");
	over_cap(err, name, "", post, cap);
	return -1;
}

nd_in *
nd_in_open(const char *path)
{
	nd_in *in = nd_xcalloc(1, sizeof *in);

	in->max = nd_in_max();	/* a bad NDTRACE_MAX_INPUT: before any read */
	nd_err_clear(&in->err);
	in->name = nd_xstrdup(nd_in_path_name(path));
	if (strcmp(path, "-") == 0)
		in->fd = STDIN_FILENO;
	else if ((in->fd = open(path, O_RDONLY)) < 0) {
		nd_err_errno(&in->err, in->name, "%s", path);
		in->eof = 1;
	}
	in->raw = nd_xmalloc(RAW_BLOCK);
	return in;
}

nd_in *
nd_in_open_mem(const void *p, size_t n, const char *name, int hashed)
{
	nd_in *in = nd_xcalloc(1, sizeof *in);

	if (hashed) {
		nd_sha256_init(&in->sha);
		in->hashing = 1;
	}
	in->max = nd_in_max();
	nd_err_clear(&in->err);
	in->name = nd_xstrdup(name);
	in->fd = -1;
	in->mem = p;
	in->mem_len = n;
	in->raw = nd_xmalloc(RAW_BLOCK);
	return in;
}

const nd_err *
nd_in_err(const nd_in *in)
{
	return in->err.code != 0 ? &in->err : NULL;
}

/* Record the first error and end the input: reads return 0 from now on. */
static void
stop(nd_in *in)
{
	in->eof = 1;
	in->gz_end = 1;
	in->raw_pos = in->raw_len = 0;
}

nd_in *
nd_in_open_hashed(const char *path)
{
	nd_in *in = nd_in_open(path);

	nd_sha256_init(&in->sha);
	in->hashing = 1;
	return in;
}

void
nd_in_tee(nd_in *in, nd_spool *sp)
{
	in->tee = sp;
}

void
nd_in_replay(nd_in *in, nd_spool *sp, uint64_t off)
{
	in->replay = sp;
	in->replay_off = off;
}

/* read(2) of the stored bytes, from the file or the spool replayed; what
 * is read is also teed.  EINTR is retried. */
static ssize_t
raw_read(nd_in *in, void *buf, size_t n)
{
	ssize_t r;

	if (in->mem != NULL || in->fd < 0) {
		size_t left = in->mem_len - in->mem_pos;

		if (n > left)
			n = left;
		if (n > 0)
			memcpy(buf, in->mem + in->mem_pos, n);
		in->mem_pos += n;
		return (ssize_t)n;
	}
	if (in->replay != NULL) {
		uint64_t left = nd_spool_size(in->replay) - in->replay_off;

		if (n > left)
			n = (size_t)left;
		if (n > 0)
			memcpy(buf, nd_spool_get(in->replay, in->replay_off, n),
			    n);
		in->replay_off += n;
		return (ssize_t)n;
	}
	do
		r = read(in->fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r > 0 && in->tee != NULL)
		nd_spool_add(in->tee, buf, (size_t)r);
	return r;
}

static void
fill_raw(nd_in *in)
{
	ssize_t r;

	in->raw_pos = in->raw_len = 0;
	if (in->eof)
		return;
	r = raw_read(in, in->raw, RAW_BLOCK);
	if (r < 0) {
		nd_err_errno(&in->err, in->name, "%s: read error at byte %llu",
		    in->name, (unsigned long long)in->raw_off);
		stop(in);
		return;
	}
	if (r == 0) {
		in->eof = 1;
		return;
	}
	in->raw_len = (size_t)r;
	in->raw_off += (uint64_t)r;
	if (in->hashing)
		nd_sha256_update(&in->sha, in->raw, (size_t)r);
}

static void
sniff(nd_in *in)
{
	in->sniffed = 1;
	fill_raw(in);
	/* A short first read (a pipe) may hold one byte only. */
	while (in->raw_len == 1 && !in->eof) {
		unsigned char c = in->raw[0];
		ssize_t r = raw_read(in, in->raw + 1, RAW_BLOCK - 1);

		if (r < 0) {
			nd_err_errno(&in->err, in->name, "%s: read error",
			    in->name);
			stop(in);
			return;
		}
		if (r == 0) {
			in->eof = 1;
			break;
		}
		if (in->hashing)
			nd_sha256_update(&in->sha, in->raw + 1, (size_t)r);
		in->raw_len += (size_t)r;
		in->raw_off += (uint64_t)r;
		in->raw[0] = c;
	}
	if (in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
		in->gz = 1;
		if (inflateInit2(&in->zs, 16 + MAX_WBITS) != Z_OK) {
			in->gz = 0;
			nd_err_set(&in->err, in->name, ND_ERR_NONE,
			    ND_ERR_NONE, "%s: cannot start gzip decoder",
			    in->name);
			stop(in);
		}
	}
}

static size_t
read_gz(nd_in *in, unsigned char *buf, size_t n)
{
	size_t got = 0;

	while (got < n && !in->gz_end) {
		int rc;

		if (in->raw_pos == in->raw_len) {
			fill_raw(in);
			if (in->raw_len == 0) {
				nd_err_set(&in->err, in->name, in->raw_off,
				    ND_ERR_NONE, "%s: truncated gzip data "
				    "(input ends at compressed byte %llu)",
				    in->name, (unsigned long long)in->raw_off);
				stop(in);
				break;
			}
		}
		in->zs.next_in = in->raw + in->raw_pos;
		in->zs.avail_in = (uInt)(in->raw_len - in->raw_pos);
		in->zs.next_out = buf + got;
		in->zs.avail_out = (uInt)(n - got > 0x40000000 ? 0x40000000 : n - got);
		{
			uInt before_out = in->zs.avail_out;

			rc = inflate(&in->zs, Z_NO_FLUSH);
			got += before_out - in->zs.avail_out;
			in->inflated += before_out - in->zs.avail_out;
			if (in->inflated > in->max) {
				over_cap(&in->err, in->name,
				    "gzip data decompresses to ", "", in->max);
				stop(in);
				return 0;
			}
		}
		in->raw_pos = in->raw_len - in->zs.avail_in;
		if (rc == Z_STREAM_END) {
			/* Another member may follow (concatenated gzip). */
			while (in->raw_pos == in->raw_len && !in->eof)
				fill_raw(in);
			if (in->raw_pos < in->raw_len &&
			    in->raw[in->raw_pos] == 0x1f) {
				inflateReset(&in->zs);
				continue;
			}
			if (in->raw_pos < in->raw_len) {
				uint64_t at = in->raw_off - in->raw_len +
				    in->raw_pos;

				nd_err_set(&in->err, in->name, at, ND_ERR_NONE,
				    "%s: trailing garbage after gzip data at "
				    "compressed byte %llu", in->name,
				    (unsigned long long)at);
				stop(in);
				return 0;
			}
			in->gz_end = 1;
		} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
			uint64_t at = in->raw_off - in->raw_len + in->raw_pos;

			nd_err_set(&in->err, in->name, at, ND_ERR_NONE,
			    "%s: corrupt gzip data near compressed byte %llu: "
			    "%s", in->name, (unsigned long long)at,
			    in->zs.msg ? in->zs.msg : "error");
			stop(in);
			return 0;
		}
	}
	return got;
}

static size_t
read_plain(nd_in *in, unsigned char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		size_t k;

		if (in->raw_pos == in->raw_len) {
			if (in->eof)
				break;
			/* Large reads go straight to the caller's buffer. */
			if (n - got >= RAW_BLOCK) {
				ssize_t r = raw_read(in, buf + got, n - got);

				if (r < 0) {
					nd_err_errno(&in->err, in->name,
					    "%s: read error", in->name);
					stop(in);
					return 0;
				}
				if (r == 0) {
					in->eof = 1;
					break;
				}
				if (in->hashing)
					nd_sha256_update(&in->sha, buf + got,
					    (size_t)r);
				in->raw_off += (uint64_t)r;
				got += (size_t)r;
				continue;
			}
			fill_raw(in);
			if (in->raw_len == 0)
				break;
		}
		k = in->raw_len - in->raw_pos;
		if (k > n - got)
			k = n - got;
		memcpy(buf + got, in->raw + in->raw_pos, k);
		in->raw_pos += k;
		got += k;
	}
	return got;
}

static size_t
read_any(nd_in *in, unsigned char *buf, size_t n)
{
	if (!in->sniffed)
		sniff(in);
	return in->gz ? read_gz(in, buf, n) : read_plain(in, buf, n);
}

size_t
nd_in_peek(nd_in *in, void *buf, size_t n)
{
	if (n > sizeof in->peek)
		n = sizeof in->peek;
	while (in->peek_len < n) {
		size_t r = read_any(in, in->peek + in->peek_len,
		    n - in->peek_len);

		if (r == 0)
			break;
		in->peek_len += r;
	}
	if (n > in->peek_len)
		n = in->peek_len;
	memcpy(buf, in->peek, n);
	return n;
}

size_t
nd_in_read(nd_in *in, void *buf, size_t n)
{
	unsigned char *b = buf;
	size_t got = 0;

	if (in->peek_pos < in->peek_len) {
		got = in->peek_len - in->peek_pos;
		if (got > n)
			got = n;
		memcpy(b, in->peek + in->peek_pos, got);
		in->peek_pos += got;
	}
	while (got < n) {
		size_t r = read_any(in, b + got, n - got);

		if (r == 0)
			break;
		got += r;
		/* One short read is enough for streaming callers. */
		break;
	}
	in->off += got;
	return got;
}

void
nd_in_slurp(nd_in *in, nd_buf *b)
{
	for (;;) {
		size_t r;

		nd_buf_reserve(b, RAW_BLOCK);
		r = nd_in_read(in, b->p + b->len, b->cap - b->len - 1);
		if (r == 0)
			break;
		b->len += r;
		b->p[b->len] = '\0';
		if (b->len > in->max) {
			over_cap(&in->err, in->name, "", " to hold in memory",
			    in->max);
			stop(in);
			return;
		}
	}
}

const char *
nd_in_name(const nd_in *in)
{
	return in->name;
}

const char *
nd_in_path_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

uint64_t
nd_in_offset(const nd_in *in)
{
	return in->off;
}

int
nd_in_is_gzip(const nd_in *in)
{
	return in->gz;
}

void
nd_in_sha256(nd_in *in, char hex[65])
{
	if (!in->hashing)
		nd_die(ND_EXIT_ERROR, "internal error: %s not opened for hashing",
		    in->name);
	/* Hash what remains unread too, so the digest is of the whole file. */
	while (!in->eof)
		fill_raw(in);
	in->raw_pos = in->raw_len;
	nd_sha256_hex(&in->sha, hex);
}

void
nd_in_close(nd_in *in)
{
	if (in == NULL)
		return;
	if (in->gz)
		inflateEnd(&in->zs);
	if (in->fd != STDIN_FILENO && in->fd >= 0)
		close(in->fd);
	if (in->hashing)
		nd_sha256_free(&in->sha);
	free(in->raw);
	free(in->name);
	free(in);
}
