// Package evmtest runs a real Ethereum chain for tests: go-ethereum's
// simulated backend (ethclient/simulated, a full geth node that mines a
// block when told) served over HTTP and websocket JSON-RPC on a loopback
// port, so that package evm's own client talks to geth's own servers as it
// talks to a node in production. It has funded accounts, signs and sends
// transactions, deploys a real ERC-20 (testdata/Token.sol, compiled with
// solc 0.8.37) and makes reorgs.
//
// It is for tests only: it imports go-ethereum, which payd's binary must
// not link (cmd/payd does not import this package).
package evmtest

import (
	"context"
	"crypto/ecdsa"
	_ "embed"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"

	"payd/clock"
)

// ChainID is the chain id of every simulated chain.
const ChainID = 1337

// Ether is one ETH in wei.
var Ether = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// The ERC-20 of testdata, as generate.sh compiles it.
var (
	//go:embed testdata/Token.bin
	tokenBin string
	//go:embed testdata/Token.abi
	tokenABI string
)

// Gas limits of the transactions the chain sends. They are fixed rather
// than estimated so that a transaction bound to revert is still sent and
// mined (an estimate would refuse it). They are generous: the simulated
// chain runs every fork up to the newest, whose state-growth pricing makes
// a token transfer to a fresh address cost about 147,000 gas (about
// 51,000 on mainnet today).
const (
	ethGas    = 50_000
	tokenGas  = 1_000_000
	deployGas = 2_000_000
)

// Account is a key the chain signs with, and its EIP-55 address.
type Account struct {
	Key     *ecdsa.PrivateKey
	Address string
}

// Chain is one simulated chain, closed when its test ends. It is not safe
// for concurrent use: one test goroutine drives it.
type Chain struct {
	t       testing.TB
	backend *simulated.Backend
	client  simulated.Client
	port    int
	signer  types.Signer
	token   abi.ABI
	// nonces are the next nonce of each account that sent: geth's pool
	// counts a sent transaction in its pending nonce only once it has
	// promoted it, on a goroutine of its own, so two sends in a row could
	// read one nonce.
	nonces map[common.Address]uint64
	// Accounts hold 1,000 ETH each from genesis.
	Accounts []Account
}

// funded is how many funded accounts a chain has.
const funded = 4

// Start starts a chain with funded accounts, its HTTP and websocket
// JSON-RPC servers on a loopback port, and closes it when t ends.
func Start(t testing.TB) *Chain {
	t.Helper()
	c := &Chain{t: t, signer: types.LatestSignerForChainID(big.NewInt(ChainID)), nonces: map[common.Address]uint64{}}
	var err error
	if c.token, err = abi.JSON(strings.NewReader(tokenABI)); err != nil {
		t.Fatalf("evmtest: reading Token.abi: %v", err)
	}
	alloc := types.GenesisAlloc{}
	for i := range funded {
		a := NewAccount(t, fmt.Sprintf("evmtest funded %d", i))
		c.Accounts = append(c.Accounts, a)
		alloc[common.HexToAddress(a.Address)] = types.Account{Balance: new(big.Int).Mul(big.NewInt(1000), Ether)}
	}
	c.backend, c.port = startBackend(t, alloc)
	t.Cleanup(func() { c.backend.Close() })
	c.client = c.backend.Client()
	return c
}

// NewAccount is an account whose key is derived from seed, so that a test
// gets the same addresses on every run. It holds nothing.
func NewAccount(t testing.TB, seed string) Account {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(seed)))
	if err != nil {
		t.Fatalf("evmtest: key from %q: %v", seed, err)
	}
	return Account{Key: key, Address: crypto.PubkeyToAddress(key.PublicKey).Hex()}
}

// startBackend starts the simulated backend with geth's HTTP and websocket
// servers on a free loopback port. The backend builds its own node, so the port is
// chosen before: a port taken in between makes the node fail to start
// (simulated.NewBackend panics), and another port is tried.
func startBackend(t testing.TB, alloc types.GenesisAlloc) (*simulated.Backend, int) {
	t.Helper()
	var last error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatalf("evmtest: %v", err)
		}
		b, err := newBackend(alloc, port)
		if err == nil {
			return b, port
		}
		last = err
	}
	t.Fatalf("evmtest: starting the simulated backend: %v", last)
	return nil, 0
}

