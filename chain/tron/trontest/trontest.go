// Package trontest serves a Tron full node's HTTP API for tests: an
// httptest server in front of a chain in memory that a test scripts
// (blocks that link by id, TRC-20 Transfer logs of a token contract,
// failed transactions, reorgs), answering the endpoints package tron
// reads in the shapes java-tron and TronGrid document (the fixtures of
// ../testdata, NOTE.md there). It can answer TronGrid's rate limits or
// hang on demand, counts the calls of each endpoint, and Balance puts
// several servers behind one URL, as a provider's load balancer does.
//
// No Tron node software runs here (java-tron needs a JVM and hours of
// sync), so this is the seam's fake; its answers are checked against the
// recorded shapes.
package trontest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/address/v2/base58"

	"payd/hd"
	"payd/money"
)

// Genesis block ids of the tron chains (package tron follows the first
// three and refuses any other).
const (
	MainnetGenesis = "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc"
	NileGenesis    = "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc"
	ShastaGenesis  = "0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e"
)

// TransferTopic is topics[0] of a TRC-20 Transfer log.
const TransferTopic = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

// Endpoints the server answers.
const (
	GetBlock          = "/wallet/getblock"
	InfosByBlockNum   = "/wallet/gettransactioninfobyblocknum"
	InfoByID          = "/wallet/gettransactioninfobyid"
	ConstantContract  = "/wallet/triggerconstantcontract"
	ChainParameters   = "/wallet/getchainparameters"
	witnessAddress    = "41928c9af0651632157ef27a2cf17ca72c575a4d21"
	witnessSignature  = "b1a2" // shortened: nothing reads it
	blockTimeBase     = 1_700_000_000_000
	blockVersion      = 31
	trc20TransferFee  = 13_845_000
	trc20EnergyTotal  = 130_285
	trc20NetUsage     = 345
	defaultEnergyFee  = 100
	defaultBandwidth  = 1000
	defaultDecimals   = 6
	defaultRetryAfter = "1"
)

// Log is one log a transaction emits: a TRC-20 Transfer unless Topics is
// set.
type Log struct {
	// Contract is the base58 address of the emitting contract; the
	// server's token when "".
	Contract string
	From, To string
	Amount   *big.Int
	// Topics, when set, replace the Transfer topics (for logs that are
	// not transfers, or malformed ones).
	Topics []string
}

// tx is one transaction of the chain.
type tx struct {
	id     string
	failed bool
	logs   []Log
}

// block is one block: its id, parent and transactions.
type block struct {
	id, parent string
	number     int64
	txs        []*tx
}

// refusal is one scripted refusal: an HTTP status and its body.
type refusal struct {
	status int
	body   string
}

// Server is one chain in memory behind the HTTP API. It is safe for
// concurrent use: the node under test reads it while the test scripts it.
type Server struct {
	t    testing.TB
	srv  *httptest.Server
	done chan struct{}

	mu         sync.Mutex
	blocks     []*block // blocks[i] is at height i
	pool       []*tx
	seq        int
	token      [20]byte
	decimals   int64
	energyFee  int64
	calls      map[string]int
	fail429    int
	retryAfter string
	refuse     []refusal
	hang       int
	seed       string // mixed into the ids made from now on (Diverge)
	// APIKey, when set, is the TRON-PRO-API-KEY every request must carry;
	// others get 401.
	apiKey string
}

// Options shape a Server.
type Options struct {
	// Genesis is the id of block 0; NileGenesis when "".
	Genesis string
	// Decimals is what the token's decimals() answers; 6 when 0.
	Decimals int64
	// APIKey, when set, must come in the TRON-PRO-API-KEY header.
	APIKey string
	// Token is the base58 address of the TRC-20 contract; one of the
	// server's own when "" (mainnet's USDT, TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t,
	// stands in for it on a mainnet chain).
	Token string
}

