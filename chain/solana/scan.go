package solana

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strconv"

	"payd"
	"payd/money"
)

// How Scan reads an account's signatures.
const (
	// pageLimit is getSignaturesForAddress's largest page.
	pageLimit = 1000
	// maxPages bounds the pages read for one account in one run: 5,000
	// transactions since the last final slot (a wallet far busier than
	// one shop's, or payd down for long) make the scan fall back to
	// asking each watched reference instead.
	maxPages = 5
	// refLimit is the page asked for one reference in the fallback: a
	// reference is used by one checkout, so a few transactions at most.
	refLimit = 20
	// maxStatuses is getSignatureStatuses' largest request.
	maxStatuses = 256
	// maxFetches bounds the getTransaction calls of one run: 5 s at 10
	// calls a second, well inside the follower's lease. A backlog
	// larger is fetched over several runs, oldest first.
	maxFetches = 50
)

// FinalConfirmations is how many confirmations a finalized transfer
// counts (Node.FinalDepth), for the code that must know it before a node
// answers.
const FinalConfirmations = 32

// FinalDepth is 32: Tower BFT roots (finalizes) a slot once 32 votes are
// stacked on it, so a finalized transfer counts 32 confirmations, one
// more for each slot after.
func (n *Node) FinalDepth() int { return FinalConfirmations }

// Tip is the node's finalized slot (getSlot at commitment finalized). A
// finalized slot is never rolled back, so its number names its block: the
// hash is the slot in decimal.
func (n *Node) Tip(ctx context.Context) (payd.BlockRef, error) {
	var slot int64
	if err := n.rpc.call(ctx, &slot, "getSlot", map[string]string{"commitment": "finalized"}); err != nil {
		return payd.BlockRef{}, err
	}
	return slotRef(slot), nil
}

// slotRef names the block of a finalized slot.
func slotRef(slot int64) payd.BlockRef {
	return payd.BlockRef{Height: slot, Hash: strconv.FormatInt(slot, 10)}
}

// BlockAt is an empty block at height: the follower asks a Scanner only
// for the block it starts at, before which no deposit existed.
func (n *Node) BlockAt(_ context.Context, height int64, _ payd.Watched) (payd.Block, error) {
	return payd.Block{BlockRef: slotRef(height), Parent: strconv.FormatInt(height-1, 10)}, nil
}

// errNotPending is Pending's answer: the follower asks a Scanner through
// Scan.
var errNotPending = errors.New("solana: Pending is not read on solana; the follower calls Scan")

// Pending is never called on a Scanner: it returns an error saying so.
func (n *Node) Pending(context.Context, payd.Watched, []string, int64) (payd.Pending, error) {
	return payd.Pending{}, errNotPending
}

// owners are the watched deposits by wallet address: the references of
// each.
type owners map[string]map[string]bool

// watchedOwners reads w's DepositKeys back.
func watchedOwners(w payd.WatchedSet) owners {
	out := owners{}
	for k := range w.Keys() {
		owner, ref, ok := splitKey(k)
		if !ok {
			continue
		}
		if out[owner] == nil {
			out[owner] = map[string]bool{}
		}
		out[owner][ref] = true
	}
	return out
}

// seen is one signature the lists named, and the owners it may pay.
type seen struct {
	signatureInfo
	owners []string
}

// errNotThere is Scan's answer when the node listed a transaction at or
// under the tip but would not return it (a null getTransaction, or a
// backend behind the tip): its slot must not be passed, so the run ends
// without a block and the follower asks again at its next run.
func errNotThere(sig string) error {
	return payd.Errorf(payd.ErrNotFound, "solana: the node listed the transaction %s at or under the finalized slot "+
		"but does not return it yet", sig)
}

