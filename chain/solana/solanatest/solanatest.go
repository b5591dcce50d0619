// Package solanatest runs a Solana JSON-RPC node for tests: an httptest
// server over an in-memory chain a test scripts, answering the methods
// chain/solana calls in the shapes the RPC documentation shows
// (https://solana.com/docs/rpc; chain/solana/testdata holds the documented
// answers and a test compares their keys). Its transactions carry what a
// real one does: the fee payer first, the payee's account or associated
// token account, the token program, the Solana Pay reference as a
// read-only key (or loaded from a lookup table in a v0 transaction),
// balances and token balances before and after.
//
// The chain has one slot counter: a transaction lands in the current slot
// and is confirmed at once; it is finalized once the slot is Lag (32)
// behind. Tests move it with Advance, and can fail transactions, fork one
// away, answer HTTP 429 or hang. Every call is counted by method, each
// element of a batch on its own.
package solanatest

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/json"
	"io"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd/chain/solana"
)

// Genesis hashes of the public clusters, as getGenesisHash answers them.
const (
	Mainnet = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
	Devnet  = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"
	Testnet = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
)

// Programs and mints a transfer names.
const (
	SystemProgram = "11111111111111111111111111111111"
	TokenProgram  = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
	ATAProgram    = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
	USDC          = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	USDT          = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
)

// Lag is how many slots the finalized slot trails the confirmed one,
// unless SetLag says otherwise.
const Lag = 32

// Chain is the scripted chain and its RPC server. It is safe for
// concurrent use.
type Chain struct {
	srv *httptest.Server

	mu       sync.Mutex
	genesis  string
	slot     int64
	lag      int64
	txs      []*tx
	bySig    map[string]*tx
	mints    map[string]int // mint → decimals
	lamports map[string]int64
	tokens   map[[2]string]*big.Int // (owner, mint) → balance
	fees     []int64
	calls    map[string]int
	n        uint64
	throttle int // answer this many requests with 429
	retry    string
	hangs    int
	behind   int64 // slots the backend answering lists and transactions is behind
	stop     chan struct{}
}

// tx is one transaction on the chain.
type tx struct {
	sig     string
	slot    int64
	keys    []string // static account keys
	loaded  [2][]string
	header  [3]int
	ixs     []map[string]any
	pre     []int64
	post    []int64
	preTok  []tokenBalance
	postTok []tokenBalance
	err     any // nil, or the transaction error
	forked  bool
	v0      bool
}

// tokenBalance is one pre- or post-token balance.
type tokenBalance struct {
	index       int
	mint, owner string
	amount      *big.Int
	decimals    int
}

