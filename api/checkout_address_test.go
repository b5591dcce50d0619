package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"payd"
	"payd/money"
	"payd/store"
	"payd/store/storetest"
)

// TestTenThousandDistinctAddresses opens 10,000 checkouts from 16
// concurrent customers, on both databases, and checks that they got
// exactly the wallet's receive addresses 0 to 9,999: every one distinct,
// none skipped, none handed out twice.
func TestTenThousandDistinctAddresses(t *testing.T) {
	const total, workers = 10_000, 16
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newShop(t, db)
		code := s.link(2500)["code"].(string)
		got := make([]string, total)
		var next, failed atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1) - 1; i < total; i = next.Add(1) - 1 {
					addr, err := openRaw(s.b.base, code, fmt.Sprintf("addr-%d-%d", w, i), fmt.Sprintf("10.2.%d.%d", i/250, i%250))
					if err != nil {
						failed.Add(1)
						t.Error(err)
						return
					}
					got[i] = addr
				}
			}()
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.FailNow()
		}
		want := map[string]bool{}
		key := s.walletKey(t, money.Polygon)
		for i := range uint32(total) {
			a, err := key.Address(i)
			if err != nil {
				t.Fatal(err)
			}
			want[a] = true
		}
		seen := map[string]bool{}
		for _, a := range got {
			if seen[a] || !want[a] {
				t.Fatalf("address %s handed out twice or not among indexes 0..%d", a, total-1)
			}
			seen[a] = true
		}
	})
}

// openRaw opens a USDC-on-polygon checkout of the link without the
// harness's OpenAPI check (too slow for 10,000 calls; TestLifecycle checks
// the same responses) and returns its deposit address.
func openRaw(base, code, idem, from string) (string, error) {
	body := fmt.Sprintf(`{"link_code":%q,"rail":"crypto","asset":"USDC","network":"polygon"}`, code)
	req, _ := http.NewRequest("POST", base+"/checkouts", bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	req.Header.Set("X-Forwarded-For", from)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Crypto struct {
				Address string `json:"address"`
			} `json:"crypto"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 201 {
		return "", fmt.Errorf("POST /checkouts: %d %v", resp.StatusCode, err)
	}
	return out.Data.Crypto.Address, nil
}

// FuzzCreateCheckout feeds POST /checkouts bodies through the strict
// decoder and the request's checks: whatever the bytes, the answer is a
// valid choice or a 4xx payd error, never a panic or a 500.
func FuzzCreateCheckout(f *testing.F) {
	for _, s := range []string{
		`{"link_code":"abc","rail":"crypto","asset":"USDC","network":"polygon"}`,
		`{"payment_id":"pmt_x","rail":"crypto","asset":"BTC","network":"bitcoin","email":"a@b.c"}`,
		`{"link_code":"abc","payment_id":"pmt_x","rail":"card"}`,
		`{"rail":"crypto","asset":"DOGE","network":"moon","email":"nope"}`,
		`{"link_code":"","rail":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req createCheckoutRequest
		if err := decodeJSON(body, &req); err != nil {
			return
		}
		ch, err := req.choice()
		if err == nil {
			if !ch.asset.Valid() || !ch.network.Valid() || (ch.linkCode == "") == (ch.paymentID == "") {
				t.Fatalf("accepted an invalid choice %+v from %s", ch, body)
			}
			return
		}
		var pe *payd.Error
		if !errors.As(err, &pe) || statusByCode[pe.Code] < 400 || statusByCode[pe.Code] >= 500 {
			t.Fatalf("error %v is not a 4xx payd error", err)
		}
	})
}
