"""The newcomer's answer, first on a report: what each trimming strategy sends, how to check one's
own trimmer, and the words the page uses.

A newcomer opens the demo's page with one question — *does trimming break my agent's requests?*
— so the page opens with the trimming verdict per strategy: the orphaned tool results it sends
(a RESULT without its CALL, which the providers refuse), the windows over budget and the empty
windows, summed over every budget of the run, read from the ``testbench`` result's ``strategies``
table and, when there is one, the ``peers`` result's clean-data rows. Below it, the two commands
that check one's own trimmer (the README's CLI line and pytest fixture, the same strings: a test
holds them equal), then a glossary of the seed's words that the page actually uses.

Invariant: every figure is read from a result file, never typed; a figure the result does not
carry is shown as "—" with the reason, never as a zero or ``null``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turncheck.models.display import THIN_SPACE, cell_text, esc
from turncheck.scenarios.base import ScenarioResult

# the README's "Check your own trimmer" commands, verbatim (tests/test_report_verdict.py holds them equal)
OWN_CLI = (
    "PYTHONPATH=. turncheck project --history my.jsonl --budget 4000 "
    "--strategy messages:my_trim:keep_recent --per-request --fail-on orphanRes"
)
OWN_PYTEST = """# test_trim.py
from my_trim import keep_recent

from turncheck import message_trimmer


