package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"payd"
	"payd/clock"
	"payd/store"
)

// openStore opens and migrates the configured database for a CLI command.
func openStore(ctx context.Context, cfg *Config, stderr io.Writer) (*store.DB, error) {
	log, err := cfg.logger(stderr)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, cfg.Database, clock.Real{}, log)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
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

func runBusiness(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return usagef("usage: payd business create --name NAME --email EMAIL [--website URL] [--support-email EMAIL] [--live] [--json]")
	}
	var cfg Config
	fs := cfg.newFlagSet("business create", stderr)
	name := fs.String("name", "", "business name")
	email := fs.String("email", "", "business contact email")
	website := fs.String("website", "", "the business's website, shown to customers on payment pages")
	support := fs.String("support-email", "", "where customers write for help, shown on payment pages")
	live := fs.Bool("live", false, "mark the business live: test keys cannot move real money")
	wallet := fs.String("wallet", "", "wallet to attach (generate)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:], getenv); err != nil {
		return err
	}
	if *wallet != "" {
		return usagef("--wallet %s: wallets are not available in this version of payd yet; create the business without --wallet", *wallet)
	}
	db, err := openStore(ctx, &cfg, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	out, err := createBusiness(ctx, db, businessFields{*name, *email, *website, *support, *live})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "business        %s\nsecret key      %s\ntest secret key %s\npublishable key %s\n\nThe keys are shown once; payd keeps only their hashes.\n",
		out.BusinessID, out.SecretKey, out.TestSecretKey, out.PublishableKey)
	return nil
}

// businessFields are what `business create` is told about the business.
type businessFields struct {
	name, email, website, supportEmail string
	live                               bool
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
	if f.supportEmail != "" && !payd.ValidEmail(f.supportEmail) {
		return nil, payd.FieldError("support-email", "%q is not a valid email address", f.supportEmail)
	}
	b.Website, b.SupportEmail = f.website, f.supportEmail
	return b, nil
}

// createBusiness stores a business with its live and test secret keys and
// its publishable key, all in one transaction.
func createBusiness(ctx context.Context, db payd.Store, f businessFields) (*newBusiness, error) {
	now := clock.Real{}.Now()
	b, err := newBusinessOf(f, now)
	if err != nil {
		return nil, err
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
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &newBusiness{BusinessID: b.ID, SecretKey: sk, TestSecretKey: tk, PublishableKey: pk}, nil
}
