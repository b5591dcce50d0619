package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"payd/store/storetest"
	"payd/web/webtest"
)

// TestServePasskeysInChromium is issue 18's browser check of passkeys:
// payd serve --dev at http://localhost:PORT (a secure context, and a
// domain name as WebAuthn wants), and headless Chromium with a virtual
// CTAP2 authenticator (resident keys, user verification, presence
// simulated) signs up without a password, adds a passkey with
// navigator.credentials.create, signs out, signs in with
// navigator.credentials.get through the discoverable sign-in routes, and
// steps up with the passkey. Only the browser and the server take part:
// the page's JavaScript calls the API as the dashboard will.
func TestServePasskeysInChromium(t *testing.T) {
	ctx := webtest.Tab(t)
	port := webtest.FreePort(t)
	origin := fmt.Sprintf("http://localhost:%d", port)
	startServe(t, storetest.SQLiteDSN(t), "--dev", "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--public-url", origin)

	webtest.Run(t, ctx, chromedp.Navigate(origin+"/healthz"), webtest.VirtualAuthenticator())

	var got struct {
		User      map[string]any   `json:"user"`
		Added     map[string]any   `json:"added"`
		SignedOut int              `json:"signed_out"`
		Gone      int              `json:"gone"`
		Session   map[string]any   `json:"session"`
		Options   map[string]any   `json:"step_up_options"`
		Proven    map[string]any   `json:"proven"`
		Passkeys  []map[string]any `json:"passkeys"`
	}
	out := webtest.Get(t, ctx, chromedp.Evaluate[string](passkeyScript, chromedp.EvalAwaitPromise,
		func(p *runtime.EvaluateParams) { p.UserGesture = new(bool); *p.UserGesture = true }))
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("script answered %s: %v", out, err)
	}
	if got.User["has_password"] != false || got.Added["kind"] != "passkey" || got.Added["backup_eligible"] == nil {
		t.Fatalf("sign-up and registration: %s", out)
	}
	if got.SignedOut != 204 || got.Gone != 401 {
		t.Fatalf("sign-out answered %d, then /me %d: %s", got.SignedOut, got.Gone, out)
	}
	if got.Session["method"] != "passkey" || got.Session["user"].(map[string]any)["id"] != got.User["id"] {
		t.Fatalf("passkey sign-in: %s", out)
	}
	if got.Proven["proven_until"] == nil || got.Options["kind"] != "passkey_step_up_options" {
		t.Fatalf("passkey step-up: %s", out)
	}
	if len(got.Passkeys) != 1 || got.Passkeys[0]["last_used_at"] == nil || got.Passkeys[0]["name"] != "This browser" {
		t.Fatalf("passkeys after use: %s", out)
	}
}

// passkeyScript runs in the page and resolves to a JSON summary, or
// rejects with the first answer that was not the one expected.
const passkeyScript = `(async () => {
  const api = "/api/v1";
  const call = async (method, path, body, headers, want) => {
    const r = await fetch(api + path, {method, credentials: "same-origin",
      headers: Object.assign(body === undefined ? {} : {"Content-Type": "application/json"}, headers || {}),
      body: body === undefined ? undefined : JSON.stringify(body)});
    const text = await r.text();
    if (want && r.status !== want) throw new Error(method + " " + path + ": " + r.status + " " + text);
    return {status: r.status, json: text ? JSON.parse(text) : null};
  };
  const bin = s => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), c => c.charCodeAt(0)).buffer;
  const b64u = buf => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const creation = pk => Object.assign({}, pk, {challenge: bin(pk.challenge), user: Object.assign({}, pk.user, {id: bin(pk.user.id)}),
    excludeCredentials: (pk.excludeCredentials || []).map(c => Object.assign({}, c, {id: bin(c.id)}))});
  const request = pk => Object.assign({}, pk, {challenge: bin(pk.challenge),
    allowCredentials: (pk.allowCredentials || []).map(c => Object.assign({}, c, {id: bin(c.id)}))});
  const assertion = c => ({id: c.id, rawId: b64u(c.rawId), type: c.type, clientExtensionResults: c.getClientExtensionResults(),
    response: {clientDataJSON: b64u(c.response.clientDataJSON), authenticatorData: b64u(c.response.authenticatorData),
      signature: b64u(c.response.signature), userHandle: c.response.userHandle ? b64u(c.response.userHandle) : undefined}});
  const out = {};

  // Sign up without a password, with the dev bot-check token and the emailed code.
  const email = "ada@example.com";
  const token = (await call("POST", "/devnet/challenges", {form: "signup"}, {}, 201)).json.data.token;
  await call("POST", "/accounts", {email, name: "Ada"}, {"Service-Challenge": token}, 202);
  const mails = (await call("GET", "/devnet/emails?to=" + encodeURIComponent(email), undefined, {}, 200)).json.data;
  const code = mails[0].text.match(/^(\d{6})$/m)[1];
  out.user = (await call("POST", "/accounts/verify", {email, code}, {}, 201)).json.data;

  // Add a passkey: the session fresh from sign-up carries a proof.
  const reg = (await call("POST", "/me/passkeys/registration/options", {}, {}, 200)).json.data;
  const made = await navigator.credentials.create({publicKey: creation(reg.publicKey)});
  out.added = (await call("POST", "/me/passkeys", {name: "This browser", credential: {id: made.id, rawId: b64u(made.rawId),
    type: made.type, clientExtensionResults: made.getClientExtensionResults(),
    response: {clientDataJSON: b64u(made.response.clientDataJSON), attestationObject: b64u(made.response.attestationObject),
      transports: made.response.getTransports()}}}, {}, 201)).json.data;

  // Sign out, then sign in with the passkey: no email, no password.
  out.signed_out = (await call("DELETE", "/sessions/current", undefined, {}, 204)).status;
  out.gone = (await call("GET", "/me")).status;
  const auth = (await call("POST", "/passkeys/authentication/options", {}, {}, 200)).json.data;
  const got = await navigator.credentials.get({publicKey: request(auth.publicKey)});
  out.session = (await call("POST", "/passkeys/authentication/verify", {credential: assertion(got)}, {}, 201)).json.data;

  // Step up with the passkey.
  const up = (await call("POST", "/sessions/current/step-up/options", {}, {}, 200)).json.data;
  out.step_up_options = {kind: up.kind};
  const proof = await navigator.credentials.get({publicKey: request(up.publicKey)});
  out.proven = (await call("POST", "/sessions/current/step-up", {passkey: assertion(proof)}, {}, 200)).json.data;
  out.passkeys = (await call("GET", "/me/passkeys", undefined, {}, 200)).json.data;
  return JSON.stringify(out);
})()`
