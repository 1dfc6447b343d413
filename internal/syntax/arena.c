// Package syntax's allocator for tree-sitter (see arena.h).

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define TSA_MMAP 1
#endif

// Every block starts 16 bytes after its header: the block's usable size
// and, in the 8 bytes right before the block, its class with a tag in the
// high half. glibc keeps a chunk's size in those 8 bytes, whose high half
// is zero below 4 GiB, so a libc pointer is never taken for one of ours.
typedef struct {
	uint64_t size;
	uint32_t cls;
	uint32_t tag;
} tsa_hdr;

#define TSA_TAG 0x7a5aa5e1u
#define TSA_HDR ((size_t)sizeof(tsa_hdr))
#define TSA_SMALL 1024          // classes of 16 bytes up to here
#define TSA_MEDIUM (256 << 10)  // then 4 classes per power of two up to here
#define TSA_NSMALL (TSA_SMALL / 16)
#define TSA_LARGE_CLS 0xffffffffu
#define TSA_FIRST_CHUNK (256 << 10)
#define TSA_MAX_CHUNK (8 << 20)

typedef struct tsa_chunk {
	struct tsa_chunk *next;
	size_t size; // bytes, this header included
} tsa_chunk;

typedef struct tsa_large {
	struct tsa_large *prev, *next;
	size_t size; // mapped bytes, this header included
	uint64_t pad;
} tsa_large;

struct tsa_arena {
	tsa_chunk *chunks;  // oldest first
	tsa_chunk *cur;     // chunk being carved
	char *bump, *limit; // free space of cur
	size_t chunk_bytes; // all chunks
	tsa_large *large;   // blocks over TSA_MEDIUM
	size_t keep;        // chunk bytes kept by tsa_reset
	void *free[TSA_NSMALL + 64];
};

static _Thread_local tsa_arena *tsa_cur;

static void *os_alloc(size_t n) {
#ifdef TSA_MMAP
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
	return p == MAP_FAILED ? NULL : p;
#else
	return malloc(n);
#endif
}

static void os_free(void *p, size_t n) {
#ifdef TSA_MMAP
	munmap(p, n);
#else
	(void)n;
	free(p);
#endif
}

static size_t page_round(size_t n) {
	size_t pg = 4096;
#ifdef TSA_MMAP
	long s = sysconf(_SC_PAGESIZE);
	if (s > 0) pg = (size_t)s;
#endif
	return (n + pg - 1) / pg * pg;
}

// size_class returns the class of a request of n bytes (n <= TSA_MEDIUM)
// and sets *size to the class's block size.
static uint32_t size_class(size_t n, size_t *size) {
	if (n <= TSA_SMALL) {
		uint32_t c = n == 0 ? 0 : (uint32_t)((n - 1) / 16);
		*size = (size_t)(c + 1) * 16;
		return c;
	}
	// 1024 < n <= 256 KiB: 4 classes per power of two, blocks of
	// 2^e + k*2^(e-2) bytes (k = 1..4) for 2^e < n <= 2^(e+1).
	int e = 63 - __builtin_clzll((unsigned long long)(n - 1));
	size_t step = (size_t)1 << (e - 2);
	size_t q = (n - 1 - ((size_t)1 << e)) / step; // 0..3
	*size = ((size_t)1 << e) + (q + 1) * step;
	return TSA_NSMALL + (uint32_t)(e - 10) * 4 + (uint32_t)q;
}

tsa_arena *tsa_new(size_t keep) {
	tsa_arena *a = calloc(1, sizeof(tsa_arena));
	if (a) a->keep = keep;
	return a;
}

static void free_large_all(tsa_arena *a) {
	tsa_large *l = a->large;
	while (l) {
		tsa_large *next = l->next;
		os_free(l, l->size);
		l = next;
	}
	a->large = NULL;
}

void tsa_reset(tsa_arena *a) {
	free_large_all(a);
	// Keep the oldest chunks up to a->keep bytes; unmap the rest.
	size_t kept = 0;
	tsa_chunk **link = &a->chunks;
	while (*link) {
		tsa_chunk *c = *link;
		if (kept + c->size <= a->keep) {
			kept += c->size;
			link = &c->next;
			continue;
		}
		*link = c->next;
		os_free(c, c->size);
	}
	a->chunk_bytes = kept;
	a->cur = a->chunks;
	if (a->cur) {
		a->bump = (char *)a->cur + sizeof(tsa_chunk);
		a->limit = (char *)a->cur + a->cur->size;
	} else {
		a->bump = a->limit = NULL;
	}
	memset(a->free, 0, sizeof(a->free));
}

void tsa_delete(tsa_arena *a) {
	if (!a) return;
	a->keep = 0;
	tsa_reset(a);
	free(a);
}

void tsa_begin(tsa_arena *a) { tsa_cur = a; }
void tsa_end(void) { tsa_cur = NULL; }

