// Package passkeytest is a software WebAuthn authenticator for tests of
// payd's passkey ceremonies, in package passkey and through the API.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"
)

// A software authenticator, written here from the WebAuthn and CTAP2
// specifications rather than with the library under test: an ES256 (ECDSA
// P-256) key per credential, "none" attestation, authenticator data with
// its flags and counter, and the clientDataJSON a browser at origin makes.

// Authenticator data flags (WebAuthn §6.1).
const (
	FlagUP = 0x01 // user present
	FlagUV = 0x04 // user verified
	FlagBE = 0x08 // backup eligible
	FlagBS = 0x10 // backed up
	FlagAT = 0x40 // attested credential data included
)

var b64u = base64.RawURLEncoding

// Key is one credential held by the software authenticator.
type Key struct {
	ID      []byte
	Private *ecdsa.PrivateKey
	RPID    string
	Handle  []byte // the user handle it was registered for
	Counter uint32
	Flags   byte // UV, BE, BS to report; UP is always set
}

// Authenticator answers options as a browser at origin would.
type Authenticator struct {
	T      testing.TB
	Origin string
}

// Options is what a test reads from BeginRegistration's or BeginLogin's
// JSON.
type Options struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		RPID string `json:"rpId"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		Exclude []struct {
			ID string `json:"id"`
		} `json:"excludeCredentials"`
		Allow []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
		UserVerification string `json:"userVerification"`
		Timeout          int    `json:"timeout"`
	} `json:"publicKey"`
}

func ReadOptions(t testing.TB, raw []byte) Options {
	t.Helper()
	var o Options
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("options %s: %v", raw, err)
	}
	return o
}

// clientData is the clientDataJSON a browser at a.Origin signs.
func (a *Authenticator) clientData(typ, challenge string) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.Origin, "crossOrigin": false})
	if err != nil {
		a.T.Fatal(err)
	}
	return b
}

// authData is rpIdHash ‖ flags ‖ signCount, then the attested credential
// data when given.
func authData(rpID string, flags byte, counter uint32, attested []byte) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, counter)
	return append(out, attested...)
}

// Create makes a new credential for the registration options raw, flags
// being UV, BE, BS as the authenticator should report them, and returns it
// with the response JSON a browser would post.
func (a *Authenticator) Create(raw []byte, flags byte) (*Key, []byte) {
	a.T.Helper()
	o := ReadOptions(a.T, raw)
	handle, err := b64u.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		a.T.Fatalf("user.id %q: %v", o.PublicKey.User.ID, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		a.T.Fatal(err)
	}
	k := &Key{ID: make([]byte, 32), Private: key, RPID: o.PublicKey.RP.ID, Handle: handle, Flags: flags}
	_, _ = rand.Read(k.ID)
	return k, a.Attest(k, o.PublicKey.Challenge, o.PublicKey.RP.ID)
}

// Attest renders k's registration response for challenge at rpID.
func (a *Authenticator) Attest(k *Key, challenge, rpID string) []byte {
	pub, err := k.Private.PublicKey.Bytes() // 0x04 ‖ x ‖ y
	if err != nil {
		a.T.Fatal(err)
	}
	cose := cborMap(
		cborInt(1), cborInt(2), // kty: EC2
		cborInt(3), cborInt(-7), // alg: ES256
		cborInt(-1), cborInt(1), // crv: P-256
		cborInt(-2), cborBytes(pub[1:33]),
		cborInt(-3), cborBytes(pub[33:65]),
	)
	attested := make([]byte, 16) // AAGUID: all zero, as "none" attestation allows
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(k.ID)))
	attested = append(append(attested, k.ID...), cose...)
	ad := authData(rpID, FlagUP|FlagAT|k.Flags, k.Counter, attested)
	object := cborMap(
		cborText("fmt"), cborText("none"),
		cborText("attStmt"), cborMap(),
		cborText("authData"), cborBytes(ad),
	)
	return a.marshal(map[string]any{
		"id": b64u.EncodeToString(k.ID), "rawId": b64u.EncodeToString(k.ID), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64u.EncodeToString(a.clientData("webauthn.create", challenge)),
			"attestationObject": b64u.EncodeToString(object),
			"transports":        []string{"internal", "hybrid"},
		},
		"clientExtensionResults": map[string]any{},
	})
}

// Get signs the login options raw with k, counting its counter on by
// step (0 leaves it, as authenticators without a counter do).
func (a *Authenticator) Get(k *Key, raw []byte, step uint32) []byte {
	a.T.Helper()
	o := ReadOptions(a.T, raw)
	k.Counter += step
	return a.Assert(k, o.PublicKey.Challenge, o.PublicKey.RPID, k.Counter, k.Handle)
}

// Assert renders an assertion by k of challenge at rpID with counter.
func (a *Authenticator) Assert(k *Key, challenge, rpID string, counter uint32, handle []byte) []byte {
	cd := a.clientData("webauthn.get", challenge)
	ad := authData(rpID, FlagUP|k.Flags, counter, nil)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...)) // ES256 signs the SHA-256 of authData ‖ hash
	sig, err := ecdsa.SignASN1(rand.Reader, k.Private, digest[:])
	if err != nil {
		a.T.Fatal(err)
	}
	resp := map[string]any{
		"clientDataJSON":    b64u.EncodeToString(cd),
		"authenticatorData": b64u.EncodeToString(ad),
		"signature":         b64u.EncodeToString(sig),
	}
	if handle != nil {
		resp["userHandle"] = b64u.EncodeToString(handle)
	}
	return a.marshal(map[string]any{
		"id": b64u.EncodeToString(k.ID), "rawId": b64u.EncodeToString(k.ID), "type": "public-key",
		"response": resp, "clientExtensionResults": map[string]any{},
	})
}

func (a *Authenticator) marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		a.T.Fatal(err)
	}
	return b
}

// A minimal CBOR encoder (RFC 8949) for the few shapes attestation needs.

func cborHead(major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return []byte{m | byte(n)}
	case n < 1<<8:
		return []byte{m | 24, byte(n)}
	case n < 1<<16:
		return binary.BigEndian.AppendUint16([]byte{m | 25}, uint16(n))
	default:
		return binary.BigEndian.AppendUint32([]byte{m | 26}, uint32(n))
	}
}

func cborInt(v int) []byte {
	if v < 0 {
		return cborHead(1, uint64(-1-v))
	}
	return cborHead(0, uint64(v))
}

func cborBytes(b []byte) []byte { return append(cborHead(2, uint64(len(b))), b...) }

func cborText(s string) []byte { return append(cborHead(3, uint64(len(s))), s...) }

// cborMap encodes alternating keys and values, already encoded.
func cborMap(kv ...[]byte) []byte {
	out := cborHead(5, uint64(len(kv)/2))
	for _, b := range kv {
		out = append(out, b...)
	}
	return out
}
