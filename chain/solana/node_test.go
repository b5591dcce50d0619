package solana_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"payd"
	"payd/chain/solana"
	"payd/chain/solana/solanatest"
	"payd/clock"
	"payd/hd"
	"payd/money"
)

// solCents is the SOL price the tests' fee estimates use: $150.
const solCents = 15_000

func solPrice(context.Context, money.Asset) (int64, error) { return solCents, nil }

// watched is a payd.Watched of DepositKeys.
type watched map[string]bool

func (w watched) Has(k string) bool          { return w[k] }
func (w watched) Keys() iter.Seq[string]     { return maps.Keys(w) }
func (w watched) add(owner, ref string) bool { w[owner+"/"+ref] = true; return true }

// bundle is a chain and a node reading it.
type bundle struct {
	c     *solanatest.Chain
	n     *solana.Node
	clock *clock.Fake
}

// setup starts a mainnet chain and a node on it, with a fake clock and a
// rate limit the tests never reach.
func setup(t *testing.T) bundle {
	t.Helper()
	c := solanatest.New(t)
	clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	return bundle{c: c, n: mustNode(t, c.URL(), solana.Options{Price: solPrice, Clock: clk, MaxRPS: 1_000_000}), clock: clk}
}

func mustNode(t *testing.T, url string, opts solana.Options) *solana.Node {
	t.Helper()
	n, err := solana.New(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wallet is a fresh wallet address: an ed25519 public key.
func wallet(t *testing.T) string {
	t.Helper()
	k, err := hd.NewReference(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// ref is a fresh reference.
func ref(t *testing.T) string { return wallet(t) }

// scan scans from head to the finalized slot with nothing unconfirmed.
func (b bundle) scan(t *testing.T, head int64, w payd.WatchedSet, unconfirmed ...string) ([]payd.Block, payd.Pending) {
	t.Helper()
	tip, err := b.n.Tip(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	blocks, p, err := b.n.Scan(context.Background(), payd.BlockRef{Height: head, Hash: fmt.Sprint(head)}, tip, w,
		unconfirmed)
	if err != nil {
		t.Fatal(err)
	}
	return blocks, p
}

// describe writes transfers as "SIG[:8]/INDEX ASSET UNITS REF[:4]", sorted.
func describe(ts []payd.Transfer, names map[string]string) string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s/%d %s %s to %s ref %s", names[t.TxHash], t.Index, t.Amount.Asset,
			t.Amount.Units, names[t.To], names[t.Reference]))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func TestChainAndAssets(t *testing.T) {
	b := setup(t)
	if got := b.n.Chain(); got != "mainnet-beta" {
		t.Errorf("Chain = %q", got)
	}
	if got := b.n.Assets(); !slices.Equal(got, []money.Asset{money.USDC, money.USDT, money.SOL}) {
		t.Errorf("mainnet assets = %v", got)
	}
	if got := b.n.ExplorerURL("abc"); got != "https://explorer.solana.com/tx/abc" {
		t.Errorf("explorer = %q", got)
	}
	if b.n.FinalDepth() != 32 || payd.DefaultConfirmations[money.Solana] != 32 {
		t.Errorf("FinalDepth = %d", b.n.FinalDepth())
	}

	// Devnet: no token without --token, the cluster in the explorer URL.
	c := solanatest.New(t)
	c.SetGenesis(solanatest.Devnet)
	n := mustNode(t, c.URL(), solana.Options{Price: solPrice})
	if n.Chain() != "devnet" || !slices.Equal(n.Assets(), []money.Asset{money.SOL}) {
		t.Errorf("devnet: %s %v", n.Chain(), n.Assets())
	}
	if got := n.ExplorerURL("abc"); got != "https://explorer.solana.com/tx/abc?cluster=devnet" {
		t.Errorf("devnet explorer = %q", got)
	}
	mint := solanatest.Key("devnet usdc")
	c.SetMint(mint, 6)
	n = mustNode(t, c.URL(), solana.Options{Price: solPrice, Tokens: map[money.Asset]string{money.USDC: mint},
		Explorer: "https://solscan.io/"})
	if !slices.Equal(n.Assets(), []money.Asset{money.USDC, money.SOL}) {
		t.Errorf("devnet with a USDC mint: %v", n.Assets())
	}
	if got := n.ExplorerURL("abc"); got != "https://solscan.io/tx/abc" {
		t.Errorf("configured explorer = %q", got)
	}
	owner, r := wallet(t), ref(t)
	uri := n.PaymentURI(payd.PaymentRequest{Deposit: payd.Deposit{Address: owner, Reference: r},
		Amount: money.NewCoinAmount(money.USDC, 2_500_000), Label: "Shop"})
	if want := "solana:" + owner + "?amount=2.5&spl-token=" + mint + "&reference=" + r + "&label=Shop"; uri != want {
		t.Errorf("devnet payment URI = %s, want %s", uri, want)
	}
	if uri := n.PaymentURI(payd.PaymentRequest{Amount: money.NewCoinAmount(money.USDT, 1)}); uri != "" {
		t.Errorf("a URI for a token without a mint: %s", uri)
	}
	if _, err := n.Pending(context.Background(), watched{}, nil, 0); err == nil {
		t.Error("Pending answered on a Scanner")
	}
}

func TestRefused(t *testing.T) {
	ctx := context.Background()
	c := solanatest.New(t)
	other := solanatest.Key("a local validator")
	c.SetGenesis(other)
	_, err := solana.New(ctx, c.URL(), solana.Options{Price: solPrice})
	if err == nil || !strings.Contains(err.Error(), other) || payd.ErrorCode(err) == payd.ErrUpstreamUnavailable {
		t.Errorf("an unknown cluster: %v", err)
	}

	c.SetGenesis(solanatest.Devnet)
	mint := solanatest.Key("nine decimals")
	c.SetMint(mint, 9)
	_, err = solana.New(ctx, c.URL(), solana.Options{Price: solPrice, Tokens: map[money.Asset]string{money.USDC: mint}})
	if err == nil || !strings.Contains(err.Error(), mint) || !strings.Contains(err.Error(), "9 decimals") {
		t.Errorf("a 9-decimal USDC mint: %v", err)
	}
	notMint := solanatest.Key("a wallet")
	_, err = solana.New(ctx, c.URL(), solana.Options{Price: solPrice, Tokens: map[money.Asset]string{money.USDT: notMint}})
	if err == nil || !strings.Contains(err.Error(), notMint) || !strings.Contains(err.Error(), "not a token mint") {
		t.Errorf("an account that is not a mint: %v", err)
	}
	_, err = solana.New(ctx, c.URL(), solana.Options{Price: solPrice, Tokens: map[money.Asset]string{money.USDT: "0xabc"}})
	if err == nil {
		t.Error("a mint that is not an address was taken")
	}
	if _, err := solana.New(ctx, c.URL(), solana.Options{}); err == nil {
		t.Error("a node without a price was made")
	}
	if _, err := solana.New(ctx, "ws://host", solana.Options{Price: solPrice}); err == nil {
		t.Error("a ws URL was taken")
	}
}

func TestDepositKeys(t *testing.T) {
	b := setup(t)
	owner := wallet(t)
	d, err := b.n.Deposit(owner, 7)
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := b.n.Deposit(owner, 8)
	if d.Address != owner || d2.Address != owner || d.Reference == d2.Reference || b.n.ValidAddress(d.Reference) != nil {
		t.Fatalf("deposits %+v %+v", d, d2)
	}
	if k, ok := b.n.DepositKey(d); !ok || k != owner+"/"+d.Reference {
		t.Errorf("DepositKey = %q, %v", k, ok)
	}
	for _, bad := range []payd.Deposit{{Address: owner}, {Address: "0xabc", Reference: d.Reference},
		{Address: owner, Reference: "not base58 0OIl"}} {
		if _, ok := b.n.DepositKey(bad); ok {
			t.Errorf("DepositKey(%+v) taken", bad)
		}
	}
	if k, ok := b.n.WatchKey(owner); !ok || k != owner {
		t.Errorf("WatchKey = %q %v", k, ok)
	}
	if _, err := b.n.Deposit("xpub-nope", 0); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("a bad key: %v", err)
	}
	if err := b.n.ValidTxHash("abc"); payd.ErrorCode(err) != payd.ErrInvalidTxHash {
		t.Errorf("ValidTxHash: %v", err)
	}
}

// TestScanPayments sends every kind of transaction to one wallet and
// checks what Scan counts: SOL and USDC with a reference, a reference
// loaded from a lookup table, a token account created in the payment;
// not a transfer without a reference, a failed one, nor one of a mint
// that is not configured.
func TestScanPayments(t *testing.T) {
	b := setup(t)
	owner, other, payer := wallet(t), wallet(t), wallet(t)
	r := map[string]string{}
	for _, k := range []string{"sol", "usdc", "lookup", "created", "failed", "wrong", "usdt", "unused"} {
		r[k] = ref(t)
	}
	w := watched{}
	for _, k := range []string{"sol", "usdc", "lookup", "failed", "wrong", "unused"} {
		w.add(owner, r[k])
	}
	w.add(other, r["created"])
	head := b.c.Finalized()
	wrongMint := solanatest.Key("another token")
	b.c.SetMint(wrongMint, 6)
	sigs := map[string]string{
		b.c.Transfer(payer, owner, "", 1_500_000_000, r["sol"]):                                               "sol",
		b.c.Transfer(payer, owner, solanatest.USDC, 25_000_000, r["usdc"]):                                    "usdc",
		b.c.Transfer(payer, owner, solanatest.USDC, 9_000_000, ""):                                            "noref",
		b.c.Transfer(payer, owner, wrongMint, 25_000_000, r["wrong"]):                                         "wrong",
		b.c.Transfer(payer, owner, solanatest.USDT, 3_000_000, r["usdt"]):                                     "unwatched",
		b.c.Send(solanatest.Payment{From: payer, To: owner, Amount: 7, Reference: r["lookup"], Lookup: true}): "lookup",
		b.c.Send(solanatest.Payment{From: payer, To: owner, Mint: solanatest.USDC, Amount: 1, Reference: r["failed"],
			Failed: true}): "failed",
		b.c.Send(solanatest.Payment{From: payer, To: other, Mint: solanatest.USDT, Amount: 4_000_000,
			Reference: r["created"], CreateAccount: true}): "created",
	}
	names := map[string]string{owner: "owner", other: "other"}
	maps.Copy(names, sigs)
	for k, v := range r {
		names[v] = k
	}
	blocks, p := b.scan(t, head, w)
	// Each transfer's index is the credited account's in the
	// transaction's account keys (the fee payer is 0).
	want := "created/1 USDT 4000000 to other ref created; lookup/1 SOL 7 to owner ref lookup; " +
		"sol/1 SOL 1500000000 to owner ref sol; usdc/2 USDC 25000000 to owner ref usdc"
	if got := describe(p.Transfers, names); got != want {
		t.Errorf("confirmed transfers:\n got %s\nwant %s", got, want)
	}
	if len(blocks) != 0 {
		t.Errorf("blocks while nothing is final and the tip is head: %+v", blocks)
	}
	for _, tr := range p.Transfers {
		if tr.From != payer {
			t.Errorf("From = %s, want the fee payer", tr.From)
		}
	}

	// Finalized: the transfers go in a block at their slot, then one at
	// the tip.
	slot := b.c.Slot()
	b.c.Advance(40)
	blocks, p = b.scan(t, head, w)
	if len(p.Transfers) != 0 {
		t.Errorf("pending after finality: %s", describe(p.Transfers, names))
	}
	if len(blocks) != 2 || blocks[0].Height != slot || blocks[0].Parent != fmt.Sprint(head) ||
		blocks[1].Height != b.c.Finalized() || blocks[1].Parent != blocks[0].Hash || len(blocks[1].Transfers) != 0 {
		t.Fatalf("blocks = %+v", blocks)
	}
	if got := describe(blocks[0].Transfers, names); got != want {
		t.Errorf("final transfers:\n got %s\nwant %s", got, want)
	}

	// From the new head nothing is new, and no transaction is fetched
	// again.
	b.c.ResetCalls()
	b.c.Advance(1)
	blocks, p = b.scan(t, blocks[1].Height, w)
	if len(p.Transfers) != 0 || len(blocks) != 1 || len(blocks[0].Transfers) != 0 {
		t.Errorf("a scan with nothing new: %+v %+v", blocks, p)
	}
	calls := b.c.Calls()
	if calls["getTransaction"] != 0 || calls["getSignaturesForAddress"] != 6 || calls["getSignatureStatuses"] != 0 {
		t.Errorf("calls with nothing new (two wallets, three accounts each) = %v", calls)
	}
}

// TestScanAlive asks for unconfirmed transactions: one confirmed is alive,
// one forked away is not, one finalized in this scan's blocks is.
func TestScanAlive(t *testing.T) {
	b := setup(t)
	owner, payer, r1, r2 := wallet(t), wallet(t), ref(t), ref(t)
	w := watched{}
	w.add(owner, r1)
	w.add(owner, r2)
	head := b.c.Finalized()
	s1 := b.c.Transfer(payer, owner, "", 10, r1)
	b.c.Advance(40)
	s2 := b.c.Transfer(payer, owner, "", 20, r2)
	s3 := b.c.Transfer(payer, owner, "", 30, r2)
	b.c.Fork(s3)
	blocks, p := b.scan(t, head, w, s1, s2, s3)
	if !p.Alive[s1] || !p.Alive[s2] || p.Alive[s3] {
		t.Errorf("alive = %v (s1 final, s2 confirmed, s3 forked)", p.Alive)
	}
	if len(blocks) != 2 || len(blocks[0].Transfers) != 1 || blocks[0].Transfers[0].TxHash != s1 {
		t.Errorf("blocks = %+v", blocks)
	}
	if len(p.Transfers) != 1 || p.Transfers[0].TxHash != s2 {
		t.Errorf("pending = %+v", p.Transfers)
	}

	// s1 was stored unconfirmed, but the follower's head passed its slot
	// (a list that lagged the tip): it comes back in the block at tip.
	tipBefore := b.c.Finalized()
	b.c.Advance(5)
	blocks, p = b.scan(t, tipBefore, w, s1)
	if !p.Alive[s1] || len(blocks) != 1 || len(blocks[0].Transfers) != 1 || blocks[0].Transfers[0].TxHash != s1 {
		t.Errorf("a late final transaction: %+v %v", blocks, p.Alive)
	}
}

// TestPagingFallback buries a payment under more transactions than the
// pages read: the scan asks the wallet's references instead.
func TestPagingFallback(t *testing.T) {
	b := setup(t)
	owner, payer, r1, r2 := wallet(t), wallet(t), ref(t), ref(t)
	w := watched{}
	w.add(owner, r1)
	w.add(owner, r2)
	head := b.c.Finalized()
	sig := b.c.Transfer(payer, owner, "", 10, r1)
	b.c.Noise(owner, 5_001)
	b.c.ResetCalls()
	_, p := b.scan(t, head, w)
	if len(p.Transfers) != 1 || p.Transfers[0].TxHash != sig || p.Transfers[0].Reference != r1 {
		t.Fatalf("pending = %+v", p.Transfers)
	}
	// 5 pages of the owner, then one list per reference.
	if got := b.c.Calls()["getSignaturesForAddress"]; got != 5+2 {
		t.Errorf("getSignaturesForAddress calls = %d, want 7", got)
	}
}

// TestFeeEstimate prices the median priority fee on 200,000 compute units
// plus the signature fee, caches it a minute, and caps a fee beyond
// belief.
func TestFeeEstimate(t *testing.T) {
	ctx := context.Background()
	b := setup(t)
	b.c.SetFees(0, 100_000, 100_000, 1, 5)
	// 5,000 + 100,000 × 200,000 / 10^6 = 25,000 lamports at $150: 0.375 ¢ → 1 ¢.
	cents, err := b.n.FeeEstimateUSD(ctx, money.USDC)
	if err != nil || cents != 1 {
		t.Errorf("fee = %d, %v; want 1", cents, err)
	}
	b.c.SetFees(5_000_000, 5_000_000, 5_000_000)
	if cents, _ := b.n.FeeEstimateUSD(ctx, money.SOL); cents != 1 {
		t.Errorf("a cached fee = %d", cents)
	}
	b.clock.Advance(time.Minute)
	// 5,000 + 1,000,000 lamports at $150 = 15.075 ¢ → 16 ¢.
	if cents, _ := b.n.FeeEstimateUSD(ctx, money.SOL); cents != 16 {
		t.Errorf("fee after a minute = %d, want 16", cents)
	}
	b.c.SetFees(1 << 60)
	b.clock.Advance(time.Minute)
	// The cap: 10^7 micro-lamports a unit, 2,005,000 lamports = 30.075 ¢ → 31 ¢.
	if cents, _ := b.n.FeeEstimateUSD(ctx, money.SOL); cents != 31 {
		t.Errorf("a capped fee = %d, want 31", cents)
	}
	if _, err := b.n.FeeEstimateUSD(ctx, money.BTC); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("BTC on solana: %v", err)
	}
}

// TestThrottledAndHung: an HTTP 429 is upstream_unavailable and no call
// is made until its Retry-After passed; a node that hangs times out as
// upstream_unavailable; neither error repeats the URL's secrets.
func TestThrottledAndHung(t *testing.T) {
	ctx := context.Background()
	c := solanatest.New(t)
	clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	url := strings.Replace(c.URL(), "http://", "http://user:hunter2@", 1) + "/v2/SECRETKEY?api-key=SECRETQUERY"
	n := mustNode(t, url, solana.Options{Price: solPrice, Clock: clk, MaxRPS: 1000,
		HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
	secret := func(err error) {
		t.Helper()
		for _, s := range []string{"hunter2", "SECRET", "user"} {
			if err != nil && strings.Contains(err.Error(), s) {
				t.Errorf("the error repeats %q: %v", s, err)
			}
		}
	}
	c.Throttle(1, "7")
	_, err := n.Tip(ctx)
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "429") {
		t.Errorf("a 429: %v", err)
	}
	secret(err)
	c.ResetCalls()
	clk.Advance(6 * time.Second)
	if _, err := n.Tip(ctx); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || c.TotalCalls() != 0 {
		t.Errorf("within Retry-After: %v, %d calls made", err, c.TotalCalls())
	}
	clk.Advance(time.Second)
	if _, err := n.Tip(ctx); err != nil {
		t.Errorf("after Retry-After: %v", err)
	}

	c.Hang(1)
	_, err = n.Tip(ctx)
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("a hung node: %v", err)
	}
	secret(err)
	if _, err := n.Tip(ctx); err != nil {
		t.Errorf("after a hang: %v", err)
	}

	c.Close()
	_, err = n.Tip(ctx)
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("a node that is down: %v", err)
	}
	secret(err)
	_, err = solana.New(ctx, url, solana.Options{Price: solPrice})
	secret(err)
}

// TestRateLimit: the client makes at most MaxRPS calls a second, each
// call of a batch counted: MaxRPS − 1 for the scan, and one kept for fee
// reads.
func TestRateLimit(t *testing.T) {
	c := solanatest.New(t)
	clk := clock.NewFake(time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC))
	n := mustNode(t, c.URL(), solana.Options{Price: solPrice, Clock: clk, MaxRPS: 10})
	for range 9 - c.TotalCalls() { // New asked the genesis and the mints' decimals
		if _, err := n.Tip(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := n.Tip(context.Background())
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a 10th call within the second went through: %v", err)
	case <-clock.Real{}.NewTimer(100 * time.Millisecond).C():
	}
	for {
		clk.Advance(10 * time.Millisecond)
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if c.TotalCalls() != 10 {
				t.Errorf("calls = %d", c.TotalCalls())
			}
			return
		case <-clock.Real{}.NewTimer(time.Millisecond).C():
		}
	}
}
