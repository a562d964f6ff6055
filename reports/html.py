"""``turncheck report``: one self-contained HTML page for a results directory.

The page holds every result file's tables, its judgement lines, the parameters and seed of its
run, every plot the directory's files give (:func:`reports.plots.gallery.gallery`) with a
one-line reading, and every counterexample trace with its timeline and transcript. It loads
nothing from outside: the style is inline and the images are PNG ``data:`` URIs, so the file can
be mailed or archived as is.

Everything that came from a file — table cells, titles, readings, parameter values, judgement
details, trace fields, transcripts — is passed through :func:`html.escape`; the only markup is
this module's own. Sections follow the order a reader meets the questions (trigger peaks, locking,
checks and counterexamples, the testbench, peers, then the rest: each scenario's declared
order, :func:`~turncheck.scenarios.base.section_order`), not the directory's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turncheck.models.display import esc, html_table
from turncheck.reports.plots.canvas import data_uri
from turncheck.reports.plots.gallery import Drawn, Missing, gallery
from turncheck.reports.results_dir import ResultFile, ResultsDir, TraceFile, read_results_dir
from turncheck.reports.verdict import glossary_html, own_check_html, verdict_html
from turncheck.reports.viewer import page_path, report_viewer, viewer_head, write_page
from turncheck.scenarios.base import Table, section_order
from turncheck.sim.trace import Trace

LONG_TABLE = 12  # more rows than this: a preview, and the full table behind a <details>
PREVIEW_ROWS = 5
WIDE_TABLE = 14  # more columns than this: the table's type is set smaller, so it fits 1280 px

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:1.5em 2em 4em}
h1{font-size:1.7em;margin:.2em 0}h2{font-size:1.35em;margin:2em 0 .3em;border-bottom:2px solid #ddd}
h3{font-size:1.05em;margin:1.4em 0 .2em}
.meta{color:#555;font-size:.9em;margin:.2em 0 .8em}.meta code{background:#eee;padding:0 .25em;border-radius:3px}
.reading{color:#333;margin:.2em 0 .5em;font-style:italic}
table{border-collapse:collapse;font-size:.85em;background:#fff}
th,td{border:1px solid #ddd;padding:.25em .55em;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;max-width:100%;width:fit-content;background:linear-gradient(90deg,#fff 30%,#fff0) 0 0/2em 100% no-repeat local,linear-gradient(270deg,#fff 30%,#fff0) 100% 0/2em 100% no-repeat local,radial-gradient(farthest-side at 0 50%,#0004,#0000) 0 0/.9em 100% no-repeat scroll,radial-gradient(farthest-side at 100% 50%,#0004,#0000) 100% 0/.9em 100% no-repeat scroll,#fff}
.scroll table{background:transparent}
ul.judgements{list-style:none;padding-left:0;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
ul.judgements li{padding:.15em .4em;margin:.1em 0;border-left:4px solid #999;background:#fff}
li.pass{border-color:#2ca02c!important}li.fail{border-color:#d62728!important;background:#fff3f3!important}
.tag{font-weight:bold}.pass .tag{color:#1a7f1a}.fail .tag{color:#c01818}
figure{margin:1em 0;background:#fff;border:1px solid #e3e3e3;padding:.6em}
figure img{max-width:100%;height:auto;display:block}
figcaption{font-size:.9em;margin-top:.4em}
pre{background:#fff;border:1px solid #e3e3e3;padding:.6em;overflow-x:auto;font-size:.8em}
nav ol{columns:2;font-size:.9em}.summary{background:#fff;border:1px solid #e3e3e3;padding:.6em 1em}
.note{color:#7a4b00}
td.num,.meta code{white-space:nowrap}.meta code.long{white-space:normal;overflow-wrap:anywhere}
details.full>summary{cursor:pointer;color:#1f4e9c;margin:.3em 0}
.scroll.wide table{font-size:.7em}.scroll.wide th,.scroll.wide td{padding:.2em .25em}
section.verdict td:nth-child(2){max-width:24em}
section.verdict,section.own,section.glossary{background:#fff;border:1px solid #e3e3e3;padding:.4em 1em;margin:1em 0}
section.verdict{border-left:4px solid #d62728}section.own{border-left:4px solid #2ca02c}
section.verdict h2,section.own h2,section.glossary h2{margin-top:.4em}
section.verdict tr.fail td.tag{color:#c01818}section.verdict tr.pass td.tag{color:#1a7f1a}
section.own pre{margin:.3em 0;white-space:pre-wrap;overflow-wrap:anywhere}
section.glossary dl{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.4em 0;font-size:.9em}
section.glossary dt{font-weight:bold}section.glossary dd{margin:0}
section.findings{background:#fff;border:1px solid #e3e3e3;border-left:4px solid #1f77b4;padding:.4em 1em;margin:1em 0}
section.findings li{margin:.35em 0}section.findings code{background:#eee;padding:0 .2em;border-radius:3px}
"""


