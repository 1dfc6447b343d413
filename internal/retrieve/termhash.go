package retrieve

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// termHash hashes a term for the build's term dictionaries (termDict):
// wyhash, as the Go runtime's memhash falls back to without AES (seeded,
// every bit mixed by 128-bit products), written out here so a term costs
// one call and two or three multiplications rather than maphash.Bytes'
// calls down to the runtime's assembly (GOROOT/src's build hashes ~10 M
// terms of ~6 bytes: docs/index.md "Issue 39"). Terms are at most
// maxTermLen bytes, but any length works.
func termHash(seed uint64, p []byte) uint64 {
	const (
		m1 = 0xa0761d6478bd642f
		m2 = 0xe7037ed1a0b428db
		m5 = 0x1d8e4e27c47d124f
	)
	s := len(p)
	var a, b uint64
	seed ^= m1
	switch {
	case s == 0:
		return seed
	case s < 4:
		a = uint64(p[0])<<16 | uint64(p[s>>1])<<8 | uint64(p[s-1])
	case s <= 8:
		a = uint64(binary.LittleEndian.Uint32(p))
		b = uint64(binary.LittleEndian.Uint32(p[s-4:]))
	case s <= 16:
		a = binary.LittleEndian.Uint64(p)
		b = binary.LittleEndian.Uint64(p[s-8:])
	default:
		q := p
		for len(q) > 16 {
			seed = wymix(binary.LittleEndian.Uint64(q)^m2, binary.LittleEndian.Uint64(q[8:])^seed)
			q = q[16:]
		}
		a = binary.LittleEndian.Uint64(p[s-16:])
		b = binary.LittleEndian.Uint64(p[s-8:])
	}
	return wymix(m5^uint64(s), wymix(a^m2, b^seed))
}

func wymix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// newHashSeed is a random seed for termHash: a tree that could make the
// table's probes long for one seed (identifiers chosen to collide) cannot
// know the next run's.
func newHashSeed() uint64 { return rand.Uint64() }

// sameTerm reports whether a and b hold the same bytes, comparing short
// terms (the most) with word loads rather than a call.
func sameTerm(a, b []byte) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	switch {
	case n < 4:
		for i := range n {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	case n <= 8:
		return binary.LittleEndian.Uint32(a) == binary.LittleEndian.Uint32(b) &&
			binary.LittleEndian.Uint32(a[n-4:]) == binary.LittleEndian.Uint32(b[n-4:])
	case n > 8 && n <= 16:
		return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
			binary.LittleEndian.Uint64(a[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
	}
	return string(a) == string(b)
}
