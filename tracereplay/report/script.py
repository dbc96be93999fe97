"""The report's one script: case details shown when a case is opened, search, the check
filter. It runs under the page's Content-Security-Policy, which allows this script (by its
SHA-256) and nothing else; without it the page still works (status filters, the failing cases
written open), only the other cases' details, search and the check filter need it.

Details come from ``<script type="application/json" id="case-details">``: an array of markup
the report wrote (every stored text escaped by ``html.e``), one entry per case with a
``data-i`` attribute; it is parsed the first time a case is opened or searched.
"""

from __future__ import annotations

import base64
import hashlib

SCRIPT = r"""
(function () {
  "use strict";
  var section = document.getElementById("cases");
  if (!section) return;
  var blob = document.getElementById("case-details");
  var bodies = null;
  function details() {
    if (bodies === null) bodies = blob ? JSON.parse(blob.textContent) : [];
    return bodies;
  }
  function fill(c) {
    if (c.getAttribute("data-i") === null || c.hasAttribute("data-shown")) return;
    c.setAttribute("data-shown", "");
    var body = document.createElement("div");
    body.className = "case-body";
    body.innerHTML = details()[+c.getAttribute("data-i")];
    c.appendChild(body);
  }
  section.addEventListener("toggle", function (ev) {
    var c = ev.target;
    if (c.open && c.classList && c.classList.contains("case")) fill(c);
  }, true);
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var c = id ? document.getElementById(id) : null;
    if (!c || !c.classList.contains("case")) return;
    c.hidden = false;
    c.open = true;
    fill(c);
    c.scrollIntoView();
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();

  var tools = document.getElementById("case-tools");
  if (!tools) return;
  tools.hidden = false;
  var search = document.getElementById("case-search");
  var check = document.getElementById("case-check");
  var shown = document.getElementById("case-shown");
  var cases = section.querySelectorAll("details.case");
  var texts = null;
  var entities = {"&lt;": "<", "&gt;": ">", "&quot;": "\"", "&#x27;": "'", "&amp;": "&"};
  function plain(markup) {
    return markup.replace(/<[^>]*>/g, " ").replace(/&(lt|gt|quot|#x27|amp);/g, function (m) {
      return entities[m];
    });
  }
  function haystacks() {
    if (texts !== null) return texts;
    var d = details();
    texts = [];
    for (var k = 0; k < cases.length; k++) {
      var c = cases[k];
      var i = c.getAttribute("data-i");
      var t = c.id.slice(5) + " " + c.querySelector("summary").textContent + " " +
        (i !== null ? plain(d[+i]) : c.hasAttribute("data-none") ? "" : c.textContent);
      texts.push(t.toLowerCase());
    }
    return texts;
  }
  function statusShown(c, key) {
    if (key === "all") return true;
    if (key === "flaky") return c.hasAttribute("data-flaky");
    return c.getAttribute("data-status") === key.toUpperCase();
  }
  function apply() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var want = check.value;
    var hay = words.length ? haystacks() : null;
    var on = section.querySelector("input[name=status-filter]:checked");
    var key = on ? on.id.slice(2) : "all";
    var n = 0;
    for (var k = 0; k < cases.length; k++) {
      var c = cases[k];
      var ok = want === "" || (" " + (c.getAttribute("data-f") || "") + " ").indexOf(" " + want + " ") >= 0;
      for (var w = 0; ok && hay && w < words.length; w++) ok = hay[k].indexOf(words[w]) >= 0;
      c.hidden = !ok;
      if (ok && statusShown(c, key)) n++;
    }
    shown.textContent = n + " of " + cases.length + " cases shown";
  }
  var timer = 0;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(apply, 120);
  });
  check.addEventListener("change", apply);
  section.addEventListener("change", function (ev) {
    if (ev.target.name === "status-filter") apply();
  });
  apply();
})();
"""


def script_hash(script: str = SCRIPT) -> str:
    """The CSP source that allows ``script`` inline: ``'sha256-<base64 digest>'``."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"