// Scan reads, for each wallet address watched and its associated token
// account of each mint, the signatures since head (getSignaturesForAddress,
// newest first, paged back to head), fetches the transactions not decoded
// before (getTransaction, batched, at most maxFetches a run, oldest
// first), and keeps those that carry a watched reference of the wallet
// and pay it. Finalized ones at or under tip go in blocks at their slots,
// the others in Pending.Transfers; the unconfirmed transactions are
// asked for with getSignatureStatuses. When the fetches of a run stop
// short of tip, the blocks end at the slot before the first transaction
// not fetched, and the next run goes on from there. A transaction listed
// at or under tip that the node does not return is not_found (the
// follower waits it out). docs/networks.md says what it costs.
func (n *Node) Scan(ctx context.Context, head, tip payd.BlockRef, w payd.WatchedSet, unconfirmed []string) (
	[]payd.Block, payd.Pending, error) {
	all := watchedOwners(w)
	bySig := map[string]*seen{}
	var order []*seen
	for _, owner := range slices.Sorted(maps.Keys(all)) {
		list, err := n.ownerSignatures(ctx, owner, all[owner], head.Height, tip.Height)
		if err != nil {
			return nil, payd.Pending{}, err
		}
		for _, s := range list {
			if failed(s.Err) {
				continue // a failed transaction never pays
			}
			e := bySig[s.Signature]
			if e == nil {
				e = &seen{signatureInfo: s}
				bySig[s.Signature] = e
				order = append(order, e)
			}
			if !slices.Contains(e.owners, owner) {
				e.owners = append(e.owners, owner)
			}
		}
	}
	// Oldest first, so that the fetches a run is allowed cover a prefix
	// of the slots.
	slices.SortStableFunc(order, func(a, b *seen) int { return cmp.Compare(a.Slot, b.Slot) })
	sigs := make([]string, len(order))
	for i, e := range order {
		sigs[i] = e.Signature
	}
	infos, skipped, err := n.transactions(ctx, sigs, tip.Height, maxFetches)
	if err != nil {
		return nil, payd.Pending{}, err
	}
	end := tip
	bySlot := map[int64][]payd.Transfer{}
	p := payd.Pending{Alive: map[string]bool{}}
	for _, e := range order {
		in := infos[e.Signature]
		switch {
		case in == nil && skipped[e.Signature]:
			if e.Slot <= end.Height {
				end = slotRef(max(head.Height, e.Slot-1)) // the next run goes on from there
			}
			continue
		case in == nil && e.final() && e.Slot <= tip.Height && e.Slot > head.Height:
			return nil, payd.Pending{}, errNotThere(e.Signature)
		case in == nil:
			continue // not final yet: the next run asks again
		}
		for _, owner := range e.owners {
			ts := in.transfers(e.Signature, owner, all[owner], n.tokenAccounts(owner))
			if ref, many := in.reference(all[owner]); many && len(ts) > 0 && e.final() && e.Slot <= end.Height {
				n.log.Warn("a solana transaction carries more than one watched reference of the wallet: the one "+
					"at the lowest account index is credited", slog.String("signature", e.Signature),
					slog.String("wallet", owner), slog.String("credited", ref))
			}
			if e.final() && e.Slot <= tip.Height {
				bySlot[e.Slot] = append(bySlot[e.Slot], ts...)
			} else {
				p.Transfers = append(p.Transfers, ts...)
			}
		}
	}
	for s := range bySlot {
		if s > end.Height {
			delete(bySlot, s) // in a block of a later run
		}
	}
	late, err := n.alive(ctx, head, end, unconfirmed, all, p.Alive)
	if err != nil {
		return nil, payd.Pending{}, err
	}
	return blocks(head, end, bySlot, late), p, nil
}

// blocks are the final blocks after head up to tip with transfers, in
// slot order, each naming the one before, and a block at tip last (with
// the late transfers), when tip is above head.
func blocks(head, tip payd.BlockRef, bySlot map[int64][]payd.Transfer, late []payd.Transfer) []payd.Block {
	var out []payd.Block
	parent := head.Hash
	for _, s := range slices.Sorted(maps.Keys(bySlot)) {
		ts := bySlot[s]
		if s <= head.Height || len(ts) == 0 {
			continue
		}
		sortTransfers(ts)
		ref := slotRef(s)
		out = append(out, payd.Block{BlockRef: ref, Parent: parent, Transfers: ts})
		parent = ref.Hash
	}
	if tip.Height <= head.Height {
		return out
	}
	if len(out) == 0 || out[len(out)-1].Height != tip.Height {
		out = append(out, payd.Block{BlockRef: tip, Parent: parent})
	}
	last := &out[len(out)-1]
	last.Transfers = append(last.Transfers, late...)
	return out
}

// sortTransfers orders a block's transfers by signature and index.
func sortTransfers(ts []payd.Transfer) {
	slices.SortFunc(ts, func(a, b payd.Transfer) int {
		return cmp.Or(cmp.Compare(a.TxHash, b.TxHash), cmp.Compare(a.Index, b.Index))
	})
}

// walletAccounts are the accounts Scan asks about for a wallet: its
// address (SOL) and its associated token account of each mint, in
// money.Assets' order (list), and those token accounts' mints (tokens).
type walletAccounts struct {
	list   []string
	tokens map[string]tokenAccount
}