// Start starts a chain of the genesis block and one more, serves it on a
// loopback port, and closes it when t ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Genesis == "" {
		o.Genesis = NileGenesis
	}
	if o.Decimals == 0 {
		o.Decimals = defaultDecimals
	}
	s := &Server{t: t, done: make(chan struct{}), decimals: o.Decimals, energyFee: defaultEnergyFee,
		calls: map[string]int{}, apiKey: o.APIKey, retryAfter: defaultRetryAfter}
	h := sha256Of("trontest token")
	copy(s.token[:], h[:20])
	if o.Token != "" {
		copy(s.token[:], account(t, o.Token))
	}
	s.blocks = []*block{{id: o.Genesis, parent: "957dc2d350daecc7bb6a38f3938ebde0a0c1cedafe15f0edae4256a2907449f6"}}
	s.mine()
	mux := http.NewServeMux()
	for path, h := range map[string]func(map[string]any) any{
		GetBlock: s.getBlock, InfosByBlockNum: s.infosByBlockNum, InfoByID: s.infoByID,
		ConstantContract: s.constantContract, ChainParameters: s.chainParameters,
	} {
		mux.HandleFunc("POST "+path, s.handle(path, h))
	}
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
}

// Balance serves the API of several servers behind one URL, as a
// provider's load balancer sends each request to one of its backends
// (TronGrid): route names the server that answers a request to path
// (GetBlock…) with body, and its answer goes back as it is. It closes
// when t ends.
func Balance(t testing.TB, route func(path string, body []byte) *Server) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, route(r.URL.Path, body).URL()+r.URL.Path, bytes.NewReader(body))
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// URL is the server's base URL (http://127.0.0.1:PORT).
func (s *Server) URL() string { return s.srv.URL }

// Token is the base58 address of the chain's TRC-20 contract.
func (s *Server) Token() string { return Address(s.token[:]) }

// TokenHex is the token contract's 20 account bytes in hex, as logs
// carry it.
func (s *Server) TokenHex() string { return hex.EncodeToString(s.token[:]) }

// Address is the base58 address of 20 account bytes.
func Address(acc []byte) string {
	a, err := hd.SampleAddress(money.Tron, acc)
	if err != nil {
		panic(err)
	}
	return a
}

// NewAddress is a base58 address from seed, the same on every run.
func NewAddress(seed string) string {
	h := sha256Of(seed)
	return Address(h[:20])
}

// Tip is the height of the best block.
func (s *Server) Tip() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.blocks) - 1)
}

// BlockID is the id of the block at height on the best chain.
func (s *Server) BlockID(height int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocks[height].id
}

// Mine mines n blocks; the first holds the pool's transactions.
func (s *Server) Mine(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.mine()
	}
}

// mine adds a block holding the pool.
func (s *Server) mine() {
	s.seq++
	parent := s.blocks[len(s.blocks)-1]
	number := parent.number + 1
	h := sha256Of(fmt.Sprintf("%sblock %d %d", s.seed, number, s.seq))
	binary.BigEndian.PutUint64(h[:8], uint64(number)) // tron block ids start with the height
	s.blocks = append(s.blocks, &block{id: hex.EncodeToString(h[:]), parent: parent.id, number: number, txs: s.pool})
	s.pool = nil
}

// Transfer puts a successful transfer of amount token units to the base58
// address to in the pool, from Sender, and returns its transaction id.
func (s *Server) Transfer(to string, amount int64) string {
	return s.Send(false, Log{From: Sender(), To: to, Amount: big.NewInt(amount)})
}

// Sender is the address Transfer sends from.
func Sender() string { return NewAddress("trontest customer") }

// Send puts a transaction with logs in the pool, failed (reverted, with
// no logs on the chain, as the TVM drops a reverted call's logs) or not,
// and returns its id.
func (s *Server) Send(failed bool, logs ...Log) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := sha256Of(fmt.Sprintf("%stx %d", s.seed, s.seq))
	t := &tx{id: hex.EncodeToString(id[:]), failed: failed, logs: logs}
	s.pool = append(s.pool, t)
	return t.id
}

