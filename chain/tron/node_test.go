package tron_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payd"
	"payd/chain"
	"payd/chain/tron"
	"payd/chain/tron/trontest"
	"payd/hd"
	"payd/money"
)

// The tests here run package tron against trontest's node, which answers
// the HTTP API in the shapes java-tron and TronGrid document
// (testdata/NOTE.md): blocks that link by id, TRC-20 Transfer logs,
// failed transactions, reorgs, rate limits and hangs.

// trxPriceCents is the TRX price the tests' fee estimates use: $0.25.
const trxPriceCents = 25

// trxPrice is a fixed TRX price.
func trxPrice(_ context.Context, a money.Asset) (int64, error) {
	if a != "TRX" {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "no %s price", a)
	}
	return trxPriceCents, nil
}

// watched is a payd.Watched of WatchKeys.
type watched map[string]bool

func (w watched) Has(key string) bool { return w[key] }

// bundle is one test's chain, node and wallet.
type bundle struct {
	chain *trontest.Server
	node  *tron.Node
	key   string // the wallet's tron account key
	// deposits are the wallet's first deposit addresses.
	deposits []string
}

// setup starts a nile chain whose token is configured as USDT, a node for
// it, and the wallet of the BIP39 test phrase "abandon … about".
func setup(t *testing.T) bundle {
	t.Helper()
	s := trontest.Start(t, trontest.Options{})
	n := mustNode(t, s.URL(), tron.Options{Tokens: map[money.Asset]string{money.USDT: s.Token()}, Price: trxPrice})
	w, err := hd.WalletFromMnemonic(strings.TrimSpace(strings.Repeat("abandon ", 11))+" about", "")
	if err != nil {
		t.Fatal(err)
	}
	b := bundle{chain: s, node: n, key: w.Tron.String()}
	for i := range 3 {
		d, err := n.Deposit(b.key, uint32(i))
		if err != nil {
			t.Fatal(err)
		}
		b.deposits = append(b.deposits, d.Address)
	}
	return b
}

