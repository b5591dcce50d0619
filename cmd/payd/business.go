package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"payd"
	"payd/clock"
	"payd/hd"
	"payd/money"
	"payd/store"
)

// openStore opens and migrates the configured database for a CLI command.
// Only a command whose purpose is a new database (migrate, dev seed) may
// create an SQLite file (create); the others refuse a file that does not
// exist (needExisting).
func openStore(ctx context.Context, cfg *Config, stderr io.Writer, create bool) (*store.DB, error) {
	log, err := cfg.logger(stderr)
	if err != nil {
		return nil, err
	}
	if !create {
		if err := needExisting(cfg.Database); err != nil {
			return nil, err
		}
	}
	db, err := store.Open(ctx, cfg.Database, clock.Real{}, log)
	if err != nil {
		return nil, err
	}
	if err := migrateStore(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// migrateStore brings db's schema up to date, with package hd reading the
// wallet keys stored before their identities were (store.KeyIdentity).
func migrateStore(ctx context.Context, db *store.DB) error {
	db.SetKeyIdentity(hd.KeyIdentity)
	return db.Migrate(ctx)
}

// newBusiness is what `business create` prints.
type newBusiness struct {
	BusinessID     string  `json:"business_id"`
	SecretKey      string  `json:"secret_key"`
	TestSecretKey  string  `json:"test_secret_key"`
	PublishableKey string  `json:"publishable_key"`
	RecoveryPhrase *string `json:"recovery_phrase"`
	WalletID       *string `json:"wallet_id"`
}

// businessUsage is the synopsis of business create.
const businessUsage = "usage: payd business create --name NAME --email EMAIL [--website URL] [--support-email EMAIL] [--live] [--wallet generate] [--json]"

func runBusiness(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "suspend" || args[0] == "reinstate") {
		return runSuspend(ctx, args[0], args[1:], getenv, stdout, stderr)
	}
	if len(args) == 0 || args[0] != "create" {
		return usagef("%s\n%s", businessUsage, suspendUsage)
	}
	var cfg Config
	fs := cfg.newFlagSet("business create", stderr)
	name := fs.String("name", "", "business name")
	email := fs.String("email", "", "business contact email")
	website := fs.String("website", "", "the business's website, shown to customers on payment pages")
	support := fs.String("support-email", "", "where customers write for help, shown on payment pages")
	live := fs.Bool("live", false, "mark the business live: test keys cannot move real money")
	wallet := fs.String("wallet", "", "generate: make a new wallet here, print its recovery phrase once and attach its public keys")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:], getenv); err != nil {
		return err
	}
	if *wallet != "" && *wallet != "generate" {
		return usagef("--wallet %q: the only value is generate; a business attaches its own keys with POST /wallet", *wallet)
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	f := businessFields{*name, *email, *website, *support, *live, *wallet == "generate"}
	out, err := createBusiness(ctx, db, f, rand.Reader)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	printBusiness(stdout, out)
	return nil
}

// printBusiness writes what business create made for a person to read.
func printBusiness(w io.Writer, out *newBusiness) {
	fmt.Fprintf(w, "business        %s\nsecret key      %s\ntest secret key %s\npublishable key %s\n",
		out.BusinessID, out.SecretKey, out.TestSecretKey, out.PublishableKey)
	if out.WalletID != nil {
		fmt.Fprintf(w, "wallet          %s\n\nRecovery phrase of the wallet:\n\n", *out.WalletID)
		words := strings.Fields(*out.RecoveryPhrase)
		for i, word := range words {
			if (i+1)%4 == 0 || i == len(words)-1 {
				fmt.Fprintf(w, "%4d. %s\n", i+1, word) // no padding at the end of a row
				continue
			}
			fmt.Fprintf(w, "%4d. %-10s", i+1, word)
		}
		fmt.Fprint(w, "\nWrite the recovery phrase down now, in order, and keep it offline. It is shown this once:\n"+
			"payd keeps no copy, only the wallet's public keys, so nobody can show it to you again.\n"+
			"Anyone who has it can spend everything paid into the wallet; import it into wallet\n"+
			"software you trust (BIP39, BIP84 for bitcoin, BIP44 for ethereum, polygon and tron,\n"+
			"m/44'/501'/0'/0' for solana) to see and move the funds.\n")
	}
	fmt.Fprint(w, "\nThe keys are shown once; payd keeps only their hashes.\n")
}