// newBackend is simulated.NewBackend with the HTTP server on port, and the
// websocket server on the same port (geth serves both on one listener when
// their ports are equal), serving the eth namespace; the panic of a node that cannot start is its error.
func newBackend(alloc types.GenesisAlloc, port int) (b *simulated.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return simulated.NewBackend(alloc, func(nc *node.Config, _ *ethconfig.Config) {
		nc.HTTPHost = "127.0.0.1"
		nc.HTTPPort = port
		nc.HTTPModules = []string{"eth", "net", "web3"}
		nc.WSHost = nc.HTTPHost
		nc.WSPort = port
		nc.WSModules = nc.HTTPModules
	}), nil
}

// freePort is a loopback TCP port free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL is the chain's HTTP JSON-RPC endpoint.
func (c *Chain) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", c.port) }

// WSURL is the chain's websocket JSON-RPC endpoint.
func (c *Chain) WSURL() string { return fmt.Sprintf("ws://127.0.0.1:%d", c.port) }

// Client is go-ethereum's own client of the chain, for what a test checks
// beside the code under test.
func (c *Chain) Client() simulated.Client { return c.client }

// Commit mines the pending transactions into a new block and returns its
// hash.
func (c *Chain) Commit() string { return c.backend.Commit().Hex() }

// Fork makes the block parent the head, orphaning every block after it:
// the next Commit builds a side chain on parent. Transactions of the
// orphaned blocks go back to the pool, as a node does in a reorg, unless
// Rollback drops them.
func (c *Chain) Fork(parent string) {
	c.t.Helper()
	if err := c.backend.Fork(common.HexToHash(parent)); err != nil {
		c.t.Fatalf("evmtest: Fork(%s): %v", parent, err)
	}
}

// Rollback drops every transaction waiting in the pool.
func (c *Chain) Rollback() {
	c.backend.Rollback()
	clear(c.nonces)
}

// Head is the height and hash of the chain's latest block.
func (c *Chain) Head() (int64, string) {
	c.t.Helper()
	h, err := c.client.HeaderByNumber(context.Background(), nil)
	if err != nil {
		c.t.Fatalf("evmtest: head: %v", err)
	}
	return h.Number.Int64(), h.Hash().Hex()
}

// Receipt is the receipt of a mined transaction.
func (c *Chain) Receipt(txHash string) *types.Receipt {
	c.t.Helper()
	r, err := c.client.TransactionReceipt(context.Background(), common.HexToHash(txHash))
	if err != nil {
		c.t.Fatalf("evmtest: receipt of %s: %v", txHash, err)
	}
	return r
}

// SendETH sends wei from an account to an address and returns the
// transaction's hash; Commit mines it. Sent to a contract without a
// receive function, such as the Token, it is mined and reverts.
func (c *Chain) SendETH(from Account, to string, wei *big.Int) string {
	c.t.Helper()
	addr := common.HexToAddress(to)
	return c.send(from, &addr, wei, nil, ethGas)
}

// DeployToken deploys the ERC-20 of testdata with 6 decimals and supply
// base units minted to from, mines it, and returns its address.
func (c *Chain) DeployToken(from Account, symbol string, supply *big.Int) string {
	c.t.Helper()
	args, err := c.token.Pack("", "Test "+symbol, symbol, supply)
	if err != nil {
		c.t.Fatalf("evmtest: packing the constructor: %v", err)
	}
	code := append(common.FromHex(strings.TrimSpace(tokenBin)), args...)
	tx := c.send(from, nil, nil, code, deployGas)
	c.Commit()
	r := c.Receipt(tx)
	if r.Status != types.ReceiptStatusSuccessful {
		c.t.Fatalf("evmtest: deploying the token reverted")
	}
	return r.ContractAddress.Hex()
}

// TransferToken sends units of token from an account to an address with
// the token's transfer(address,uint256) and returns the transaction's
// hash; Commit mines it. More than from holds makes it revert.
func (c *Chain) TransferToken(from Account, token, to string, units *big.Int) string {
	c.t.Helper()
	return c.callToken(from, token, "transfer", common.HexToAddress(to), units)
}

// TransferTokenBatch sends units[i] of token to to[i] in one transaction,
// one Transfer log each, and returns the transaction's hash.
func (c *Chain) TransferTokenBatch(from Account, token string, to []string, units []*big.Int) string {
	c.t.Helper()
	addrs := make([]common.Address, len(to))
	for i, s := range to {
		addrs[i] = common.HexToAddress(s)
	}
	return c.callToken(from, token, "transferBatch", addrs, units)
}