// New starts a chain at slot 1,000 of mainnet-beta, with USDC and USDT
// mints of 6 decimals. The server stops at the test's end.
func New(t interface{ Cleanup(func()) }) *Chain {
	c := &Chain{genesis: Mainnet, slot: 1000, lag: Lag, bySig: map[string]*tx{},
		mints: map[string]int{USDC: 6, USDT: 6}, lamports: map[string]int64{}, tokens: map[[2]string]*big.Int{},
		fees: []int64{0, 0, 1000, 5000, 10000}, calls: map[string]int{}, stop: make(chan struct{})}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

// Close stops the server, releasing hung requests.
func (c *Chain) Close() {
	c.mu.Lock()
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.mu.Unlock()
	c.srv.Close()
}

// URL is the node's JSON-RPC endpoint.
func (c *Chain) URL() string { return c.srv.URL }

// SetGenesis makes getGenesisHash answer h: Devnet, Testnet, or any other
// ledger's.
func (c *Chain) SetGenesis(h string) { c.lock(func() { c.genesis = h }) }

// SetMint makes mint a token mint of decimals (getTokenSupply answers
// it); a mint never set is not a mint to the node.
func (c *Chain) SetMint(mint string, decimals int) { c.lock(func() { c.mints[mint] = decimals }) }

// SetLag sets how far the finalized slot trails the confirmed one.
func (c *Chain) SetLag(n int64) { c.lock(func() { c.lag = n }) }

// SetBehind makes the backend that answers getSignaturesForAddress and
// getTransaction n slots behind the one that answers getSlot, as a
// load-balanced provider's may be: a call whose minContextSlot it has not
// reached is refused with error -32016.
func (c *Chain) SetBehind(n int64) { c.lock(func() { c.behind = n }) }

// SetFees sets the priority fees getRecentPrioritizationFees answers.
func (c *Chain) SetFees(micro ...int64) { c.lock(func() { c.fees = micro }) }

// Advance moves the confirmed slot (and with it the finalized one) on by
// n.
func (c *Chain) Advance(n int64) { c.lock(func() { c.slot += n }) }

// Slot is the confirmed slot; Finalized the finalized one.
func (c *Chain) Slot() int64 { return locked(c, func() int64 { return c.slot }) }

// Finalized is the finalized slot.
func (c *Chain) Finalized() int64 { return locked(c, func() int64 { return c.slot - c.lag }) }

// Throttle makes the next n requests answer HTTP 429 with a Retry-After
// of retryAfter ("" sends none).
func (c *Chain) Throttle(n int, retryAfter string) {
	c.lock(func() { c.throttle, c.retry = n, retryAfter })
}

// Hang makes the next n requests never answer, until the client gives up
// or the server closes.
func (c *Chain) Hang(n int) { c.lock(func() { c.hangs = n }) }

// Calls are the calls answered so far by method, each element of a batch
// counted.
func (c *Chain) Calls() map[string]int {
	return locked(c, func() map[string]int { return maps.Clone(c.calls) })
}

// TotalCalls is the number of calls answered so far.
func (c *Chain) TotalCalls() int {
	return locked(c, func() int {
		n := 0
		for _, v := range c.calls {
			n += v
		}
		return n
	})
}

// ResetCalls zeroes the call counts.
func (c *Chain) ResetCalls() { c.lock(func() { c.calls = map[string]int{} }) }

// Fork takes the transaction of sig away, as when its slot was skipped:
// from now on the node knows it no more.
func (c *Chain) Fork(sig string) {
	c.lock(func() {
		if t := c.bySig[sig]; t != nil {
			t.forked = true
		}
	})
}

func (c *Chain) lock(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

func locked[T any](c *Chain, f func() T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return f()
}

// Key returns a deterministic account address for name, as tests name
// wallets and references.
func Key(name string) string {
	h := sha256.Sum256([]byte("solanatest:" + name))
	return base58.Encode(h[:])
}

// ATA is owner's associated token account of mint.
func ATA(owner, mint string) string {
	a, err := solana.AssociatedTokenAccount(owner, mint)
	if err != nil {
		panic("solanatest: " + err.Error())
	}
	return a
}

// Payment is one transfer to send. Mint "" sends SOL.
type Payment struct {
	From, To  string
	Mint      string
	Amount    int64
	Reference string // "" for a transfer without one
	// Failed makes the transaction fail: it pays only its fee.
	Failed bool
	// CreateAccount creates the payee's token account in the transaction
	// (no balance before), as wallets do for a payee's first token.
	CreateAccount bool
	// Lookup loads the reference from an address lookup table (a v0
	// transaction): it is in meta.loadedAddresses, not accountKeys.
	Lookup bool
}

// Transfer sends amount of mint ("" for SOL) from from to toOwner with
// reference and returns the signature: the transaction lands in the
// current slot, confirmed.
func (c *Chain) Transfer(from, toOwner, mint string, amount int64, reference string) string {
	return c.Send(Payment{From: from, To: toOwner, Mint: mint, Amount: amount, Reference: reference})
}

// Send sends p and returns its signature.
func (c *Chain) Send(p Payment) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &tx{sig: c.signature(), slot: c.slot, v0: p.Lookup}
	if p.Failed {
		t.err = map[string]any{"InstructionError": []any{0, map[string]any{"Custom": 1}}}
	}
	ro := []string{}
	if p.Reference != "" {
		ro = append(ro, p.Reference)
	}
	if p.Lookup {
		t.loaded[1], ro = ro, nil
	}
	if p.Mint == "" {
		c.solTransfer(t, p, ro)
	} else {
		c.tokenTransfer(t, p, ro)
	}
	c.txs = append(c.txs, t)
	c.bySig[t.sig] = t
	return t.sig
}

// solTransfer fills t as a System Program transfer.
func (c *Chain) solTransfer(t *tx, p Payment, ro []string) {
	t.keys = append(append([]string{p.From, p.To}, ro...), SystemProgram)
	t.header = [3]int{1, 0, len(ro) + 1}
	refs := []int{0, 1}
	for i := range ro {
		refs = append(refs, 2+i)
	}
	t.ixs = []map[string]any{{"programIdIndex": len(t.keys) - 1, "accounts": refs, "data": "3Bxs4NN8M2Yn4TLb",
		"stackHeight": nil}}
	moved := p.Amount
	if p.Failed {
		moved = 0
	}
	t.pre, t.post = c.balances(t, map[string]int64{p.From: -moved - 5000, p.To: moved})
}

// tokenTransfer fills t as a Token Program transferChecked between the
// payer's and the payee's associated token accounts.
func (c *Chain) tokenTransfer(t *tx, p Payment, ro []string) {
	fromATA, toATA := ATA(p.From, p.Mint), ATA(p.To, p.Mint)
	if p.CreateAccount {
		t.keys = append(append([]string{p.From, toATA, fromATA, p.To, p.Mint}, ro...),
			SystemProgram, TokenProgram, ATAProgram)
		t.header = [3]int{1, 0, 5 + len(ro)}
		t.ixs = []map[string]any{
			{"programIdIndex": len(t.keys) - 1, "accounts": []int{0, 1, 3, 4, len(t.keys) - 3, len(t.keys) - 2},
				"data": "2", "stackHeight": nil},
			{"programIdIndex": len(t.keys) - 2, "accounts": []int{2, 4, 1, 0}, "data": "hDDqy4KAEGx3J", "stackHeight": nil},
		}
	} else {
		t.keys = append(append([]string{p.From, fromATA, toATA, p.Mint}, ro...), TokenProgram)
		t.header = [3]int{1, 0, 2 + len(ro)}
		t.ixs = []map[string]any{{"programIdIndex": len(t.keys) - 1, "accounts": []int{1, 3, 2, 0},
			"data": "hDDqy4KAEGx3J", "stackHeight": nil}}
	}
	rent := int64(0)
	if p.CreateAccount && !p.Failed {
		rent = 2039280
	}
	if _, ok := c.lamports[toATA]; !ok && p.CreateAccount {
		c.lamports[toATA] = 0
	}
	t.pre, t.post = c.balances(t, map[string]int64{p.From: -5000 - rent, toATA: rent})
	moved := big.NewInt(p.Amount)
	if p.Failed {
		moved = new(big.Int)
	}
	dec := c.mints[p.Mint]
	fromBal := c.token(p.From, p.Mint, big.NewInt(1_000_000_000_000))
	toBal := c.token(p.To, p.Mint, new(big.Int))
	idx := func(k string) int { return slices.Index(t.keys, k) }
	t.preTok = []tokenBalance{{index: idx(fromATA), mint: p.Mint, owner: p.From, amount: new(big.Int).Set(fromBal), decimals: dec}}
	if !p.CreateAccount {
		t.preTok = append(t.preTok, tokenBalance{index: idx(toATA), mint: p.Mint, owner: p.To,
			amount: new(big.Int).Set(toBal), decimals: dec})
	}
	fromBal.Sub(fromBal, moved)
	toBal.Add(toBal, moved)
	t.postTok = []tokenBalance{
		{index: idx(fromATA), mint: p.Mint, owner: p.From, amount: new(big.Int).Set(fromBal), decimals: dec},
	}
	if !p.Failed || !p.CreateAccount {
		t.postTok = append(t.postTok, tokenBalance{index: idx(toATA), mint: p.Mint, owner: p.To,
			amount: new(big.Int).Set(toBal), decimals: dec})
	}
	sort.Slice(t.preTok, func(i, j int) bool { return t.preTok[i].index < t.preTok[j].index })
	sort.Slice(t.postTok, func(i, j int) bool { return t.postTok[i].index < t.postTok[j].index })
}

// token is owner's balance of mint, starting at start.
func (c *Chain) token(owner, mint string, start *big.Int) *big.Int {
	k := [2]string{owner, mint}
	if c.tokens[k] == nil {
		c.tokens[k] = start
	}
	return c.tokens[k]
}

// balances are the lamports of t's accounts before and after the changes.
func (c *Chain) balances(t *tx, change map[string]int64) (pre, post []int64) {
	for _, k := range append(append(slices.Clone(t.keys), t.loaded[0]...), t.loaded[1]...) {
		bal, ok := c.lamports[k]
		if !ok {
			bal = 10_000_000_000
			if k == SystemProgram || k == TokenProgram || k == ATAProgram {
				bal = 1
			}
		}
		pre = append(pre, bal)
		bal += change[k]
		c.lamports[k] = bal
		post = append(post, bal)
	}
	return pre, post
}

// signature is a fresh, deterministic 64-byte signature.
func (c *Chain) signature() string {
	c.n++
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], c.n)
	h := sha512.Sum512(b[:])
	return base58.Encode(h[:])
}