def table_html(table: Table) -> str:
    """A result table: title, its reading, and the rows (numbers right-aligned). A long table
    shows its first rows and keeps the whole table behind a ``<details>`` (:func:`long_table_html`)."""
    if len(table.rows) > LONG_TABLE:
        return long_table_html(table)
    return _plain_table_html(table)


def long_table_html(table: Table) -> str:
    """A table of more than :data:`LONG_TABLE` rows: title and reading, the first
    :data:`PREVIEW_ROWS` rows, then the full table collapsed (one click away, nothing dropped)."""
    preview = Table(table.name, table.title, table.columns, table.rows[:PREVIEW_ROWS], table.reading)
    full = Table(table.name, table.title, table.columns, table.rows, "")
    body = _plain_table_html(full).split("</h3>", 1)[1]
    return (
        _plain_table_html(preview)
        + f'<details class="full"><summary>all {len(table.rows)} rows of “{esc(table.title)}”</summary>{body}</details>'
    )


def _plain_table_html(table: Table) -> str:
    reading = f'<p class="reading">{esc(table.reading)}</p>' if table.reading else ""
    wide = " wide" if len(table.columns) > WIDE_TABLE else ""
    return f"<h3>{esc(table.title)}</h3>{reading}" + html_table(
        table.columns, table.rows, wrap_heads=True
    ).replace('<div class="scroll">', f'<div class="scroll{wide}">', 1)


def _param_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def params_html(params: dict[str, Any] | Any) -> str:
    """Each parameter as ``<code>k=v</code>``; a long value (a list of checks, a sweep grid) may
    wrap inside its code span (class ``long``) so it never widens the page past the window."""
    given = dict(params)
    texts = [f"{k}={_param_text(v)}" for k, v in sorted(given.items()) if v is not None]
    shown = ", ".join(
        f'<code class="long">{esc(t)}</code>' if len(t) > LONG_PARAM else f"<code>{esc(t)}</code>"
        for t in texts
    )
    unset = sorted(k for k, v in given.items() if v is None)
    if unset:  # a parameter not given (stored as null): the scenario's own default, never a raw null
        shown += (
            ("; " if shown else "")
            + "left at the scenario's default: "
            + ", ".join(f"<code>{esc(k)}</code>" for k in unset)
        )
    return shown or "none"


LONG_PARAM = 40  # characters of ``k=v`` beyond which a parameter's code span may wrap


def judgements_html(lines: Iterable[tuple[bool, str, str]]) -> str:
    items = []
    for passed, name, detail in lines:
        cls, tag = ("pass", "PASS") if passed else ("fail", "FAIL")
        items.append(f'<li class="{cls}"><span class="tag">{tag}</span>  {esc(name)}: {esc(detail)}</li>')
    return f'<ul class="judgements">{"".join(items)}</ul>' if items else ""


def figure_html(d: Drawn, directory: ResultsDir) -> str:
    sources = ", ".join(esc(directory.relative(p)) for p in d.sources)
    return (
        f'<figure id="{esc(d.name)}"><img src="{data_uri(d.png)}" alt="{esc(d.title)}">'
        f'<figcaption><b>{esc(d.title)}</b> — {esc(d.reading)} <span class="meta">(drawn from {sources})</span>'
        "</figcaption></figure>"
    )


def _section_key(rf: ResultFile) -> tuple[tuple[int, int, str], str]:
    return (section_order(rf.scenario), str(rf.path))


def _anchor(kind: str, k: int) -> str:
    return f"{kind}-{k}"


def result_section(rf: ResultFile, k: int, plots: Sequence[Drawn], directory: ResultsDir) -> str:
    r = rf.result
    parts = [
        f'<section id="{_anchor("result", k)}"><h2>{esc(r.scenario)}</h2>',
        f'<p class="meta">file <code>{esc(directory.relative(rf.path))}</code> · seed <code>{esc(r.seed)}</code>'
        f" · parameters: {params_html(r.params)}</p>",
        judgements_html((j.passed, j.name, j.detail) for j in r.judgements),
    ]
    parts += [figure_html(d, directory) for d in plots]
    parts += [table_html(t) for t in r.tables]
    parts.append("</section>")
    return "\n".join(parts)


