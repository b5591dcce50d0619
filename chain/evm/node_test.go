package evm_test

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"payd"
	"payd/chain/evm"
	"payd/chain/evm/evmtest"
	"payd/hd"
	"payd/money"
)

// The tests here run package evm against go-ethereum's simulated chain over
// HTTP JSON-RPC, and the follow tests over websocket too (package
// evmtest): real blocks, receipts, logs of a real ERC-20, reorgs and a
// real transaction pool.

// ethPriceCents is the ETH price the tests' fee estimates use: $3,200.
const ethPriceCents = 320_000

// watched is a payd.Watched of WatchKeys.
type watched map[string]bool

func (w watched) Has(key string) bool { return w[key] }

// bundle is one test's chain, node and wallet.
type bundle struct {
	chain *evmtest.Chain
	node  *evm.Node
	token string // the USDC contract on the chain
	key   string // the wallet's ethereum account key
	// deposits are the wallet's first deposit addresses.
	deposits []string
}

// setup starts a chain with a token deployed as USDC and a node for it on
// ethereum over HTTP, with the wallet of the BIP39 test phrase
// "abandon … about".
func setup(t *testing.T) bundle { return setupOver(t, (*evmtest.Chain).URL) }

// setupOver is setup with the node reached at endpoint: the chain's URL
// or WSURL.
func setupOver(t *testing.T, endpoint func(*evmtest.Chain) string) bundle {
	t.Helper()
	c := evmtest.Start(t)
	token := c.DeployToken(c.Accounts[0], "USDC", big.NewInt(1_000_000_000_000))
	n := mustNode(t, money.Ethereum, endpoint(c), evm.Options{Tokens: map[money.Asset]string{money.USDC: token}, Price: ethPrice})
	w, err := hd.WalletFromMnemonic(strings.TrimSpace(strings.Repeat("abandon ", 11))+" about", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	b := bundle{chain: c, node: n, token: token, key: w.Ethereum.String()}
	for i := range 3 {
		d, err := n.Deposit(b.key, uint32(i))
		if err != nil {
			t.Fatal(err)
		}
		b.deposits = append(b.deposits, d.Address)
	}
	return b
}

// overEach runs test over HTTP and over websocket, each on a chain of its
// own: the node reads the chain id, blocks, logs and the pool alike over
// both.
func overEach(t *testing.T, test func(t *testing.T, b bundle)) {
	for name, endpoint := range map[string]func(*evmtest.Chain) string{
		"http": (*evmtest.Chain).URL, "ws": (*evmtest.Chain).WSURL} {
		t.Run(name, func(t *testing.T) {
			b := setupOver(t, endpoint)
			if got := b.node.Chain(); got != "chain 1337" {
				t.Errorf("Chain() = %q", got)
			}
			if got := b.node.Endpoint(); !strings.HasPrefix(got, name+"://127.0.0.1:") {
				t.Errorf("Endpoint() = %q", got)
			}
			test(t, b)
		})
	}
}

// ethPrice is a fixed ETH price.
func ethPrice(ctx context.Context, a money.Asset) (int64, error) { return ethPriceCents, nil }

// mustNode is evm.New or the test's end.
func mustNode(t *testing.T, n money.Network, url string, opts evm.Options) *evm.Node {
	t.Helper()
	node, err := evm.New(context.Background(), n, url, opts)
	if err != nil {
		t.Fatalf("evm.New(%s): %v", n, err)
	}
	return node
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

// commit mines a block and reads it back through the node.
func (b bundle) commit(t *testing.T, w payd.Watched) payd.Block {
	t.Helper()
	b.chain.Commit()
	tip, err := b.node.Tip(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	blk, err := b.node.BlockAt(context.Background(), tip.Height, w)
	if err != nil {
		t.Fatal(err)
	}
	if blk.BlockRef != tip {
		t.Fatalf("BlockAt(%d) = %+v, Tip = %+v", tip.Height, blk.BlockRef, tip)
	}
	return blk
}

// units is n base units.
func units(n int64) *big.Int { return big.NewInt(n) }

// eth is milli thousandths of an ETH, in wei.
func eth(milli int64) *big.Int { return new(big.Int).Mul(big.NewInt(milli), big.NewInt(1e15)) }

func TestChainAndAssets(t *testing.T) {
	b := setup(t)
	if got := b.node.Chain(); got != "chain 1337" {
		t.Errorf("Chain() = %q", got)
	}
	if got, want := b.node.Assets(), []money.Asset{money.USDC, money.ETH}; !slices.Equal(got, want) {
		t.Errorf("Assets() = %v, want %v", got, want)
	}
	// On a chain that is not mainnet the mainnet contracts are not taken.
	bare := mustNode(t, money.Ethereum, b.chain.URL(), evm.Options{Price: ethPrice})
	if got := bare.Assets(); !slices.Equal(got, []money.Asset{money.ETH}) {
		t.Errorf("without tokens: Assets() = %v, want [ETH]", got)
	}
	poly := mustNode(t, money.Polygon, b.chain.URL(), evm.Options{})
	if got := poly.Assets(); len(got) != 0 {
		t.Errorf("polygon without tokens: Assets() = %v, want none (POL is not a payd coin)", got)
	}
	poly = mustNode(t, money.Polygon, b.chain.URL(), evm.Options{Tokens: map[money.Asset]string{money.USDC: b.token}})
	if got := poly.Assets(); !slices.Equal(got, []money.Asset{money.USDC}) {
		t.Errorf("polygon: Assets() = %v, want [USDC]", got)
	}
	if got := b.node.ExplorerURL("0xab"); got != "" {
		t.Errorf("ExplorerURL on a dev chain = %q, want \"\"", got)
	}
	req := payd.PaymentRequest{Deposit: payd.Deposit{Address: b.deposits[0]}, Amount: money.NewCoinAmount(money.USDC, 12_500_000)}
	want := "ethereum:" + b.token + "@1337/transfer?address=" + b.deposits[0] + "&uint256=12500000"
	if got := b.node.PaymentURI(req); got != want {
		t.Errorf("PaymentURI = %s, want %s", got, want)
	}
}

func TestDepositWatchKey(t *testing.T) {
	b := setup(t)
	if b.deposits[0] != "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" {
		t.Errorf("first deposit %s, want docs/wallets.md's", b.deposits[0])
	}
	for _, d := range b.deposits {
		k, ok := b.node.WatchKey(d)
		if !ok || k != string(common.HexToAddress(d).Bytes()) {
			t.Errorf("WatchKey(%s) = %x, %v", d, k, ok)
		}
		for _, spelling := range []string{strings.ToLower(d), "0x" + strings.ToUpper(d[2:])} {
			if k2, ok := b.node.WatchKey(spelling); !ok || k2 != k {
				t.Errorf("WatchKey(%s) = %x, %v; want %x", spelling, k2, ok, k)
			}
		}
	}
	bad := b.deposits[0][:10] + strings.ToLower(b.deposits[0][10:11]) + b.deposits[0][11:]
	if bad != b.deposits[0] {
		if _, ok := b.node.WatchKey(bad); ok {
			t.Errorf("WatchKey took %s, a broken checksum", bad)
		}
	}
	if _, err := b.node.Deposit("xpub-nonsense", 0); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("Deposit of a bad key: %v", err)
	}
}

func TestETHPayment(t *testing.T) { overEach(t, testETHPayment) }

func testETHPayment(t *testing.T, b bundle) {
	payer := b.chain.Accounts[1]
	w := b.watch(t, b.deposits[0])
	_, before := b.chain.Head()
	tx := b.chain.SendETH(payer, b.deposits[0], eth(1500))
	b.chain.SendETH(payer, b.deposits[1], eth(7)) // not watched
	blk := b.commit(t, w)
	if blk.Parent != strings.ToLower(before) {
		t.Errorf("Parent = %s, want the previous head %s", blk.Parent, before)
	}
	want := []payd.Transfer{{TxHash: strings.ToLower(tx), Index: evm.NativeIndex, From: payer.Address,
		To: b.deposits[0], Amount: money.CoinAmount{Asset: money.ETH, Units: eth(1500)}}}
	checkTransfers(t, blk.Transfers, want)
}

func TestTokenPayment(t *testing.T) { overEach(t, testTokenPayment) }

func testTokenPayment(t *testing.T, b bundle) {
	payer := b.chain.Accounts[0]
	stranger := evmtest.NewAccount(t, "stranger").Address
	w := b.watch(t, b.deposits[0], b.deposits[1])
	one := b.chain.TransferToken(payer, b.token, b.deposits[0], units(12_500_000))
	batch := b.chain.TransferTokenBatch(payer, b.token, []string{stranger, b.deposits[1], b.deposits[0]},
		[]*big.Int{units(1), units(99_999_999), units(10_000)})
	blk := b.commit(t, w)
	usdc := func(n int64) money.CoinAmount { return money.NewCoinAmount(money.USDC, n) }
	// Index is a log's place among its transaction's Transfer logs.
	want := []payd.Transfer{
		{TxHash: strings.ToLower(one), Index: 0, From: payer.Address, To: b.deposits[0], Amount: usdc(12_500_000)},
		{TxHash: strings.ToLower(batch), Index: 1, From: payer.Address, To: b.deposits[1], Amount: usdc(99_999_999)},
		{TxHash: strings.ToLower(batch), Index: 2, From: payer.Address, To: b.deposits[0], Amount: usdc(10_000)},
	}
	checkTransfers(t, blk.Transfers, want)
	if got := b.chain.TokenBalance(b.token, b.deposits[0]); got.Int64() != 12_510_000 {
		t.Errorf("the chain says deposit 0 holds %s", got)
	}
}

// TestFailedNotCounted sends what moves nothing: ether to the token (it has
// no receive function, so the transaction reverts), a token transfer
// beyond the sender's balance (reverts, no log) and a zero token transfer
// (a log, no value).
func TestFailedNotCounted(t *testing.T) {
	b := setup(t)
	broke := b.chain.Accounts[2] // ether but no tokens
	w := b.watch(t, b.token, b.deposits[0])
	toToken := b.chain.SendETH(broke, b.token, eth(1))
	tooMuch := b.chain.TransferToken(broke, b.token, b.deposits[0], units(5))
	zero := b.chain.TransferToken(b.chain.Accounts[0], b.token, b.deposits[0], units(0))
	blk := b.commit(t, w)
	for _, tx := range []string{toToken, tooMuch} {
		if r := b.chain.Receipt(tx); r.Status != 0 {
			t.Fatalf("%s did not revert", tx)
		}
	}
	if r := b.chain.Receipt(zero); r.Status != 1 || len(r.Logs) != 1 {
		t.Fatalf("the zero transfer: status %d, %d logs", r.Status, len(r.Logs))
	}
	checkTransfers(t, blk.Transfers, nil)
}

// checkTransfers compares transfers field by field, in order.
func checkTransfers(t *testing.T, got, want []payd.Transfer) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d transfers, want %d: %+v", len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.TxHash != w.TxHash || g.Index != w.Index || g.From != w.From || g.To != w.To ||
			g.Reference != "" || g.Confirmations != 0 || g.Amount.Asset != w.Amount.Asset || g.Amount.Cmp(w.Amount) != 0 {
			t.Errorf("transfer %d =\n %+v\nwant\n %+v", i, g, w)
		}
	}
}

