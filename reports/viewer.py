"""The interactive trace viewer as HTML: a fragment per trace, and a standalone page.

The page needs no network and no server: the style and the script (``reports/assets/``,
shipped as package data) are inlined once per page, and each trace's steps are inlined as JSON in
a ``<script type="application/json">`` block, so the file works from ``file://`` and can be mailed
as is. The lanes table (one row per actor, one column per step) is rendered here, in Python, so a
reader without JavaScript still sees the run; the script highlights the current step and fills the
state, invariant and window panels from the JSON.

Everything that came from a file or a model's text is escaped (:func:`html.escape` for markup,
``<`` written as ``\\u003c`` inside the JSON so no text can close the script element).
"""

from __future__ import annotations

import html
import json
import logging
from importlib import resources
from pathlib import Path
from typing import Any

from turncheck.models.errors import TurncheckError
from turncheck.models.output_files import refuse_unsafe_target, write_outputs
from turncheck.models.protocol import ProtocolModel
from turncheck.reports.trace_view import TraceView, trace_view
from turncheck.sim.trace import Trace, load_trace, repeating

log = logging.getLogger(__name__)

SIZE_TARGET = 300_000  # bytes per trace the viewer aims to stay under (tests hold it to this)


def asset(name: str) -> str:
    """The text of one file of ``reports/assets`` (package data)."""
    return resources.files("turncheck.reports").joinpath("assets", name).read_text(encoding="utf-8")


def viewer_head() -> str:
    """The style and script every page showing viewers includes once (in ``<head>`` or body)."""
    return f"<style>{asset('viewer.css')}</style>\n<script>{asset('viewer.js')}</script>"


def json_script(obj: Any, cls: str) -> str:
    """``obj`` as an inline JSON data block that no string inside it can break out of."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" class="{cls}">{text}</script>'


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _loop_row(view: TraceView) -> str:
    """A lasso's loop over its columns: a bracket whose arrow runs from the last step back to the
    first step of the loop (or, when the run stutters, round the last step alone)."""
    n, loop = len(view.steps) - 1, view.loop
    if loop is None:
        return ""
    first = loop + 1 if loop < n else n
    words = (
        f"↻ {repeating(loop, n)} for ever: {view.back or f'step {n} is back in the state after step {loop}'}"
        if loop < n
        else f"↻ stutters: nothing is enabled after step {n}, so the run stays there for ever"
    )
    arrow = (
        '<svg class="tcv-loop-arrow" viewBox="0 0 100 12" preserveAspectRatio="none" aria-hidden="true">'
        '<path d="M99,12 V2 H1 V12" fill="none" stroke="currentColor" stroke-width="2" '
        'vector-effect="non-scaling-stroke"/><path d="M1,12 l-1,-4 h2 z" fill="currentColor"/></svg>'
    )
    return (
        f'<tr class="tcv-loopbar"><th></th><td colspan="{first}"></td>'
        f'<td class="tcv-loop" colspan="{n - first + 1}" data-loop="{loop}">{arrow}'
        f"<span>{_esc(words)}</span></td></tr>"
    )


def _lanes_table(view: TraceView) -> str:
    n = len(view.steps) - 1
    broken = view.broken_at
    head = ["<th>actor</th>"]
    for k in range(n + 1):
        cls = "tcv-col" + (" tcv-broken" if k == broken else "")
        if view.loop is not None and (view.loop < k or k == view.loop == n):
            cls += " tcv-inloop"
        head.append(f'<th class="{cls}" data-step="{k}">{k}</th>')
    rows = []
    for lane in view.lanes:
        cells = [f"<th>{_esc(lane)}</th>", '<td data-step="0"></td>']
        for s in view.steps[1:]:
            cls = "tcv-broken" if s.index == broken else ""
            if s.lane == lane:
                text = _strip_lane(s.text, lane)
                tags = "".join(f'<span class="tcv-tag">{_esc(m)}</span>' for m in s.marks)
                cells.append(f'<td class="tcv-act {cls}" data-step="{s.index}">{_esc(text)}{tags}</td>')
            else:
                cells.append(f'<td class="{cls}" data-step="{s.index}"></td>')
        rows.append(f'<tr data-lane="{_esc(lane)}">{"".join(cells)}</tr>')
    return (
        f'<div class="tcv-lanes"><table><thead>{_loop_row(view)}<tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _strip_lane(text: str, lane: str) -> str:
    if text.lower().startswith(lane.lower()):
        return text[len(lane) :].lstrip(" :")
    return text


def viewer_fragment(view: TraceView, anchor: str = "trace") -> str:
    """One trace's viewer: header, step controls, the lanes, the panels and the data block."""
    params = " ".join(f"{k}={v}" for k, v in view.params.items())
    n = len(view.steps) - 1
    where = f"broken at step {view.broken_at}" if view.broken_at is not None else view.verdict
    if view.loop is not None and view.broken_at is not None:
        where = f"never holds on the loop after step {view.loop}"
    buttons = (
        '<button type="button" data-act="first" title="first step (Home)">|&#9664;</button>'
        '<button type="button" data-act="prev" title="previous step (Left arrow)">&#9664; previous</button>'
        '<span class="tcv-pos">step 0 of ' + str(n) + "</span>"
        '<button type="button" data-act="next" title="next step (Right arrow)">next &#9654;</button>'
        '<button type="button" data-act="last" title="last step (End)">&#9654;|</button>'
        + (
            '<button type="button" data-act="broken">'
            + ("go to the loop" if view.loop is not None else "go to the break")
            + "</button>"
            if view.broken_at is not None
            else ""
        )
        + '<span class="tcv-hint">← → keys step through the run; click a step to jump to it</span>'
    )
    return (
        f'<section class="tcv" id="{_esc(anchor)}" tabindex="0" data-steps="{n}">'
        f'<p class="tcv-head"><b>{_esc(view.violated)}</b> · model <code>{_esc(view.model)}</code> '
        f"({_esc(params)}) · {n} steps · {_esc(where)} · {_esc(view.message)}</p>"
        f'<div class="tcv-bar">{buttons}</div>'
        f"{_lanes_table(view)}"
        '<div class="tcv-now"></div><div class="tcv-panels"></div>'
        f"{json_script(view.to_json(), 'tcv-data')}</section>"
    )


