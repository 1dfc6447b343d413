//go:build linux && !(amd64 || arm64)

package workspace

import "golang.org/x/sys/unix"

// fstatat is unix.Fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW); only
// amd64 and arm64 build the name's C string in scratch
// (fstatat_fast_linux.go).
func fstatat(dirfd int, name string, st *unix.Stat_t, _ []byte) error {
	return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
}