// Fork orphans the last depth blocks: their transactions go back to the
// pool, and the chain is depth blocks shorter until Mine builds the new
// branch.
func (s *Server) Fork(depth int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if depth >= len(s.blocks) {
		s.t.Fatalf("trontest: Fork(%d) of a chain of %d blocks", depth, len(s.blocks))
	}
	keep := len(s.blocks) - depth
	var back []*tx
	for _, b := range s.blocks[keep:] {
		back = append(back, b.txs...)
	}
	s.blocks = s.blocks[:keep]
	s.pool = append(back, s.pool...)
}

// Drop removes a transaction from the pool: it expired unmined.
func (s *Server) Drop(txID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, t := range s.pool {
		if t.id == txID {
			s.pool = append(s.pool[:i:i], s.pool[i+1:]...)
			return
		}
	}
}

// Fail429 makes the next n requests answer 429 Too Many Requests with
// Retry-After retryAfter ("" for none).
func (s *Server) Fail429(n int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail429, s.retryAfter = n, retryAfter
}

// TronGrid's rate-limit answers
// (https://developers.tron.network/reference/rate-limits): without a key,
// 403 and a body saying the caller is blocked for 30 s; with a key over
// its rate, 503; and the full-node API's form of the same message, which
// may also come with 200.
const (
	RateLimitedBody         = `{"Success":false,"Error":"The key exceeds the frequency limit(15), and the query server is suspended for 30s","StatusCode":403}`
	RateLimitedFullNodeBody = `{"Error":"The key exceeds the frequency limit(30), and the query server is suspended for 30s"}`
)

// RateLimit is one way TronGrid refuses a request over its rate limits:
// an HTTP status, the body, and the fixture of ../testdata recording it.
type RateLimit struct {
	Status  int
	Body    string
	Fixture string
}

// RateLimits are TronGrid's documented refusals: 403 without a key, 503
// with one, and its message in a 200 answer.
var RateLimits = []RateLimit{
	{http.StatusForbidden, RateLimitedBody, "ratelimit_403.json"},
	{http.StatusServiceUnavailable, RateLimitedFullNodeBody, "ratelimit_fullnode.json"},
	{http.StatusOK, RateLimitedFullNodeBody, "ratelimit_fullnode.json"},
}

// Refuse makes the next n requests answer status with body, as TronGrid
// refuses a request over its rate limits (RateLimitedBody…); a status of
// 200 with an {"Error": …} body is a refusal too.
func (s *Server) Refuse(n, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.refuse = append(s.refuse, refusal{status, body})
	}
}

// Diverge makes the ids of the blocks and transactions made from now on
// differ from those of another server scripted alike: two servers started
// alike share their first blocks, then each builds its own branch, as two
// backends of a provider that saw competing blocks do.
func (s *Server) Diverge(seed string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seed = seed + " "
}

// Hang makes the next n requests hang until the client gives up.
func (s *Server) Hang(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = n
}

// SetEnergyFee sets the chain's energy price in sun (getEnergyFee).
func (s *Server) SetEnergyFee(sun int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.energyFee = sun
}

// Calls is how many requests the endpoint (GetBlock…) got.
func (s *Server) Calls(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[endpoint]
}

// handle counts a request, injects the failures asked for, decodes the
// body and writes h's answer.
func (s *Server) handle(path string, h func(map[string]any) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls[path]++
		hang, fail := s.hang > 0, s.fail429 > 0
		var refused *refusal
		switch {
		case hang:
			s.hang--
		case fail:
			s.fail429--
		case len(s.refuse) > 0:
			refused = &s.refuse[0]
			s.refuse = s.refuse[1:]
		}
		retryAfter, key := s.retryAfter, s.apiKey
		s.mu.Unlock()
		switch {
		case hang:
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return
		case fail:
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			http.Error(w, `{"Error":"rate limit exceeded"}`, http.StatusTooManyRequests)
			return
		case refused != nil:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(refused.status)
			_, _ = w.Write([]byte(refused.body))
			return
		case key != "" && r.Header.Get("TRON-PRO-API-KEY") != key:
			http.Error(w, `{"Error":"ApiKey not exists"}`, http.StatusUnauthorized)
			return
		}
		var body map[string]any
		dec := json.NewDecoder(r.Body)
		dec.UseNumber()
		if err := dec.Decode(&body); err != nil {
			body = nil
		}
		w.Header().Set("Content-Type", "application/json")
		var out any = map[string]string{"Error": "the request is not a JSON object"}
		if body != nil {
			s.mu.Lock()
			out = h(body)
			s.mu.Unlock()
		}
		if err := json.NewEncoder(w).Encode(out); err != nil {
			s.t.Logf("trontest: writing an answer: %v", err)
		}
	}
}

