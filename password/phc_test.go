package password

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestEncodeDecode(t *testing.T) {
	salt := bytes.Repeat([]byte{1}, 16)
	key := bytes.Repeat([]byte{2}, 32)
	s := Encode(Current, salt, key)
	want := "$argon2id$v=19$m=19456,t=2,p=1$AQEBAQEBAQEBAQEBAQEBAQ$AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI"
	if s != want {
		t.Fatalf("Encode = %s, want %s", s, want)
	}
	p, gotSalt, gotKey, err := Decode(s)
	if err != nil || p != Current || !bytes.Equal(gotSalt, salt) || !bytes.Equal(gotKey, key) {
		t.Fatalf("Decode(%s) = %+v, %x, %x, %v", s, p, gotSalt, gotKey, err)
	}
}

// TestDecodeStrict lists what Decode refuses; each would otherwise let a
// stored row choose payd's work or spell one hash two ways.
func TestDecodeStrict(t *testing.T) {
	const salt, key = "AQEBAQEBAQEBAQEBAQEBAQ", "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI"
	ok := "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + key
	if _, _, _, err := Decode(ok); err != nil {
		t.Fatalf("Decode(valid) = %v", err)
	}
	bad := map[string]string{
		"empty":            "",
		"argon2i":          "$argon2i$v=19$m=19456,t=2,p=1$" + salt + "$" + key,
		"old version":      "$argon2id$v=16$m=19456,t=2,p=1$" + salt + "$" + key,
		"no version":       "$argon2id$m=19456,t=2,p=1$" + salt + "$" + key,
		"order":            "$argon2id$v=19$t=2,m=19456,p=1$" + salt + "$" + key,
		"extra param":      "$argon2id$v=19$m=19456,t=2,p=1,keyid=x$" + salt + "$" + key,
		"leading zero":     "$argon2id$v=19$m=019456,t=2,p=1$" + salt + "$" + key,
		"plus sign":        "$argon2id$v=19$m=+19456,t=2,p=1$" + salt + "$" + key,
		"negative":         "$argon2id$v=19$m=-1,t=2,p=1$" + salt + "$" + key,
		"huge memory":      "$argon2id$v=19$m=4194304,t=2,p=1$" + salt + "$" + key,
		"overflow":         "$argon2id$v=19$m=99999999999,t=2,p=1$" + salt + "$" + key,
		"memory under 8p":  "$argon2id$v=19$m=15,t=1,p=2$" + salt + "$" + key,
		"zero time":        "$argon2id$v=19$m=19456,t=0,p=1$" + salt + "$" + key,
		"huge time":        "$argon2id$v=19$m=19456,t=1000,p=1$" + salt + "$" + key,
		"zero threads":     "$argon2id$v=19$m=19456,t=2,p=0$" + salt + "$" + key,
		"many threads":     "$argon2id$v=19$m=19456,t=2,p=255$" + salt + "$" + key,
		"padded base64":    "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "==$" + key,
		"url base64":       "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$" + strings.ReplaceAll(key, "I", "_"),
		"non-canonical":    "$argon2id$v=19$m=19456,t=2,p=1$AQEBAQEBAQEBAQEBAQEBAR$" + key,
		"short salt":       "$argon2id$v=19$m=19456,t=2,p=1$AQEBAQ$" + key,
		"short key":        "$argon2id$v=19$m=19456,t=2,p=1$" + salt + "$AgICAgICAgI",
		"missing key":      "$argon2id$v=19$m=19456,t=2,p=1$" + salt,
		"trailing dollar":  ok + "$",
		"space":            " " + ok,
		"line break":       "$argon2id$v=19$m=19456,t=2,p=1$\r" + salt + "$" + key,
		"bcrypt":           "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
		"plain text":       "hunter2",
		"missing params":   "$argon2id$v=19$$" + salt + "$" + key,
		"empty number":     "$argon2id$v=19$m=,t=2,p=1$" + salt + "$" + key,
		"hex number":       "$argon2id$v=19$m=0x4c00,t=2,p=1$" + salt + "$" + key,
		"underscore digit": "$argon2id$v=19$m=19_456,t=2,p=1$" + salt + "$" + key,
	}
	for name, s := range bad {
		if _, _, _, err := Decode(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Decode(%q) = %v, want ErrMalformed", name, s, err)
		}
	}
}

// FuzzDecode checks that Decode never panics, keeps its bounds, and that
// whatever it accepts encodes back to the same string (one spelling).
func FuzzDecode(f *testing.F) {
	f.Add(Encode(Current, make([]byte, 16), make([]byte, 32)))
	f.Add("$argon2id$v=19$m=262144,t=16,p=16$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA")
	f.Add("$argon2id$v=19$m=1,t=1,p=1$$")
	f.Add("$argon2i$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$iWh06vD8Fy27wf9npn6FXWiCX4K6pW6Ue1Bnzz07Z8A")
	f.Fuzz(func(t *testing.T, s string) {
		p, salt, key, err := Decode(s)
		if err != nil {
			return
		}
		if p.Memory > MaxMemory || p.Time > MaxTime || p.Threads > MaxThreads || p.Time == 0 || p.Threads == 0 {
			t.Fatalf("Decode(%q) accepted %+v", s, p)
		}
		if again := Encode(p, salt, key); again != s {
			t.Fatalf("Decode(%q) re-encodes as %q", s, again)
		}
	})
}