// Noise adds n successful transactions that touch account without a
// reference (SOL sent to it), for the paging tests.
func (c *Chain) Noise(account string, n int) {
	from := Key("noise")
	for range n {
		c.Transfer(from, account, "", 1, "")
	}
}

// serve answers one HTTP request: a call or a batch.
func (c *Chain) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	throttle, hang := c.throttle > 0, c.hangs > 0 && c.throttle == 0
	if throttle {
		c.throttle--
	} else if hang {
		c.hangs--
	}
	retry, stop := c.retry, c.stop
	c.mu.Unlock()
	if throttle {
		if retry != "" {
			w.Header().Set("Retry-After", retry)
		}
		http.Error(w, `{"jsonrpc":"2.0","error":{"code":429,"message":"Too many requests"},"id":null}`,
			http.StatusTooManyRequests)
		return
	}
	if hang {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) == nil {
		out := make([]any, len(batch))
		for i, b := range batch {
			out[i] = c.answer(b)
		}
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	_ = json.NewEncoder(w).Encode(c.answer(body))
}

// call is a JSON-RPC request.
type call struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// answer answers one request.
func (c *Chain) answer(b []byte) map[string]any {
	var req call
	if err := json.Unmarshal(b, &req); err != nil {
		return rpcErr(nil, -32700, "Parse error")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[req.Method]++
	result, code, msg := c.method(req.Method, req.Params)
	if code != 0 {
		return rpcErr(req.ID, code, msg)
	}
	return map[string]any{"jsonrpc": "2.0", "result": result, "id": req.ID}
}

func rpcErr(id json.RawMessage, code int, msg string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": code, "message": msg}, "id": id}
}

// config is the options object methods take.
type config struct {
	Commitment               string `json:"commitment"`
	Limit                    int    `json:"limit"`
	Before                   string `json:"before"`
	Until                    string `json:"until"`
	SearchTransactionHistory bool   `json:"searchTransactionHistory"`
	Encoding                 string `json:"encoding"`
	MaxVersion               *int   `json:"maxSupportedTransactionVersion"`
	MinContextSlot           int64  `json:"minContextSlot"`
}

// param decodes params[i] into v; false when it is absent or malformed.
func param(params []json.RawMessage, i int, v any) bool {
	return i < len(params) && json.Unmarshal(params[i], v) == nil
}

// method runs one method under the lock: its result, or an error code
// and message.
func (c *Chain) method(name string, params []json.RawMessage) (any, int, string) {
	var cfg config
	switch name {
	case "getGenesisHash":
		return c.genesis, 0, ""
	case "getSlot":
		param(params, 0, &cfg)
		if cfg.Commitment == "finalized" || cfg.Commitment == "" {
			return c.slot - c.lag, 0, ""
		}
		return c.slot, 0, ""
	case "getTokenSupply":
		var mint string
		param(params, 0, &mint)
		dec, ok := c.mints[mint]
		if !ok {
			return nil, -32602, "Invalid param: not a Token mint"
		}
		return map[string]any{"context": c.context(), "value": map[string]any{"amount": "1000000000000000",
			"decimals": dec, "uiAmount": 1e15 / pow10(dec), "uiAmountString": "1000000000"}}, 0, ""
	case "getRecentPrioritizationFees":
		out := []map[string]any{}
		for i, f := range c.fees {
			out = append(out, map[string]any{"slot": c.slot - int64(len(c.fees)-i), "prioritizationFee": f})
		}
		return out, 0, ""
	case "getSignaturesForAddress":
		var addr string
		if !param(params, 0, &addr) {
			return nil, -32602, "Invalid param: missing address"
		}
		param(params, 1, &cfg)
		if cfg.MinContextSlot > c.slot-c.behind {
			return nil, minContextSlotCode, "Minimum context slot has not been reached"
		}
		return c.signaturesFor(addr, cfg), 0, ""
	case "getTransaction":
		var sig string
		param(params, 0, &sig)
		param(params, 1, &cfg)
		if cfg.MinContextSlot > c.slot-c.behind {
			return nil, minContextSlotCode, "Minimum context slot has not been reached"
		}
		return c.transaction(sig, cfg)
	case "getSignatureStatuses":
		var sigs []string
		if !param(params, 0, &sigs) || len(sigs) > 256 {
			return nil, -32602, "Invalid param: too many signatures or none"
		}
		param(params, 1, &cfg)
		value := make([]any, len(sigs))
		for i, s := range sigs {
			if t := c.bySig[s]; t != nil && !t.forked {
				value[i] = c.status(t)
			}
		}
		return map[string]any{"context": c.context(), "value": value}, 0, ""
	}
	return nil, -32601, "Method not found"
}

// minContextSlotCode is the error of a call whose minContextSlot the node
// has not reached (JSON_RPC_SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED).
const minContextSlotCode = -32016

func pow10(n int) float64 {
	f := 1.0
	for range n {
		f *= 10
	}
	return f
}

// context is a Solana RPC context object.
func (c *Chain) context() map[string]any {
	return map[string]any{"apiVersion": "2.2.0", "slot": c.slot}
}

// confirmation is t's confirmationStatus now.
func (c *Chain) confirmation(t *tx) string {
	if t.slot <= c.slot-c.lag {
		return "finalized"
	}
	return "confirmed"
}

// status is t's entry of getSignatureStatuses.
func (c *Chain) status(t *tx) map[string]any {
	var confirmations any = c.slot - t.slot
	if c.confirmation(t) == "finalized" {
		confirmations = nil
	}
	return map[string]any{"slot": t.slot, "confirmations": confirmations, "err": t.err, "status": txStatus(t),
		"confirmationStatus": c.confirmation(t)}
}

func txStatus(t *tx) map[string]any {
	if t.err != nil {
		return map[string]any{"Err": t.err}
	}
	return map[string]any{"Ok": nil}
}

// touches reports whether t names addr among its accounts.
func (t *tx) touches(addr string) bool {
	return slices.Contains(t.keys, addr) || slices.Contains(t.loaded[0], addr) || slices.Contains(t.loaded[1], addr)
}

// signaturesFor answers getSignaturesForAddress: newest first, from before
// on, at most limit (1,000 by default).
func (c *Chain) signaturesFor(addr string, cfg config) []map[string]any {
	limit := cfg.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	out := []map[string]any{}
	started := cfg.Before == ""
	for i := len(c.txs) - 1; i >= 0 && len(out) < limit; i-- {
		t := c.txs[i]
		if !started {
			started = t.sig == cfg.Before
			continue
		}
		if t.sig == cfg.Until {
			break
		}
		if t.forked || !t.touches(addr) || (cfg.Commitment == "finalized" && c.confirmation(t) != "finalized") {
			continue
		}
		out = append(out, map[string]any{"signature": t.sig, "slot": t.slot, "err": t.err, "memo": nil,
			"blockTime": 1_700_000_000 + t.slot*4/10, "confirmationStatus": c.confirmation(t)})
	}
	return out
}

// transaction answers getTransaction with encoding json.
func (c *Chain) transaction(sig string, cfg config) (any, int, string) {
	t := c.bySig[sig]
	if t == nil || t.forked || (cfg.Commitment != "confirmed" && c.confirmation(t) != "finalized") {
		return nil, 0, ""
	}
	if t.v0 && cfg.MaxVersion == nil {
		return nil, -32015, "Transaction version (0) is not supported by the requesting client. " +
			"Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0"
	}
	tokens := func(bs []tokenBalance) []map[string]any {
		out := []map[string]any{}
		for _, b := range bs {
			ui := new(big.Rat).SetFrac(b.amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(b.decimals)), nil))
			f, _ := ui.Float64()
			out = append(out, map[string]any{"accountIndex": b.index, "mint": b.mint, "owner": b.owner,
				"programId": TokenProgram, "uiTokenAmount": map[string]any{"amount": b.amount.String(),
					"decimals": b.decimals, "uiAmount": f, "uiAmountString": ui.FloatString(b.decimals)}})
		}
		return out
	}
	msg := map[string]any{
		"accountKeys": t.keys,
		"header": map[string]any{"numRequiredSignatures": t.header[0], "numReadonlySignedAccounts": t.header[1],
			"numReadonlyUnsignedAccounts": t.header[2]},
		"instructions":    t.ixs,
		"recentBlockhash": Key("blockhash" + strconv.FormatInt(t.slot, 10)),
	}
	var version any = "legacy"
	if t.v0 {
		version = 0
		msg["addressTableLookups"] = []map[string]any{{"accountKey": Key("lookup table"),
			"writableIndexes": []int{}, "readonlyIndexes": []int{0}}}
	}
	meta := map[string]any{
		"err": t.err, "status": txStatus(t), "fee": 5000,
		"preBalances": t.pre, "postBalances": t.post,
		"preTokenBalances": tokens(t.preTok), "postTokenBalances": tokens(t.postTok),
		"innerInstructions": []any{}, "logMessages": []string{}, "rewards": []any{},
		"loadedAddresses":      map[string]any{"writable": nonNil(t.loaded[0]), "readonly": nonNil(t.loaded[1])},
		"computeUnitsConsumed": 6200,
	}
	return map[string]any{"slot": t.slot, "blockTime": 1_700_000_000 + t.slot*4/10, "meta": meta, "version": version,
		"transaction": map[string]any{"message": msg, "signatures": []string{t.sig}}}, 0, ""
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
