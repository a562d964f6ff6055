"""``turncheck explore MODEL --html``: the state space of a small configuration, in the browser.

The page starts from the initial states and expands successors by action; it jumps to the
state where each metric is worst and walks, step by step, along the shortest path to each
violation (breadth-first search makes the BFS-parent path a shortest one). Everything is computed
here, in Python, by the explorer (with every transition recorded) and handed to the page as
inline JSON: the browser only looks things up.

Two views, by size, with the limits stated on the page:

* up to :data:`GRAPH_LIMIT` states, a drawn graph: the layout is computed with networkx
  (``multipartite_layout`` by BFS depth, so initial states sit on the left and depth grows to the
  right; deterministic) and written as inline SVG, one circle per state;
* above it, a searchable frontier view: the states reached so far and the frontier (successors not
  yet opened), filtered by a search over the states' fields.

The explorer stops at :data:`PAGE_LIMIT` states (or the caller's smaller ``max_states``); a page
of a bounded search says so at the top — it is a browser for small configurations, not a
replacement for ``turncheck explore``'s exhaustive counts.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from turncheck.models.protocol import ProtocolModel, as_model
from turncheck.reports.viewer import asset, json_script, page_path, write_page
from turncheck.sim.explorer import Exploration, explore

GRAPH_LIMIT = 150  # states drawn as a graph; larger spaces get the searchable frontier view
PAGE_LIMIT = 3000  # states the page holds at most (the search stops there)
_W, _H, _PAD = 1100.0, 520.0, 24.0


@dataclass(frozen=True)
class StateSpacePage:
    """What was written: the path, the states the page holds, and whether the graph is drawn."""

    path: Path
    states: int
    transitions: int
    exhaustive: bool
    drawn: bool
    bytes: int


def _field_table(model: ProtocolModel[Any, Any], result: Exploration) -> tuple[list[str], list[list[Any]]]:
    """Field names once, then each state's values in that order (a compact page)."""
    names: list[str] = []
    rows: list[dict[str, Any]] = []
    for state in result.states:
        pairs = model.state_fields(state)
        for name, _v in pairs:
            if name not in names:
                names.append(name)
        rows.append(dict(pairs))
    return names, [[row.get(n, "") for n in names] for row in rows]


def state_space_data(model: ProtocolModel[Any, Any], result: Exploration) -> dict[str, Any]:
    """The page's JSON: states (depth, fields, properties, metrics), successors, jumps."""
    model = as_model(model)
    props = tuple(model.properties())
    names, values = _field_table(model, result)
    succ: list[list[list[Any]]] = [[] for _ in result.states]
    for src, dst, action in result.edges or ():
        succ[src].append([model.format_action(result.states[src], action), dst])
    states = []
    for i, state in enumerate(result.states):
        states.append({
            "d": result.depth_of(i),
            "f": values[i],
            "p": [p.name for p in props if not p.holds(state) and p.expectation == "always"],
            "g": [p.name for p in props if p.expectation != "always" and p.holds(state)],
            "m": dict(model.metrics(state)),
            "s": succ[i],
            "up": int(result.parent[i]),
        })  # fmt: skip
    violations = [
        {"name": o.name, "id": o.state_id, "depth": o.depth, "path": result.path_to(o.state_id), "doc": o.doc}
        for o in result.properties
        if o.status == "violated" and o.state_id is not None
    ]
    worst = [
        {"metric": w.metric, "value": w.value, "id": w.state_id, "path": result.path_to(w.state_id)}
        for w in result.worst
    ]
    return {
        "model": model.name,
        "params": dict(model.params),
        "fields": names,
        "states": states,
        "inits": [i for i in range(len(result.states)) if result.parent[i] < 0],
        "violations": violations,
        "worst": worst,
        "properties": [{"name": p.name, "expectation": p.expectation, "doc": p.doc} for p in props],
    }


