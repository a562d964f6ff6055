/* turncheck state-space browser: looks up what the Python explorer computed (it computes nothing).
   The data block (script.tce-data) holds every state's fields, broken invariants, reached goals,
   metrics and successors by action; the jumps (initial states, worst cases, shortest paths to a
   violation) are precomputed paths of state ids. Arrow keys step along the path being followed. */
(function () {
  "use strict";
  var D, cur = null, prev = null, path = null, opened = {};
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
  function summary(i) {
    var s = D.states[i], parts = [];
    for (var k = 0; k < Math.min(3, D.fields.length); k++) {
      var v = s.f[k];
      parts.push(D.fields[k] + " " + (Array.isArray(v) ? (v.length ? v.length + ", last " + v[v.length - 1] : "(none)") : v));
    }
    return "#" + i + " (depth " + s.d + ")" + (s.p.length ? " BROKEN " + s.p.join(", ") : "") + ": " + parts.join(", ");
  }
  function bfsPath(i) {
    var ids = [i];
    while (D.states[ids[0]].up >= 0) ids.unshift(D.states[ids[0]].up);
    return ids;
  }
  function link(i, text) {
    var a = el("a", "", text);
    a.setAttribute("data-id", String(i));
    a.addEventListener("click", function () { show(i); });
    return a;
  }
  function follow(ids, label) {
    path = { ids: ids, label: label };
    show(ids[0]);
  }
  function step(delta) {
    if (!path) return false;
    var k = path.ids.indexOf(cur);
    if (k < 0) return false;
    var to = Math.max(0, Math.min(path.ids.length - 1, k + delta));
    show(path.ids[to]);
    return true;
  }
  function show(i) {
    if (path && path.ids.indexOf(i) < 0) path = null;
    prev = cur;
    cur = i;
    opened[i] = true;
    render();
  }
  function render() {
    var s = D.states[cur], box = document.querySelector(".tce-state");
    document.body.setAttribute("data-current", String(cur));
    box.textContent = "";
    box.appendChild(el("h3", "", "state #" + cur + " · depth " + s.d));
    if (path) {
      var k = path.ids.indexOf(cur), bar = el("div", "tce-pathbar");
      bar.appendChild(el("b", "", path.label + ": step " + k + " of " + (path.ids.length - 1) + " "));
      var b1 = el("button", "", "◀ previous"), b2 = el("button", "", "next ▶");
      b1.setAttribute("data-act", "path-prev"); b2.setAttribute("data-act", "path-next");
      b1.disabled = k === 0; b2.disabled = k === path.ids.length - 1;
      b1.addEventListener("click", function () { step(-1); });
      b2.addEventListener("click", function () { step(1); });
      bar.appendChild(b1); bar.appendChild(b2);
      bar.appendChild(el("span", "", " (← → keys)"));
      box.appendChild(bar);
    }
    var crumbs = el("div", "tce-crumbs");
    crumbs.appendChild(document.createTextNode("shortest path from an initial state: "));
    bfsPath(cur).forEach(function (j, n) {
      if (n) crumbs.appendChild(document.createTextNode(" → "));
      crumbs.appendChild(j === cur ? el("b", "", "#" + j) : link(j, "#" + j));
    });
    box.appendChild(crumbs);
    if (prev !== null && prev !== cur) box.appendChild(el("div", "tce-legend", "* marks a field that differs from state #" + prev + ", the one shown before"));
    var t = el("table"), before = prev === null ? null : D.states[prev];
    D.fields.forEach(function (name, k) {
      var v = s.f[k], changed = before !== null && !same(before.f[k], v);
      var tr = el("tr", changed ? "tce-changed" : "");
      tr.setAttribute("data-field", name);
      tr.appendChild(el("th", "", name + (changed ? " *" : "")));
      var td = el("td");
      if (Array.isArray(v)) {
        if (!v.length) td.textContent = "(none)";
        else { var ul = el("ul"); v.forEach(function (x) { ul.appendChild(el("li", "", x)); }); td.appendChild(ul); }
      } else td.textContent = v;
      tr.appendChild(td);
      t.appendChild(tr);
    });
    D.properties.forEach(function (p) {
      var tr = el("tr"), word, cls;
      tr.setAttribute("data-property", p.name);
      tr.title = p.doc;
      if (p.expectation === "always") { var bad = s.p.indexOf(p.name) >= 0; word = bad ? "BROKEN" : "holds"; cls = bad ? "tce-bad" : "tce-ok"; }
      else if (p.expectation === "eventually") { word = s.g.indexOf(p.name) >= 0 ? "holds here" : "not here"; cls = ""; }
      else { word = s.g.indexOf(p.name) >= 0 ? "reached" : "not reached"; cls = ""; }
      tr.appendChild(el("th", "", p.name + " (" + p.expectation + ")"));
      tr.appendChild(el("td", cls, word));
      t.appendChild(tr);
    });
    Object.keys(s.m).forEach(function (m) {
      var tr = el("tr");
      tr.appendChild(el("th", "", m.replace(/_/g, " ")));
      tr.appendChild(el("td", "", String(s.m[m])));
      t.appendChild(tr);
    });
    box.appendChild(t);
    box.appendChild(el("h4", "", s.s.length ? "successors, by action (" + s.s.length + ")" : "no successors: a terminal state"));
    s.s.forEach(function (pair) {
      var b = el("button", "tce-succ" + (D.states[pair[1]].p.length ? " bad" : ""), pair[0] + "  →  #" + pair[1]);
      b.setAttribute("data-id", String(pair[1]));
      b.addEventListener("click", function () { show(pair[1]); });
      box.appendChild(b);
    });
    paintGraph();
    refreshLists();
  }
  function paintGraph() {
    var onpath = {}, ids = path ? path.ids : bfsPath(cur);
    ids.forEach(function (j) { onpath[j] = true; });
    document.querySelectorAll(".tce-nodes circle").forEach(function (c) {
      var j = parseInt(c.getAttribute("data-id"), 10);
      c.classList.toggle("cur", j === cur);
      c.classList.toggle("onpath", !!onpath[j] && j !== cur);
      c.classList.toggle("seen", !!opened[j]);
    });
    document.querySelectorAll(".tce-edges line").forEach(function (l) {
      var e = l.getAttribute("data-edge").split("-"), a = parseInt(e[0], 10), b = parseInt(e[1], 10);
      var k = ids.indexOf(a);
      l.classList.toggle("onpath", k >= 0 && ids[k + 1] === b);
    });
  }
  function refreshLists() {
    var q = document.querySelector(".tce-q");
    if (!q) return;
    var needle = q.value.trim().toLowerCase(), found = document.querySelector(".tce-found"), shown = 0, hits = 0;
    found.textContent = "";
    D.states.forEach(function (s, i) {
      if (needle && JSON.stringify(s.f).toLowerCase().indexOf(needle) < 0 && ("#" + i) !== needle) return;
      hits++;
      if (shown < 100) { var li = el("li"); li.appendChild(link(i, summary(i))); found.appendChild(li); shown++; }
    });
    document.querySelector(".tce-count").textContent = hits + " of " + D.states.length + " states match" + (hits > 100 ? " (first 100 shown)" : "");
    var frontier = document.querySelector(".tce-frontier"), seen = {}, n = 0;
    frontier.textContent = "";
    Object.keys(opened).forEach(function (k) {
      D.states[k].s.forEach(function (pair) {
        var j = pair[1];
        if (opened[j] || seen[j] || n >= 100) return;
        seen[j] = true; n++;
        var li = el("li"); li.appendChild(link(j, pair[0] + " → " + summary(j))); frontier.appendChild(li);
      });
    });
  }
  function jumps() {
    var box = document.querySelector(".tce-jumps");
    D.inits.forEach(function (i) {
      var b = el("button", "", "initial state #" + i);
      b.setAttribute("data-jump", "init");
      b.addEventListener("click", function () { path = null; show(i); });
      box.appendChild(b);
    });
    D.violations.forEach(function (v) {
      var b = el("button", "bad", "shortest path to " + v.name + " (" + v.depth + " steps)");
      b.setAttribute("data-jump", "violation:" + v.name);
      b.title = v.doc;
      b.addEventListener("click", function () { follow(v.path, "shortest path to " + v.name); });
      box.appendChild(b);
    });
    D.worst.forEach(function (w) {
      var b = el("button", "", "worst " + w.metric.replace(/_/g, " ") + " = " + w.value);
      b.setAttribute("data-jump", "worst:" + w.metric);
      b.addEventListener("click", function () { follow(w.path, "path to the worst " + w.metric.replace(/_/g, " ")); });
      box.appendChild(b);
    });
  }
  function start() {
    D = JSON.parse(document.querySelector("script.tce-data").textContent);
    document.querySelectorAll(".tce-nodes circle").forEach(function (c) {
      var j = parseInt(c.getAttribute("data-id"), 10);
      if (D.states[j].p.length) c.classList.add("bad");
      c.addEventListener("click", function () { show(j); });
    });
    var q = document.querySelector(".tce-q");
    if (q) q.addEventListener("input", refreshLists);
    document.addEventListener("keydown", function (ev) {
      if (ev.target && ev.target.tagName === "INPUT") return;
      var d = { ArrowRight: 1, ArrowLeft: -1 }[ev.key];
      if (d && step(d)) ev.preventDefault();
    });
    jumps();
    show(D.inits[0]);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
