package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"payd"
	"payd/api"
	"payd/clock"
)

// maxDisableReason bounds the operator's note, in characters.
const maxDisableReason = 500

// runLink is the operator's control over payment links: payd link disable
// switches a link off for good (spec 7.5 link_disabled), on the database
// the servers share, so every replica refuses it at once. The business is
// told by a link.disabled event in the same transaction, the first time
// only; its link's url is built as payd serve builds it, from --public-url
// or --addr (PAYD_PUBLIC_URL, PAYD_ADDR).
func runLink(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "disable" {
		return usagef("usage: payd link disable --link LNK_ID [--reason TEXT] [--public-url URL | --addr ADDR] [--json]")
	}
	var cfg Config
	fs := cfg.newFlagSet("link disable", stderr)
	id := fs.String("link", "", "link id (lnk_...)")
	reason := fs.String("reason", "", "why, kept for other operators; never shown to the business or its customers")
	fs.StringVar(&cfg.PublicURL, "public-url", "", "public base URL of the servers, for the link's url in the link.disabled event (default http://ADDR)")
	fs.StringVar(&cfg.Addr, "addr", defaultAddr, "address payd serve listens on, for that url when --public-url is not set")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:], getenv); err != nil {
		return err
	}
	if !payd.HasPrefix(*id, payd.PrefixLink) {
		return usagef("--link must be a link id (lnk_...), not %q", *id)
	}
	if err := payd.CheckText("reason", *reason, maxDisableReason, false); err != nil {
		return usagef("--reason: %s", err.(*payd.Error).Message)
	}
	public, _, err := cfg.urls(cfg.Addr)
	if err != nil {
		return err
	}
	db, err := openStore(ctx, &cfg, stderr, false)
	if err != nil {
		return err
	}
	defer db.Close()
	clk := clock.Real{}
	announce := api.NewAnnouncer(public, clk)
	now := clk.Now().Truncate(time.Microsecond) // as stored
	var l *payd.Link
	err = db.Tx(ctx, func(ctx context.Context, q payd.Queries) error {
		var err error
		if l, err = q.DisableLink(ctx, *id, *reason, now); err != nil {
			return err
		}
		if !l.DisabledAt.Equal(now) {
			return nil // disabled before: only the reason changed, and it is the operator's
		}
		return announce.LinkDisabled(ctx, q, l)
	})
	if err != nil {
		return fmt.Errorf("--link %q: %w", *id, err)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"link_id": l.ID, "business_id": l.BusinessID,
			"status": string(l.Status), "disabled_at": l.DisabledAt.Format("2006-01-02T15:04:05.000Z")})
	}
	fmt.Fprintf(stdout, "disabled link %s of business %s (since %s)\n", l.ID, l.BusinessID, l.DisabledAt.Format("2006-01-02 15:04:05Z"))
	return nil
}
