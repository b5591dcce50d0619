package evm

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"payd/hd"
	"payd/money"
)

// FuzzQuantity checks that a hex quantity read back writes the same number,
// and that a big quantity agrees with a small one where both read.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{`"0x0"`, `"0x1b4"`, `"0xffffffffffffffff"`, `"0x10000000000000000"`, `"0x"`, `"0x-1"`, `1`, `"0x0001"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var q quantity
		var bq bigQuantity
		errQ := json.Unmarshal(b, &q)
		errB := json.Unmarshal(b, &bq)
		if errQ == nil {
			var back quantity
			if err := json.Unmarshal([]byte(`"`+hexQuantity(uint64(q))+`"`), &back); err != nil || back != q {
				t.Fatalf("%s read as %d, written %s, read back %d (%v)", b, q, hexQuantity(uint64(q)), back, err)
			}
			if errB != nil || bq.Cmp(new(big.Int).SetUint64(uint64(q))) != 0 {
				t.Fatalf("%s: quantity %d, big quantity %s (%v)", b, q, &bq.Int, errB)
			}
		}
		if errB == nil && (bq.Sign() < 0 || bq.BitLen() > 256) {
			t.Fatalf("%s read as %s", b, &bq.Int)
		}
	})
}

// FuzzLogs reads eth_getLogs answers: a log counted must be a Transfer of
// a configured token, to a watched address spelled as Deposit would, of a
// positive amount of at most 256 bits.
func FuzzLogs(f *testing.F) {
	amount := "0x" + strings.Repeat("0", 58) + "bebc20"
	good := `[{"address":"` + contract + `","topics":["` + transferTopic.String() + `","` + topic(sender) + `","` + topic(deposit) +
		`"],"data":"` + amount + `","blockHash":"` + hashOf(5) + `","transactionHash":"` + hashOf(0xbb) + `","logIndex":"0x3","removed":false}]`
	f.Add([]byte(good))
	f.Add([]byte(strings.Replace(good, `"removed":false`, `"removed":true`, 1)))
	f.Add([]byte(strings.Replace(good, `"0x3"`, `"0xffffffffffffffff"`, 1)))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"topics":null,"data":"0x"}]`))
	n := &Node{network: money.Ethereum, byToken: map[account]money.Asset{}}
	acc, _ := parseAccount(contract)
	n.byToken[acc] = money.USDC
	all := everyKey{}
	f.Fuzz(func(t *testing.T, b []byte) {
		var logs []rpcLog
		if json.Unmarshal(b, &logs) != nil {
			return
		}
		for i, l := range logs {
			tr, ok := n.tokenTransfer(l, i, all)
			if !ok {
				continue
			}
			if l.Removed || tr.Amount.Asset != money.USDC || tr.Amount.Sign() <= 0 || tr.Amount.Units.BitLen() > 256 {
				t.Fatalf("counted %+v from %+v", tr, l)
			}
			if err := hd.ValidAddress(money.Ethereum, tr.To); err != nil {
				t.Fatalf("To %s: %v", tr.To, err)
			}
			if k, _ := n.WatchKey(tr.To); k != string(l.Topics[2][12:]) {
				t.Fatalf("To %s is not the recipient topic %s", tr.To, l.Topics[2])
			}
			if tr.Index != i {
				t.Fatalf("index %d, want its position %d", tr.Index, i)
			}
		}
	})
}

// FuzzAnswer feeds answers to the client's parser: it returns responses or
// an upstream error, never panics; and what it reads answers the request
// with id 1 only with that id, or as an error object without an id.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"result":"0x1"}`, `[{"id":1,"result":null},{"id":2,"error":{"code":-1,"message":"x"}}]`,
		`{"error":{"code":-32600,"message":"batch too large"}}`, `[`, ``, `null`, `[null]`,
		`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"0x1","result":"0x2"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, `{"id":"1","result":1}`} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	c := &client{endpoint: "http://node", network: "ethereum node"}
	f.Fuzz(func(t *testing.T, b []byte, batch bool) {
		rs, err := c.parse("eth_call", b, batch)
		if err == nil && !batch && len(rs) != 1 {
			t.Fatalf("one answer read as %d", len(rs))
		}
		if err == nil && answers(rs, map[string]int{"1": 0}) {
			ok := false
			for _, r := range rs {
				ok = ok || string(r.ID) == "1" || (r.Error != nil && len(rs) == 1 && (r.ID == nil || string(r.ID) == "null"))
			}
			if !ok {
				t.Fatalf("%s answers the request with id 1", b)
			}
		}
		var blk *rpcBlock
		json.Unmarshal(b, &blk)
	})
}

// everyKey watches every address.
type everyKey struct{}

func (everyKey) Has(string) bool { return true }
