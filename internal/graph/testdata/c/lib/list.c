#include "list.h"
#include "config.h"
void list_push(int v) { (void)util_max(v, LIST_CAP); }
