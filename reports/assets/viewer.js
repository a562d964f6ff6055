/* turncheck trace viewer: pages through the steps a Python replay recorded (it computes nothing).
   Every viewer section (class tcv) holds its data in a JSON script child (class tcv-data).
   Keys: ArrowRight/ArrowLeft (next/previous), Home/End; they act on the focused viewer, or on the
   only viewer of the page. */
(function () {
  "use strict";
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function tag(name) { return el("span", "tcv-tag " + name.replace(/\s+/g, "-"), name); }

  /* The steps arrive as deltas (after step 0: the changed fields only; "same_window" when the
     window did not change): rebuild every step's full state and window, carrying them forward. */
  function expand(steps) {
    var full = null, win = null;
    steps.forEach(function (s, k) {
      if (k > 0) {
        var changed = {}, seen = {};
        s.fields.forEach(function (f) { changed[f.name] = f; });
        var fields = full.map(function (f) {
          seen[f.name] = true;
          return changed[f.name] || { name: f.name, value: f.value };
        });
        s.fields.forEach(function (f) { if (!seen[f.name]) fields.push(f); });
        s.fields = fields;
      }
      if (s.same_window) s.window = win;
      full = s.fields;
      win = s.window;
    });
  }

  function Viewer(root) {
    this.root = root;
    this.data = JSON.parse(root.querySelector("script.tcv-data").textContent);
    expand(this.data.steps);
    this.n = this.data.steps.length - 1;
    this.pos = 0;
    var self = this;
    root.querySelectorAll("button[data-act]").forEach(function (b) {
      b.addEventListener("click", function () { self.act(b.getAttribute("data-act")); });
    });
    root.querySelectorAll("[data-step]").forEach(function (c) {
      c.addEventListener("click", function () { self.go(parseInt(c.getAttribute("data-step"), 10)); });
    });
    root.addEventListener("keydown", function (ev) { if (self.key(ev)) ev.preventDefault(); });
    this.go(0);
  }
  Viewer.prototype.act = function (what) {
    var to = { first: 0, prev: this.pos - 1, next: this.wraps() ? this.data.loop + 1 : this.pos + 1, last: this.n,
               broken: this.data.broken_at === null ? this.pos : this.data.broken_at }[what];
    this.go(to);
  };
  // a lasso's last step is back in the state after step ``loop``: "next" goes round the loop again
  Viewer.prototype.wraps = function () {
    var loop = this.data.loop;
    return loop !== null && loop !== undefined && loop < this.n && this.pos === this.n;
  };
  Viewer.prototype.key = function (ev) {
    var map = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last" };
    if (!map[ev.key]) return false;
    this.act(map[ev.key]);
    return true;
  };
  Viewer.prototype.go = function (k) {
    if (isNaN(k)) return;
    this.pos = Math.max(0, Math.min(this.n, k));
    this.render();
  };
  Viewer.prototype.render = function () {
    var d = this.data, s = d.steps[this.pos], root = this.root, k = this.pos;
    root.setAttribute("data-current", String(k));
    root.querySelector(".tcv-pos").textContent = "step " + k + " of " + this.n;
    root.querySelector("[data-act=prev]").disabled = k === 0;
    root.querySelector("[data-act=first]").disabled = k === 0;
    root.querySelector("[data-act=next]").disabled = k === this.n && !this.wraps();
    root.querySelector("[data-act=last]").disabled = k === this.n;
    root.querySelectorAll("[data-step]").forEach(function (c) {
      c.classList.toggle("tcv-current", parseInt(c.getAttribute("data-step"), 10) === k);
    });
    var now = root.querySelector(".tcv-now");
    now.textContent = "";
    now.appendChild(el("b", "", k === 0 ? "initial state" : "step " + k + " — " + s.lane + ": "));
    now.appendChild(document.createTextNode(k === 0 ? "" : s.text));
    (s.marks || []).forEach(function (m) { now.appendChild(tag(m)); });
    var lasso = d.loop !== null && d.loop !== undefined;
    if (d.broken_at === k) now.appendChild(tag(lasso ? "loop starts: " + d.violated + " never holds from here" : "broken: " + d.violated));
    if (lasso && k > d.loop) now.appendChild(tag("on the loop"));
    if (lasso && k === this.n) now.appendChild(tag(d.loop < k ? (d.back || "back in the state after step " + d.loop) + ": next goes round again" : "stutters here for ever"));

    var panels = root.querySelector(".tcv-panels");
    panels.textContent = "";
    panels.appendChild(this.statePanel(s));
    panels.appendChild(this.propsPanel(s));
    if (s.window) panels.appendChild(this.windowPanel(s.window));
  };
  Viewer.prototype.statePanel = function (s) {
    var box = el("div", "tcv-state");
    box.appendChild(el("h4", "", this.pos === 0 ? "state" : "state after step " + this.pos + " (changes marked)"));
    var t = el("table");
    if (!s.fields.length) t.appendChild(el("tr")).appendChild(el("td", "", "not replayed: no state"));
    s.fields.forEach(function (f) {
      var tr = el("tr", f.changed ? "tcv-changed" : "");
      tr.setAttribute("data-field", f.name);
      tr.appendChild(el("th", "", f.name + (f.changed ? " *" : "")));
      var td = el("td");
      if (Array.isArray(f.value)) {
        var ul = el("ul"), fresh = f["new"] || [];
        if (!f.value.length) td.textContent = "(none)";
        f.value.forEach(function (v, i) {
          ul.appendChild(el("li", fresh.indexOf(i) >= 0 ? "tcv-newitem" : "", v));
        });
        if (f.value.length) td.appendChild(ul);
      } else {
        td.textContent = f.value;
      }
      tr.appendChild(td);
      t.appendChild(tr);
    });
    box.appendChild(t);
    return box;
  };
  Viewer.prototype.propsPanel = function (s) {
    var box = el("div", "tcv-props"), d = this.data;
    box.appendChild(el("h4", "", "invariants and goals at this step"));
    var t = el("table");
    d.properties.forEach(function (p) {
      var ok = s.holds[p.name], tr = el("tr");
      tr.setAttribute("data-property", p.name);
      tr.title = p.doc;
      tr.appendChild(el("th", "", p.name + " (" + p.expectation + ")"));
      var good = p.expectation === "always" ? ok : ok;
      var word = p.expectation === "always" ? (ok ? "holds" : "BROKEN")
        : p.expectation === "eventually" ? (ok ? "holds here" : "not here") : (ok ? "reached" : "not yet");
      tr.appendChild(el("td", p.expectation === "always" ? (good ? "tcv-ok" : "tcv-bad") : "", word));
      t.appendChild(tr);
    });
    Object.keys(s.metrics).forEach(function (m) {
      var tr = el("tr");
      tr.appendChild(el("th", "", m.replace(/_/g, " ")));
      tr.appendChild(el("td", "", String(s.metrics[m])));
      t.appendChild(tr);
    });
    box.appendChild(t);
    return box;
  };
  Viewer.prototype.windowPanel = function (w) {
    var box = el("div", "tcv-win");
    box.appendChild(el("h4", "", w.title));
    var ol = el("ol");
    ol.start = 1;
    w.items.forEach(function (it) {
      var li = el("li", (it.marks || []).join(" "), it.label + (it.cost !== undefined ? " — cost " + it.cost : ""));
      (it.marks || []).forEach(function (m) { li.appendChild(tag(m)); });
      ol.appendChild(li);
    });
    if (w.items.length) box.appendChild(ol);
    box.appendChild(el("div", "tcv-summary", w.summary));
    return box;
  };

  var viewers = [];
  function start() {
    document.querySelectorAll("section.tcv").forEach(function (root) {
      if (!root.tcv) { root.tcv = new Viewer(root); viewers.push(root.tcv); }
    });
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.defaultPrevented || viewers.length !== 1) return;
    var t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    if (viewers[0].key(ev)) ev.preventDefault();
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
