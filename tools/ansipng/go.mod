module github.com/task-x/task-x-runtime/tools/ansipng

go 1.26.8

require (
	github.com/mattn/go-runewidth v0.0.19
	golang.org/x/image v0.48.0
)

require (
	github.com/clipperhouse/uax29/v2 v2.2.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)
