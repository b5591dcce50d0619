// The dashboard's progressive part: copy buttons and confirmations. Every
// page works without it; a button that needs it is hidden until it runs.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  function announce(text) {
    var a = document.getElementById("announce");
    if (a) { a.textContent = ""; setTimeout(function () { a.textContent = text; }, 50); }
  }

  // Copy buttons: <button type="button" data-copy="text" hidden>.
  var buttons = document.querySelectorAll("button[data-copy]");
  for (var i = 0; i < buttons.length; i++) { buttons[i].hidden = false; }
  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button[data-copy]");
    if (!b) { return; }
    var text = b.getAttribute("data-copy");
    var done = function () {
      var old = b.textContent;
      b.textContent = "Copied";
      announce("Copied");
      setTimeout(function () { b.textContent = old; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {});
    } else {
      var t = document.createElement("textarea");
      t.value = text; t.setAttribute("readonly", ""); t.className = "vh";
      document.body.appendChild(t); t.select();
      try { document.execCommand("copy"); done(); } catch (err) { /* nothing to do */ }
      document.body.removeChild(t); b.focus();
    }
  });

  // Confirmations: a form with data-confirm asks before it is sent. The
  // server asks again for what cannot be undone without script.
  // A form is sent once: a second click, while the first is on its way,
  // would make a second key or rotate a secret twice (the first answer,
  // with its secret, would be lost).
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (e.defaultPrevented) { return; }
    if (f.getAttribute("data-sent") === "yes") { e.preventDefault(); return; }
    var q = f.getAttribute && f.getAttribute("data-confirm");
    if (q && !window.confirm(q)) { e.preventDefault(); return; }
    f.setAttribute("data-sent", "yes");
  });
  // A page shown again from the back/forward cache can be sent again.
  window.addEventListener("pageshow", function () {
    var sent = document.querySelectorAll("form[data-sent]");
    for (var k = 0; k < sent.length; k++) { sent[k].removeAttribute("data-sent"); }
  });

  // Menus close when focus or a click leaves them, and on Escape.
  document.addEventListener("click", function (e) {
    var open = document.querySelectorAll("details.menu[open]");
    for (var j = 0; j < open.length; j++) {
      if (!open[j].contains(e.target)) { open[j].open = false; }
    }
  });
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") { return; }
    var m = e.target.closest && e.target.closest("details.menu[open]");
    if (m) { m.open = false; m.querySelector("summary").focus(); }
  });
})();

// ---- Getting in: tokens of emailed links (reset, email undo, invitations).
// A link carries its token in the fragment (#token=…), which the browser
// never sends, so no server log holds it. This moves it into the form's
// token field (hidden then; without script the person pastes it), passes
// it on to the sign-in and sign-up links and their "next" field (a POST
// body) so an invitation survives the way in, and takes it out of the
// address bar.
(function () {
  "use strict";
  var m = /^#token=([A-Za-z0-9_-]{1,200})$/.exec(window.location.hash);
  var tok = m ? m[1] : "";
  var i;
  var fields = document.querySelectorAll("input[data-token]");
  for (i = 0; i < fields.length; i++) {
    if (tok && !fields[i].value) { fields[i].value = tok; }
    var wrap = fields[i].closest(".token-paste");
    if (wrap && fields[i].value && tok) { wrap.hidden = true; }
  }
  var needs = document.querySelectorAll("[data-needs-token]");
  for (i = 0; i < needs.length; i++) {
    var f = needs[i].querySelector("input[data-token]");
    if (!tok && f && !f.value) { needs[i].hidden = true; }
  }
  if (!tok) { return; }
  var without = document.querySelectorAll("[data-without-token]");
  for (i = 0; i < without.length; i++) { without[i].hidden = true; }
  var links = document.querySelectorAll("a[data-keep-token]");
  for (i = 0; i < links.length; i++) { links[i].href = links[i].href.split("#")[0] + "#token=" + tok; }
  var nexts = document.querySelectorAll("input[data-next-token]");
  for (i = 0; i < nexts.length; i++) {
    if (nexts[i].value === "/dashboard/invitations/accept") { nexts[i].value += "#token=" + tok; }
  }
  if (window.history && window.history.replaceState) {
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
})();
