// Package version is the one version of task-x-runtime and task-x: both
// binaries' --version, the runtime's initialize serverInfo and the MCP
// clientInfo/serverInfo, and task-x's clientInfo. Release builds set it
// with -ldflags "-X github.com/task-x/task-x-runtime/internal/version.Version=1.2.3"
// (the same flag for both binaries).
package version

// Version is the release; a build without the flag is this one.
var Version = "0.1.0"
