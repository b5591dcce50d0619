package hd

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/tyler-smith/go-bip39"
	"golang.org/x/text/unicode/norm"

	"payd/money"
)

// Wallet is the public half of a wallet made from a recovery phrase: the
// account keys payd attaches, one per network. It holds no private material.
type Wallet struct {
	Bitcoin  AccountKey // BIP84 m/84'/0'/0', written as a zpub
	Ethereum AccountKey // BIP44 m/44'/60'/0', an xpub
	Polygon  AccountKey // the Ethereum key: same addresses on polygon
	Tron     AccountKey // BIP44 m/44'/195'/0', an xpub
	Solana   AccountKey // SLIP-0010 ed25519 m/44'/501'/0'/0', base58
}

// WalletFromMnemonic computes the public account keys of the wallet a BIP39
// English recovery phrase (12 to 24 words) and optional passphrase describe:
// the keys `payd business create --wallet generate` attaches. The phrase is
// read case-insensitively with any spacing; a wrong word or checksum is
// refused with an *Error that names the word's position, never the word.
// The seed and every private key derived on the way are wiped before it
// returns; only public keys leave.
func WalletFromMnemonic(phrase, passphrase string) (Wallet, error) {
	seed, err := mnemonicSeed(phrase, passphrase)
	if err != nil {
		return Wallet{}, err
	}
	defer clear(seed)
	return walletFromSeed(seed)
}

// Keys lists the wallet's account keys in money.Networks order.
func (w Wallet) Keys() []AccountKey {
	return []AccountKey{w.Bitcoin, w.Ethereum, w.Polygon, w.Solana, w.Tron}
}

// NewMnemonic returns a fresh BIP39 English recovery phrase of words words,
// 12 (128 bits of entropy) or 24 (256 bits), the entropy read from r. Pass
// crypto/rand.Reader in production; tests pass a fixed reader. The phrase
// is the wallet's only secret: show it once and keep no copy.
func NewMnemonic(r io.Reader, words int) (string, error) {
	if words != 12 && words != 24 {
		return "", refuse("", InputWordCount, BadLength, "is %d; payd makes phrases of 12 or 24 words", words)
	}
	entropy := make([]byte, words*4/3) // 11 bits a word, one checksum bit per 32
	defer clear(entropy)
	if _, err := io.ReadFull(r, entropy); err != nil {
		return "", fmt.Errorf("hd.NewMnemonic: reading entropy: %w", err)
	}
	phrase, err := bip39.NewMnemonic(entropy)
	if err != nil {
		return "", fmt.Errorf("hd.NewMnemonic: %w", err)
	}
	return phrase, nil
}

// mnemonicSeed checks a phrase and returns its 64-byte BIP39 seed:
// PBKDF2-HMAC-SHA512 of the NFKD phrase, salted "mnemonic" + NFKD passphrase.
func mnemonicSeed(phrase, passphrase string) ([]byte, error) {
	normal, err := normalizePhrase(phrase)
	if err != nil {
		return nil, err
	}
	return bip39.NewSeed(normal, norm.NFKD.String(passphrase)), nil
}

// walletFromSeed derives the wallet's public account keys from a BIP39 seed.
func walletFromSeed(seed []byte) (Wallet, error) {
	master, err := hdkeychain.NewMaster(seed, &chaincfg.MainNetParams)
	if err != nil { // an unusable master key has probability about 2^-127
		return Wallet{}, fmt.Errorf("hd.WalletFromMnemonic: master key: %w", err)
	}
	defer master.Zero()
	var w Wallet
	if w.Bitcoin, err = accountKey(master, money.Bitcoin, 84, 0, versionZpub); err != nil {
		return Wallet{}, err
	}
	if w.Ethereum, err = accountKey(master, money.Ethereum, 44, 60, versionXpub); err != nil {
		return Wallet{}, err
	}
	if w.Polygon, err = ParseAccountKey(money.Polygon, w.Ethereum.String()); err != nil {
		return Wallet{}, fmt.Errorf("hd.WalletFromMnemonic: polygon: %w", err)
	}
	if w.Tron, err = accountKey(master, money.Tron, 44, 195, versionXpub); err != nil {
		return Wallet{}, err
	}
	if w.Solana, err = solanaKey(seed); err != nil {
		return Wallet{}, err
	}
	return w, nil
}

// normalizePhrase checks a phrase against BIP39's English list and
// checksum and returns it as BIP39 hashes it: NFKD, lower case, single
// spaces.
func normalizePhrase(phrase string) (string, error) {
	words := strings.Fields(strings.ToLower(norm.NFKD.String(phrase)))
	switch len(words) {
	case 12, 15, 18, 21, 24:
	default:
		return "", refuse("", InputRecoveryPhrase, BadLength, "has %d words; a BIP39 phrase has 12, 15, 18, 21 or 24", len(words))
	}
	for i, w := range words {
		if _, ok := bip39.GetWordIndex(w); !ok {
			return "", refuse("", InputRecoveryPhrase, Malformed, "word %d is not in the BIP39 English word list", i+1)
		}
	}
	normal := strings.Join(words, " ")
	entropy, err := bip39.EntropyFromMnemonic(normal)
	clear(entropy)
	switch {
	case errors.Is(err, bip39.ErrChecksumIncorrect):
		return "", refuse("", InputRecoveryPhrase, BadChecksum, "fails its checksum: a word is wrong or out of order")
	case err != nil: // every word was checked above, so the error cannot name one
		return "", refuse("", InputRecoveryPhrase, Malformed, "is not a valid BIP39 phrase")
	}
	return normal, nil
}

// accountKey derives the hardened account m/purpose'/coin'/0' and returns
// its public key, written with the given version bytes and parsed back.
func accountKey(master *hdkeychain.ExtendedKey, n money.Network, purpose, coin uint32, version [4]byte) (AccountKey, error) {
	key := master
	for _, i := range []uint32{purpose, coin, 0} {
		next, err := key.Derive(hardenedStart + i)
		if key != master {
			key.Zero()
		}
		if err != nil {
			return AccountKey{}, fmt.Errorf("hd.WalletFromMnemonic: %s account: %w", n, err)
		}
		key = next
	}
	pub, err := key.Neuter()
	if err == nil {
		pub, err = pub.CloneWithVersion(version[:])
	}
	var s string
	if err == nil {
		s = pub.String() // before Zero: the public key shares the chain code
	}
	key.Zero()
	if err != nil {
		return AccountKey{}, fmt.Errorf("hd.WalletFromMnemonic: %s public key: %w", n, err)
	}
	k, err := ParseAccountKey(n, s)
	if err != nil {
		return AccountKey{}, fmt.Errorf("hd.WalletFromMnemonic: %s: %w", n, err)
	}
	return k, nil
}

// solanaKey derives the Solana account m/44'/501'/0'/0' with SLIP-0010 (the
// path of account 0 in the Solana cookbook's "mnemonic to keypair, BIP44"
// example) and returns its public key.
func solanaKey(seed []byte) (AccountKey, error) {
	node, err := slip10Derive(seed, hardenedStart+44, hardenedStart+501, hardenedStart+0, hardenedStart+0)
	if err != nil {
		return AccountKey{}, fmt.Errorf("hd.WalletFromMnemonic: solana: %w", err)
	}
	priv := ed25519.NewKeyFromSeed(node.key[:])
	node.zero()
	pub := encodeSolana(priv[ed25519.SeedSize:])
	clear(priv)
	k, err := ParseAccountKey(money.Solana, pub)
	if err != nil {
		return AccountKey{}, fmt.Errorf("hd.WalletFromMnemonic: solana: %w", err)
	}
	return k, nil
}