// TestReorg orphans a block holding a payment: Fork goes back to its
// parent, and the new branch outgrows the old. Tip and BlockAt follow the
// new branch. Once the new branch is read, neither orphaned payment is
// alive: one was mined again in a block BlockAt read (its transfer comes
// from there), the other was replaced by a transaction with its nonce.
func TestReorg(t *testing.T) { overEach(t, testReorg) }

func testReorg(t *testing.T, b bundle) {
	ctx := context.Background()
	payer, other := b.chain.Accounts[1], b.chain.Accounts[2]
	w := b.watch(t, b.deposits[0])
	_, parent := b.chain.Head()
	again := b.chain.SendETH(payer, b.deposits[0], eth(100))
	replaced := b.chain.SendETH(other, b.deposits[0], eth(200))
	old := b.commit(t, w)
	if len(old.Transfers) != 2 {
		t.Fatalf("before the fork: %+v", old.Transfers)
	}

	b.chain.Fork(parent)
	b.chain.ReplaceETH(other, b.chain.Nonce(other)-1, evmtest.NewAccount(t, "elsewhere").Address, eth(200), big.NewInt(10e9))
	b.chain.Commit()
	b.chain.Commit() // the new branch is longer
	tip, err := b.node.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tip.Height != old.Height+1 {
		t.Fatalf("tip %d after the fork, want %d", tip.Height, old.Height+1)
	}
	blk, err := b.node.BlockAt(ctx, old.Height, w)
	if err != nil {
		t.Fatal(err)
	}
	if blk.Hash == old.Hash || blk.Parent != old.Parent {
		t.Errorf("height %d: hash %s parent %s; the orphan was %s on %s", old.Height, blk.Hash, blk.Parent, old.Hash, old.Parent)
	}
	next, err := b.node.BlockAt(ctx, tip.Height, w)
	if err != nil || next.Parent != blk.Hash || next.Hash != tip.Hash {
		t.Errorf("the new tip %+v does not build on %s (%v)", next, blk.Hash, err)
	}
	// The payer's transaction went back to the pool and into the new
	// branch; the other one was replaced by a payment elsewhere.
	checkTransfers(t, blk.Transfers, old.Transfers[:1])
	p, err := b.node.Pending(ctx, w, []string{strings.ToLower(again), strings.ToLower(replaced)}, tip.Height)
	if err != nil {
		t.Fatal(err)
	}
	if p.Transfers != nil || len(p.Alive) != 0 {
		t.Errorf("Pending = %+v, want none alive", p)
	}
	if _, _, err := b.chain.Client().TransactionByHash(ctx, common.HexToHash(replaced)); err == nil {
		t.Errorf("go-ethereum still knows the replaced %s", replaced)
	}
}