// getBlock answers /wallet/getblock {id_or_num, detail}: the latest block
// without id_or_num, {} for a block the chain does not have; with detail
// true, its transactions too (left out when it has none).
func (s *Server) getBlock(req map[string]any) any {
	b := s.blocks[len(s.blocks)-1]
	if v, ok := req["id_or_num"]; ok {
		str, _ := v.(string)
		b = s.find(str)
	}
	if b == nil {
		return map[string]any{}
	}
	raw := map[string]any{"txTrieRoot": hex.EncodeToString(make([]byte, 32)), "witness_address": witnessAddress,
		"parentHash": b.parent}
	if b.number > 0 { // protobuf's JSON leaves out zero values: block 0 has neither
		raw["number"] = b.number
		raw["timestamp"] = blockTimeBase + 3000*b.number
		raw["version"] = blockVersion
	}
	out := map[string]any{"blockID": b.id,
		"block_header": map[string]any{"raw_data": raw, "witness_signature": witnessSignature}}
	if detail, _ := req["detail"].(bool); detail && len(b.txs) > 0 {
		var txs []any
		for _, t := range b.txs {
			txs = append(txs, s.transaction(t, b))
		}
		out["transactions"] = txs
	}
	return out
}

// transaction is a transaction as a block with detail holds it: a call of
// the token contract, its result, its signature and its encoding.
func (s *Server) transaction(t *tx, b *block) map[string]any {
	ret := "SUCCESS"
	if t.failed {
		ret = "REVERT"
	}
	ts := int64(blockTimeBase + 3000*b.number)
	call := map[string]any{"parameter": map[string]any{"value": map[string]any{
		"data": "a9059cbb", "owner_address": "41" + hex.EncodeToString(account(s.t, Sender())),
		"contract_address": "41" + hex.EncodeToString(s.token[:])},
		"type_url": "type.googleapis.com/protocol.TriggerSmartContract"}, "type": "TriggerSmartContract"}
	return map[string]any{"ret": []any{map[string]any{"contractRet": ret}}, "signature": []string{witnessSignature},
		"txID": t.id, "raw_data": map[string]any{"contract": []any{call}, "ref_block_bytes": "e13a",
			"ref_block_hash": "f77e3d41a0862778", "expiration": ts + 60_000, "fee_limit": 100_000_000, "timestamp": ts - 3000},
		"raw_data_hex": "0a02e13a"}
}

// find is the block named by a height or an id, nil when none.
func (s *Server) find(idOrNum string) *block {
	if n, err := strconv.ParseInt(idOrNum, 10, 64); err == nil && len(idOrNum) < 20 {
		if n < 0 || n >= int64(len(s.blocks)) {
			return nil
		}
		return s.blocks[n]
	}
	for _, b := range s.blocks {
		if b.id == idOrNum {
			return b
		}
	}
	return nil
}

// infosByBlockNum answers /wallet/gettransactioninfobyblocknum {num}.
func (s *Server) infosByBlockNum(req map[string]any) any {
	n, ok := req["num"].(json.Number)
	num, err := n.Int64()
	if !ok || err != nil {
		return map[string]string{"Error": "num must be a number"}
	}
	out := []any{}
	if num >= 0 && num < int64(len(s.blocks)) {
		b := s.blocks[num]
		for _, t := range b.txs {
			out = append(out, s.info(t, b))
		}
	}
	return out
}

// infoByID answers /wallet/gettransactioninfobyid {value}: {} for a
// transaction not in a block of the best chain.
func (s *Server) infoByID(req map[string]any) any {
	id, _ := req["value"].(string)
	for _, b := range s.blocks {
		for _, t := range b.txs {
			if t.id == id {
				return s.info(t, b)
			}
		}
	}
	return map[string]any{}
}