def graph_svg(result: Exploration) -> str:
    """The state graph as inline SVG, laid out by networkx in columns of BFS depth."""
    g = nx.DiGraph()
    for i in range(len(result.states)):
        g.add_node(i, depth=result.depth_of(i))
    edges = {(s, d) for s, d, _a in (result.edges or ()) if s != d}
    g.add_edges_from(sorted(edges))
    pos = nx.multipartite_layout(g, subset_key="depth", align="vertical")
    xs = [float(p[0]) for p in pos.values()]
    ys = [float(p[1]) for p in pos.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    def at(i: int) -> tuple[float, float]:
        x, y = pos[i]
        px = _PAD + (float(x) - x0) / ((x1 - x0) or 1.0) * (_W - 2 * _PAD)
        py = _PAD + (float(y) - y0) / ((y1 - y0) or 1.0) * (_H - 2 * _PAD)
        return round(px, 1), round(py, 1)

    lines = []
    for s, d in sorted(edges):
        (ax, ay), (bx, by) = at(s), at(d)
        lines.append(f'<line x1="{ax}" y1="{ay}" x2="{bx}" y2="{by}" data-edge="{s}-{d}"/>')
    dots = []
    for i in range(len(result.states)):
        x, y = at(i)
        dots.append(f'<circle cx="{x}" cy="{y}" r="6" data-id="{i}"><title>state #{i}</title></circle>')
    return (
        f'<svg class="tce-graph" viewBox="0 0 {_W:g} {_H:g}" role="img" aria-label="state graph">'
        f'<g class="tce-edges">{"".join(lines)}</g><g class="tce-nodes">{"".join(dots)}</g></svg>'
    )


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def state_space_page(model: ProtocolModel[Any, Any], result: Exploration, limit: int) -> tuple[str, bool]:
    """The whole page, and whether the graph is drawn."""
    drawn = len(result.states) <= GRAPH_LIMIT
    params = " ".join(f"{k}={v}" for k, v in model.params.items())
    scope = (
        "exhaustive: every reachable state (up to symmetry) is on this page"
        if result.exhausted
        else f"bounded, NOT exhaustive: the search stopped at {result.bound}"
    )
    limits = (
        f"This browser is for small configurations: it holds at most {limit:,} states "
        f"and draws the graph up to {GRAPH_LIMIT:,} states (a searchable frontier view above that)."
    )
    view = (
        f'<div class="tce-graphbox">{graph_svg(result)}<p class="tce-legend">columns: BFS depth, left to '
        "right · red: breaks an invariant · click a state to open it</p></div>"
        if drawn
        else '<div class="tce-search"><label>search states <input type="search" class="tce-q" '
        'placeholder="e.g. live turns or RESULT"></label> <span class="tce-count"></span>'
        '<div class="tce-lists"><div><h4>matching states</h4><ol class="tce-found"></ol></div>'
        '<div><h4>frontier: reached, not yet opened</h4><ol class="tce-frontier"></ol></div></div></div>'
    )
    body = (
        f"<h1>State space of {_esc(model.name)}</h1>"
        f'<p class="tce-meta">model <code>{_esc(model.name)}</code> ({_esc(params)}) · '
        f"{len(result.states):,} states, {len(result.edges or ()):,} transitions, depth {result.max_depth_seen} · "
        f'<b class="tce-scope">{_esc(scope)}</b></p><p class="tce-limit">{_esc(limits)}</p>'
        '<div class="tce-jumps"></div>'
        f'<div class="tce-main {"tce-drawn" if drawn else "tce-big"}">{view}'
        '<div class="tce-state"></div></div>'
        f"{json_script(state_space_data(model, result), 'tce-data')}"
    )
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>State space of {_esc(model.name)}</title><style>{asset('explorer.css')}</style>"
        f"<script>{asset('explorer.js')}</script></head>\n<body><main>{body}</main></body></html>\n"
    )
    return page, drawn


def write_state_space_page(
    model: ProtocolModel[Any, Any],
    out: str | Path,
    *,
    symmetry: bool = True,
    max_states: int | None = None,
    max_depth: int | None = None,
    timeout: float | None = None,
) -> StateSpacePage:
    """Explore ``model`` (every transition kept, at most :data:`PAGE_LIMIT` states) and write the page.

    Raises
    ------
    TurncheckError
        ``out`` is a directory or cannot be written (nothing is written).
    """
    model = as_model(model)
    path = page_path(out, "states.html")
    limit = min(PAGE_LIMIT, max_states) if max_states is not None else PAGE_LIMIT
    result = explore(model, symmetry=symmetry, max_states=limit, max_depth=max_depth, timeout=timeout,
                     record_edges=True)  # fmt: skip
    page, drawn = state_space_page(model, result, limit)
    write_page(path, page)
    return StateSpacePage(path, len(result.states), len(result.edges or ()), result.exhausted, drawn,
                          len(page.encode()))  # fmt: skip
