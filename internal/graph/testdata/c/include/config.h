#define LIST_CAP 16