// carve takes size bytes (a multiple of 16) from the chunks, moving on to
// the next kept chunk or mapping a new one.
static void *carve(tsa_arena *a, size_t size) {
	for (;;) {
		if (a->bump && (size_t)(a->limit - a->bump) >= size) {
			void *p = a->bump;
			a->bump += size;
			return p;
		}
		if (a->cur && a->cur->next) {
			a->cur = a->cur->next;
			a->bump = (char *)a->cur + sizeof(tsa_chunk);
			a->limit = (char *)a->cur + a->cur->size;
			continue;
		}
		size_t n = a->chunk_bytes < TSA_FIRST_CHUNK ? TSA_FIRST_CHUNK : a->chunk_bytes;
		if (n > TSA_MAX_CHUNK) n = TSA_MAX_CHUNK;
		if (n < size + sizeof(tsa_chunk)) n = size + sizeof(tsa_chunk);
		n = page_round(n);
		tsa_chunk *c = os_alloc(n);
		if (!c) return NULL;
		c->next = NULL;
		c->size = n;
		if (a->cur) {
			a->cur->next = c;
		} else {
			a->chunks = c;
		}
		a->cur = c;
		a->chunk_bytes += n;
		a->bump = (char *)c + sizeof(tsa_chunk);
		a->limit = (char *)c + n;
	}
}

static void *arena_alloc(tsa_arena *a, size_t n) {
	if (n > TSA_MEDIUM) {
		size_t total = page_round(sizeof(tsa_large) + TSA_HDR + n);
		tsa_large *l = os_alloc(total);
		if (!l) return NULL;
		l->size = total;
		l->prev = NULL;
		l->next = a->large;
		if (a->large) a->large->prev = l;
		a->large = l;
		tsa_hdr *h = (tsa_hdr *)(l + 1);
		h->size = total - sizeof(tsa_large) - TSA_HDR;
		h->cls = TSA_LARGE_CLS;
		h->tag = TSA_TAG;
		return h + 1;
	}
	size_t size;
	uint32_t c = size_class(n, &size);
	tsa_hdr *h;
	void **head = &a->free[c];
	if (*head) {
		void *p = *head;
		*head = *(void **)p;
		return p;
	}
	h = carve(a, TSA_HDR + size);
	if (!h) return NULL;
	h->size = size;
	h->cls = c;
	h->tag = TSA_TAG;
	return h + 1;
}

static int ours(void *p) {
	tsa_hdr *h = (tsa_hdr *)p - 1;
	return h->tag == TSA_TAG;
}

static void arena_free(tsa_arena *a, void *p) {
	tsa_hdr *h = (tsa_hdr *)p - 1;
	if (h->cls == TSA_LARGE_CLS) {
		tsa_large *l = (tsa_large *)h - 1;
		if (l->prev) l->prev->next = l->next; else a->large = l->next;
		if (l->next) l->next->prev = l->prev;
		os_free(l, l->size);
		return;
	}
	*(void **)p = a->free[h->cls];
	a->free[h->cls] = p;
}

static void oom(size_t n) {
	// tree-sitter's own allocator aborts too: it has no failure path.
	(void)n;
	abort();
}

void *tsa_malloc(size_t n) {
	tsa_arena *a = tsa_cur;
	if (!a) {
		void *p = malloc(n);
		if (!p && n) oom(n);
		return p;
	}
	void *p = arena_alloc(a, n);
	if (!p) oom(n);
	return p;
}

void *tsa_calloc(size_t count, size_t size) {
	tsa_arena *a = tsa_cur;
	if (!a) {
		void *p = calloc(count, size);
		if (!p && count && size) oom(count * size);
		return p;
	}
	if (size && count > SIZE_MAX / size) oom(SIZE_MAX);
	size_t n = count * size;
	void *p = arena_alloc(a, n);
	if (!p) oom(n);
	// Freed blocks are reused, and new chunk memory is zero already only
	// on the first use of a chunk: clear always.
	memset(p, 0, n);
	return p;
}

void tsa_free(void *p) {
	if (!p) return;
	tsa_arena *a = tsa_cur;
	if (!a || !ours(p)) {
		free(p);
		return;
	}
	arena_free(a, p);
}

void *tsa_realloc(void *p, size_t n) {
	tsa_arena *a = tsa_cur;
	if (!a || (p && !ours(p))) {
		void *q = realloc(p, n);
		if (!q && n) oom(n);
		return q;
	}
	if (!p) return tsa_malloc(n);
	tsa_hdr *h = (tsa_hdr *)p - 1;
	if (n <= h->size) return p;
	void *q = arena_alloc(a, n);
	if (!q) oom(n);
	memcpy(q, p, h->size);
	arena_free(a, p);
	return q;
}

size_t tsa_bytes(tsa_arena *a) {
	size_t n = a->chunk_bytes;
	for (tsa_large *l = a->large; l; l = l->next) n += l->size;
	return n;
}
