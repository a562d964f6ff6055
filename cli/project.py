"""``turncheck project``, ``lint`` and ``generate``: the projector core on a user's own log.

``project`` reads a JSONL history, projects every session (or one) under a budget and a
strategy, and prints the window and its structural report; ``lint`` checks a log's structure;
``generate`` writes a seeded seed-004 workload as JSONL. All three refuse bad input with one
line and write nothing, and show progress on stderr unless ``--quiet`` (``project`` per session,
``lint`` per line read, ``generate`` per block of sessions); stdout carries results only.
"""

from __future__ import annotations

import shlex
import sys
import typing
from collections.abc import Callable, Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from turncheck.cli.config import from_table
from turncheck.cli.import_log import FromOpt, read_as_ours, warn_nothing_read, warn_opaque
from turncheck.cli.options import Format, QuietOpt, format_option, names_in_help, strategy_names
from turncheck.cli.progress import end_line, progress_for
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, EventFormatError, Kind

if TYPE_CHECKING:
    from turncheck.models.cost import CostModel
    from turncheck.models.per_request import Request, Shapes
    from turncheck.models.workload import WorkloadParams

Order = Literal["seq", "ts-seq", "ts", "file"]
ORDERS: tuple[str, ...] = typing.get_args(Order)
Progress = Callable[[int, int], None]


def example_history() -> Path:
    """The bundled example log (two sessions, parallel and dangling calls, CJK and emoji)."""
    return Path(str(resources.files("turncheck.scenarios") / "data" / "example.jsonl"))


def read_order(events: list[Event], order: str) -> list[Event]:
    """Events in the reader's order: by ``seq``, by ``(ts, seq)``, by ``ts`` alone over the file
    (arrival) order — a stable sort, as the seed's readers do — or as stored."""
    if order == "file":
        return list(events)
    if order not in ORDERS:
        raise BadParameter(f"--order must be one of {', '.join(ORDERS)}, got {order!r}")
    from turncheck.models.clock import in_read_order

    return in_read_order(events, order, lambda e: (e.seq, e.ts))


def sessions_of(events: list[Event]) -> dict[str, list[Event]]:
    out: dict[str, list[Event]] = {}
    for e in events:
        out.setdefault(e.session, []).append(e)
    return out


def _choose(value: str, allowed: tuple[str, ...], option: str) -> str:
    if value not in allowed:
        raise BadParameter(f"{option} must be one of {', '.join(allowed)}, got {value!r}")
    return value


StrategyOpt = Annotated[
    str,
    typer.Option(
        "--strategy",
        "-s",
        help="M0..M5, REQ, peer:NAME, package.module:function, messages:FILE.py:fn, or exec:'CMD ARGS'.",
    ),
]

StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Refuse a log with a RESULT for an unknown call, or two USER messages in one turn.",
    ),
]

PerRequestOpt = Annotated[
    bool,
    typer.Option(
        "--per-request/--no-per-request",
        help="Project before every model request (after each USER and each answered batch of RESULTs, "
        "before each reply), in log order.",
    ),
]

DiffOpt = Annotated[
    str | None,
    typer.Option(
        "--diff",
        help="With --per-request: compare each request's window under --strategy (new) and this strategy "
        "(old); exit 1 when a request breaks a check under new that it held under old.",
    ),
]

FailOnOpt = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 at the first window breaking one of these checks, e.g. orphanRes,orphanCall,overBudget,empty,"
        " or a provider's rules: openai-chat, openai-responses, anthropic, gemini, bedrock.",
    ),
]