// TestForkShorter reads the chain right after Fork, before the new branch
// is mined: the tip is the fork's parent, and the orphaned height has no
// block, which is an error to retry. (Whether the orphaned transaction is
// back in the pool yet is not asked: geth's pool takes it back on a
// goroutine of its own, TestReorg asks once the next block is mined.)
func TestForkShorter(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	w := b.watch(t, b.deposits[0])
	_, parent := b.chain.Head()
	b.chain.SendETH(b.chain.Accounts[1], b.deposits[0], eth(1))
	old := b.commit(t, w)
	b.chain.Fork(parent)
	tip, err := b.node.Tip(ctx)
	if err != nil || tip.Height != old.Height-1 || tip.Hash != old.Parent {
		t.Fatalf("Tip after Fork = %+v (%v), want the parent %s", tip, err, old.Parent)
	}
	if _, err := b.node.BlockAt(ctx, old.Height, w); payd.ErrorCode(err) != payd.ErrUpstreamUnavailable {
		t.Errorf("BlockAt(orphaned height) = %v, want upstream_unavailable", err)
	}
}

// TestPendingBatches asks about more transactions than one batch holds:
// waiting ones are alive, made-up and malformed ones are not.
func TestPendingBatches(t *testing.T) { overEach(t, testPendingBatches) }

