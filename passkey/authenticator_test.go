package passkey

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
	flagUP = 0x01 // user present
	flagUV = 0x04 // user verified
	flagBE = 0x08 // backup eligible
	flagBS = 0x10 // backed up
	flagAT = 0x40 // attested credential data included
)

var b64u = base64.RawURLEncoding

// softKey is one credential held by the software authenticator.
type softKey struct {
	id      []byte
	key     *ecdsa.PrivateKey
	rpID    string
	handle  []byte // the user handle it was registered for
	counter uint32
	flags   byte // UV, BE, BS to report; UP is always set
}

// authenticator answers options as a browser at origin would.
type authenticator struct {
	t      testing.TB
	origin string
}

// options is what a test reads from BeginRegistration's or BeginLogin's
// JSON.
type options struct {
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

func readOptions(t testing.TB, raw []byte) options {
	t.Helper()
	var o options
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("options %s: %v", raw, err)
	}
	return o
}

// clientData is the clientDataJSON a browser at a.origin signs.
func (a *authenticator) clientData(typ, challenge string) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	if err != nil {
		a.t.Fatal(err)
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

// create makes a new credential for the registration options raw, flags
// being UV, BE, BS as the authenticator should report them, and returns it
// with the response JSON a browser would post.
func (a *authenticator) create(raw []byte, flags byte) (*softKey, []byte) {
	a.t.Helper()
	o := readOptions(a.t, raw)
	handle, err := b64u.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		a.t.Fatalf("user.id %q: %v", o.PublicKey.User.ID, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		a.t.Fatal(err)
	}
	k := &softKey{id: make([]byte, 32), key: key, rpID: o.PublicKey.RP.ID, handle: handle, flags: flags}
	_, _ = rand.Read(k.id)
	return k, a.attest(k, o.PublicKey.Challenge, o.PublicKey.RP.ID)
}

// attest renders k's registration response for challenge at rpID.
func (a *authenticator) attest(k *softKey, challenge, rpID string) []byte {
	pub, err := k.key.PublicKey.Bytes() // 0x04 ‖ x ‖ y
	if err != nil {
		a.t.Fatal(err)
	}
	cose := cborMap(
		cborInt(1), cborInt(2), // kty: EC2
		cborInt(3), cborInt(-7), // alg: ES256
		cborInt(-1), cborInt(1), // crv: P-256
		cborInt(-2), cborBytes(pub[1:33]),
		cborInt(-3), cborBytes(pub[33:65]),
	)
	attested := make([]byte, 16) // AAGUID: all zero, as "none" attestation allows
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(k.id)))
	attested = append(append(attested, k.id...), cose...)
	ad := authData(rpID, flagUP|flagAT|k.flags, k.counter, attested)
	object := cborMap(
		cborText("fmt"), cborText("none"),
		cborText("attStmt"), cborMap(),
		cborText("authData"), cborBytes(ad),
	)
	return a.marshal(map[string]any{
		"id": b64u.EncodeToString(k.id), "rawId": b64u.EncodeToString(k.id), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64u.EncodeToString(a.clientData("webauthn.create", challenge)),
			"attestationObject": b64u.EncodeToString(object),
			"transports":        []string{"internal", "hybrid"},
		},
		"clientExtensionResults": map[string]any{},
	})
}

// get signs the login options raw with k, counting its counter on by
// step (0 leaves it, as authenticators without a counter do).
func (a *authenticator) get(k *softKey, raw []byte, step uint32) []byte {
	a.t.Helper()
	o := readOptions(a.t, raw)
	k.counter += step
	return a.assert(k, o.PublicKey.Challenge, o.PublicKey.RPID, k.counter, k.handle)
}

// assert renders an assertion by k of challenge at rpID with counter.
func (a *authenticator) assert(k *softKey, challenge, rpID string, counter uint32, handle []byte) []byte {
	cd := a.clientData("webauthn.get", challenge)
	ad := authData(rpID, flagUP|k.flags, counter, nil)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...)) // ES256 signs the SHA-256 of authData ‖ hash
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, digest[:])
	if err != nil {
		a.t.Fatal(err)
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
		"id": b64u.EncodeToString(k.id), "rawId": b64u.EncodeToString(k.id), "type": "public-key",
		"response": resp, "clientExtensionResults": map[string]any{},
	})
}

func (a *authenticator) marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
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