// mustNode is tron.New or the test's end.
func mustNode(t *testing.T, url string, opts tron.Options) *tron.Node {
	t.Helper()
	n, err := tron.New(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("tron.New: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// watch is the set of addresses, by the node's WatchKey.
func (b bundle) watch(t *testing.T, addrs ...string) watched {
	t.Helper()
	w := watched{}
	for _, a := range addrs {
		k, ok := b.node.WatchKey(a)
		if !ok {
			t.Fatalf("WatchKey(%s) refused", a)
		}
		w[k] = true
	}
	return w
}

// mine mines a block and reads it back through the node.
func (b bundle) mine(t *testing.T, w payd.Watched) payd.Block {
	t.Helper()
	b.chain.Mine(1)
	tip, err := b.node.Tip(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	blk, err := b.node.BlockAt(context.Background(), tip.Height, w)
	if err != nil {
		t.Fatal(err)
	}
	if blk.BlockRef != tip || blk.Parent != b.chain.BlockID(tip.Height-1) {
		t.Fatalf("BlockAt(%d) = %+v (parent %s), Tip = %+v", tip.Height, blk.BlockRef, blk.Parent, tip)
	}
	return blk
}

// usdt is n USDT base units.
func usdt(n int64) money.CoinAmount { return money.NewCoinAmount(money.USDT, n) }

func TestChainAndRules(t *testing.T) {
	b := setup(t)
	if got := b.node.Chain(); got != "nile" {
		t.Errorf("Chain() = %q", got)
	}
	if got := b.node.Assets(); !slices.Equal(got, []money.Asset{money.USDT}) {
		t.Errorf("Assets() = %v", got)
	}
	if got := b.node.Endpoint(); !strings.HasPrefix(got, "http://127.0.0.1:") {
		t.Errorf("Endpoint() = %q", got)
	}
	if c, ok := b.node.TokenContract(money.USDT); !ok || c != b.chain.Token() {
		t.Errorf("TokenContract(USDT) = %q, %v", c, ok)
	}
	req := payd.PaymentRequest{Deposit: payd.Deposit{Address: b.deposits[0]}, Amount: usdt(25_000_000)}
	want := "tron:" + b.chain.Token() + "/transfer?address=" + b.deposits[0] + "&uint256=25000000"
	if got := b.node.PaymentURI(req); got != want || got != chain.TRC20(b.chain.Token(), req) {
		t.Errorf("PaymentURI = %q, want %q", got, want)
	}
	if got := b.node.PaymentURI(payd.PaymentRequest{Amount: money.NewCoinAmount(money.USDC, 1)}); got != "" {
		t.Errorf("PaymentURI(USDC) = %q", got)
	}
	tx := strings.Repeat("ab", 32)
	if got := b.node.ExplorerURL(tx); got != "https://nile.tronscan.org/#/transaction/"+tx {
		t.Errorf("ExplorerURL = %q", got)
	}
	if err := b.node.ValidTxHash(tx); err != nil {
		t.Errorf("ValidTxHash(%s) = %v", tx, err)
	}
	if err := b.node.ValidTxHash("0x" + tx); payd.ErrorCode(err) != payd.ErrInvalidTxHash {
		t.Errorf("ValidTxHash(0x…) = %v", err)
	}
	if err := b.node.ValidAddress(b.deposits[0]); err != nil || !strings.HasPrefix(b.deposits[0], "T") {
		t.Errorf("ValidAddress(%s) = %v", b.deposits[0], err)
	}
	if err := b.node.ValidAddress("0x" + strings.Repeat("1", 40)); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("ValidAddress(0x…) = %v", err)
	}
	if _, ok := b.node.WatchKey("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u"); ok {
		t.Error("WatchKey took an address with a bad checksum")
	}
	if _, err := b.node.Deposit("xpub-nonsense", 0); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("Deposit(bad key) = %v", err)
	}
	// The explorer can be another.
	n := mustNode(t, b.chain.URL(), tron.Options{Tokens: map[money.Asset]string{money.USDT: b.chain.Token()},
		Price: trxPrice, Explorer: "https://scan.example/"})
	if got := n.ExplorerURL(tx); got != "https://scan.example/#/transaction/"+tx {
		t.Errorf("ExplorerURL with --explorer = %q", got)
	}
}

// TestMainnet: on mainnet the USDT contract is the issuer's by default,
// and tronscan.org the explorer.
func TestMainnet(t *testing.T) {
	usdtMain, _ := chain.TokenContract(money.Tron, money.USDT)
	s := trontest.Start(t, trontest.Options{Genesis: trontest.MainnetGenesis, Token: usdtMain})
	n := mustNode(t, s.URL(), tron.Options{Price: trxPrice})
	if c, ok := n.TokenContract(money.USDT); n.Chain() != "mainnet" || !ok || c != usdtMain {
		t.Fatalf("mainnet: chain %q, USDT %q %v", n.Chain(), c, ok)
	}
	if got := n.ExplorerURL("ab"); got != "https://tronscan.org/#/transaction/ab" {
		t.Errorf("ExplorerURL = %q", got)
	}
	// An empty contract removes the coin.
	n = mustNode(t, s.URL(), tron.Options{Price: trxPrice, Tokens: map[money.Asset]string{money.USDT: ""}})
	if len(n.Assets()) != 0 {
		t.Errorf("Assets without USDT = %v", n.Assets())
	}
	// On nile, nothing is taken without a configured contract.
	s = trontest.Start(t, trontest.Options{Token: usdtMain})
	n = mustNode(t, s.URL(), tron.Options{Price: trxPrice})
	if len(n.Assets()) != 0 {
		t.Errorf("Assets on nile without --token = %v", n.Assets())
	}
}

// TestTransfers reads a block holding one transfer of each kind: only
// the successful Transfer logs of the configured contract to watched
// addresses with a positive amount count, each with its place among its
// transaction's Transfer logs.
func TestTransfers(t *testing.T) {
	b := setup(t)
	w := b.watch(t, b.deposits[0], b.deposits[1])
	s := b.chain
	other := trontest.NewAddress("another token")
	customer := trontest.NewAddress("customer")
	paid := s.Transfer(b.deposits[0], 25_000_000)
	s.Transfer(b.deposits[2], 7_000_000)                                                                   // not watched
	s.Send(true, trontest.Log{From: customer, To: b.deposits[0], Amount: big.NewInt(9)})                   // failed
	s.Send(false, trontest.Log{Contract: other, From: customer, To: b.deposits[0], Amount: big.NewInt(8)}) // another contract
	s.Send(false, trontest.Log{From: customer, To: b.deposits[0], Amount: big.NewInt(0)})                  // zero: spam
	multi := s.Send(false,
		trontest.Log{From: customer, To: b.deposits[1], Amount: big.NewInt(1)},
		trontest.Log{Contract: other, From: customer, To: b.deposits[1], Amount: big.NewInt(100)}, // takes no place
		trontest.Log{From: customer, To: b.deposits[2], Amount: big.NewInt(2)},                    // place 1, not watched
		trontest.Log{From: customer, To: b.deposits[0], Amount: big.NewInt(3)},
		trontest.Log{Topics: []string{trontest.TransferTopic}}, // malformed: place 3, not a transfer
		trontest.Log{From: customer, To: b.deposits[1], Amount: big.NewInt(4)},
	)
	blk := b.mine(t, w)
	want := []payd.Transfer{
		{TxHash: paid, Index: 0, From: trontest.Sender(), To: b.deposits[0], Amount: usdt(25_000_000)},
		{TxHash: multi, Index: 0, From: customer, To: b.deposits[1], Amount: usdt(1)},
		{TxHash: multi, Index: 2, From: customer, To: b.deposits[0], Amount: usdt(3)},
		{TxHash: multi, Index: 4, From: customer, To: b.deposits[1], Amount: usdt(4)},
	}
	checkTransfers(t, blk.Transfers, want)
	if blk := b.mine(t, w); len(blk.Transfers) != 0 {
		t.Errorf("an empty block has transfers: %+v", blk.Transfers)
	}
}

// checkTransfers compares transfers field by field.
func checkTransfers(t *testing.T, got, want []payd.Transfer) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("transfers = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.TxHash != w.TxHash || g.Index != w.Index || g.From != w.From || g.To != w.To ||
			g.Amount.Asset != w.Amount.Asset || g.Amount.Units.Cmp(w.Amount.Units) != 0 {
			t.Errorf("transfer %d = %+v, want %+v", i, g, w)
		}
	}
}

// TestNewRefuses: a node on a chain payd does not follow, and token
// contracts that are not the token's, stop the start with a message that
// names them.
func TestNewRefuses(t *testing.T) {
	other := trontest.Start(t, trontest.Options{Genesis: strings.Repeat("0", 16) + strings.Repeat("7", 48)})
	_, err := tron.New(context.Background(), other.URL(), tron.Options{Price: trxPrice})
	if err == nil || payd.ErrorCode(err) == payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "7777") {
		t.Errorf("a node on another chain: %v", err)
	}
	wrong := trontest.Start(t, trontest.Options{Decimals: 18})
	_, err = tron.New(context.Background(), wrong.URL(), tron.Options{Price: trxPrice,
		Tokens: map[money.Asset]string{money.USDT: wrong.Token()}})
	if err == nil || !strings.Contains(err.Error(), "18 decimals") || !strings.Contains(err.Error(), wrong.Token()) {
		t.Errorf("a contract of 18 decimals: %v", err)
	}
	none := trontest.NewAddress("no contract here")
	_, err = tron.New(context.Background(), wrong.URL(), tron.Options{Price: trxPrice,
		Tokens: map[money.Asset]string{money.USDT: none}})
	if err == nil || !strings.Contains(err.Error(), "does not answer decimals()") || !strings.Contains(err.Error(), none) {
		t.Errorf("an address without a contract: %v", err)
	}
	for _, bad := range []map[money.Asset]string{{money.USDT: "0xdAC17F958D2ee523a2206206994597C13D831ec7"},
		{money.USDC: wrong.Token()}, {money.USDT: "T" + strings.Repeat("1", 33)}} {
		if _, err := tron.New(context.Background(), wrong.URL(), tron.Options{Price: trxPrice, Tokens: bad}); err == nil {
			t.Errorf("tokens %v were taken", bad)
		}
	}
	if _, err := tron.New(context.Background(), wrong.URL(), tron.Options{}); err == nil {
		t.Error("a node without a price for its fees was made")
	}
	for _, url := range []string{"ftp://x", "http://", "::", "ws://127.0.0.1:1"} {
		if _, err := tron.New(context.Background(), url, tron.Options{Price: trxPrice}); err == nil {
			t.Errorf("URL %q was taken", url)
		}
	}
}

