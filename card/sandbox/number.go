package sandbox

import (
	"time"

	"payd"
)

// The test cards (CONTRACT.md "Card rail", docs/card.md): the number the
// sandbox's form is given decides what happens, as a real provider's test
// mode does. Any other number is refused by the form and changes nothing.
var testCards = map[string]testCard{
	"4242424242424242": {outcome: pays},
	"4000000000000002": {outcome: declines, code: payd.CardDeclinedGeneric},
	"4000000000009995": {outcome: declines, code: payd.CardInsufficientFunds},
	"4000000000003220": {outcome: challenges},
	"4000000000000077": {outcome: delays},
}

// Delay is how long, on the service clock, the delayed test card
// (4000 0000 0000 0077) stays processing before its coin is delivered.
const Delay = 30 * time.Second

// testCard is what one test card does.
type testCard struct {
	outcome outcome
	// code is the decline code of a card that declines.
	code string
}

// outcome is what paying with a test card leads to.
type outcome int

const (
	// pays: charged and the coin delivered at once.
	pays outcome = iota
	// declines with the card's code.
	declines
	// challenges: a challenge step (3-D Secure) first, then pays or
	// declines with challenge_failed.
	challenges
	// delays: charged, the coin delivered Delay later.
	delays
)

// formError is an error of the card form, in words shown to the person
// typing.
type formError string

func (e formError) Error() string { return string(e) }

// The errors ParseNumber and the form give.
const (
	errNoNumber  formError = "Enter a card number."
	errCharacter formError = "A card number has only digits, spaces and dashes."
	errLength    formError = "A card number has 12 to 19 digits."
	errChecksum  formError = "This card number is not valid: check its digits."
	errNotTest   formError = "This is not a sandbox test card. Use 4242 4242 4242 4242 to pay; docs/card.md lists the others."
)

// ParseNumber reads a card number as a person types it: digits, with
// spaces or dashes between groups allowed. It returns the digits alone,
// or an error, worded for the form, when they are not 12 to 19 digits
// whose Luhn checksum holds.
func ParseNumber(s string) (string, error) {
	digits := make([]byte, 0, 19)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if len(digits) == 19 {
				return "", errLength
			}
			digits = append(digits, c)
		case c == ' ' || c == '-' || c == '\t':
		default:
			return "", errCharacter
		}
	}
	switch {
	case len(digits) == 0:
		return "", errNoNumber
	case len(digits) < 12:
		return "", errLength
	case !luhn(digits):
		return "", errChecksum
	}
	return string(digits), nil
}

// luhn reports whether digits pass the Luhn checksum every card number
// carries in its last digit.
func luhn(digits []byte) bool {
	sum := 0
	for i := range digits {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// lookupCard parses a typed number and finds its test card.
func lookupCard(s string) (string, testCard, error) {
	n, err := ParseNumber(s)
	if err != nil {
		return "", testCard{}, err
	}
	c, ok := testCards[n]
	if !ok {
		return "", testCard{}, errNotTest
	}
	return n, c, nil
}
