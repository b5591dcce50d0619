package web

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
)

// catalogue holds every sentence the pages show, by language and key, so a
// language is added by adding one map. Sentences with a %s take their
// values in order. A key missing from a language falls back to English.
var catalogue = map[string]map[string]string{
	"en": english,
}

// defaultLang is the language of a request that asks for none we have.
const defaultLang = "en"

var english = map[string]string{
	"page.title":                      "Pay %s",
	"page.pay_to":                     "Pay %s",
	"page.price":                      "Price",
	"page.total":                      "Total",
	"page.processing_fee":             "Processing fee",
	"page.secure_note":                "You pay straight into %s wallet. This page never asks for your wallet's recovery phrase or keys.",
	"page.untitled":                   "Payment to %s",
	"page.support":                    "Questions? Write to %s.",
	"choose.legend":                   "Choose how to pay",
	"choose.option":                   "%s on %s",
	"choose.amount":                   "%s %s",
	"choose.amount_fee":               "%s %s · network fee about %s %s",
	"choose.email":                    "Email address",
	"choose.email_hint":               "The business uses it to send your receipt.",
	"choose.submit":                   "Show payment details",
	"choose.other":                    "Pay with another coin",
	"choose.none":                     "This business is not accepting payments right now. Please try again later.",
	"quote.heading":                   "Send exactly this amount",
	"quote.amount":                    "Amount",
	"quote.address":                   "Address",
	"quote.network":                   "Network",
	"quote.network_warning":           "Send only %s on the %s network. Coins sent on any other network are lost.",
	"quote.fee":                       "Network fee",
	"quote.fee_value":                 "About %s %s, paid by your wallet on top of the amount.",
	"quote.fee_unknown":               "Your wallet shows the network fee before you send.",
	"quote.reference_warning":         "Pay by scanning the QR code or with Open in wallet: they add the reference that links your transfer to this payment. A transfer typed in by hand to the address cannot be matched.",
	"quote.qr_alt":                    "QR code of the payment request for %s %s",
	"quote.open_wallet":               "Open in wallet",
	"quote.time_left":                 "Time left to send",
	"quote.ends_at":                   "This quote ends at %s.",
	"time.local":                      "%s your time",
	"time.date_layout":                "2 January 2006, 15:04",
	"quote.copy":                      "Copy",
	"quote.copy_amount":               "Copy amount",
	"quote.copy_address":              "Copy address",
	"quote.copied":                    "Copied",
	"quote.remainder":                 "This quote collects the rest of an earlier payment that was short.",
	"quote.refresh":                   "Refresh status",
	"status.heading":                  "Payment status",
	"status.open":                     "Waiting for your payment.",
	"status.detected":                 "Payment detected. Waiting for the network to confirm it.",
	"status.confirming":               "Payment detected: %d of %d confirmations.",
	"status.succeeded":                "Paid. Thank you!",
	"status.redirecting":              "Taking you back to %s…",
	"status.continue":                 "Continue",
	"status.overpaid":                 "Paid. You sent %s %s more than the quote; contact the business to get it back.",
	"status.underpaid":                "We received %s %s, which is less than the quote. Send the remaining %s %s to the same address before the quote ends.",
	"status.remaining":                "Still due",
	"status.expired":                  "This quote has expired and the address no longer takes payments. Do not send anything to it.",
	"status.expired_partial":          "This quote has expired with %s %s received, less than the quote. Do not send anything more to this address: get a new quote for what is still due.",
	"status.expired_partial_email":    "This quote has expired with %s %s received, less than the quote. Do not send anything more to this address: get a new quote for what is still due, or wait for the business to write to you at %s.",
	"status.new_quote_rest":           "Get a new quote for the rest",
	"status.new_quote":                "Get a new quote",
	"status.canceled":                 "This quote was canceled. Choose a coin to start again.",
	"status.review":                   "Your payment has arrived and the business is checking it. You do not need to do anything now.",
	"status.transaction":              "View the transaction",
	"receipt.heading":                 "Receipt",
	"receipt.amount":                  "Amount paid",
	"receipt.coin":                    "Coin",
	"receipt.network":                 "Network",
	"receipt.transaction":             "Transaction",
	"receipt.date":                    "Paid on",
	"receipt.paid_at":                 "%s",
	"receipt.remainder":               "This receipt is for the rest of the payment; the first part went to an earlier quote.",
	"payment.succeeded":               "This payment has been paid.",
	"payment.expired":                 "This payment request has expired. Ask the business for a new one.",
	"payment.canceled":                "This payment request was canceled by the business.",
	"payment.failed":                  "This payment could not be completed. Ask the business for a new one.",
	"payment.funds_received":          "Funds have already been received for this payment.",
	"devemails.title":                 "Emails kept by this development server",
	"devemails.intro":                 "In development mode payd sends no email: it keeps each one here, so you can read the codes and links it would have sent.",
	"devemails.to_label":              "Email address",
	"devemails.submit":                "Show emails",
	"devemails.list":                  "Emails to %s, newest first",
	"devemails.none":                  "No emails to %s yet.",
	"devemails.bad_address":           "That is not an email address.",
	"devemails.failed":                "The emails could not be read. Try again.",
	"notfound.title":                  "Page not found",
	"notfound.body":                   "There is no payment page at this address. The link may be mistyped, or the business may have archived it.",
	"error.title":                     "Something went wrong",
	"error.default":                   "Something went wrong on our side. Please try again in a moment.",
	"error.link_archived":             "This payment link has been archived by the business and no longer takes payments.",
	"error.link_not_found":            "This payment link does not exist or is no longer active.",
	"error.payment_not_found":         "This payment request does not exist.",
	"error.payment_paid":              "This payment has already been paid.",
	"error.payment_canceled":          "This payment request was canceled by the business.",
	"error.payment_expired":           "This payment request has expired. Ask the business for a new one.",
	"error.customer_blocked":          "Payments with this email address are not accepted by this business.",
	"error.email_required":            "Please enter your email address.",
	"error.invalid_email":             "Please enter a valid email address, such as name@example.com.",
	"error.temporarily_unavailable":   "Payments are paused for a moment. Please try again later.",
	"error.not_accepting":             "This business cannot receive this coin right now. Please choose another.",
	"error.asset_unavailable":         "This coin is not available right now. Please choose another.",
	"error.rail_unavailable":          "This way of paying is not offered by the business.",
	"error.business_suspended":        "This business is not accepting payments right now.",
	"error.rate_limited":              "Too many attempts from your connection. Please wait a few minutes and try again.",
	"error.checkout_not_supersedable": "Funds may already be on the way for the current quote, so it cannot be replaced. Wait for it to finish.",
	"error.upstream_unavailable":      "Prices cannot be fetched right now. Please try again in a moment.",
	"error.choose_coin":               "Please choose a coin.",
	"error.payment_not_underpaid":     "This payment no longer needs anything from you.",
	"error.remainder_unavailable":     "A new quote for the rest cannot be made here now. Please contact the business.",
	"error.nothing_due":               "Nothing more is due for this payment.",
	"error.not_found":                 "This quote does not belong to this page.",
	"error.amount_out_of_range":       "This total cannot be paid by card: it is outside the card limits. Please pay with a coin instead.",
	"error.route_in_progress":         "Your payment on the card page may still go through. Wait for it, or finish it on that page, before trying again.",
	"error.no_route":                  "No further card attempt is available for this payment. Start over, or pay with a coin.",
	"error.stale_route":               "This card payment page is out of date. Go back to the payment page to see where your payment stands.",
	"error.checkout_not_retryable":    "This card payment cannot be tried again now. Go back to the payment page to see where it stands.",
	"error.checkout_not_awaiting":     "This card payment is no longer waiting for your card: it was charged, declined or has ended. Go back to the payment page to see where it stands.",
	"error.checkout_failed":           "This card payment failed and cannot go on. Start over to pay again.",
	"error.checkout_expired":          "The time for this payment ran out. Start over to pay again.",
	"error.checkout_canceled":         "This payment was canceled. Start over to pay again.",
	"error.wrong_rail":                "This is not a card payment, so it cannot be paid on the card page.",
	"card.heading":                    "Pay by card",
	"card.heading_or":                 "Or pay by card",
	"card.total":                      "Total by card: %s",
	"card.fee_included":               "This includes a processing fee of %s.",
	"card.out_of_range":               "Card payments can be made from %s to %s. This total is outside those limits, so it cannot be paid by card.",
	"card.email_hint":                 "Needed to pay by card. The business uses it to send your receipt.",
	"card.submit":                     "Pay by card",
	"card.awaiting":                   "Waiting for your payment on the secure card page.",
	"card.go":                         "Go to the card page",
	"card.time_left":                  "Time left to pay",
	"card.ends_at":                    "Pay by card before %s.",
	"card.underpaid":                  "Less than the amount arrived from the card provider. The business has been told and will decide; you need not pay again.",
	"card.challenge":                  "Your bank asks you to confirm the payment on the card page. Finish that step there; this page follows it.",
	"card.processing":                 "Your card was charged. Your payment is on its way.",
	"card.delivered":                  "Your card was charged and your payment has been sent. Waiting for the network to confirm it.",
	"card.confirming":                 "Your card was charged and your payment is being confirmed: %d of %d confirmations.",
	"card.declined":                   "Your card payment was declined. Nothing was charged.",
	"card.declined_default":           "The card was declined.",
	"card.provider_said":              "The card provider says: %s",
	"card.failed":                     "Your card payment was declined and no other attempt is left. Nothing was charged. Start over to pay again.",
	"card.expired":                    "The time for this card payment ran out. Start over to pay again.",
	"card.canceled":                   "This card payment was canceled. Start over to pay again.",
	"card.other":                      "Pay another way",
	"card.retry":                      "Try again",
	"card.tries_left":                 "You can try %d more times.",
	"card.one_try_left":               "You can try once more.",
	"card.start_over":                 "Start over",
	"card.charged_to":                 "Charged to %s ending in %s.",
	"card.card":                       "your card",
	"card.card_ending":                "%s ending in %s",
	"card.receipt_total":              "Amount charged",
	"card.receipt_card":               "Card",
	"card.go_title":                   "Card payment",
	"card.going":                      "Taking you to the secure card page of our card provider…",
	"card.continue":                   "Continue to the card page",
	"card.back":                       "Back to the payment page",
	"asset.USDC":                      "USDC",
	"asset.USDT":                      "USDT",
	"asset.BTC":                       "Bitcoin (BTC)",
	"asset.ETH":                       "Ether (ETH)",
	"asset.SOL":                       "Solana (SOL)",
	"network.bitcoin":                 "Bitcoin",
	"network.ethereum":                "Ethereum",
	"network.polygon":                 "Polygon",
	"network.solana":                  "Solana",
	"network.tron":                    "Tron",
}