def project_command(
    ctx: typer.Context,
    history: Annotated[
        Path | None, typer.Option("--history", "-H", help="JSONL event log (see README: the format).")
    ] = None,
    budget: Annotated[
        int, typer.Option("--budget", "-b", help="Budget: tokens (estimate) or bytes (utf8-json).")
    ] = 4000,
    strategy: StrategyOpt = "M1",
    cost: Annotated[
        str | None,
        typer.Option("--cost", help="estimate | utf8-json (default: utf8-json for REQ, else estimate)."),
    ] = None,
    cjk_ratio: Annotated[
        float, typer.Option("--cjk-ratio", help="Characters per token for CJK text (estimate).")
    ] = 1.5,
    escape: Annotated[
        Literal["python", "java"], typer.Option("--escape", help="JSON escape profile for utf8-json.")
    ] = "python",
    model: Annotated[
        str, typer.Option("--model", help="Model name in the request (utf8-json).")
    ] = "agnes-3.0-flash",
    system: Annotated[str, typer.Option("--system", help="System prompt (mandatory part of REQ).")] = "",
    current: Annotated[str, typer.Option("--current", help="Current question (mandatory part of REQ).")] = "",
    session: Annotated[str | None, typer.Option("--session", help="Project only this session.")] = None,
    order: Annotated[Order, typer.Option("--order", help="Read order.")] = "seq",
    emit_payload: Annotated[
        bool, typer.Option("--emit-payload", help="Include the exact request text.")
    ] = False,
    fmt: Annotated[Format, format_option("table, or json: one object per session per line.")] = "table",
    example: Annotated[bool, typer.Option("--example", help="Use the bundled example history.")] = False,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
    source: FromOpt = None,
    per_request: PerRequestOpt = False,
    diff: DiffOpt = None,
    fail_on: FailOnOpt = None,
) -> None:
    """Project each session of a log under a budget and print the window and its report."""
    from turncheck.models.cost import COST_MODELS, Utf8JsonCost, make_cost
    from turncheck.models.projector import check_budget, resolve_strategy

    check_budget(budget)
    resolve_strategy(strategy)
    checks: tuple[str, ...] = ()
    if fail_on is not None:  # the per-request checks' module: imported for them alone
        from turncheck.models.per_request import parse_checks

        checks = parse_checks(fail_on)
    if history is None and not example:
        raise BadParameter("give --history FILE.jsonl (or --example for the bundled log)")
    path = example_history() if example or history is None else history
    if example and source is not None and from_table(ctx, "source"):
        source = None  # the table's format is its log's: the bundled example is turncheck's JSONL
    cost_name = cost or ("utf8-json" if strategy == "REQ" else "estimate")
    if not cost_name.startswith("bpe:"):
        _choose(cost_name, COST_MODELS, "--cost")
    cost_model = make_cost(
        cost_name, cjk_ratio=cjk_ratio, profile=escape, model=model, system=system, current=current
    )
    if emit_payload and not isinstance(cost_model, Utf8JsonCost):
        raise BadParameter("--emit-payload needs --cost utf8-json (the payload is the serialized request)")
    if diff is not None and not per_request:
        raise BadParameter("--diff compares the windows of every request: give --per-request")
    if diff is not None:
        resolve_strategy(diff)
    groups = read_sessions(path, source, order, strict, session, quiet)
    if diff is not None:
        from turncheck.cli.request_diff import print_diff

        print_diff(groups, budget, diff, strategy, cost_model, checks, fmt)
        return
    if per_request:
        project_per_request(groups, budget, strategy, cost_model, checks, fmt, quiet)
        return
    _project_whole(groups, budget, strategy, cost_model, emit_payload, fmt, quiet, checks, fail_on)


def _project_whole(
    groups: dict[str, list[Event]],
    budget: int,
    strategy: str,
    cost_model: CostModel,
    emit_payload: bool,
    fmt: Format,
    quiet: bool,
    checks: tuple[str, ...],
    fail_on: str | None,
) -> None:
    """Each session projected once, at its end; exit 1 at the first session breaking a --fail-on check."""
    progress = progress_for("project", quiet, "sessions")
    rows: list[dict[str, Any]] = []
    try:
        for name, evs in groups.items():
            rows.append(project_session(name, evs, budget, strategy, cost_model, emit_payload))
            progress(len(rows), len(groups))
    except BaseException:
        end_line(progress)
        raise
    if fmt == "json":
        for row in rows:
            print_json(row, separators=(",", ":"))
    else:
        sys.stdout.write(render_table(rows))
    if checks:
        first = next(((r["session"], bad) for r in rows if (bad := [c for c in checks if r.get(c)])), None)
        if first is not None:
            print(f"FAIL: session {first[0]} breaks {', '.join(first[1])} (--fail-on {fail_on})")
            raise typer.Exit(1)
        if not any(groups.values()):
            nothing_checked("the log holds no event", checks, fmt)


