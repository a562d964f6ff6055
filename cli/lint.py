"""``turncheck lint``: a log's structure checked — one file, an archive of many, or a trace as it
is written.

``lint FILE`` reads one log (ours, or ``--from FORMAT``) and prints its problems; ``lint DIR|GLOB``
(or several files) lints each file on its own, on ``--jobs`` processes or a Dask cluster
(``--scheduler``), and prints the results in sorted path order, the same bytes however many
workers read them (:mod:`models.archive`); ``lint --from FORMAT --follow FILE`` follows a growing
trace and prints each finding as its request arrives (:mod:`models.follow`). Exit status: 0 clean,
1 a problem found, 2 a file not read (an archive goes on with the others, then exits 2), 130 on
Ctrl-C or, during ``--follow``, SIGTERM (``--follow`` ends only so: its findings are the lines it
printed).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from turncheck.cli.app import EXIT_INCONCLUSIVE
from turncheck.cli.config import from_table
from turncheck.cli.import_log import FromOpt, read_as_ours, warn_nothing_read, warn_opaque
from turncheck.cli.options import ExecutorKind, FormatOpt, JobsOpt, QuietOpt, SchedulerOpt
from turncheck.cli.progress import end_line, progress_for
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter, require_regular_file
from turncheck.models.events import Event, EventFormatError

if TYPE_CHECKING:
    from types import FrameType

    from turncheck.models.archive import FileLint
    from turncheck.models.lint import LintReport
    from turncheck.models.request_lint import Finding

Progress = Callable[[int, int], None]


HistoriesArg = Annotated[
    list[Path],
    typer.Argument(
        help="JSONL event log to check; or a folder, a quoted glob pattern ('traces/**/*.json') or "
        "several files: each file linted on its own.",
        show_default=False,
    ),
]
ProviderOpt = Annotated[
    str | None,
    typer.Option(
        "--provider",
        help="Also check what this API refuses: openai-chat, openai-responses, anthropic, gemini, bedrock "
        "(default with --from: the format's own API; for a trace, each request's own, else openai-chat).",
    ),
]
BudgetOpt = Annotated[
    int | None,
    typer.Option(
        "--budget",
        "-b",
        help="A trace's requests (--from otel, langfuse, langsmith), or those a claude-code, pi, pydantic-ai "
        "or langchain history records the usage of: also flag each whose messages "
        "(counted with its model's tokenizer when tiktoken knows the model, else the estimate) or whose "
        "provider-reported input cost more than this many tokens, and the first request of each "
        "conversation whose messages fit while the reported count did not (estimate-drift).",
    ),
]
FollowOpt = Annotated[
    bool,
    typer.Option(
        "--follow",
        "-f",
        help="With --from FORMAT: follow the file as it grows (a trace: one JSON document a line; a session "
        "file such as claude-code: read again at each change), through truncation and rotation, printing each "
        "finding as its request arrives, until Ctrl-C or SIGTERM (exit 130).",
    ),
]
MaxConversationsOpt = Annotated[
    int,
    typer.Option(
        "--max-conversations",
        min=1,
        help="--follow: conversations whose state is kept; past this, the idlest is forgotten.",
    ),
]
LintExecutorOpt = Annotated[
    ExecutorKind | None,
    typer.Option("--executor", help="local (process pool) or dask (the default with --scheduler)."),
]


def lint_command(
    ctx: typer.Context,
    histories: HistoriesArg,
    fmt: FormatOpt = "table",
    examples: Annotated[int, typer.Option("--examples", help="Offending lines shown per problem.")] = 5,
    quiet: QuietOpt = False,
    source: FromOpt = None,
    provider: ProviderOpt = None,
    budget: BudgetOpt = None,
    follow: FollowOpt = False,
    max_conversations: MaxConversationsOpt = 10_000,
    jobs: JobsOpt = 1,
    executor_kind: LintExecutorOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Check a log's structure; exit 0 when clean, 1 with a per-problem summary, 3 with no event."""
    from turncheck.models.importers import FORMATS, import_log
    from turncheck.models.lint import lint_events
    from turncheck.models.projector import check_budget
    from turncheck.models.provider_rules import check_provider
    from turncheck.models.sent_windows import lint_imported

    if examples < 0:
        raise BadParameter(f"--examples must be >= 0, got {examples}")
    if provider is not None:
        check_provider(provider)
    elif source is not None:
        provider = FORMATS[source].provider
    if budget is not None:
        check_budget(budget)
    budget_of_project = budget is not None and from_table(ctx, "budget")
    if follow:
        if budget_of_project and (source is None or FORMATS[source].requests is None):
            budget = None
        follow_trace(histories, source, provider, budget, max_conversations, fmt, quiet)
        return
    from turncheck.models.archive import is_archive

    one_folder = (
        source is not None and len(histories) == 1 and FORMATS[source].is_history_folder(histories[0])
    )
    many = len(histories) > 1 or is_archive(str(histories[0])) and not one_folder
    if not one_folder and (
        many or jobs > 1 or scheduler or executor_kind
    ):  # one file on an executor prints as one file
        if budget is not None and source is None:
            _refuse_a_flag_budget(budget_of_project, NO_TRACE)
            budget = None
        lint_archive(
            histories, source, examples, provider, budget, fmt, quiet, (executor_kind, jobs, scheduler), many
        )
        return
    history = histories[0]
    if not one_folder:
        require_regular_file(history, EventFormatError)
    if source is not None:  # a foreign log: lint what it imports as, each finding naming its record
        imported = import_log(source, history)
        warn_nothing_read(history, source, len(imported.events))
        if budget is not None and not imported.sent and not imported.reported:
            _refuse_a_flag_budget(
                budget_of_project,
                f"--budget checks the requests of a trace: {history} (--from {source}) holds none",
            )
            budget = None
        print_lint(history, lint_imported(imported, examples, provider, budget), fmt)
        return
    if budget is not None:
        _refuse_a_flag_budget(budget_of_project, NO_TRACE)
    print_lint(history, lint_events(read_ours(history, quiet), examples, provider), fmt)


