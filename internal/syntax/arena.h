// tsa is a per-parse allocator for tree-sitter (installed with
// ts_set_allocator, walk_cgo.go). Between tsa_begin and tsa_end on one
// thread, tree-sitter's allocations come from the arena: blocks of size
// classes carved from a few mapped chunks and reused through free lists,
// so a parse makes no malloc calls and its tree is dropped with the arena
// (tsa_reset) instead of freed node by node. Outside that window, and for
// memory that is not the arena's, it is libc malloc.
#ifndef TSX_ARENA_H
#define TSX_ARENA_H

#include <stddef.h>

typedef struct tsa_arena tsa_arena;

// tsa_new makes an arena whose tsa_reset keeps up to keep bytes of its
// chunks mapped for the next parse.
tsa_arena *tsa_new(size_t keep);
void tsa_delete(tsa_arena *a);
// tsa_reset drops every block of a at once.
void tsa_reset(tsa_arena *a);
// tsa_begin makes a the calling thread's arena until tsa_end.
void tsa_begin(tsa_arena *a);
void tsa_end(void);
size_t tsa_bytes(tsa_arena *a);

void *tsa_malloc(size_t n);
void *tsa_calloc(size_t count, size_t size);
void *tsa_realloc(void *p, size_t n);
void tsa_free(void *p);

#endif
