int util_max(int a, int b);