NO_TRACE = (
    "--budget checks the requests of a trace: give --from otel, langfuse, langsmith, "
    "or a history that records usage (claude-code, pi, pydantic-ai, langchain)"
)


def _refuse_a_flag_budget(of_project: bool, refusal: str) -> None:
    """A budget for a log without model requests: ``--budget`` given on the command line is refused
    (``refusal``); the table's ``budget`` is the project's trimming budget and lint has no request
    to flag against it, so the caller lints the log without it."""
    if not of_project:
        raise BadParameter(refusal)


def read_ours(history: Path, quiet: bool) -> list[tuple[int, Event]]:
    """Our JSONL's events with their line numbers, progress in bytes on stderr."""
    from turncheck.models.events import event_from_dict, load_json_line

    located: list[tuple[int, Event]] = []
    size = history.stat().st_size
    progress = progress_for(f"lint {history.name}", quiet, "B")
    reading = ReadProgress(size, progress)
    with read_as_ours(history):
        try:
            with history.open(encoding="utf-8") as fh:
                for number, line in enumerate(reading.lines(fh), start=1):
                    if not line.strip():
                        continue
                    obj = load_json_line(line, f"{history}:{number}")
                    located.append((number, event_from_dict(obj, f"{history}:{number}")))
        except BaseException as exc:
            end_line(progress)
            if isinstance(exc, UnicodeDecodeError):
                raise EventFormatError(f"{history}: not UTF-8 text (byte {exc.start})") from None
            raise
    progress(size, size)
    return located


def print_lint(history: Path, report: LintReport, fmt: str) -> None:
    """``lint``'s output; exit 1 unless the log is clean, 3 when it holds no event to check."""
    show_lint(history, report, fmt)
    if not report.clean:
        raise typer.Exit(1)
    if report.verdict == "nothing checked":
        raise typer.Exit(EXIT_INCONCLUSIVE)


def show_lint(history: Path, report: LintReport, fmt: str) -> None:
    """One file's report on stdout. Parts kept as opaque content are one warning line on stderr
    (the verdict covers their place and cost, not what they hold)."""
    warn_opaque(history, report.opaque)
    if fmt == "json":
        print_json(report.to_json(str(history)))
    else:
        print("\n".join(report.lines(str(history))), flush=True)


def lint_archive(
    specs: list[Path],
    source: str | None,
    examples: int,
    provider: str | None,
    budget: int | None,
    fmt: str,
    quiet: bool,
    run_on: tuple[ExecutorKind | None, int, str | None],
    many: bool = True,
) -> None:
    """Many files, each linted on its own by an executor's task (:func:`models.archive.lint_file`),
    printed in sorted path order; a file not read is one line on stderr and the run goes on.
    Exit 2 when a file was not read, else 1 when one has a problem, else 0."""
    from turncheck.models.archive import LintTask, archive_files, lint_file
    from turncheck.sim.executor_dask import make_executor

    kind, jobs, scheduler = run_on
    executor = make_executor(kind or ("dask" if scheduler else "local"), jobs, scheduler)
    files = sorted({f for spec in specs for f in archive_files(str(spec), source)})
    tasks = [LintTask(str(f), source, examples, provider, budget) for f in files]
    progress = progress_for("lint", quiet, "files")
    try:
        results = executor.map(lint_file, tasks, progress)
    finally:
        end_line(progress)
    if not many:  # one file: exactly what ``lint FILE`` prints, and its exit status
        if results[0].report is None:
            raise EventFormatError(str(results[0].error))
        print_lint(Path(results[0].path), results[0].report, fmt)
        return
    for result in results:
        if result.report is not None:
            show_lint(Path(result.path), result.report, fmt)
        else:
            print(
                f"turncheck: error: {result.error} (not checked; the run goes on)",
                file=sys.stderr,
                flush=True,
            )
    raise typer.Exit(archive_status(results, fmt))