def _transcript(tf: TraceFile) -> str:
    """The trace's transcript as the report shows it (:func:`turncheck.sim.trace.readable_transcript`)."""
    from turncheck.sim.trace import readable_transcript

    return readable_transcript(tf.trace)


def peer_of(t: Trace) -> str:
    """The peer library a projector trace runs as its strategy ("" for any other trace)."""
    strategy = str(t.params.get("strategy", ""))
    return strategy if t.model == "projector" and strategy.startswith("peer:") else ""


def trace_section(tf: TraceFile, k: int, plots: Sequence[Drawn], directory: ResultsDir) -> str:
    t = tf.trace
    peer = peer_of(t)
    heading = (
        f"Shortest pairing break of {esc(peer)}: {esc(t.violated)} (projector model)"
        if peer
        else f"Counterexample: {esc(t.violated)} ({esc(t.model)})"
    )
    parts = [
        f'<section id="{_anchor("trace", k)}"><h2>{heading}</h2>',
        f'<p class="meta">file <code>{esc(directory.relative(tf.path))}</code> · engine <code>{esc(t.engine or "?")}'
        f"</code> · {len(t.actions)} steps · parameters: {params_html(t.params)}</p>",
    ]
    parts += [figure_html(d, directory) for d in plots]
    parts.append(report_viewer(t, f"viewer-{k}"))  # the interactive viewer (reports/viewer.py)
    from turncheck.models.catalog import model_names

    user = ":" in t.model or t.model not in model_names()
    heading = "Transcript (as recorded)" if user else "Transcript (replayed against the current code)"
    parts.append(f"<h3>{heading}</h3><pre>{esc(_transcript(tf))}</pre>")
    parts.append("</section>")
    return "\n".join(parts)


def _newcomer_html(results: Sequence[ResultFile]) -> list[str]:
    """The page's opening (:mod:`reports.verdict`): the trimming verdict per strategy, linking to
    the testbench's and the peers' sections, then the "check your own" box; nothing when no result
    judges trimming."""
    anchors: dict[str, str] = {}
    for k, rf in enumerate(results):
        anchors.setdefault(rf.scenario, _anchor("result", k))
    verdict = verdict_html([rf.result for rf in results], anchors)
    return [verdict, own_check_html()] if verdict else []


def findings_html(results: Sequence[ResultFile]) -> str:
    """The page's opening: the finding of each result file that has one (:mod:`reports.findings`,
    the same sentences as the README's "What it finds"), each linking to its section."""
    from turncheck.reports.findings import finding

    items = []
    for k, rf in enumerate(results):
        f = finding(rf.result)
        if f is None:
            continue
        items.append(
            f"<li><b>{_code_spans(f.headline)}</b> {_code_spans(f.sentence)} "
            f'<a href="#{_anchor("result", k)}">→ {esc(f.scenario)}</a></li>'
        )
    if not items:
        return ""
    return f'<section class="findings" id="findings"><h2>Findings</h2><ul>{"".join(items)}</ul></section>'