def viewer_page(view: TraceView, title: str) -> str:
    """A standalone page holding one viewer (what ``turncheck replay --html`` writes)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(title)}</title>{viewer_head()}"
        "<style>body{margin:0;background:#fafafa}main{max-width:1280px;margin:0 auto;padding:1em 2em}</style>"
        f"</head>\n<body><main><h1>{_esc(title)}</h1>\n{viewer_fragment(view)}\n</main></body></html>\n"
    )


def write_trace_page(
    trace: Trace | str | Path,
    out: str | Path,
    title: str | None = None,
    model: ProtocolModel[Any, Any] | None = None,
) -> Path:
    """Replay ``trace`` (on ``model`` when the caller loaded one, see
    :func:`reports.trace_view.trace_view`) and write its standalone viewer page to ``out``;
    returns the path.

    The page is rendered completely before the file is opened, so an error leaves nothing behind.

    Raises
    ------
    TraceFormatError
        The trace cannot be read or does not fit its model.
    TurncheckError
        ``out`` is a directory or cannot be written.
    """
    t = trace if isinstance(trace, Trace) else load_trace(trace)
    page_path(out, "trace.html")
    return write_view_page(trace_view(t, model), out, title or f"Counterexample: {t.violated} ({t.model})")


def write_view_page(view: TraceView, out: str | Path, title: str) -> Path:
    """Write the standalone viewer page of ``view``."""
    return write_page(page_path(out, "trace.html"), viewer_page(view, title))


def page_path(out: str | Path, example: str) -> Path:
    """``out`` as the file a page goes to; a directory, a symlink or a special file is refused
    before any work is done (see :func:`write_page`)."""
    path = Path(out)
    if path.is_dir():
        raise TurncheckError(f"{path} is a directory; give the page's file name (e.g. {path / example})")
    refuse_unsafe_target(path)
    return path


def write_page(path: Path, page: str) -> Path:
    """Write ``page``, rendered whole beforehand, to ``path`` (its folders created), whole or not at
    all and never through a symlink (:func:`turncheck.models.output_files.write_outputs`)."""
    write_outputs({path: page}, folder=path.parent)
    log.info("wrote %s", path)
    return path


def report_viewer(trace: Trace, anchor: str) -> str:
    """The viewer as the results report embeds it under a trace (a note when it cannot replay)."""
    try:
        view = trace_view(trace)
    except TurncheckError as exc:
        return f'<p class="note">No step-through viewer for this trace: {_esc(exc)}</p>'
    return "<h3>Step through the run</h3>" + viewer_fragment(view, anchor)
