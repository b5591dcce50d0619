package passkey

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// maxChallenge bounds the challenge text read from a response: payd's are
// 43 characters (32 bytes in base64url).
const maxChallenge = 256

// ChallengeHash reads the challenge a browser's answer (registration or
// assertion, the JSON of the PublicKeyCredential) signed, and returns the
// hash its ceremony's state is stored under (payd.WebAuthnChallenge.Hash),
// for the caller to take the state with. An answer without a readable
// challenge is passkey_failed. Nothing here is verified: FinishRegistration
// and FinishLogin check the whole answer against the state.
func ChallengeHash(response []byte) (string, error) {
	var cred struct {
		Response struct {
			ClientDataJSON string `json:"clientDataJSON"`
		} `json:"response"`
	}
	if err := json.Unmarshal(response, &cred); err != nil {
		return "", failed("unreadable answer", err)
	}
	// Browsers send base64url without padding; tolerate padding, as the
	// library does.
	data, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(cred.Response.ClientDataJSON, "="))
	if err != nil {
		return "", failed("clientDataJSON is not base64url", err)
	}
	var client struct {
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(data, &client); err != nil {
		return "", failed("unreadable clientDataJSON", err)
	}
	if client.Challenge == "" || len(client.Challenge) > maxChallenge {
		return "", failed("clientDataJSON without a challenge", nil)
	}
	return hashChallenge(client.Challenge), nil
}

// ChallengeHash is the package's ChallengeHash, for callers that hold the
// relying party as a payd.WebAuthn.
func (rp *RP) ChallengeHash(response []byte) (string, error) { return ChallengeHash(response) }
