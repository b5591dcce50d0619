package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"payd"
	"payd/clock"
)

func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "create" {
		return runKeysCreate(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "revoke" {
		return runKeysRevoke(ctx, args[1:], getenv, stdout, stderr)
	}
	return usagef("usage: payd keys create|revoke ...")
}

// runKeysCreate makes a restricted secret key (CONTRACT.md).
func runKeysCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := cfg.newFlagSet("keys create", stderr)
	bizID := fs.String("business", "", "business id (biz_...)")
	perms := fs.String("permissions", "", "AREA:LEVEL,... with areas payments, customers, links, webhooks, checkout_settings, wallet, metrics and levels read, write")
	test := fs.Bool("test", false, "make a test key")
	name := fs.String("name", "", "a name to recognise the key by")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	p, err := payd.ParsePermissions(*perms)
	if err != nil {
		return usagef("--permissions: %s", err.(*payd.Error).Message)
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.BusinessByID(ctx, *bizID); err != nil {
		return fmt.Errorf("--business %q: %w", *bizID, err)
	}
	mode := payd.ModeLive
	if *test {
		mode = payd.ModeTest
	}
	secret, k := payd.NewAPIKey(*bizID, payd.KeyRestricted, mode, p, clock.Real{}.Now())
	k.Name = *name
	if err := db.CreateAPIKey(ctx, k); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"key": secret, "id": k.ID})
	}
	fmt.Fprintf(stdout, "key %s\nid  %s\npermissions %s\n", secret, k.ID, p)
	return nil
}

// runKeysRevoke revokes a key at once; replicas stop accepting it within
// the API's key cache lifetime (2 s).
func runKeysRevoke(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg Config
	fs := cfg.newFlagSet("keys revoke", stderr)
	bizID := fs.String("business", "", "business id (biz_...)")
	id := fs.String("id", "", "key id (key_...)")
	if err := parse(fs, args, getenv); err != nil {
		return err
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RevokeAPIKey(ctx, *bizID, *id, clock.Real{}.Now()); err != nil {
		return fmt.Errorf("key %q of %q: %w", *id, *bizID, err)
	}
	fmt.Fprintf(stdout, "revoked %s\n", *id)
	return nil
}