// TestPendingAlive: a transfer the follower holds unconfirmed is alive
// while it is mined above the processed height; one mined at or below it,
// or unknown, is not, and the pool is not read for transfers.
func TestPendingAlive(t *testing.T) {
	b := setup(t)
	mined := b.chain.Transfer(b.deposits[0], 1)
	b.chain.Mine(1)
	waiting := b.chain.Transfer(b.deposits[0], 2)
	tip := b.chain.Tip()
	unconfirmed := []string{mined, waiting, "nonsense", strings.Repeat("0", 64)}
	p, err := b.node.Pending(context.Background(), b.watch(t, b.deposits[0]), unconfirmed, tip-1)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive[mined] || len(p.Alive) != 1 || len(p.Transfers) != 0 {
		t.Errorf("Pending above the processed height = %+v", p)
	}
	p, err = b.node.Pending(context.Background(), b.watch(t, b.deposits[0]), unconfirmed, tip)
	if err != nil || len(p.Alive) != 0 {
		t.Errorf("Pending at the processed height = %+v, %v", p, err)
	}
	if got := b.chain.Calls(trontest.InfoByID); got != 6 {
		t.Errorf("%d calls of gettransactioninfobyid for 3 well-formed ids twice", got)
	}
}

// TestFeeEstimate: 130,000 energy and 345 bytes at the chain's prices, in
// TRX at its price, rounded up, reused for a minute; the one-cent minimum
// without a TRX price.
func TestFeeEstimate(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	// (130,000 × 100 + 345 × 1,000) sun = 13.345 TRX at $0.25 = 333.6 cents.
	got, err := b.node.FeeEstimateUSD(ctx, money.USDT)
	if err != nil || got != 334 {
		t.Fatalf("FeeEstimateUSD(USDT) = %d, %v", got, err)
	}
	b.chain.SetEnergyFee(420)
	if got, _ := b.node.FeeEstimateUSD(ctx, money.USDT); got != 334 || b.chain.Calls(trontest.ChainParameters) != 1 {
		t.Errorf("a second estimate within the minute = %d after %d reads", got, b.chain.Calls(trontest.ChainParameters))
	}
	if _, err := b.node.FeeEstimateUSD(ctx, money.USDC); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("FeeEstimateUSD(USDC) = %v", err)
	}
	noPrice := func(context.Context, money.Asset) (int64, error) {
		return 0, payd.Errorf(payd.ErrUpstreamUnavailable, "no TRX price in the exchange rates")
	}
	zeroPrice := func(context.Context, money.Asset) (int64, error) { return 0, nil }
	for _, price := range []chain.Price{noPrice, zeroPrice} {
		// TRX is an optional fee coin: without its price the estimate is
		// the minimum, as polygon's without POL, and the node is not asked.
		n := mustNode(t, b.chain.URL(), tron.Options{Tokens: map[money.Asset]string{money.USDT: b.chain.Token()}, Price: price})
		reads := b.chain.Calls(trontest.ChainParameters)
		if got, err := n.FeeEstimateUSD(ctx, money.USDT); err != nil || got != 1 {
			t.Errorf("FeeEstimateUSD without a TRX price = %d, %v, want the one-cent minimum", got, err)
		}
		if b.chain.Calls(trontest.ChainParameters) != reads {
			t.Error("FeeEstimateUSD without a TRX price read the chain's prices")
		}
	}
	var n *tron.Node
	// The energy price is bounded: 1,000 sun at most.
	b.chain.SetEnergyFee(1_000_000)
	n = mustNode(t, b.chain.URL(), tron.Options{Tokens: map[money.Asset]string{money.USDT: b.chain.Token()}, Price: trxPrice})
	if got, err := n.FeeEstimateUSD(ctx, money.USDT); err != nil || got != 3259 { // 130.345 TRX
		t.Errorf("FeeEstimateUSD at an absurd energy price = %d, %v", got, err)
	}
	absurd := func(context.Context, money.Asset) (int64, error) { return 1 << 62, nil }
	n = mustNode(t, b.chain.URL(), tron.Options{Tokens: map[money.Asset]string{money.USDT: b.chain.Token()}, Price: absurd})
	if _, err := n.FeeEstimateUSD(ctx, money.USDT); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("FeeEstimateUSD at an absurd TRX price = %v", err)
	}
}