func testPendingBatches(t *testing.T, b bundle) {
	var waiting, asked []string
	for i := range 3 {
		waiting = append(waiting, strings.ToLower(b.chain.SendETH(b.chain.Accounts[i], b.deposits[1], eth(1))))
	}
	for i := range 250 {
		asked = append(asked, common.BigToHash(big.NewInt(int64(i+1))).Hex())
	}
	asked = append(asked, "0xnot-a-hash")
	asked = slices.Insert(asked, 120, waiting...)
	head, _ := b.chain.Head()
	p, err := b.node.Pending(context.Background(), watched{}, asked, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Alive) != len(waiting) {
		t.Errorf("%d alive, want %d", len(p.Alive), len(waiting))
	}
	for _, tx := range waiting {
		if !p.Alive[tx] {
			t.Errorf("%s not alive", tx)
		}
	}
}

func TestFeeEstimate(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.chain.Commit()
	h, err := b.chain.Client().FeeHistory(ctx, 5, nil, []float64{50})
	if err != nil {
		t.Fatal(err)
	}
	tips := []*big.Int{}
	for _, r := range h.Reward {
		tips = append(tips, r[0])
	}
	slices.SortFunc(tips, func(a, b *big.Int) int { return a.Cmp(b) })
	price := new(big.Int).Add(h.BaseFee[len(h.BaseFee)-1], tips[len(tips)/2])
	for _, c := range []struct {
		a   money.Asset
		gas int64
	}{{money.ETH, 21_000}, {money.USDC, 65_000}} {
		got, err := b.node.FeeEstimateUSD(ctx, c.a)
		if err != nil {
			t.Fatal(err)
		}
		want := new(big.Int).Mul(price, big.NewInt(c.gas*ethPriceCents))
		want.Add(want, new(big.Int).Sub(evmtest.Ether, big.NewInt(1))).Quo(want, evmtest.Ether)
		if got != max(want.Int64(), 1) {
			t.Errorf("fee for %s = %d cents, want %d (gas price %s wei)", c.a, got, want, price)
		}
	}
	if _, err := b.node.FeeEstimateUSD(ctx, money.USDT); payd.ErrorCode(err) != payd.ErrInvalidRequest {
		t.Errorf("USDT, which has no contract here: %v", err)
	}
	poly := mustNode(t, money.Polygon, b.chain.URL(), evm.Options{Tokens: map[money.Asset]string{money.USDC: b.token}})
	if got, err := poly.FeeEstimateUSD(ctx, money.USDC); got != 1 || err != nil {
		t.Errorf("polygon USDC fee = %d, %v; want the 1-cent minimum", got, err)
	}
}