// TokenBalance is what owner holds of token, in base units.
func (c *Chain) TokenBalance(token, owner string) *big.Int {
	c.t.Helper()
	input, err := c.token.Pack("balanceOf", common.HexToAddress(owner))
	if err != nil {
		c.t.Fatalf("evmtest: packing balanceOf: %v", err)
	}
	addr := common.HexToAddress(token)
	out, err := c.client.CallContract(context.Background(), callMsg(addr, input), nil)
	if err != nil {
		c.t.Fatalf("evmtest: balanceOf: %v", err)
	}
	return new(big.Int).SetBytes(out)
}

// callToken sends a call of the token's method.
func (c *Chain) callToken(from Account, token, method string, args ...any) string {
	c.t.Helper()
	input, err := c.token.Pack(method, args...)
	if err != nil {
		c.t.Fatalf("evmtest: packing %s: %v", method, err)
	}
	addr := common.HexToAddress(token)
	return c.send(from, &addr, nil, input, tokenGas)
}

// send signs and sends an EIP-1559 transaction paying the next block's base
// fee twice over plus the suggested tip, and returns its hash.
func (c *Chain) send(from Account, to *common.Address, value *big.Int, input []byte, gas uint64) string {
	c.t.Helper()
	tx, err := c.sign(from, to, value, input, gas, big.NewInt(0))
	if err == nil {
		err = c.client.SendTransaction(context.Background(), tx)
	}
	if err != nil {
		c.t.Fatalf("evmtest: sending from %s: %v", from.Address, err)
	}
	return tx.Hash().Hex()
}

// ReplaceETH sends, in place of the waiting transaction of from with the
// given nonce, one paying wei to another address with a tip raised by
// extraTip wei (a node replaces a waiting transaction only for a higher
// fee), and returns its hash.
func (c *Chain) ReplaceETH(from Account, nonce uint64, to string, wei, extraTip *big.Int) string {
	c.t.Helper()
	addr := common.HexToAddress(to)
	// After Fork the pool resets to the new head in the background: until
	// it has, it still judges nonces by the orphaned block's state and
	// calls the replacement's nonce too low. Wait for it, a while.
	for try := 0; ; try++ {
		tx, err := c.signNonce(from, nonce, &addr, wei, nil, ethGas, extraTip)
		if err == nil {
			err = c.client.SendTransaction(context.Background(), tx)
		}
		if err == nil {
			return tx.Hash().Hex()
		}
		if !strings.Contains(err.Error(), "nonce too low") || try == 250 {
			c.t.Fatalf("evmtest: replacing nonce %d of %s: %v", nonce, from.Address, err)
		}
		<-clock.Real{}.NewTimer(20 * time.Millisecond).C()
	}
}

// Nonce is the nonce of from's next transaction, counting those waiting
// and those of orphaned blocks (Fork puts them back in the pool).
func (c *Chain) Nonce(from Account) uint64 {
	c.t.Helper()
	addr := common.HexToAddress(from.Address)
	n, err := c.client.PendingNonceAt(context.Background(), addr)
	if err != nil {
		c.t.Fatalf("evmtest: nonce of %s: %v", from.Address, err)
	}
	return max(n, c.nonces[addr])
}

// sign signs a transaction with from's next nonce, and counts it.
func (c *Chain) sign(from Account, to *common.Address, value *big.Int, input []byte, gas uint64, extraTip *big.Int) (*types.Transaction, error) {
	nonce := c.Nonce(from)
	c.nonces[common.HexToAddress(from.Address)] = nonce + 1
	return c.signNonce(from, nonce, to, value, input, gas, extraTip)
}

// signNonce signs an EIP-1559 transaction.
func (c *Chain) signNonce(from Account, nonce uint64, to *common.Address, value *big.Int, input []byte,
	gas uint64, extraTip *big.Int) (*types.Transaction, error) {
	ctx := context.Background()
	head, err := c.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, err
	}
	if head.BaseFee == nil {
		return nil, errors.New("the chain has no base fee")
	}
	tip, err := c.client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, err
	}
	tip.Add(tip, extraTip)
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	if value == nil {
		value = new(big.Int)
	}
	return types.SignNewTx(from.Key, c.signer, &types.DynamicFeeTx{
		ChainID: big.NewInt(ChainID), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap,
		Gas: gas, To: to, Value: value, Data: input,
	})
}

// callMsg is a read-only call of input at to.
func callMsg(to common.Address, input []byte) ethereum.CallMsg {
	return ethereum.CallMsg{To: &to, Data: input}
}