// TestUpstreamErrors: a rate limit (429, and TronGrid's 403, 503 and 200
// with its message), a hang and a node that is gone are
// upstream_unavailable, and their messages never hold the URL's secrets.
func TestUpstreamErrors(t *testing.T) {
	s := trontest.Start(t, trontest.Options{APIKey: "sekrit-key"})
	url := strings.Replace(s.URL(), "http://", "http://sekrit-key@", 1) + "/?auth=sekrit-query"
	n := mustNode(t, url, tron.Options{Tokens: map[money.Asset]string{money.USDT: s.Token()}, Price: trxPrice,
		HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
	ctx := context.Background()
	check := func(what string, err error, want string) {
		t.Helper()
		if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want upstream_unavailable with %q", what, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%s: the error shows a secret: %v", what, err)
		}
	}
	s.Fail429(1, "5")
	_, err := n.Tip(ctx)
	check("429", err, "HTTP 429: rate limited, retry after 5")
	s.Fail429(1, "")
	_, err = n.BlockAt(ctx, 1, watched{})
	check("429 without Retry-After", err, "HTTP 429")
	s.Hang(1)
	_, err = n.Tip(ctx)
	check("a hang", err, "timed out")
	if _, err := n.Tip(ctx); err != nil {
		t.Fatalf("Tip once the node answers: %v", err)
	}
	// TronGrid's rate limits: 403 without a key, 503 with one, or its
	// message in a 200 answer, which the error repeats.
	for _, c := range trontest.RateLimits {
		want := "refused: The key exceeds the frequency limit(30), and the query server is suspended for 30s"
		if c.Status != http.StatusOK {
			want = fmt.Sprintf("HTTP %d: The key exceeds the frequency limit", c.Status)
		}
		s.Refuse(1, c.Status, c.Body)
		_, err = n.Tip(ctx)
		check(fmt.Sprintf("rate limited with %d", c.Status), err, want)
		s.Refuse(1, c.Status, c.Body)
		_, err = n.BlockAt(ctx, 1, watched{})
		check(fmt.Sprintf("BlockAt rate limited with %d", c.Status), err, want)
	}
	// No block there yet: not_found, which the follower reads again.
	if _, err = n.BlockAt(ctx, 99, watched{}); payd.ErrorCode(err) != payd.ErrNotFound ||
		!strings.Contains(err.Error(), "no block at height 99 yet") {
		t.Errorf("a block the node does not have: %v", err)
	}
	// Without the key, the node refuses.
	_, err = tron.New(ctx, s.URL()+"/?auth=sekrit-query", tron.Options{Price: trxPrice})
	check("no key", err, "HTTP 401")
	_, err = tron.New(ctx, "http://sekrit-user:sekrit-pass@127.0.0.1:1/sekrit-path", tron.Options{Price: trxPrice})
	check("a closed port", err, "127.0.0.1:1")
}