// TestReorgKeepsIndex mines a token payment again after a reorg, behind
// another token transfer: its log's logIndex in the new block differs, and
// the transfer BlockAt reports keeps its (TxHash, Index), which is what the
// store keys it by.
func TestReorgKeepsIndex(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	payer, front := b.chain.Accounts[0], b.chain.Accounts[1]
	b.chain.TransferToken(payer, b.token, front.Address, units(1_000_000))
	b.chain.Commit()
	w := b.watch(t, b.deposits[0])
	_, parent := b.chain.Head()
	pay := b.chain.TransferToken(payer, b.token, b.deposits[0], units(12_500_000))
	old := b.commit(t, w)
	if len(old.Transfers) != 1 || old.Transfers[0].Index != 0 {
		t.Fatalf("before the fork: %+v", old.Transfers)
	}

	b.chain.Fork(parent)
	// A token transfer with a higher tip goes first in the new block.
	sendTokenTip(t, b.chain, front, b.token, evmtest.NewAccount(t, "elsewhere").Address, units(1), big.NewInt(10e9))
	b.chain.Commit()
	b.chain.Commit() // the new branch is longer
	r := b.chain.Receipt(pay)
	if len(r.Logs) != 1 || r.Logs[0].Index == 0 {
		t.Fatalf("the payment was mined again at log index %d of block %d; the test needs it moved", r.Logs[0].Index, r.BlockNumber)
	}
	blk, err := b.node.BlockAt(ctx, r.BlockNumber.Int64(), w)
	if err != nil {
		t.Fatal(err)
	}
	checkTransfers(t, blk.Transfers, old.Transfers)
	tip, err := b.node.BlockAt(ctx, old.Height+1, w)
	if err != nil || len(tip.Transfers) != 0 {
		t.Fatalf("the new tip: %+v, %v", tip.Transfers, err)
	}
	// The follower has read the block that mined it again: Pending does not
	// keep a transfer of it alive beside the one read.
	p, err := b.node.Pending(ctx, w, []string{strings.ToLower(pay)}, old.Height+1)
	if err != nil || len(p.Alive) != 0 {
		t.Errorf("Pending = %+v, %v; want the re-mined payment not alive", p, err)
	}
}