def read_sessions(
    path: Path, source: str | None, order: str, strict: bool, session: str | None, quiet: bool
) -> dict[str, list[Event]]:
    """The log at ``path`` (ours, or imported ``source``) in read order, by session; only
    ``session`` when given (refused when the log does not hold it)."""
    from turncheck.models.events import read_jsonl
    from turncheck.models.importers import import_log

    reading = progress_for("project: reading", quiet, "B")
    try:
        if source is not None:
            imported = import_log(source, path)
            warn_opaque(path, imported.opaque)
            warn_nothing_read(path, source, len(imported.events))
            raw = imported.events
        else:
            with read_as_ours(path):
                raw = read_jsonl(path, reading)
        events = read_order(raw, order)
    except BaseException:
        end_line(reading)
        raise
    if strict:
        refuse_malformed_turns(events, path)
    groups = sessions_of(events)
    if session is None:
        return groups
    if session not in groups:
        raise BadParameter(f"session {session!r} is not in {path} (sessions: {', '.join(list(groups)[:10])})")
    return {session: groups[session]}


def project_per_request(
    groups: dict[str, list[Event]],
    budget: int,
    strategy: str,
    cost: CostModel,
    checks: tuple[str, ...],
    fmt: str,
    quiet: bool,
) -> None:
    """``--per-request``: every session projected before each of its model requests, in log
    order; per-session and total counts of requests breaking each check (``--fail-on`` or the
    usual four), and exit 1 with the first offending request when ``--fail-on`` is given."""
    from turncheck.models.per_request import Shapes, check_value, log_shapes, offences, replay_requests
    from turncheck.reports.tables import markdown_rows

    shown = checks or ("orphanRes", "orphanCall", "overBudget", "empty")
    progress = progress_for("project --per-request", quiet, "sessions")
    rows: list[dict[str, Any]] = []
    first: tuple[Request, list[str]] | None = None
    shapes = Shapes()
    try:
        for name, evs in groups.items():
            shapes += log_shapes(evs)
            row: dict[str, Any] = {"session": name, "strategy": strategy, "budget": budget, "requests": 0}
            row.update({c: 0 for c in shown})
            for req in replay_requests(name, evs, budget, strategy, cost):
                row["requests"] += 1
                for c in shown:
                    row[c] += int(check_value(req.window, c) > 0)
                if first is None and checks and (bad := offences(req.window, checks)):
                    first = (req, bad)
            rows.append(row)
            progress(len(rows), len(groups))
    except BaseException:
        end_line(progress)
        raise
    total: dict[str, Any] = {"session": "(total)", "strategy": strategy, "budget": budget}
    total.update({k: sum(r[k] for r in rows) for k in ("requests", *shown)})
    if fmt == "json":
        for row in [*rows, total]:
            print_json(row, separators=(",", ":"))
    else:
        cols = ["session", "strategy", "budget", "requests", *shown]
        lines = markdown_rows(cols, [[str(r[c]) for c in cols] for r in [*rows, total]])
        sys.stdout.write("\n".join(lines) + "\n")
        print(
            f"cells count requests whose window breaks the check; {total['requests']} "
            f"request{'' if total['requests'] == 1 else 's'} in {len(rows)} session{'' if len(rows) == 1 else 's'}"
        )
    if checks and not total["requests"]:
        nothing_checked("no model request to replay", checks, fmt)
    print_verdict(first, checks, shapes, strategy, budget, fmt)


def nothing_checked(why: str, checks: tuple[str, ...], fmt: str) -> None:
    """The gate's verdict when the log gave it nothing to judge (an empty file, a wrong
    ``--from``, a log of sessions with no turn): INCONCLUSIVE, exit 3, never the green of a
    pass — an empty log passed a CI gate as "OK"."""
    from turncheck.cli.app import EXIT_INCONCLUSIVE

    line = f"INCONCLUSIVE: nothing checked for --fail-on {','.join(checks)}: {why}"
    if fmt == "json":
        print_json({"inconclusive": line}, separators=(",", ":"))
    else:
        print(line)
    raise typer.Exit(EXIT_INCONCLUSIVE)


