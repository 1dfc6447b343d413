// Package e2e holds the end-to-end tests of task-x-runtime: they build the
// real binaries, start them as the VS Code extension does, and speak the
// protocol of ../shared/spec/protocol.md over stdio, against in-process fake
// providers that replay each provider's documented wire format. The package
// has no non-test code.
package e2e
