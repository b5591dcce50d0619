// Passkeys on the dashboard (docs/passkeys.md): signing in with one on the
// sign-in page, and making one on the "Add a passkey" page. The browser
// side of WebAuthn is @simplewebauthn/browser (vendor/, loaded before
// this); the server side is the API. Nothing here runs without WebAuthn,
// and the parts that need it stay hidden or disabled.
(function () {
  "use strict";
  var swa = window.SimpleWebAuthnBrowser;
  // WebAuthn wants a domain name: a server reached by its IP address
  // has no passkeys (the API answers 503 there).
  var host = window.location.hostname;
  if (!swa || !swa.browserSupportsWebAuthn() || /^[0-9.]+$/.test(host) || host.indexOf(":") >= 0 || host.charAt(0) === "[") { return; }

  function show(el, text) {
    if (!el) { return; }
    el.textContent = text;
    el.hidden = false;
  }

  // The sentence for what went wrong: the API's message, or the
  // browser's refusal in plain words.
  function reason(err) {
    if (err && err.apiMessage) { return err.apiMessage; }
    if (err && (err.name === "NotAllowedError" || err.code === "ERROR_CEREMONY_ABORTED")) {
      return "The passkey was not used: it was cancelled, or the time ran out. Try again.";
    }
    if (err && err.name === "InvalidStateError") {
      return "This device already has a passkey for your account.";
    }
    return "The passkey did not work. Try again, or use your password.";
  }

  function api(path, body) {
    return fetch("/api/v1" + path, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "Accept": "application/json"},
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.text().then(function (t) {
        var j = null;
        try { j = t ? JSON.parse(t) : null; } catch (e) { j = null; }
        if (!r.ok) {
          var m = j && j.error && j.error.message ? j.error.message : "";
          var e2 = new Error(m);
          e2.apiMessage = m ? m.charAt(0).toUpperCase() + m.slice(1) + (/[.?!]$/.test(m) ? "" : ".") : "";
          throw e2;
        }
        return j && j.data;
      });
    });
  }

  // Sign in with a passkey: a discoverable credential, so no email first.
  var box = document.getElementById("passkey-signin");
  if (box) {
    var button = document.getElementById("passkey-signin-button");
    var fault = document.getElementById("passkey-signin-error");
    box.hidden = false;
    button.addEventListener("click", function () {
      button.disabled = true;
      fault.hidden = true;
      api("/passkeys/authentication/options", {}).then(function (opts) {
        return swa.startAuthentication({optionsJSON: opts.publicKey});
      }).then(function (cred) {
        return api("/passkeys/authentication/verify", {credential: cred});
      }).then(function () {
        var next = box.getAttribute("data-next") || "/dashboard/";
        if (next.indexOf("/dashboard/") !== 0 || next.indexOf("//") === 0) { next = "/dashboard/"; }
        window.location.assign(next);
      }).catch(function (err) {
        show(fault, reason(err));
        button.disabled = false;
      });
    });
  }

  // Step-up with a passkey (spec 5.7): the session is proven through the
  // API, then the change's form is sent on without a password.
  var su = document.getElementById("passkey-stepup");
  if (su) {
    var suButton = document.getElementById("passkey-stepup-button");
    var suFault = document.getElementById("passkey-stepup-error");
    su.hidden = false;
    suButton.addEventListener("click", function () {
      suButton.disabled = true;
      suFault.hidden = true;
      api("/sessions/current/step-up/options", {}).then(function (opts) {
        return swa.startAuthentication({optionsJSON: opts.publicKey});
      }).then(function (cred) {
        return api("/sessions/current/step-up", {passkey: cred});
      }).then(function () {
        var f = document.getElementById("stepup-form");
        var pw = document.getElementById("stepup-password");
        if (pw) { pw.parentNode.removeChild(pw); }
        f.submit();
      }).catch(function (err) {
        show(suFault, reason(err));
        suButton.disabled = false;
      });
    });
  }

  // Make a passkey: the page carries the creation options; the answer
  // goes back in the form, which the server posts to the API.
  var form = document.getElementById("passkey-add-form");
  if (form) {
    var create = document.getElementById("passkey-create");
    var err = document.getElementById("passkey-error");
    var options = JSON.parse(form.getAttribute("data-passkey-create"));
    create.disabled = false;
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      create.disabled = true;
      err.hidden = true;
      swa.startRegistration({optionsJSON: options}).then(function (cred) {
        form.elements.credential.value = JSON.stringify(cred);
        form.submit();
      }).catch(function (x) {
        show(err, reason(x));
        create.disabled = false;
      });
    });
  }
})();
