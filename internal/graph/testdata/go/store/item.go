package store

type Item struct{}

func helper() int { return 1 }
