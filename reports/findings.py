"""Findings: one sentence per result, with its number, generated from the result files.

The report opens with these and the README's "What it finds" is the same list (through
:mod:`docs.tools.doc_figures`), so a finding is never typed by hand and never outlives its data.
Each :class:`Finding` names the scenario whose section holds the evidence (the report links to
it). A result this module has no sentence for speaks through its judgement lines; one without
judgements contributes no finding (a count of its rows would be filler).

Invariant: the sentence's figures are read from the result, never computed from constants.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from turncheck.models.locking import ALWAYS_BOUNDED
from turncheck.reports.tables import cell_text
from turncheck.scenarios.base import ScenarioResult

Record = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """One sentence (Markdown, with backticks), its headline number, and the scenario it is
    drawn from (the section a report links to)."""

    scenario: str
    headline: str
    sentence: str

    def markdown(self) -> str:
        return f"**{self.headline}** {self.sentence} (`{self.scenario}`)"


def _n(value: Any) -> str:
    return cell_text(value, group=" ")


def _records(result: ScenarioResult, name: str) -> list[Record]:
    for t in result.tables:
        if t.name == name:
            return t.records()
    return []


def _trigger_gap(r: ScenarioResult) -> Finding | None:
    rows = [x for x in _records(r, "peaks") if x.get("post_peak") is not None]
    if not rows:
        return None
    top = max(rows, key=lambda x: (x["peak"] / x["max_turns"], x["peak"]))
    seed = f"; seed 004 printed {top['seed_peak']}" if top.get("seed_peak") is not None else ""
    matched = [x for x in rows if x.get("seed_peak") is not None]
    equal = sum(x["post_peak"] == x["seed_peak"] for x in matched)
    short = [x for x in matched if x["post_peak"] != x["seed_peak"]]
    tail = (
        f" The post-compaction reading reproduces the seed's table on {equal} of {len(matched)} rows"
        + "".join(
            f"; at maxTurns = {x['max_turns']} it gives {x['post_peak']} (closed form {x['post_worst']})"
            f" where the seed printed {x['seed_peak']}"
            for x in short
        )
        + "."
        if matched
        else ""
    )
    return Finding(
        "trigger-gap",
        f"maxTurns bounds the delete, not the log: {top['peak']} live turns at maxTurns = {top['max_turns']}.",
        f"With {top['writers']} writers and a {top['gap']}-slot check-then-act gap (locking {top['locking']}), "
        f"the peak at any moment is {top['peak']} (closed form {_n(top['worst_case'])}); right after each "
        f"compaction it is {top['post_peak']} (closed form {top['post_worst']}{seed}).{tail}",
    )


def _locking(r: ScenarioResult) -> Finding | None:
    rows = _records(r, "locking")
    if not rows:
        return None
    by: dict[str, list[Record]] = {}
    for x in rows:
        by.setdefault(str(x["locking"]), []).append(x)
    parts = []
    for name in ALWAYS_BOUNDED:
        if name in by:
            worst = min(by[name], key=lambda x: x["throughput"])
            parts.append(
                f"`{name}` peaks at {max(x['peak'] for x in by[name])} live turns but lets through "
                f"{_n(worst['throughput'])} of arrivals at (A={worst['writers']}, G={worst['gap']})"
            )
    if "cas" in by:
        starved = sum(bool(x["starved"]) for x in by["cas"])
        parts.append(f"`cas` starves in {starved} of {len(by['cas'])} cells (no bound: unbounded)")
    if "none" in by:
        parts.append(f"`none` reaches {max(x['peak'] for x in by['none'])}")
    m = rows[0]["max_turns"]
    return Finding(
        "locking",
        f"A bound costs throughput (maxTurns = {m}).",
        "; ".join(parts) + ".",
    )


def _checks(r: ScenarioResult) -> Finding | None:
    rows = _records(r, "checks")
    if not rows:
        return None
    failed = [x for x in rows if x["verdict"] == "fail"]
    passed = [x for x in rows if x["verdict"] == "pass"]
    if not failed:
        return None
    f = failed[0]
    held = f"; `{passed[0]['check']}` passes it" if passed else ""
    return Finding(
        "checks",
        f"A {f['steps']}-step counterexample.",
        f"`{f['check']}` breaks {f['violated']} in {f['steps']} steps ({f['found by']}){held}.",
    )


def _clock_skew(r: ScenarioResult) -> Finding | None:
    rows = {x["order"]: x for x in _records(r, "orders")}
    if "seq" not in rows or "ts" not in rows:
        return None
    ts, seq = rows["ts"], rows["seq"]
    extra = f", `(ts, seq)` {_n(rows['ts-seq']['orphanRes'])}" if "ts-seq" in rows else ""
    return Finding(
        "clock-skew",
        "The guarantee lives in the sort key, not the strategy.",
        f"Reading by timestamp gives turn-aware M1 {_n(ts['orphanRes'])} orphan results in "
        f"{_n(ts['windows'])} windows{extra}; append order `seq` gives {_n(seq['orphanRes'])}.",
    )


def _testbench(r: ScenarioResult) -> Finding | None:
    rows = {x["metric"]: x for x in _records(r, "m1-vs-m0")}
    if "orphanRes" not in rows or "overBudget rate" not in rows:
        return None
    o, p, rate = rows["orphanRes"], rows["pairSplit"], rows["overBudget rate"]
    windows = sum(
        x["windows"] for x in _records(r, "strategies") if x["strategy"] == "M0" and x["budget"] == 4000
    )
    over = f" of {_n(windows)}" if windows else ""
    m5 = f"; M5 (cut forward to the first pair-safe point) sends {_n(o['M5'])}" if "M5" in o else ""
    return Finding(
        "testbench",
        "Turn-aware trimming trades orphans for overruns.",
        f"At budget 4000 on clean data M0 sends {_n(o['M0'])} orphaned tool results{over} windows "
        f"(pairSplit {_n(p['M0'])}); turn-aware M1 sends {_n(o['M1'])} but runs over budget in "
        f"{float(rate['M1']) * 100:.1f} % of windows{m5}, over budget in "
        f"{float(rate['M5']) * 100:.1f} %.",
    )


def _token_estimate(r: ScenarioResult) -> Finding | None:
    rows = [x for x in _records(r, "estimator-error") if x["textKind"] == "all"]
    if not rows or "error@1.5 %" not in rows[0]:
        return None
    parts = [
        f"{_n(round(-float(x['error@1.5 %'])))} % under {str(x['encoding']).removeprefix('bpe:').removesuffix('_base')}"
        for x in rows
    ]
    est = [
        x for x in _records(r, "strategies") if x["selectedBy"] == "estimate@1.5" and x["strategy"] == "M5"
    ]
    over = "".join(
        f"; of {_n(x['windows'])} M5 windows, {_n(x['overBudget'])} are over budget by the estimate and "
        f"{_n(x['overBudgetReal'])} in real {str(x['measuredBy']).removeprefix('bpe:')} tokens"
        for x in est[:1]
    )
    return Finding(
        "token-estimate",
        "Estimated tokens undercount real ones.",
        f"On mixed text the seed's chars/1.5 estimate for CJK is {' and '.join(parts)}{over}.",
    )


def _framing(r: ScenarioResult) -> Finding | None:
    flipped = {(x["framing"], x["reader"]): x for x in _records(r, "flipped_digit")}
    torn = {(x["framing"], x["reader"]): x for x in _records(r, "torn_then_append")}
    lines, frames, resync = (
        flipped.get(("lines", "store resync")),
        flipped.get(("frames", "store resync")),
        torn.get(("lines", "store resync")),
    )
    if lines is None or frames is None or resync is None:
        return None
    return Finding(
        "framing",
        "Newline-framed logs hide corruption.",
        f"A digit flipped at rest comes back from a JSON-lines log as a valid record (phantom "
        f"{_n(lines['phantom'])}); length + CRC frames return phantom {_n(frames['phantom'])}, and a torn "
        f"half-record followed by more appends loses {_n(resync['missing'])} acknowledged records with "
        f"`resync` ({_n(r.params.get('records'))} records).",
    )


def _peers(r: ScenarioResult) -> Finding | None:
    """The league table in one sentence: each library's signature failure on clean data."""
    rows = _records(r, "peers")
    clean = {x["strategy"]: x for x in rows if x["case"] == "p_result 1.00"}
    if not clean:
        return None
    n = _n(next(iter(clean.values()))["requests"])

    def total(strategy: str, column: str) -> int:
        return sum(x[column] for x in rows if x["strategy"] == strategy)

    def same(peer: str, ours: str) -> bool:
        cols = ("orphanRes", "orphanCall", "overBudget", "empty", "maxCost")
        by = {(x["strategy"], x["case"]): x for x in rows}
        cases = {x["case"] for x in rows if x["case"].startswith("p_result")}  # parallel calls: per message
        return all(
            (peer, c) in by and (ours, c) in by and all(by[(peer, c)][k] == by[(ours, c)][k] for k in cols)
            for c in cases
        )

    parts: list[str] = []
    if "peer:langchain" in clean and "peer:langchain-human" in clean and "M0" in clean and "M3" in clean:
        alike = same("peer:langchain", "M0") and same("peer:langchain-human", "M3")
        parts.append(
            "LangChain's `trim_messages` "
            + ("behaves exactly like" if alike else "does not behave like")
            + ' M0 (`strategy="last"`) or M3 (`start_on="human"`) on the seed\'s manifolds'
        )
    if "peer:litellm" in clean:
        x = clean["peer:litellm"]
        parts.append(
            f"litellm's `trim_messages` sends an orphaned tool result in {_n(x['orphanResRequests'])} of {n} "
            f"requests and leaves {_n(x['untrimmed'])} untrimmed"
        )
    if "peer:autogen-token-limited" in clean:
        x = clean["peer:autogen-token-limited"]
        parts.append(
            f"AutoGen's token-limited context sends unmatched calls in {_n(x['orphanCallRequests'])} of {n}"
        )
    if "peer:semantic-kernel" in clean:
        x = clean["peer:semantic-kernel"]
        pairs = "never splits a pair" if x["orphanRes"] == x["orphanCall"] == 0 else "splits pairs"
        parts.append(
            f"Semantic Kernel's truncation reducer {pairs} but is over budget in {_n(x['overBudget'])} of {n}"
        )
    if "peer:langgraph" in clean:
        x = clean["peer:langgraph"]
        parts.append(
            f"LangGraph's documented `pre_model_hook` is over budget in {_n(x['overBudget'])} of {n} and its agent "
            f"refuses {_n(total('peer:langgraph', 'refused'))} requests over all cases"
        )
    if "peer:adk-compaction" in clean:
        x = clean["peer:adk-compaction"]
        parts.append(
            f"Google ADK's events compaction sends {_n(x['invented'])} summaries in {n} requests, with "
            f"{_n(x.get('coverage', 0))} coverage errors, and is over budget in {_n(x['overBudget'])} of them "
            "(it compacts after a prompt reached the threshold)"
        )
    parts += _jvm_and_js_clauses(clean, n, total, same)
    safe = [
        f"{name} ({_n(total(peer, 'dropped'))} requests with dropped messages, "
        f"{_n(total(peer, 'invented'))} invented)"
        for peer, name in (
            ("peer:openai-agents", "the OpenAI Agents SDK"),
            ("peer:pydantic-ai", "Pydantic AI"),
            ("peer:adk-compaction", "Google ADK"),
        )
        if peer in clean and total(peer, "orphanRes") == 0
    ]
    if safe:
        parts.append(f"{' and '.join(safe)} never send an orphan result")
    tail = _reproductions_tail(r)
    return Finding(
        "peers",
        f"Popular trimmers, measured per request ({n} requests on clean data, real BPE tokens).",
        "; ".join(parts) + "." + tail,
    )


