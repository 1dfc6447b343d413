//go:build !linux

package retrieve

// readWhole reads the file at abs into buf (reused across files) and
// returns it; size (the file's size as scanned) is not needed here.
func readWhole(buf []byte, abs string, size int64) ([]byte, error) {
	return readInto(buf, abs)
}
