#include <stdio.h>
#include "util.h"
#include "lib/list.h"

int main(void) { list_push(0); return util_max(1, 2); }
