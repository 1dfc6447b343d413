//go:build linux && (amd64 || arm64)

package workspace

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysFstatat is fstatat(2) with the 64-bit struct stat of unix.Stat_t
// (newfstatat: the same number as unix.Fstatat uses on both).
const sysFstatat = unix.SYS_NEWFSTATAT

// fstatat is unix.Fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) with
// name's C string built in scratch when it fits (unix.Fstatat allocates
// one per call).
func fstatat(dirfd int, name string, st *unix.Stat_t, scratch []byte) error {
	if len(name)+1 > cap(scratch) || strings.IndexByte(name, 0) >= 0 {
		return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
	}
	b := append(scratch[:0], name...)
	b = append(b, 0)
	_, _, e := unix.Syscall6(sysFstatat, uintptr(dirfd), uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(st)),
		unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
