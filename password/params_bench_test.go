package password

import (
	"fmt"
	"testing"

	"golang.org/x/crypto/argon2"
)

// BenchmarkArgon2 measures one argon2id hash over the memory and time
// settings considered for Current (docs/passwords.md quotes the figures):
// go test -run '^$' -bench Argon2 -benchtime 5x ./password/
func BenchmarkArgon2(b *testing.B) {
	salt := make([]byte, 16)
	for _, p := range []struct{ m, t uint32 }{
		{7 << 10, 5}, {9 << 10, 4}, {12 << 10, 3}, {19 << 10, 2}, {46 << 10, 1},
		{32 << 10, 2}, {64 << 10, 1}, {64 << 10, 2}, {64 << 10, 3},
	} {
		b.Run(fmt.Sprintf("m=%dMiB,t=%d,p=1", p.m>>10, p.t), func(b *testing.B) {
			for b.Loop() {
				argon2.IDKey([]byte("correct horse battery staple"), salt, p.t, p.m, 1, 32)
			}
		})
	}
}
