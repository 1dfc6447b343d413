#include "list.h"
#include "../common/util.h"
#include <stdio.h>

#define LIST_MAX 64
#define SQUARE(x) ((x) * (x))

struct node {
    int value;
    struct node *next;
};

typedef struct {
    int len;
} list_t;

enum color { RED, GREEN };

typedef int (*cmp_fn)(const void *, const void *);

static int count = 0;
int global_total;
extern int elsewhere;

int list_len(const list_t *l);

static void bump(void) { count++; }

int list_len(const list_t *l) {
    bump();
    printf("%d\n", SQUARE(l->len));
    return l->len;
}

struct node *list_head(struct node **pp) { return *pp; }