def test_keep_recent_never_orphans_a_result(check_projector):
    check_projector(message_trimmer(keep_recent), checks=["orphanRes"])"""

NOT_MEASURED = "—"
CLEAN_CASE = "p_result 1.00"  # the peers' clean-data case: every call gets its result


@dataclass(frozen=True)
class StrategyVerdict:
    """One strategy's (or peer library's) figures over every budget of a run, and its verdict.

    ``None`` in a count means the result carries no such column (shown as "—", not measured).
    """

    who: str
    what: str
    windows: int
    orphans: int | None
    over_budget: int | None
    empty: int | None
    peer: bool = False

    def verdict(self) -> str:
        """The faults found, worst first (a refused request before a wasted one), or that none was."""
        faults = [
            f"{label} in {cell_text(count, THIN_SPACE)} of {cell_text(self.windows, THIN_SPACE)}"
            if label != "orphans"
            else f"sends {cell_text(count, THIN_SPACE)} orphaned results"
            for label, count in (
                ("orphans", self.orphans),
                ("over budget", self.over_budget),
                ("empty", self.empty),
            )  # fmt: skip
            if count
        ]
        if faults:
            return "; ".join(faults)
        unmeasured = [n for n, c in (("orphans", self.orphans), ("budget", self.over_budget),
                                     ("empty windows", self.empty)) if c is None]  # fmt: skip
        return "no fault found" + (f" (not measured: {', '.join(unmeasured)})" if unmeasured else "")

    @property
    def faulty(self) -> bool:
        return bool(self.orphans or self.over_budget or self.empty)

    @property
    def safe(self) -> bool:
        """Measured on all three counts and none found: an unmeasured count is never read as safe."""
        return self.orphans == 0 and self.over_budget == 0 and self.empty == 0


DESCRIBED = 80  # characters of a strategy's description the table shows (cut at a word, marked …)


def _first_sentence(doc: str | None) -> str:
    text = re.sub(r"\s*\([^)]*\)", "", " ".join((doc or "").split()).replace("``", ""))
    head = re.split(r"(?<=[.;])\s", text, maxsplit=1)[0].rstrip(".;")
    return head if len(head) <= DESCRIBED else head[: head.rfind(" ", 0, DESCRIBED)].rstrip(",;:") + " …"


def _describe(name: str) -> str:
    from turncheck.models.projector import STRATEGIES

    strategy = STRATEGIES.get(name)
    return _first_sentence(strategy.project.__doc__).removeprefix(f"{name}: ") if strategy is not None else ""


def _count(record: dict[str, object], column: str) -> int | None:
    value = record.get(column)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _sum(records: Sequence[dict[str, object]], column: str) -> int | None:
    counts = [_count(r, column) for r in records]
    return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)


def strategy_verdicts(results: Sequence[ScenarioResult]) -> list[StrategyVerdict]:
    """Each strategy of the ``testbench`` result's ``strategies`` table (summed over budgets),
    then each peer library of the ``peers`` result on clean data; empty when neither is given."""
    rows: list[StrategyVerdict] = []
    for r in results:
        if r.scenario == "testbench" and any(t.name == "strategies" for t in r.tables):
            by: dict[str, list[dict[str, object]]] = {}
            for rec in r.table("strategies").records():
                by.setdefault(str(rec["strategy"]), []).append(rec)
            rows += [StrategyVerdict(who, _describe(who), _sum(recs, "windows") or 0, _sum(recs, "orphanRes"),
                                     _sum(recs, "overBudget"), _sum(recs, "empty"))
                     for who, recs in by.items()]  # fmt: skip
    for r in results:
        if r.scenario == "peers" and any(t.name == "peers" for t in r.tables):
            for rec in r.table("peers").records():
                if rec.get("case") == CLEAN_CASE and str(rec["strategy"]) not in {v.who for v in rows}:
                    rows.append(
                        StrategyVerdict(
                            str(rec["strategy"]),
                            "",
                            _count(rec, "requests") or 0,
                            _count(rec, "orphanRes"),
                            _count(rec, "overBudget"),
                            _count(rec, "empty"),
                            peer=True,
                        )  # fmt: skip
                    )
    return rows


def _cell(count: int | None) -> str:
    return NOT_MEASURED if count is None else cell_text(count, THIN_SPACE)


def _rows(verdicts: Sequence[StrategyVerdict], described: bool) -> str:
    body = "".join(
        f'<tr class="{"pass" if v.safe else "fail" if v.faulty else "unknown"}"><td><b>{esc(v.who)}</b></td>'
        + (f"<td>{esc(v.what)}</td>" if described else "")
        + "".join(f'<td class="num">{_cell(c)}</td>' for c in (v.windows, v.orphans, v.over_budget, v.empty))
        + f'<td class="tag">{esc(v.verdict())}</td></tr>'
        for v in verdicts
    )
    judged = "windows judged" if described else "requests judged"
    columns = ("strategy", *(("what it does",) if described else ()), judged, "orphaned tool results",
               "windows over budget", "empty windows", "verdict")  # fmt: skip
    head = "".join(f"<th>{c}</th>" for c in columns)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _evidence(anchors: Mapping[str, str], scenario: str) -> str:
    return f' <a href="#{esc(anchors[scenario])}">→ the evidence</a>' if scenario in anchors else ""


def verdict_html(results: Sequence[ScenarioResult], anchors: Mapping[str, str]) -> str:
    """The page's first section: one row per strategy, the faulty ones marked, then one per peer
    library in a table of its own, each linking to the section with the evidence (``anchors``: a
    scenario's section id); empty when the results hold no trimming figures."""
    verdicts = strategy_verdicts(results)
    if not verdicts:
        return ""
    ours = [v for v in verdicts if not v.peer]
    peers = [v for v in verdicts if v.peer]
    safe = [v.who for v in ours if v.safe]
    lead = f"Safe on this data: {', '.join(safe)}" if safe else "No strategy here was safe on this data"
    parts = [
        '<section class="verdict" id="verdict"><h2>Does trimming break the requests? The verdict per strategy</h2>',
        f"<p>{esc(lead)} (no orphaned tool result, no window over budget, no empty window); the others break "
        "requests as the last column says. An orphaned tool result is a tool result sent without the call it "
        "answers: the provider refuses the request. Summed over every budget of the run, on clean data."
        f"{_evidence(anchors, 'testbench')}</p>",
    ]
    if ours:
        parts.append(_rows(ours, described=True))
    if peers:
        fine = sum(v.safe for v in peers)
        parts.append(
            f"<h3>The libraries people use, their own trimmers run for real</h3><p>{fine} of {len(peers)} safe on "
            f"clean data, per request.{_evidence(anchors, 'peers')}</p>" + _rows(peers, described=False)
        )
    parts.append("</section>")
    return "".join(parts)


def own_check_html() -> str:
    """The "check your own" box: the README's CLI line and its pytest fixture, as printed there."""
    return (
        '<section class="own" id="check-your-own"><h2>Check your own trimmer</h2>'
        "<p>Replay every request of your log with your trimmer <code>fn(messages, budget) -&gt; messages</code> "
        "(exit 1 names the first request that sends a tool result without its call):</p>"
        f"<pre>{esc(OWN_CLI)}</pre><p>or, from pytest, search every small history for one that breaks it:</p>"
        f"<pre>{esc(OWN_PYTEST)}</pre><p><code>turncheck init</code> writes both as a starter in the current "
        "folder.</p></section>"
    )


def _orphan_error() -> str:
    from turncheck.models.provider_rules import REGISTRY

    rule = next(r for r in REGISTRY if r.id == "result-not-next")
    return f"{rule.provider} refuses it: “{rule.error}” ({rule.source})"


# (the word as the page writes it, what it means); shown when the page uses the word
GLOSSARY: tuple[tuple[str, str], ...] = (
    ("orphanRes", "an orphaned tool result: a tool result sent without the call it answers"),
    ("pairSplit", "a tool call and its result on opposite sides of the cut"),
    ("overBudget", "a window that costs more tokens than the budget"),
    ("empty", "an empty window: nothing of the conversation sent"),
    ("overrun ratio", "Σ kept cost / (budget × windows); 1.0 is a budget filled exactly"),
    ("maxTurns", "the compaction trigger's threshold: compact when the log holds more live turns"),
    (
        "check-then-act gap",
        "the slots between the trigger reading the count and the compaction deleting; "
        "turns appended in it are not counted",
    ),
    (
        "closed form",
        "the worst case by formula (for the trigger's peak, maxTurns + 2·writers·gap − 1), which the "
        "simulated and explored peaks are compared with",
    ),
    (
        "seed",
        "seed 000 and seed 004 are the two source articles whose tables turncheck reproduces; "
        "a result's seed is its random seed (same seed, same bytes)",
    ),
    ("manifold", "one generated workload of the testbench, named by p_result"),
    (
        "p_result",
        "the chance a tool call's result is ever written; 1.00 is clean data, 0.97 and 0.90 leave "
        "dangling calls",
    ),
    (
        "ORCHID-17",
        "the code name planted in the projection scenario's first turn: whether a request carries "
        "it shows whether that turn was sent",
    ),
    ("CJK", "Chinese, Japanese and Korean text, which the seed estimates at 1.5 characters per token"),
    ("phantom", "a record read back that was never written as such"),
    ("judgement", "a claim a run checks against its own figures, printed PASS or FAIL"),
    (
        "counterexample",
        "the shortest run that breaks an invariant, saved as a trace that `turncheck replay` re-runs",
    ),
)


def _code(text: str) -> str:
    """``text`` escaped, its `backticked` words set as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


def glossary_html(page: str) -> str:
    """The words of :data:`GLOSSARY` that ``page`` (the rest of the page) uses, with their meaning."""
    text = re.sub(r"<script.*?</script>|<style.*?</style>|<[^>]+>", " ", page, flags=re.S)
    used = [(w, d) for w, d in GLOSSARY if re.search(rf"(?<![\w-]){re.escape(w)}", text)]
    if not used:
        return ""
    items = "".join(
        f"<dt>{esc(w)}</dt><dd>{_code(d)}"
        + (f"; {esc(_orphan_error())}" if w == "orphanRes" else "")
        + "</dd>"
        for w, d in used
    )
    return (
        f'<section class="glossary" id="glossary"><h2>Words this report uses</h2><dl>{items}</dl></section>'
    )