// TestBlockAcrossBackends runs BlockAt behind a load balancer whose two
// backends disagree, as TronGrid's may: infos of a competing block at the
// height are refused as the block changing while it was read, a backend
// behind the tip answers not_found (not there yet), and a block read
// whole from one backend counts, in two calls.
func TestBlockAcrossBackends(t *testing.T) {
	b := setup(t)
	other := trontest.Start(t, trontest.Options{})
	if other.BlockID(1) != b.chain.BlockID(1) {
		t.Fatal("the backends do not share block 1")
	}
	other.Diverge("competing")
	paid := b.chain.Transfer(b.deposits[0], 25_000_000)
	b.chain.Mine(1)
	never := other.Transfer(b.deposits[0], 99_000_000) // a payment only the competing block holds
	other.Mine(1)
	r := &router{tip: b.chain, blocks: b.chain, infos: other}
	url := trontest.Balance(t, r.route)
	n := mustNode(t, url, tron.Options{Tokens: map[money.Asset]string{money.USDT: b.chain.Token()}, Price: trxPrice})
	ctx := context.Background()
	w := b.watch(t, b.deposits[0])

	_, err := n.BlockAt(ctx, 2, w)
	if payd.ErrorCode(err) != payd.ErrUpstreamUnavailable || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("BlockAt with the infos of a competing block = %v", err)
	}
	// The blocks' backend is behind: no block 3, and no infos of 3.
	b.chain.Transfer(b.deposits[0], 1)
	other.Transfer(b.deposits[0], 2)
	other.Mine(1)
	if _, err := n.BlockAt(ctx, 3, w); payd.ErrorCode(err) != payd.ErrNotFound {
		t.Fatalf("BlockAt of a block the backend does not have yet = %v", err)
	}
	r.set(other, other, b.chain)
	if _, err := n.BlockAt(ctx, 3, w); payd.ErrorCode(err) != payd.ErrNotFound || !strings.Contains(err.Error(), "no transaction infos") {
		t.Fatalf("BlockAt whose infos' backend is behind = %v", err)
	}

	// One backend answering both: the block counts, in two calls.
	r.set(b.chain, b.chain, b.chain)
	calls := b.chain.Calls(trontest.GetBlock) + b.chain.Calls(trontest.InfosByBlockNum)
	got, err := n.BlockAt(ctx, 2, w)
	if err != nil || got.Hash != b.chain.BlockID(2) || len(got.Transfers) != 1 || got.Transfers[0].TxHash != paid {
		t.Fatalf("BlockAt from one backend = %+v, %v", got, err)
	}
	if c := b.chain.Calls(trontest.GetBlock) + b.chain.Calls(trontest.InfosByBlockNum) - calls; c != 2 {
		t.Errorf("BlockAt made %d calls, want 2", c)
	}
	for _, tr := range got.Transfers {
		if tr.TxHash == never {
			t.Fatal("the competing block's payment was read")
		}
	}
}

// router sends the tip, the blocks and the infos to the backends set:
// the load-balancing of a test, safe for the balancer's goroutines.
type router struct {
	mu                 sync.Mutex
	tip, blocks, infos *trontest.Server
}

// set sends the tip, the blocks and the infos to those backends from now
// on.
func (r *router) set(tip, blocks, infos *trontest.Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tip, r.blocks, r.infos = tip, blocks, infos
}

// route is the backend of a request to path with body: the infos' for
// gettransactioninfobyblocknum, the tip's for getblock without a height,
// the blocks' for the rest.
func (r *router) route(path string, body []byte) *trontest.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case path == trontest.InfosByBlockNum:
		return r.infos
	case path == trontest.GetBlock && !strings.Contains(string(body), "id_or_num"):
		return r.tip
	}
	return r.blocks
}