// businessFields are what `business create` is told about the business.
type businessFields struct {
	name, email, website, supportEmail string
	live                               bool
	// generateWallet makes and attaches a new wallet (--wallet generate).
	generateWallet bool
}

// newBusinessOf validates f into a business to store.
func newBusinessOf(f businessFields, now time.Time) (*payd.Business, error) {
	b, err := payd.NewBusiness(f.name, f.email, f.live, now)
	if err != nil {
		return nil, err
	}
	if f.website != "" {
		if err := payd.CheckRedirectURL("website", f.website, true); err != nil {
			return nil, err
		}
	}
	if f.supportEmail != "" {
		if err := payd.CheckEmail("support-email", f.supportEmail); err != nil {
			return nil, err
		}
	}
	b.Website, b.SupportEmail = f.website, f.supportEmail
	return b, nil
}

// createBusiness stores a business with its live and test secret keys,
// its publishable key and, when f asks, a wallet generated from entropy
// (crypto/rand in production), all in one transaction.
func createBusiness(ctx context.Context, db payd.Store, f businessFields, entropy io.Reader) (*newBusiness, error) {
	now := clock.Real{}.Now()
	b, err := newBusinessOf(f, now)
	if err != nil {
		return nil, err
	}
	var phrase string
	var w *payd.Wallet
	if f.generateWallet {
		if phrase, w, err = generateWallet(b.ID, entropy, now); err != nil {
			return nil, err
		}
	}
	sk, skRec := payd.NewAPIKey(b.ID, payd.KeySecret, payd.ModeLive, nil, now)
	tk, tkRec := payd.NewAPIKey(b.ID, payd.KeySecret, payd.ModeTest, nil, now)
	pk, pkRec := payd.NewAPIKey(b.ID, payd.KeyPublishable, payd.ModeLive, nil, now)
	err = db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		if err := q.CreateBusiness(ctx, b); err != nil {
			return err
		}
		for _, k := range []*payd.APIKey{skRec, tkRec, pkRec} {
			if err := q.CreateAPIKey(ctx, k); err != nil {
				return err
			}
		}
		if w != nil {
			return q.CreateWallet(ctx, w)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &newBusiness{BusinessID: b.ID, SecretKey: sk, TestSecretKey: tk, PublishableKey: pk}
	if w != nil {
		out.RecoveryPhrase, out.WalletID = &phrase, &w.ID
	}
	return out, nil
}

// recoveryWords is the length of a generated recovery phrase: 12 words,
// 128 bits of entropy, what most wallet software makes and reads.
const recoveryWords = 12

// generateWallet makes a new recovery phrase from entropy and the wallet of
// its public keys (DESIGN 1.3): every network, polygon on the ethereum key.
// The phrase goes back to the operator only; no private key leaves package
// hd, and the wallet holds public keys.
func generateWallet(businessID string, entropy io.Reader, now time.Time) (string, *payd.Wallet, error) {
	phrase, err := hd.NewMnemonic(entropy, recoveryWords)
	if err != nil {
		return "", nil, err
	}
	hw, err := hd.WalletFromMnemonic(phrase, "")
	if err != nil {
		return "", nil, err
	}
	keys, ids := map[money.Network]string{}, map[money.Network]string{}
	for _, k := range hw.Keys() {
		keys[k.Network()], ids[k.Network()] = k.String(), k.Identity()
	}
	w, err := payd.NewWallet(businessID, keys, ids, payd.WalletGenerated, now)
	if err != nil {
		return "", nil, err
	}
	return phrase, w, nil
}
