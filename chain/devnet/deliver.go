package devnet

import (
	"context"

	"payd"
	"payd/money"
)

// Deliver sends amount to a deposit on network n as a card provider's
// delivery would (card/sandbox's Deliverer): one transfer from a made-up
// sender, carrying the deposit's Solana Pay reference on solana. It
// returns the transaction's hash.
func (d *Devnet) Deliver(ctx context.Context, n money.Network, to payd.Deposit, amount money.CoinAmount) (string, error) {
	return d.Transfer(ctx, TransferRequest{Network: string(n), Asset: string(amount.Asset), To: to.Address,
		Amount: amount.String(), Reference: to.Reference})
}