def archive_status(results: list[FileLint], fmt: str) -> int:
    """The verdict of an archive: what it covered, on stdout (table), and the exit status (3 when
    no file held an event: nothing was checked)."""
    unread = [r.path for r in results if r.report is None]
    dirty = sum(1 for r in results if r.report is not None and not r.report.clean)
    empty = [r.path for r in results if r.report is not None and r.report.verdict == "nothing checked"]
    if fmt != "json":
        clean = len(results) - len(unread) - dirty - len(empty)
        print(f"{len(results)} files: {clean} clean, {dirty} with problems, {len(unread)} not read"
              + (f" ({_some(unread)}): not covered by this verdict" if unread else "")
              + (f"; {len(empty)} with no event ({_some(empty)}): nothing checked there" if empty else ""))  # fmt: skip
    return 2 if unread else 1 if dirty else EXIT_INCONCLUSIVE if len(empty) == len(results) else 0


def _some(paths: list[str]) -> str:
    """The first three of ``paths``, and an ellipsis when there are more."""
    return ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")


def follow_trace(
    histories: list[Path],
    source: str | None,
    provider: str | None,
    budget: int | None,
    max_conversations: int,
    fmt: str,
    quiet: bool,
) -> None:
    """``--follow``: each finding printed the moment its request's line is complete (one JSON
    object a line with ``--format json``) — a trace a line at a time (:func:`models.follow.follow_findings`),
    a session file of one record a line from what was appended (:func:`models.follow.follow_session_lines`),
    another format read whole each time it changes (:func:`models.follow.follow_whole_file`); notices
    (truncation, rotation, a line skipped) on stderr. Ends only on Ctrl-C, after one line on
    stderr saying what was read."""
    from turncheck.models.follow import Tail, follow_findings, follow_session_lines, follow_whole_file
    from turncheck.models.importers import FORMATS
    from turncheck.models.request_lint import Conversations

    if source is None:
        raise BadParameter(
            "--follow reads a foreign log as it grows: give --from FORMAT (otel, claude-code, …)"
        )
    if len(histories) != 1:
        raise BadParameter("--follow follows one file")
    path = histories[0]
    if path.exists():
        require_regular_file(path, EventFormatError)
        with path.open("rb") as fh:
            if fh.read(16) == b"SQLite format 3\x00":
                raise BadParameter(f"--follow reads a file written a line at a time: {path} is a SQLite "
                                   "database (lint it without --follow)")  # fmt: skip

    def notice(message: str) -> None:
        print(f"turncheck: {message}", file=sys.stderr, flush=True)

    whole = FORMATS[source].requests is None
    if whole:  # a format read whole: each change read again, the requests made since checked
        if budget is not None:
            raise BadParameter(
                "--budget checks the requests of a trace: with --follow, give --from otel, langfuse or langsmith"
            )
        batches = (
            follow_session_lines(Tail(path, notice=notice), source, provider=provider, notice=notice)
            if FORMATS[source].lines is not None
            else follow_whole_file(path, source, provider=provider, notice=notice)
        )
    else:
        state = Conversations(limit=max_conversations)
        batches = follow_findings(Tail(path, notice=notice), source, provider=provider, budget=budget,
                                  state=state, notice=notice)  # fmt: skip
    lines = found = 0
    if not quiet:
        notice(f"following {path} (--from {source}); Ctrl-C or SIGTERM to stop")
    try:
        with sigterm_as_interrupt():
            for findings in batches:
                lines += 1
                for finding in findings:
                    found += 1
                    print_finding(finding, fmt)
    except KeyboardInterrupt:
        notice(f"{path}: {lines} {'changes' if whole else 'lines'} read, {found} findings")
        raise


def print_finding(finding: Finding, fmt: str) -> None:
    if fmt == "json":
        print_json({"problem": finding.problem, "meaning": finding.meaning, "where": finding.where},
                   separators=(",", ":"))  # fmt: skip
    else:
        print(finding, flush=True)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While ``--follow`` runs, SIGTERM (a service manager, ``timeout``, ``docker stop``) ends it as
    Ctrl-C does — the line counting what was read, ``turncheck: interrupted``, exit 130 — by
    handing the signal to the SIGINT handler in place (:mod:`cli.interrupt`'s, which redelivers an
    interrupt a library dropped). A monitor has no other ending, so the two ways to stop it give
    one status. A SIGINT inherited as ignored (a job a script started with ``&``: the shell ignores
    SIGINT in it) is honoured too while following: no terminal's Ctrl-C reaches a background job, so
    a SIGINT that arrives there was sent to stop it (``kill -INT``), and a monitor that ignored it
    would run for ever. Only on the main thread, where Python lets a handler be set; the previous
    handlers are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


class ReadProgress:
    """Bytes read of a text file, reported per line while a line leaves bytes to read.

    The position is the buffer's (ahead of the line by at most one read chunk, ~8 KiB), so a
    small file reports nothing until its final ``progress(size, size)`` (the caller's), and a
    file growing while read never reports a "finished" bar early.
    """

    def __init__(self, size: int, progress: Progress) -> None:
        self.size, self.progress = size, progress
        self.drawn = False

    def lines(self, fh: TextIO) -> Iterator[str]:
        tell, size, progress = fh.buffer.tell, self.size, self.progress
        for line in fh:
            pos = tell()
            if pos < size:
                progress(pos, size)
                self.drawn = True
            yield line