def _jvm_and_js_clauses(
    clean: dict[str, Any], n: str, total: Callable[[str, str], int], same: Callable[[str, str], bool]
) -> list[str]:
    """The league sentence's clauses for the peers that run in a JVM or in Node."""
    parts: list[str] = []
    if "peer:spring-ai-window" in clean:
        x = clean["peer:spring-ai-window"]
        clause = (
            f"Spring AI's real `MessageWindowChatMemory` (JVM, 1.1) sends an orphaned tool result in "
            f"{_n(x['orphanResRequests'])} of {n}"
        )
        if "peer:spring-ai-window-2.0" in clean:
            y = clean["peer:spring-ai-window-2.0"]
            clause += (
                f"; 2.0's turn-snapped window orphans {_n(y['orphanResRequests'])} but sends an empty "
                f"window in {_n(total('peer:spring-ai-window-2.0', 'empty'))} requests over all cases"
            )
        parts.append(clause)
    lc4j = [
        (peer, name)
        for peer, name in (("peer:langchain4j-window", "message"), ("peer:langchain4j-token-window", "token"))
        if peer in clean
    ]
    if lc4j:
        orphans = sum(total(peer, "orphanRes") for peer, _ in lc4j)
        parts.append(
            f"langchain4j's {' and '.join(name for _, name in lc4j)} windows "
            + ("never orphan a result" if orphans == 0 else f"orphan {_n(orphans)} results over all cases")
        )
    if "peer:langchainjs-trim" in clean and "peer:langchain" in clean:
        twin = same("peer:langchainjs-trim", "peer:langchain")
        parts.append(
            f"LangChain.js's `trimMessages` {'behaves exactly like' if twin else 'differs from'} its Python twin"
        )
    if "peer:vercel-prune" in clean:
        x = clean["peer:vercel-prune"]
        parts.append(
            f"the Vercel AI SDK's `pruneMessages` takes no budget and exceeds it in {_n(x['overBudget'])} of {n}"
        )
    if "peer:mastra-token-limiter" in clean:
        x = clean["peer:mastra-token-limiter"]
        parts.append(
            f"Mastra's `TokenLimiterProcessor` (best-fit) drops messages inside its window in {_n(x['dropped'])} "
            f"of {n} and refuses {_n(total('peer:mastra-token-limiter', 'refused'))} requests over all cases"
        )
    if "peer:agents-js-session" in clean:
        x = clean["peer:agents-js-session"]
        parts.append(
            f"openai-agents-js's `MemorySession.getItems(limit)` sends an orphaned tool result in "
            f"{_n(x['orphanResRequests'])} of {n}"
        )
    return parts