def print_verdict(
    first: tuple[Request, list[str]] | None,
    checks: tuple[str, ...],
    shapes: Shapes,
    strategy: str,
    budget: int,
    fmt: str,
) -> None:
    """The gate's last line: the first offending request (exit 1), or, when ``--fail-on`` passed,
    what the pass covered — the shapes of the log — and the command that covers every other."""
    from turncheck.models.per_request import describe_events, named_check, rules_broken
    from turncheck.models.provider_rules import PROVIDERS

    if first is None:
        if checks and fmt != "json":
            every = f"turncheck check projector -p {shlex.quote('strategy=' + strategy)}"
            print(
                f"OK: no request breaks {', '.join(checks)}. A replay covers the shapes this log holds "
                f"({shapes.words()}) and no others: `{every}` tries every small history (orphans, budget, empty windows)."
            )
        return
    req, bad = first
    w = req.window
    if fmt == "json":
        rules = {c: rules_broken(w, c, limit=len(w.events)) for c in bad if c in PROVIDERS}
        fail = {"session": req.session, "request": req.index, "after_events": req.end, "checks": bad,
                **({"rules": rules} if rules else {}),
                "cost": w.cost, "budget": budget, "first_events": describe_events(w.events)}  # fmt: skip
        print_json({"fail": fail}, separators=(",", ":"))
        raise typer.Exit(1)
    print(
        f"FAIL: session {req.session}, request {req.index} (after {req.end} events): "
        f"{', '.join(named_check(w, c) for c in bad)}; window cost {w.cost} {'>' if w.cost > budget else '≤'} budget {budget}: "
        f"{describe_events(w.events)}"
    )
    raise typer.Exit(1)


def refuse_malformed_turns(events: list[Event], path: Path) -> None:
    """``--strict``: refuse what the projector would silently misread — a RESULT for a call id
    never issued in its session, and a (session, turn) holding two USER messages (a writer that
    did not advance ``turn`` makes two turns one for every turn-aware strategy)."""
    issued = {(e.session, e.call_id) for e in events if e.kind is Kind.CALL}
    users: set[tuple[str, int]] = set()
    for e in events:
        if e.kind is Kind.RESULT and (e.session, e.call_id) not in issued:
            raise EventFormatError(
                f"{path}: seq {e.seq}: RESULT for unknown call {e.call_id!r} in session {e.session!r} (--strict)"
            )
        if e.kind is Kind.USER:
            if (e.session, e.turn) in users:
                raise EventFormatError(
                    f"{path}: seq {e.seq}: a second USER in turn {e.turn} of session {e.session!r} (--strict)"
                )
            users.add((e.session, e.turn))


def project_session(
    name: str, events: list[Event], budget: int, strategy: str, cost: CostModel, emit_payload: bool
) -> dict[str, Any]:
    """One session's projection as the JSON object ``project --format json`` prints."""
    from turncheck.models.cost import Utf8JsonCost
    from turncheck.models.history import History
    from turncheck.models.projector import project, turn_counts
    from turncheck.models.selection import PeerWindow
    from turncheck.models.summaries import prompt_events
    from turncheck.models.summarising import coverage_errors

    h = History(prompt_events(events), [cost])
    w = project(h, budget, strategy, cost)
    kept, dropped = turn_counts(w)
    row: dict[str, Any] = {
        "session": name,
        "strategy": strategy,
        "budget": budget,
        "cost_model": cost.name,
        "start_seq": h.events[w.start].seq if w.start < w.end else None,
        "end_seq": h.events[w.end - 1].seq if w.start < w.end else None,
        "kept_events": len(w.events),
        "kept_turns": kept,
        "dropped_turns": dropped,
        "cost": w.cost,
    }
    row.update(w.report._asdict())
    if isinstance(w, PeerWindow):  # a peer's or message-level trimmer's answer that is not a suffix
        row["nonSuffix"] = int(w.events != h.events[w.start : w.end])
        row["droppedInside"] = len(w.dropped_inside)
        row["invented"] = w.invented
    if any(e.kind is Kind.SUMMARY for e in w.events):  # a summary sent: its coverage errors
        row["coverage"] = coverage_errors(w)
    if isinstance(cost, Utf8JsonCost):
        payload = w.payload(cost)
        row["payload_bytes"] = len(payload.encode("utf-8"))
        if emit_payload:
            row["payload"] = payload
    return row


def render_table(rows: list[dict[str, Any]]) -> str:
    from turncheck.models.report import COUNTERS
    from turncheck.reports.tables import markdown_rows

    cols = ["session", "strategy", "budget", "start_seq", "end_seq", "kept_events", "kept_turns",
            "dropped_turns", "cost", *COUNTERS]  # fmt: skip
    if any("payload_bytes" in r for r in rows):
        cols.append("payload_bytes")
    shown = [c for c in cols if c in ("session", "strategy", "budget", "cost") or any(r.get(c) for r in rows)]
    lines = markdown_rows(shown, [["—" if r.get(c) is None else str(r.get(c)) for c in shown] for r in rows])
    return "\n".join(lines) + "\n"


