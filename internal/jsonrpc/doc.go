// Package jsonrpc owns the JSON-RPC 2.0 layer between the runtime and the VS Code
// extension: newline-delimited framing with the 32 MiB line cap (protocol.md
// "Framing"), message and id decoding, the wire error type with every error code of
// protocol.md "Errors", and Conn, which keeps the in-flight request table and
// implements `$/cancelRequest`, ordered dispatch with Async release, preempted
// methods, runtime→client calls, and the shutdown/exit drain of protocol.md
// "Lifecycle".
//
// It imports the standard library only. It never decides which methods exist:
// the Handler does (returning ErrMethodNotFound), and so does the lifecycle policy
// above the transport (initialize, -32003), which belongs to the server package.
package jsonrpc