// TestPendingAlive asks about a transaction waiting in the pool (alive),
// one mined in a block the follower processed (not alive: the follower
// has its transfers from the block) and one mined above it (alive: the
// follower has yet to read it).
func TestPendingAlive(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	w := b.watch(t, b.deposits[0])
	read := strings.ToLower(b.chain.SendETH(b.chain.Accounts[1], b.deposits[0], eth(1)))
	processed := b.commit(t, w).Height
	above := strings.ToLower(b.chain.SendETH(b.chain.Accounts[2], b.deposits[0], eth(1)))
	b.chain.Commit()
	waiting := strings.ToLower(b.chain.SendETH(b.chain.Accounts[3], b.deposits[0], eth(1)))
	p, err := b.node.Pending(ctx, w, []string{read, above, waiting}, processed)
	if err != nil {
		t.Fatal(err)
	}
	if p.Alive[read] || !p.Alive[above] || !p.Alive[waiting] {
		t.Errorf("Pending = %+v; want %s and %s alive, not %s", p.Alive, above, waiting, read)
	}
	// A node just started, for a follower caught up with the tip: only the
	// waiting one is alive.
	fresh := mustNode(t, money.Ethereum, b.chain.URL(), evm.Options{Price: ethPrice})
	tip, err := fresh.Tip(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err = fresh.Pending(ctx, w, []string{read, above, waiting}, tip.Height)
	if err != nil {
		t.Fatal(err)
	}
	if p.Alive[read] || p.Alive[above] || !p.Alive[waiting] {
		t.Errorf("after a restart: Pending = %+v; want only %s alive", p.Alive, waiting)
	}
}

// sendTokenTip sends units of token from an account to an address with
// the tip the chain suggests raised by extraTip, so that the block orders
// it before transactions of a lower tip, and returns its hash.
func sendTokenTip(t *testing.T, c *evmtest.Chain, from evmtest.Account, token, to string, units, extraTip *big.Int) string {
	t.Helper()
	ctx := context.Background()
	cl := c.Client()
	head, err := cl.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tip, err := cl.SuggestGasTipCap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tip.Add(tip, extraTip)
	nonce, err := cl.PendingNonceAt(ctx, common.HexToAddress(from.Address))
	if err != nil {
		t.Fatal(err)
	}
	// transfer(address,uint256): its selector, then both arguments in 32
	// bytes each.
	input := append(common.FromHex("0xa9059cbb"), common.LeftPadBytes(common.HexToAddress(to).Bytes(), 32)...)
	input = append(input, common.LeftPadBytes(units.Bytes(), 32)...)
	contract := common.HexToAddress(token)
	tx, err := types.SignNewTx(from.Key, types.LatestSignerForChainID(big.NewInt(evmtest.ChainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(evmtest.ChainID), Nonce: nonce, GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip),
		Gas:       1_000_000, To: &contract, Data: input,
	})
	if err == nil {
		err = cl.SendTransaction(ctx, tx)
	}
	if err != nil {
		t.Fatal(err)
	}
	return tx.Hash().Hex()
}

// TestTokenDecimalsChecked configures USDC at contracts geth answers for:
// the test token (6 decimals, taken) and an account without code (whose
// decimals() answers nothing: refused, naming the address).
func TestTokenDecimalsChecked(t *testing.T) {
	b := setup(t) // the token, 6 decimals, is taken
	notToken := b.chain.Accounts[3].Address
	_, err := evm.New(context.Background(), money.Ethereum, b.chain.URL(),
		evm.Options{Price: ethPrice, Tokens: map[money.Asset]string{money.USDC: notToken}})
	if err == nil || !strings.Contains(err.Error(), notToken) {
		t.Errorf("New with USDC at an account = %v, want an error naming %s", err, notToken)
	}
}