def _code_spans(text: str) -> str:
    """Escape ``text`` and turn its Markdown `code` spans into <code> elements."""
    parts = esc(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


@dataclass(frozen=True)
class ReportSummary:
    """What a page holds: counts for the command's output, and the plots it could not draw."""

    path: Path
    results: int
    traces: int
    plots: tuple[str, ...]
    passed: int
    failed: int
    missing: tuple[Missing, ...]
    skipped: tuple[tuple[Path, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "report": str(self.path),
            "results": self.results,
            "traces": self.traces,
            "plots": list(self.plots),
            "judgements": {"pass": self.passed, "fail": self.failed},
            "missing_plots": [
                {"plot": m.name, "source": str(m.source), "reason": m.reason} for m in self.missing
            ],
            "skipped_files": [{"file": str(p), "reason": why} for p, why in self.skipped],
        }

    def lines(self) -> list[str]:
        """``turncheck report``'s summary: where the page is, what it holds, what it left out."""
        return [
            f"report: {self.path}",
            f"  {self.results} result file(s), {self.traces} trace(s), {len(self.plots)} plot(s)",
            f"  judgement lines: {self.passed} PASS, {self.failed} FAIL",
            *(f"  could not draw {m.name} from {m.source}: {m.reason}" for m in self.missing),
            *(f"  passed over {p}: {why}" for p, why in self.skipped),
        ]


def render_report(
    directory: ResultsDir, drawn: Sequence[Drawn], missing: Sequence[Missing], title: str
) -> str:
    """The whole page as one string (no external resources)."""
    results = sorted(directory.results, key=_section_key)
    by_anchor: dict[Path, list[Drawn]] = {}
    for d in drawn:
        by_anchor.setdefault(d.anchor, []).append(d)
    judgements = [(j, rf) for rf in results for j in rf.result.judgements]
    failed = [(j, rf) for j, rf in judgements if not j.passed]
    toc = [f'<li><a href="#{_anchor("result", k)}">{esc(rf.scenario)}</a> <span class="meta">'
           f"{esc(directory.relative(rf.path))}</span></li>" for k, rf in enumerate(results)]  # fmt: skip
    toc += [f'<li><a href="#{_anchor("trace", k)}">counterexample: {esc(tf.trace.violated)} ({esc(tf.trace.model)})'
            "</a></li>" for k, tf in enumerate(directory.traces)]  # fmt: skip
    summary = [
        f"<p>{len(results)} result file(s), {len(directory.traces)} counterexample trace(s), {len(drawn)} plot(s) "
        f"from <code>{esc(directory.root)}</code>. Everything below is drawn from these files; nothing was re-run.</p>",
        f"<p><b>{len(judgements) - len(failed)} PASS</b>, <b>{len(failed)} FAIL</b> judgement line(s).</p>",
    ]
    if failed:
        summary.append(judgements_html((j.passed, f"[{rf.scenario}] {j.name}", j.detail) for j, rf in failed))
    if missing:
        items = "".join(
            f"<li>{esc(m.name)} from {esc(directory.relative(m.source))}: {esc(m.reason)}</li>"
            for m in missing
        )
        summary.append(f'<p class="note">Plots that could not be drawn:</p><ul class="note">{items}</ul>')
    if directory.skipped:
        items = "".join(f"<li>{esc(directory.relative(p))}: {esc(why)}</li>" for p, why in directory.skipped)
        summary.append(f'<p class="meta">Files passed over:</p><ul class="meta">{items}</ul>')
    body = [f"<h1>{esc(title)}</h1>", *_newcomer_html(results), findings_html(results),
            f'<div class="summary">{"".join(summary)}</div>', f"<nav><ol>{''.join(toc)}</ol></nav>"]  # fmt: skip
    # a peer library's shortest pairing break (scenarios/peer_trace.py) sits under the peers section
    peer_traces = [(j, tf) for j, tf in enumerate(directory.traces) if peer_of(tf.trace)]
    other_traces = [(j, tf) for j, tf in enumerate(directory.traces) if not peer_of(tf.trace)]
    traces_done = False
    for k, rf in enumerate(results):
        if not traces_done and _section_key(rf)[0] > section_order("checks"):
            body += [trace_section(tf, j, by_anchor.get(tf.path, []), directory) for j, tf in other_traces]
            traces_done = True
        body.append(result_section(rf, k, by_anchor.get(rf.path, []), directory))
        if rf.scenario == "peers":
            body += [trace_section(tf, j, by_anchor.get(tf.path, []), directory) for j, tf in peer_traces]
            peer_traces = []
    if not traces_done:
        body += [trace_section(tf, j, by_anchor.get(tf.path, []), directory) for j, tf in other_traces]
    body += [trace_section(tf, j, by_anchor.get(tf.path, []), directory) for j, tf in peer_traces]
    body.insert(body.index(findings_html(results)) + 1, glossary_html("\n".join(body)))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}</style>"
        + (viewer_head() if directory.traces else "")  # the trace viewer's style and script, once
        + "</head>\n<body><main>\n"
        + "\n".join(body)
        + "\n</main></body></html>\n"
    )


def write_report(
    results_dir: str | Path,
    out: str | Path,
    title: str = "turncheck report",
    progress: Callable[[int, int], None] | None = None,
) -> ReportSummary:
    """Read ``results_dir``, draw its plots, and write the page to ``out``.

    The page is rendered completely before the file is opened, so an error leaves nothing behind.

    Raises
    ------
    ResultFileError
        The directory is missing, or a result or trace file in it is damaged.
    """
    path = page_path(out, "report.html")
    directory = read_results_dir(results_dir)
    drawn, missing = gallery(directory, progress)
    write_page(path, render_report(directory, drawn, missing, title))
    judgements = [j for rf in directory.results for j in rf.result.judgements]
    return ReportSummary(
        path, len(directory.results), len(directory.traces), tuple(d.name for d in drawn),
        sum(j.passed for j in judgements), sum(not j.passed for j in judgements), tuple(missing),
        directory.skipped,
    )  # fmt: skip
