package project

import (
	"testing"

	"golang.org/x/sys/unix"
)

// bindReadOnly makes dir a read-only bind mount of itself (needs
// CAP_SYS_ADMIN, which root has where chmod does not stop writes), undone
// at cleanup; false when mounting is not allowed.
func bindReadOnly(t *testing.T, dir string) bool {
	t.Helper()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Logf("bind mount: %v", err)
		return false
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Logf("read-only remount: %v", err)
		return false
	}
	return true
}
