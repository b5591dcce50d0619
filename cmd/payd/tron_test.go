package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"payd/chain/tron/trontest"
	"payd/clock"
)

// TestServeFollowsTron runs payd serve without --dev on trontest's node,
// reached with a TronGrid API key in the URL and its token named as USDT:
// the follower reads the chain to the node's tip and follows it as it
// grows, and payd networks shows the chain, never the key.
func TestServeFollowsTron(t *testing.T) {
	dsns(t, func(t *testing.T, dsn string) {
		node := trontest.Start(t, trontest.Options{APIKey: "sekrit-key"})
		url := strings.Replace(node.URL(), "http://", "http://sekrit-key@", 1)
		cli(t, dsn, "migrate")
		startServe(t, dsn, "--chain", "tron="+url, "--token", "tron:USDT="+node.Token(), "--rates", "static",
			"--follow-interval", "100ms")
		wait := func(tip int64) {
			t.Helper()
			var out []byte
			for deadline := (clock.Real{}).Now().Add(20 * time.Second); (clock.Real{}).Now().Before(deadline); {
				out = cli(t, dsn, "networks", "--json")
				if strings.Contains(string(out), "sekrit") {
					t.Fatalf("payd networks shows the key: %s", out)
				}
				var status struct {
					Data []networkStatus `json:"data"`
				}
				if err := json.Unmarshal(out, &status); err != nil {
					t.Fatal(err)
				}
				if len(status.Data) == 1 && status.Data[0].Network == "tron" && status.Data[0].Chain == "nile" &&
					status.Data[0].Height == tip && status.Data[0].Hash == node.BlockID(tip) && status.Data[0].Error == "" {
					return
				}
				<-clockAfter(50 * time.Millisecond)
			}
			t.Fatalf("payd networks never showed tron at height %d: %s", tip, out)
		}
		wait(node.Tip())
		node.Mine(3)
		wait(node.Tip())
	})
}
