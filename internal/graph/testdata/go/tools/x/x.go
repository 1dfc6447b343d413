package x

// Run runs.
func Run() int { return 0 }