// accounts are owner's walletAccounts, derived once.
func (n *Node) accounts(owner string) (walletAccounts, error) {
	if v, ok := n.atas.Load(owner); ok {
		return v.(walletAccounts), nil
	}
	out := walletAccounts{list: []string{owner}, tokens: map[string]tokenAccount{}}
	for _, a := range money.Assets {
		mint, ok := n.mints[a]
		if !ok {
			continue
		}
		ata, err := AssociatedTokenAccount(owner, mint)
		if err != nil {
			return walletAccounts{}, err
		}
		out.list = append(out.list, ata)
		out.tokens[ata] = tokenAccount{mint: mint, asset: a}
	}
	n.atas.Store(owner, out)
	return out, nil
}

// tokenAccounts are owner's associated token accounts and their mints;
// none when owner is not an address (it is never watched then).
func (n *Node) tokenAccounts(owner string) map[string]tokenAccount {
	accs, _ := n.accounts(owner)
	return accs.tokens
}

// ownerSignatures lists the signatures of owner's accounts after slot
// head, choosing the cheaper way: each new signature costs a
// getTransaction, each watched reference a getSignaturesForAddress. When
// an account has more than maxPages pages of them, or the signatures not
// decoded before outnumber owner's watched references (a wallet that
// also receives other traffic, or spam), it asks each reference instead
// (refSignatures): what paid the deposits is found at a cost of one call
// per reference. Lists are read at minContextSlot tip: a backend behind
// it refuses (not_found) rather than answering short.
func (n *Node) ownerSignatures(ctx context.Context, owner string, refs map[string]bool, head, tip int64) (
	[]signatureInfo, error) {
	accs, err := n.accounts(owner)
	if err != nil {
		return nil, err
	}
	var out []signatureInfo
	fresh := map[string]bool{}
	for _, acc := range accs.list {
		list, complete, err := n.signatures(ctx, acc, head, tip)
		if err != nil {
			return nil, err
		}
		if !complete {
			return n.refSignatures(ctx, slices.Sorted(maps.Keys(refs)), head, tip)
		}
		for _, s := range list {
			if _, ok := n.txs.get(s.Signature); !ok && !failed(s.Err) {
				fresh[s.Signature] = true
			}
		}
		out = append(out, list...)
	}
	if len(fresh) > len(refs) {
		return n.refSignatures(ctx, slices.Sorted(maps.Keys(refs)), head, tip)
	}
	return out, nil
}

// signatures lists account's signatures after slot head, newest first,
// at commitment confirmed; complete is false when more than maxPages
// pages would be needed.
func (n *Node) signatures(ctx context.Context, account string, head, tip int64) (out []signatureInfo,
	complete bool, err error) {
	before := ""
	for range maxPages {
		cfg := map[string]any{"commitment": "confirmed", "limit": pageLimit, "minContextSlot": tip}
		if before != "" {
			cfg["before"] = before
		}
		var list []signatureInfo
		if err := n.rpc.call(ctx, &list, "getSignaturesForAddress", account, cfg); err != nil {
			return nil, false, err
		}
		for _, s := range list {
			if s.Slot <= head {
				return out, true, nil
			}
			out = append(out, s)
		}
		if len(list) < pageLimit {
			return out, true, nil
		}
		before = list[len(list)-1].Signature
	}
	return out, false, nil
}

// refSignatures lists the signatures of each reference after slot head:
// a first page of refLimit for each, in batches, then, for a reference
// whose page was full and did not reach head, pages of pageLimit back to
// head (at most maxPages).
func (n *Node) refSignatures(ctx context.Context, refs []string, head, tip int64) ([]signatureInfo, error) {
	lists := make([][]signatureInfo, len(refs))
	calls := make([]rpcCall, len(refs))
	for i, ref := range refs {
		calls[i] = rpcCall{"getSignaturesForAddress",
			[]any{ref, map[string]any{"commitment": "confirmed", "limit": refLimit, "minContextSlot": tip}}, &lists[i]}
	}
	if err := n.rpc.batch(ctx, calls); err != nil {
		return nil, err
	}
	var out []signatureInfo
	for i, list := range lists {
		for _, s := range list {
			if s.Slot > head {
				out = append(out, s)
			}
		}
		if len(list) < refLimit || list[len(list)-1].Slot <= head {
			continue
		}
		// A busy reference: the rest of its list back to head.
		before := list[len(list)-1].Signature
		for range maxPages {
			var page []signatureInfo
			cfg := map[string]any{"commitment": "confirmed", "limit": pageLimit, "before": before, "minContextSlot": tip}
			if err := n.rpc.call(ctx, &page, "getSignaturesForAddress", refs[i], cfg); err != nil {
				return nil, err
			}
			done := len(page) < pageLimit
			for _, s := range page {
				if s.Slot <= head {
					done = true
					break
				}
				out = append(out, s)
			}
			if done {
				break
			}
			before = page[len(page)-1].Signature
		}
	}
	return out, nil
}