// info is a transaction's info in block b, as a TRC-20 transfer's looks.
func (s *Server) info(t *tx, b *block) map[string]any {
	receipt := map[string]any{"energy_fee": trc20TransferFee, "energy_usage_total": trc20EnergyTotal,
		"net_usage": trc20NetUsage, "result": "SUCCESS"}
	out := map[string]any{"id": t.id, "fee": trc20TransferFee, "blockNumber": b.number,
		"blockTimeStamp": blockTimeBase + 3000*b.number, "contractResult": []string{""},
		"contract_address": "41" + hex.EncodeToString(s.token[:]), "receipt": receipt}
	if t.failed {
		receipt["result"] = "REVERT"
		out["result"] = "FAILED"
		out["resMessage"] = hex.EncodeToString([]byte("REVERT opcode executed"))
		return out
	}
	receipt["result"] = "SUCCESS"
	contractResult := make([]byte, 32)
	contractResult[31] = 1
	out["contractResult"] = []string{hex.EncodeToString(contractResult)}
	var logs []any
	for _, l := range t.logs {
		logs = append(logs, s.log(l))
	}
	if len(logs) > 0 {
		out["log"] = logs
	}
	return out
}

// log renders one log: the contract's 20 bytes without the 41 prefix,
// the topics and the data as hex, as the node writes them.
func (s *Server) log(l Log) map[string]any {
	contract := s.token[:]
	if l.Contract != "" {
		contract = account(s.t, l.Contract)
	}
	topics := l.Topics
	if topics == nil {
		topics = []string{TransferTopic, topic(account(s.t, l.From)), topic(account(s.t, l.To))}
	}
	amount := l.Amount
	if amount == nil {
		amount = new(big.Int)
	}
	return map[string]any{"address": hex.EncodeToString(contract), "topics": topics,
		"data": fmt.Sprintf("%064x", amount)}
}

// constantContract answers /wallet/triggerconstantcontract for decimals()
// of the server's token; any other contract is no contract.
func (s *Server) constantContract(req map[string]any) any {
	c, _ := req["contract_address"].(string)
	sel, _ := req["function_selector"].(string)
	if c != "41"+hex.EncodeToString(s.token[:]) || sel != "decimals()" {
		return map[string]any{"result": map[string]any{"code": "CONTRACT_VALIDATE_ERROR",
			"message": hex.EncodeToString([]byte("Smart contract is not exist."))}}
	}
	return map[string]any{"result": map[string]any{"result": true}, "energy_used": 222,
		"constant_result": []string{fmt.Sprintf("%064x", s.decimals)},
		"transaction": map[string]any{"ret": []any{map[string]any{}}, "visible": false,
			"txID": hex.EncodeToString(make([]byte, 32)), "raw_data_hex": "0a02"}}
}

// chainParameters answers /wallet/getchainparameters: the two prices a fee
// estimate reads among others (one with no value, as the node leaves a 0
// out).
func (s *Server) chainParameters(map[string]any) any {
	return map[string]any{"chainParameter": []any{
		map[string]any{"key": "getMaintenanceTimeInterval", "value": 21600000},
		map[string]any{"key": "getTransactionFee", "value": defaultBandwidth},
		map[string]any{"key": "getEnergyFee", "value": s.energyFee},
		map[string]any{"key": "getAllowUpdateAccountName"},
	}}
}

// account is the 20 bytes of a base58 address (T…).
func account(t testing.TB, addr string) []byte {
	b, v, err := base58.CheckDecode(addr)
	if err != nil || len(b) != 20 || v != 0x41 {
		t.Fatalf("trontest: %q is not a tron address", addr)
	}
	return b
}

// topic is an account as an indexed address topic: 12 zero bytes first.
func topic(acc []byte) string { return "000000000000000000000000" + hex.EncodeToString(acc) }

// sha256Of hashes a seed.
func sha256Of(s string) [32]byte { return sha256.Sum256([]byte(s)) }
