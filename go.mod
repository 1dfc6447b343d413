module github.com/task-x/task-x-runtime

go 1.26.8

require (
	github.com/aymanbagabas/go-udiff v0.3.1
	github.com/bmatcuk/doublestar/v4 v4.10.4
	golang.org/x/sync v0.25.0
)
