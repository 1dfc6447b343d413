package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Below Landlock ABI 9 Landlock does not cover connect(2) and sendmsg(2)
// to pathname UNIX sockets: a confined command could reach ssh-agent, the
// docker socket or the session bus. The seccomp filter installed on the
// thread that forks the shell closes that: socket(AF_UNIX, ...) fails with
// EACCES (seccomp cannot read the address a connect names, so the filter
// stops the socket before any connect or sendto), io_uring_setup fails with
// EPERM (io_uring would open and connect sockets without the socket
// system call), a system call of another ABI (x32, i386 on amd64; arm on
// arm64) kills the process (its socketcall could bypass the filter).
// socketpair(AF_UNIX) stays allowed: it opens no name. Consequence: below
// ABI 9 a sandboxed command cannot use pathname UNIX sockets at all, inside
// the workspace neither (docs/sandbox.md "UNIX sockets").

// seccomp_data offsets (linux/seccomp.h): nr, arch, instruction pointer,
// then the six arguments; the low 32 bits of args[0] on a little-endian
// machine.
const (
	offNr    = 0
	offArch  = 4
	offArg0L = 16
)

// seccompArch is the audit arch of this build's system calls.
func seccompArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("no seccomp filter for GOARCH %s: UNIX sockets cannot be confined below Landlock ABI 9", runtime.GOARCH)
}

// unixSocketFilter returns the BPF program described above.
func unixSocketFilter() ([]unix.SockFilter, error) {
	arch, err := seccompArch()
	if err != nil {
		return nil, err
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	st := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
	}
	prog := []unix.SockFilter{
		/* 0 */ st(ld, offArch, 0, 0),
		/* 1 */ st(jeq, arch, 1, 0),
		/* 2 */ st(ret, kill, 0, 0),
		/* 3 */ st(ld, offNr, 0, 0),
	}
	if runtime.GOARCH == "amd64" {
		// x32 system calls carry bit 30 in nr on the x86_64 arch.
		prog = append(prog, st(jge, 0x40000000, 0, 1), st(ret, kill, 0, 0))
	}
	prog = append(prog,
		st(jeq, uint32(unix.SYS_IO_URING_SETUP), 0, 1),
		st(ret, errno(unix.EPERM), 0, 0),
		st(jeq, uint32(unix.SYS_SOCKET), 0, 3),
		st(ld, offArg0L, 0, 0),
		st(jeq, unix.AF_UNIX, 0, 1),
		st(ret, errno(unix.EACCES), 0, 0),
		st(ret, allow, 0, 0),
	)
	return prog, nil
}

// installUnixSocketFilter installs the filter on the calling thread only
// (no TSYNC: the helper's other threads stay free; the caller has locked
// its OS thread, set no_new_privs, and forks the shell from it).
func installUnixSocketFilter() error {
	prog, err := unixSocketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	runtime.KeepAlive(prog)
	return nil
}
