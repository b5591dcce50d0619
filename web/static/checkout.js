// The checkout page's progressive part: copy buttons, the countdown, and
// the live status, polled from the server and swapped in when it changes.
// The page works without it (forms, a refresh link).
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var offset = 0; // service clock minus this device's clock
  var timer = null;

  function live() { return document.getElementById("live"); }

  function reveal() {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) { buttons[i].hidden = false; }
  }

  function copied(b) {
    var old = b.textContent;
    b.textContent = b.getAttribute("data-copied");
    document.getElementById("announce").textContent = b.getAttribute("data-copied");
    setTimeout(function () { b.textContent = old; }, 1500);
  }

  function fallbackCopy(b, text) {
    var t = document.createElement("textarea");
    t.value = text;
    t.setAttribute("readonly", "");
    t.className = "vh";
    document.body.appendChild(t);
    t.select();
    try { document.execCommand("copy"); copied(b); } catch (e) { /* nothing to do */ }
    document.body.removeChild(t);
    b.focus();
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest && e.target.closest("button[data-copy]");
    if (!b) { return; }
    var text = b.getAttribute("data-copy");
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { copied(b); }, function () { fallbackCopy(b, text); });
    } else {
      fallbackCopy(b, text);
    }
  });

  function syncClock() {
    var c = document.querySelector("[data-now]");
    if (c) { offset = Date.parse(c.getAttribute("data-now")) - Date.now(); }
  }

  function pad(n) { return n < 10 ? "0" + n : "" + n; }

  function tick() {
    var c = document.querySelector("[data-expires]");
    if (!c) { return; }
    var left = Math.max(0, Math.floor((Date.parse(c.getAttribute("data-expires")) - (Date.now() + offset)) / 1000));
    c.textContent = Math.floor(left / 60) + ":" + pad(left % 60);
  }

  // localTimes follows each UTC time the server wrote with the customer's
  // own, when the device is not on UTC: "15:04 UTC (16:04 your time)".
  function localTimes() {
    var ts = document.querySelectorAll("time[data-local-label]");
    for (var i = 0; i < ts.length; i++) {
      var t = ts[i];
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime()) || d.getTimezoneOffset() === 0 || t.getAttribute("data-localised")) { continue; }
      var opts = { hour: "2-digit", minute: "2-digit" };
      // A date is repeated only when the local day is another one.
      if (t.closest("#receipt") && d.getDate() !== d.getUTCDate()) {
        opts = { year: "numeric", month: "long", day: "numeric", hour: "2-digit", minute: "2-digit" };
      }
      var s = document.createElement("span");
      s.className = "local-time";
      s.textContent = " (" + t.getAttribute("data-local-label").replace("%s", d.toLocaleString(document.documentElement.lang, opts)) + ")";
      t.after(s);
      t.setAttribute("data-localised", "true");
    }
  }

  function redirect(section) {
    var to = section.getAttribute("data-redirect");
    if (to && /^https?:\/\//i.test(to)) {
      setTimeout(function () { window.location.assign(to); }, 1500);
    }
  }

  function swap(html) {
    var cur = live();
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    var next = t.content.querySelector("#live");
    if (!cur || !next || next.getAttribute("data-sig") === cur.getAttribute("data-sig")) { return; }
    var hadFocus = cur.contains(document.activeElement);
    cur.replaceWith(next);
    // Another coin can replace only a quote that is still open.
    var other = document.querySelector(".other");
    var st = next.querySelector("#status-text");
    if (other && (!st || st.getAttribute("data-state") !== "open")) { other.remove(); }
    document.getElementById("announce").textContent = next.getAttribute("data-status-text");
    if (hadFocus) {
      var s = document.getElementById("status-text");
      s.setAttribute("tabindex", "-1");
      s.focus();
    }
    syncClock();
    reveal();
    tick();
    localTimes();
    redirect(next);
  }

  function poll() {
    var cur = live();
    if (!cur || cur.getAttribute("data-live") !== "true") { return; }
    fetch(cur.getAttribute("data-status-url"), { headers: { "Accept": "text/html" }, cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html) { swap(html); } })
      .catch(function () { /* try again at the next poll */ })
      .then(schedule);
  }

  function schedule() {
    clearTimeout(timer);
    var cur = live();
    if (cur && cur.getAttribute("data-live") === "true") { timer = setTimeout(poll, 2000); }
  }

  function start() {
    reveal();
    localTimes();
    syncClock();
    tick();
    setInterval(tick, 1000);
    schedule();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
