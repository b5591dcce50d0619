package tron

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"payd/money"
)

// The fuzz tests feed arbitrary bytes to every decoder of the node's
// answers, seeded with the recorded answers of testdata: none may panic,
// and what they accept must hold together.

// seed adds every fixture to f's corpus.
func seed(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"blockID":"` + hex.EncodeToString(make([]byte, 32)) + `"}`))
	f.Add([]byte(`[{"id":1}]`))
	f.Add([]byte(`null`))
}

// everyKey watches every address.
type everyKey struct{}

func (everyKey) Has(string) bool { return true }

// FuzzInfos: a block's transaction infos decode or are refused, and every
// transfer read from them is of the configured token, positive, with an
// index inside its transaction's logs.
func FuzzInfos(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		node := fuzzNode()
		infos, err := decodeInfos(data)
		if err != nil {
			return
		}
		// The infos are their own block's when they agree on its number
		// and time; another block's when one is left out.
		var h header
		agree := true
		for _, info := range infos {
			h.Transactions = append(h.Transactions, struct {
				TxID hash32 `json:"txID"`
			}{info.ID})
			agree = agree && info.BlockNumber == infos[0].BlockNumber && info.BlockTimeStamp == infos[0].BlockTimeStamp
		}
		if len(infos) > 0 {
			h.BlockHeader.RawData.Number, h.BlockHeader.RawData.Timestamp = infos[0].BlockNumber, infos[0].BlockTimeStamp
			if why := otherBlock(h, infos); agree != (why == "") {
				t.Fatalf("otherBlock of the infos' own block = %q (agreeing %v)", why, agree)
			}
			if otherBlock(h, infos[1:]) == "" {
				t.Fatal("infos with one left out are the block's")
			}
		}
		for _, info := range infos {
			for _, tr := range node.transfers(info, everyKey{}) {
				if tr.Amount.Units.Sign() <= 0 || tr.Index < 0 || tr.Index >= len(info.Log) || tr.TxHash != info.ID.String() {
					t.Fatalf("transfer %+v from %+v", tr, info)
				}
				if node.ValidAddress(tr.To) != nil || node.ValidAddress(tr.From) != nil {
					t.Fatalf("transfer %+v has an address that is not tron's", tr)
				}
			}
		}
	})
}

// FuzzAnswers: every other answer's decoder takes arbitrary bytes.
func FuzzAnswers(f *testing.F) {
	seed(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var h header
		if json.Unmarshal(data, &h) == nil {
			if h.BlockID != nil && len(h.BlockID.String()) != 64 {
				t.Fatalf("block id %s", h.BlockID)
			}
			if (otherBlock(h, nil) == "") != (len(h.Transactions) == 0) {
				t.Fatalf("no infos are those of a block of %d transactions", len(h.Transactions))
			}
		}
		var c constantCall
		if json.Unmarshal(data, &c) == nil {
			if v, ok := decodeWord(c); ok && v.Sign() < 0 {
				t.Fatalf("decimals %s", v)
			}
		}
		var p chainParameters
		_ = json.Unmarshal(data, &p)
		_, _ = apiError(data)
		var single struct {
			ID          *hash32 `json:"id"`
			BlockNumber int64   `json:"blockNumber"`
		}
		_ = json.Unmarshal(data, &single)
	})
}

// FuzzAddresses: addresses, log contracts and topics parse or are refused.
func FuzzAddresses(f *testing.F) {
	f.Add("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	f.Add("41a614f803b6fd780986a42c78ec9c7f77e6ded13c")
	f.Add("a614f803b6fd780986a42c78ec9c7f77e6ded13c")
	f.Add("000000000000000000000000a614f803b6fd780986a42c78ec9c7f77e6ded13c")
	f.Fuzz(func(t *testing.T, s string) {
		if acc, ok := parseAccount(s); ok {
			if back, ok := parseAccount(addressOf(acc)); !ok || back != acc {
				t.Fatalf("%q: %x does not round-trip", s, acc)
			}
		}
		_, _ = logAccount(s)
		if acc, ok := topicAccount(s); ok && topic(acc) != toLower(s) {
			t.Fatalf("topic %q read as %x", s, acc)
		}
		n := fuzzNode()
		if k, ok := n.WatchKey(s); ok && len(k) != 20 {
			t.Fatalf("WatchKey(%q) = %x", s, k)
		}
	})
}

// fuzzNode is a node whose token is mainnet USDT's contract.
func fuzzNode() *Node {
	acc, _ := parseAccount("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")
	return &Node{tokens: map[money.Asset]account{money.USDT: acc}, byToken: map[account]money.Asset{acc: money.USDT}}
}

// topic writes an account as an indexed address topic.
func topic(acc account) string { return "000000000000000000000000" + hex.EncodeToString(acc[:]) }

// toLower lower-cases ASCII hex.
func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
