#include "util.h"
int util_max(int a, int b) { return a > b ? a : b; }
