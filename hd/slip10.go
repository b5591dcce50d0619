package hd

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
)

// slip10Node is a SLIP-0010 ed25519 extended private key: the 32-byte key
// (an ed25519 seed) and its chain code.
type slip10Node struct {
	key   [32]byte
	chain [32]byte
}

// slip10Master is SLIP-0010's master key generation for ed25519:
// I = HMAC-SHA512(Key = "ed25519 seed", Data = seed). Every 256-bit string
// is a valid ed25519 key, so no retry is needed.
func slip10Master(seed []byte) slip10Node {
	return slip10Split(hmacSHA512([]byte("ed25519 seed"), seed))
}

// child is SLIP-0010's CKDpriv for ed25519, which defines hardened children
// only: I = HMAC-SHA512(Key = c_par, Data = 0x00 || k_par || ser32(i)).
func (n slip10Node) child(i uint32) (slip10Node, error) {
	if i < hardenedStart {
		return slip10Node{}, fmt.Errorf("hd: SLIP-0010 ed25519 has no non-hardened child %d", i)
	}
	var data [1 + 32 + 4]byte
	copy(data[1:], n.key[:])
	binary.BigEndian.PutUint32(data[33:], i)
	out := slip10Split(hmacSHA512(n.chain[:], data[:]))
	clear(data[:])
	return out, nil
}

// slip10Derive walks path (hardened indexes) from the master key of seed.
func slip10Derive(seed []byte, path ...uint32) (slip10Node, error) {
	node := slip10Master(seed)
	for _, i := range path {
		next, err := node.child(i)
		node.zero()
		if err != nil {
			return slip10Node{}, err
		}
		node = next
	}
	return node, nil
}

// zero clears the node's secret material.
func (n *slip10Node) zero() {
	clear(n.key[:])
	clear(n.chain[:])
}

func slip10Split(i []byte) slip10Node {
	var n slip10Node
	copy(n.key[:], i[:32])
	copy(n.chain[:], i[32:])
	clear(i)
	return n
}

func hmacSHA512(key, data []byte) []byte {
	m := hmac.New(sha512.New, key)
	m.Write(data) // a hash.Hash never returns an error
	return m.Sum(nil)
}
