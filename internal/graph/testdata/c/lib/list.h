#include "../util.h"
void list_push(int v);