// transactions decodes the transactions of sigs: from the cache, or
// fetched in batches at minContextSlot tip, at most limit fetched (the
// first ones of sigs); those left for a later run are in skipped. A
// transaction the node does not return yet, or returns without its
// metadata, is left out (not cached).
func (n *Node) transactions(ctx context.Context, sigs []string, tip int64, limit int) (map[string]*txInfo,
	map[string]bool, error) {
	out := map[string]*txInfo{}
	skipped := map[string]bool{}
	var missing []string
	for _, s := range sigs {
		switch _, cached := out[s]; {
		case cached || slices.Contains(missing, s) || skipped[s]:
		default:
			if in, ok := n.txs.get(s); ok {
				out[s] = in
			} else if len(missing) < limit {
				missing = append(missing, s)
			} else {
				skipped[s] = true
			}
		}
	}
	if len(missing) == 0 {
		return out, skipped, nil
	}
	txs := make([]*transaction, len(missing))
	calls := make([]rpcCall, len(missing))
	cfg := map[string]any{"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0,
		"minContextSlot": tip}
	for i, s := range missing {
		calls[i] = rpcCall{"getTransaction", []any{s, cfg}, &txs[i]}
	}
	if err := n.rpc.batch(ctx, calls); err != nil {
		return nil, nil, err
	}
	for i, t := range txs {
		if t == nil || t.Meta == nil {
			continue // not there yet, or without what it did: asked again
		}
		in := t.info()
		n.txs.put(missing[i], in)
		out[missing[i]] = in
	}
	return out, skipped, nil
}

// alive answers for the unconfirmed transactions (getSignatureStatuses,
// searching the node's history): one is alive while the node knows it
// without an error, not finalized or finalized after head (in this
// scan's blocks or the next's). One finalized at or under head was seen
// unfinalized by a run whose lists lagged the tip: its transfers are
// returned (late) to go in the block at tip, which counts them a little
// short, never long; while tip is head, it waits alive.
func (n *Node) alive(ctx context.Context, head, tip payd.BlockRef, unconfirmed []string, all owners,
	alive map[string]bool) ([]payd.Transfer, error) {
	var lateSigs []string
	for len(unconfirmed) > 0 {
		chunk := unconfirmed[:min(len(unconfirmed), maxStatuses)]
		unconfirmed = unconfirmed[len(chunk):]
		var st statuses
		err := n.rpc.call(ctx, &st, "getSignatureStatuses", chunk, map[string]bool{"searchTransactionHistory": true})
		if err != nil {
			return nil, err
		}
		for i, s := range st.Value {
			if i >= len(chunk) || s == nil || failed(s.Err) {
				continue
			}
			switch {
			case s.ConfirmationStatus != "finalized" || s.Slot > head.Height:
				alive[chunk[i]] = true
			case tip.Height <= head.Height:
				alive[chunk[i]] = true // waits for a block to go in
			default:
				lateSigs = append(lateSigs, chunk[i]) // alive if it pays a watched deposit
			}
		}
	}
	if len(lateSigs) == 0 {
		return nil, nil
	}
	infos, _, err := n.transactions(ctx, lateSigs, tip.Height, len(lateSigs))
	if err != nil {
		return nil, err
	}
	var late []payd.Transfer
	for _, sig := range lateSigs {
		in := infos[sig]
		if in == nil {
			alive[sig] = true // asked again at the next run
			continue
		}
		var ts []payd.Transfer
		for _, owner := range slices.Sorted(maps.Keys(all)) {
			ts = append(ts, in.transfers(sig, owner, all[owner], n.tokenAccounts(owner))...)
		}
		// One that pays no watched deposit any more (its checkout
		// stopped being watched) is not alive: the follower drops it
		// after DropAfter rather than keeping it waiting for ever.
		if len(ts) > 0 {
			alive[sig] = true
			late = append(late, ts...)
		}
	}
	sortTransfers(late)
	return late, nil
}