def _reproductions_tail(r: ScenarioResult) -> str:
    """The span of the shortest reproductions' sizes, and how many were saved as viewer traces."""
    sizes = [x["events"] for x in _records(r, "reproductions") if x["events"]]
    traces = [x for x in _records(r, "traces") if x["file"]]
    tail = ""
    if sizes:
        span = f"{min(sizes)}–{max(sizes)}" if min(sizes) != max(sizes) else str(min(sizes))
        tail = f" Shortest reproductions on clean data: {span} events"
        tail += f", {len(traces)} saved as viewer traces." if traces else "."
    return tail


SHOWN_JUDGEMENTS = 2  # judgement lines a plain finding quotes; the rest are counted


def _plain(r: ScenarioResult) -> Finding | None:
    """A result without a sentence of its own speaks through its judgement lines: the failed ones
    first (a failure is the finding), else the first passing ones under its first table's title.
    Without judgements there is nothing to say, and no finding (no filler)."""
    if not r.judgements:
        return None
    failed = [j for j in r.judgements if not j.passed]
    shown = (failed or list(r.judgements))[:SHOWN_JUDGEMENTS]
    quoted = "; ".join(f"{j.name}: {j.detail}" if j.detail else j.name for j in shown)
    rest = len(failed or r.judgements) - len(shown)
    if failed:
        more = f"; {rest} more fail" if rest else ""
        return Finding(
            r.scenario, f"{len(failed)} of {len(r.judgements)} judgement lines fail.", quoted + more + "."
        )
    title = r.tables[0].title if r.tables else r.scenario
    more = f"; {rest} more pass" if rest else ""
    return Finding(r.scenario, f"{title}.", quoted + more + ".")


_SENTENCES: dict[str, Callable[[ScenarioResult], Finding | None]] = {
    "trigger-gap": _trigger_gap,
    "sweep-trigger-gap": _trigger_gap,
    "locking": _locking,
    "checks": _checks,
    "clock-skew": _clock_skew,
    "testbench": _testbench,
    "token-estimate": _token_estimate,
    "framing": _framing,
    "peers": _peers,
}


def finding(r: ScenarioResult) -> Finding | None:
    """The result's finding: its own sentence, or its judgement lines (None: nothing to say)."""
    make = _SENTENCES.get(r.scenario)
    try:
        f = make(r) if make is not None else None
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        f = None  # an older result file without the columns: fall back to its judgements
    return f if f is not None else _plain(r)


def findings(results: Sequence[ScenarioResult]) -> list[Finding]:
    """The findings of the results that have one, in the order given."""
    return [f for f in map(finding, results) if f is not None]
