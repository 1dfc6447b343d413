package store

// Open opens the store.
func Open() int { return helper() }