GENERATE_P_PARALLEL = 0.5
"""``generate``'s share of multi-call turns whose calls are one parallel batch. Parallel calls are
the APIs' default — OpenAI's ``parallel_tool_calls`` is ``default: true`` in its OpenAPI spec,
Anthropic's "By default, Claude may use multiple tools to answer a user query"
(``disable_parallel_tool_use`` defaults to false) — while a call that needs the previous one's
result still comes alone; no provider publishes the share, so half of the turns with calls take
each shape. The seed-004 manifold (:class:`~models.workload.WorkloadParams`, whose figures the
seed scenarios reproduce) keeps its own 0.0."""


def generate_command(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output JSONL file (default: stdout).")
    ] = None,
    sessions: Annotated[int, typer.Option("--sessions", help="Sessions.")] = 10,
    turns: Annotated[int, typer.Option("--turns", help="Turns per session.")] = 20,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Random seed (default: the seed-004 workload's).")
    ] = None,
    p_result: Annotated[
        float, typer.Option("--p-result", help="Probability a call's result is written.")
    ] = 1.0,
    p_parallel: Annotated[
        float,
        typer.Option(
            "--p-parallel",
            help="Probability a turn's calls run in parallel (the APIs allow parallel calls by default; "
            "0 writes one call at a time).",
        ),
    ] = GENERATE_P_PARALLEL,
    p_late_result: Annotated[
        float,
        typer.Option(
            "--p-late-result", help="Probability a written result arrives in the next turn, after its USER."
        ),
    ] = 0.0,
    cjk_share: Annotated[float, typer.Option("--cjk-share", help="Share of CJK events.")] = 0.7,
    max_calls: Annotated[
        int,
        typer.Option(
            "--max-calls",
            help="Most tool calls in one turn; a block of up to 1000 sessions × turns × (2 × max-calls + 2) "
            "events must stay within 2^23 (MAX_BLOCK_EVENTS, a 2 GiB memory budget).",
        ),
    ] = 4,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing output file.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Write a seeded seed-004 workload as JSONL (sizes only, no text), with turns of both
    shapes by default: a keep-the-newest-N trimmer orphans results only where a batch of
    parallel calls is cut, so a log without them cannot show it (:data:`GENERATE_P_PARALLEL`)."""
    from turncheck.models.events import write_jsonl
    from turncheck.models.workload import SEED, WorkloadParams, generate_events

    params = WorkloadParams(
        sessions=sessions, turns=turns, seed=SEED if seed is None else seed, p_result=p_result, p_parallel=p_parallel,
        cjk_share=cjk_share, max_calls=max_calls, p_late_result=p_late_result,
    )  # fmt: skip
    if out is not None and out.exists() and not force:
        raise BadParameter(f"{out} exists; pass --force to overwrite")
    events = blockwise(generate_events(params), params, progress_for("generate", quiet, "blocks"))
    if out is None:
        write_jsonl(events, sys.stdout)
        return
    from turncheck.models.output_files import output_file

    with output_file(out, text=True) as fh:  # Ctrl-C, a full disk: nothing left behind
        n = write_jsonl(events, fh)
    if not quiet:
        print(f"wrote {n} events in {sessions} sessions to {out}", file=sys.stderr)


def blockwise(events: Iterable[Event], params: WorkloadParams, progress: Progress) -> Iterator[Event]:
    """``events`` unchanged, reporting ``progress(blocks done, blocks)`` as each block ends.

    The generator yields block by block and each block's sessions are contiguous and in order
    (:func:`models.workload.blocks` gives their ranges), so a block ends when the first session
    of the next one starts, and the last with the stream.
    """
    from turncheck.models.workload import blocks

    plan = blocks(params)
    ends = [first + count for _, first, count in plan]
    done = started = 0
    last: str | None = None
    for e in events:
        if e.session != last:
            last = e.session
            if done < len(ends) and started == ends[done]:
                done += 1
                progress(done, len(plan))
            started += 1
        yield e
    progress(len(plan), len(plan))


def register(app: typer.Typer) -> None:
    app.command(
        "project",
        cls=names_in_help(strategy_names),
        help="Project a JSONL log under a budget ({names}).",
        short_help="Project a JSONL log under a budget, with a trimming strategy.",
    )(project_command)
    from turncheck.cli.lint import lint_command

    app.command(
        "lint",
        help="Check a JSONL log's structure (orphans, dangling calls, seq, turns); many files; or --follow one.",
    )(lint_command)
    app.command("generate", help="Write a seeded seed-004 workload as JSONL, parallel calls included.")(
        generate_command
    )