// messages is one language of the catalogue.
type messages struct {
	lang string
	m    map[string]string
}

// T returns the sentence for key, with args filled in.
func (m messages) T(key string, args ...any) string {
	s, ok := m.m[key]
	if !ok {
		if s, ok = english[key]; !ok {
			return key
		}
	}
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

// errorText is the sentence for an error code of the API: a plain sentence,
// never the code itself.
func (m messages) errorText(code, field string) string {
	if code == "invalid_request" && field == "email" {
		code = "invalid_email"
	}
	if _, ok := english["error."+code]; ok {
		return m.T("error." + code)
	}
	return m.T("error.default")
}

// language picks the catalogue language from Accept-Language, in the
// order the browser gives (weights are not weighed: browsers list by
// preference already).
func language(r *http.Request) messages {
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if m, ok := catalogue[base]; ok {
			return messages{lang: base, m: m}
		}
	}
	return messages{lang: defaultLang, m: catalogue[defaultLang]}
}

// Possessive is name with the possessive ending of the language: in
// English an apostrophe alone after a final s ("Books' wallet"), 's
// otherwise ("Ada's wallet"), as docs/checkout-page.md records.
func (m messages) Possessive(name string) string {
	if strings.HasSuffix(name, "s") || strings.HasSuffix(name, "S") {
		return name + "'"
	}
	return name + "'s"
}

// timeHTML is the sentence key with t, in UTC and the layout, in a <time>
// element that the page's script follows with the customer's local time
// (label "time.local"); without script the UTC time stands alone.
func (m messages) timeHTML(key string, t time.Time, layout string) template.HTML {
	const slot = "[[time]]"
	stamp := fmt.Sprintf(`<time datetime="%s" data-local-label="%s">%s UTC</time>`, t.UTC().Format(time.RFC3339),
		template.HTMLEscapeString(m.T("time.local")), template.HTMLEscapeString(t.UTC().Format(layout)))
	return template.HTML(strings.Replace(template.HTMLEscapeString(m.T(key, slot)), slot, stamp, 1)) //nolint:gosec // every part escaped
}

// Lang is the language's tag, for the page's lang attribute.
func (m messages) Lang() string { return m.lang }
