"""``turncheck stress``: real writer processes and a compactor against a real store, then a check.

Runs ``--writers`` OS processes appending whole turns and one compactor process against
``--store`` for ``--seconds``, with the trigger ``maxTurns`` and a wall-clock gap ``--gap-ms``
under ``--locking``; records every operation and checks the committed history
(:mod:`turncheck.sim.stress.history`). Exit 0 when every invariant holds, 1 with the shortest
offending slice of the history when one breaks (``--html`` pages through it in the trace
viewer), 2 for bad input or a store that cannot be
opened. A live run cannot be byte-reproducible: ``--seed`` fixes the kill schedule, not the
operating system's interleaving.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from turncheck.cli.options import FormatOpt, QuietOpt, SeedOpt, out_option
from turncheck.cli.outputs import check_output_file
from turncheck.cli.progress import ProgressBar, end_line, silent
from turncheck.cli.stdout_json import print_json
from turncheck.models.errors import BadParameter, TurncheckError
from turncheck.models.locking import LockingName

if TYPE_CHECKING:
    from turncheck.sim.stress.history import StressReport
    from turncheck.sim.stress.runner import RawRun, StressParams


class StoreUnavailable(TurncheckError):
    """The store could not be opened or set up (a bad DSN, a server that is down, a bad path)."""


def report_lines(r: StressReport) -> list[str]:
    bound = "unbounded" if r.bound is None else str(r.bound)
    peak = (
        f"peak {r.peak} · model worst case {bound} at {r.turns_per_gap} turns/gap · {r.locking} is held to "
        f"{r.checked_bound}"
        if r.journaled
        else "the store keeps no journal: checked against its final state (lost, duplicated, torn)"
    )
    timed = r.seconds > 0  # a client's history may not say how long it ran
    rate = f" ({r.throughput:g}/s)" if timed or r.throughput else ""
    lines = [
        f"stress {r.store} · {r.locking} · {r.writers} writers · gap {r.gap_ms:g} ms · maxTurns {r.max_turns}"
        + (f" · {r.seconds:g} s" if timed else ""),
        peak,
        f"lost {r.lost} · over-deleted {r.over_deleted} · bad read windows {r.bad_reads}/{r.reads}",
        f"appends {r.appends}{rate} · p50 {r.p50_ms:g} ms · p99 {r.p99_ms:g} ms · compactions "
        f"{r.compactions} · cas conflicts {r.conflicts} · retries {r.retries} · lock waits {r.lock_waits} · "
        f"busy errors {r.busy_errors}",
    ]
    if r.lost_connections:
        lines.append(
            f"connections lost and re-opened: {r.lost_connections} (outcomes settled by the store's journal)"
        )
    if r.kills:
        lines.append(f"killed (SIGKILL, restarted): {', '.join(r.kills)}")
    if r.stuck:
        lines.append(f"stuck past the deadline (killed): {', '.join(r.stuck)}")
    if r.ok:
        lines.append(
            f"OK: every invariant holds in this run ({r.appends} appends by {r.writers} writers: the "
            "interleavings this machine produced, not every one; `turncheck explore trigger -p "
            f"locking={r.locking}` checks every interleaving of the model)"
        )
    for v in r.violations[:5]:
        lines.append(f"VIOLATED {v.invariant}: {v.reason}")
        lines.extend(f"  {s}" for s in v.slice)
    if len(r.violations) > 5:
        lines.append(f"… and {len(r.violations) - 5} more violations")
    return lines


FirstOpensOpt = Annotated[
    int,
    typer.Option(
        "--first-opens",
        metavar="ROUNDS",
        min=0,
        max=1000,
        help="Run no writers: in each of ROUNDS fresh databases, --writers processes open the store"
        " at once, once each (setup, connect, a read); every failed first open is counted, none"
        " retried (openai-agents PR #4987). Exit 1 when any failed.",
    ),
]


def stress_command(
    store: Annotated[
        str,
        typer.Option(
            "--store",
            help="sqlite, postgres, agents-sqlite, langgraph-sqlite, adk-database, or package.module:Class.",
        ),
    ] = "sqlite",
    locking: Annotated[LockingName, typer.Option("--locking", help="Locking strategy.")] = "none",
    writers: Annotated[int, typer.Option("--writers", min=1, max=64, help="Writer processes.")] = 4,
    gap_ms: Annotated[
        float, typer.Option("--gap-ms", min=0, help="Wall-clock gap from the read to the act.")
    ] = 50.0,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="The trigger's maxTurns.")] = 8,
    seconds: Annotated[float, typer.Option("--seconds", min=0.1, max=3600, help="Run time.")] = 5.0,
    dsn: Annotated[str, typer.Option("--dsn", help="Connection string (postgres, or your own store).")] = "",
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="Database file for file stores (default: a temporary one): a path, never a SQLite URI"
            " (file:…); a new or empty file, since the run empties its tables (an existing non-empty"
            " one is refused).",
        ),
    ] = None,
    overwrite_db: Annotated[
        bool,
        typer.Option(
            "--overwrite-db",
            help="Let the run empty the tables of an existing, non-empty --db, or of a --dsn database"
            " holding tables turncheck did not write (refused otherwise).",
        ),
    ] = False,
    kill: Annotated[
        bool, typer.Option("--kill", help="SIGKILL a random writer or the compactor, restart it.")
    ] = False,
    kills: Annotated[int, typer.Option("--kills", min=0, max=100, help="How many kills with --kill.")] = 3,
    seed: SeedOpt = 0,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    out: Annotated[
        Path | None,
        out_option(
            "Keep the history (JSONL per process, in DIR/history) and stress.json here. A DIR/history"
            " holding anything but an earlier run's history files is refused, never replaced."
        ),
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html", help="Also write the trace viewer of the history here (the commits up to the break)."
        ),
    ] = None,
    check: Annotated[
        Path | None,
        typer.Option(
            "--check",
            metavar="DIR",
            help="Run nothing: check the operation history in DIR (a run's --out folder, or history files"
            " any client wrote in the turncheck-history format); the run's parameters come from it.",
        ),
    ] = None,
    first_opens: FirstOpensOpt = 0,
) -> int:
    """Stress a real session store with writer processes and a compactor; check the history."""
    if check is not None:
        return _check_history(check, fmt, out, html)
    if first_opens:
        return _first_opens(store, writers, first_opens, fmt)
    return _stress(
        store, locking, writers, gap_ms, max_turns, seconds, dsn, db, overwrite_db, kill, kills, seed,
        fmt, quiet, out, html,
    )  # fmt: skip


def _check_history(check: Path, fmt: str, out: Path | None, html: Path | None) -> int:
    """``--check DIR``: the history a run or a client left, checked without running anything."""
    from turncheck.sim.stress.history import check_run
    from turncheck.sim.stress.history_format import read_history
    from turncheck.sim.stress.runner import run_of

    if html is not None:
        check_output_file(html, "--html")
    if out is not None:
        check_output_file(out / "stress.json", "--out")
    raw = run_of(read_history(check))
    return _show(raw, check_run(raw), fmt, out, html)


def _first_opens(store: str, writers: int, rounds: int, fmt: str) -> int:
    """``--first-opens ROUNDS``: concurrent first opens of fresh databases, each counted."""
    from turncheck.sim.stress.first_open import first_opens

    result = first_opens(store, writers, rounds)
    if fmt == "json":
        print_json(result.as_json(), ensure_ascii=True)
    else:
        print("\n".join(result.lines()))
    sys.stdout.flush()
    return 0 if result.ok else 1


def _stress(
    store: str, locking: str, writers: int, gap_ms: float, max_turns: int, seconds: float, dsn: str,
    db: Path | None, overwrite_db: bool, kill: bool, kills: int, seed: int, fmt: str, quiet: bool,
    out: Path | None, html: Path | None,
) -> int:  # fmt: skip
    """A stress run of writer processes and a compactor, then the check of its history."""
    from turncheck.sim.stress.history import check_run
    from turncheck.sim.stress.runner import StressParams, check_params
    from turncheck.sim.stress.stores import StoreSpec

    if db is not None:
        db = _db_path(db)
    scratch = Path(tempfile.mkdtemp(prefix="turncheck-stress-"))
    try:
        target = (
            dsn if (dsn or store == "postgres") else str(db if db is not None else scratch / "session.db")
        )
        params = StressParams(
            StoreSpec(store, target), locking, writers, gap_ms, max_turns, seconds, seed, kill, kills
        )
        check_params(params)
        _refuse_file_dsn(store, dsn)
        if db is not None:
            _check_fresh_db(db, overwrite_db)
        if dsn and not overwrite_db:
            _check_fresh_server(store, dsn)
        if html is not None:
            check_output_file(html, "--html")
        if out is not None and out.exists() and not out.is_dir():
            raise NotADirectoryError(20, "not a directory", str(out))
        if out is not None:
            check_output_file(out / "stress.json", "--out")
        folder = (out / "history") if out is not None else scratch / "history"
        _clear_history(folder)
        made = next((p for p in (folder, *folder.parents) if p.parent.exists()), folder)
        progress = silent if quiet else ProgressBar(f"stress {store} {locking}", "ms")
        raw = _run(params, folder, progress, store, made)
        report = check_run(raw)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return _show(raw, report, fmt, out, html)


def _show(raw: RawRun, report: StressReport, fmt: str, out: Path | None, html: Path | None) -> int:
    """Write ``stress.json`` and the viewer where asked, print the report; the exit code."""
    if out is not None:
        from turncheck.reports.viewer import write_page

        write_page(out / "stress.json", json.dumps(report.as_json(), indent=2) + "\n")
    if html is not None:
        from turncheck.reports.stress_view import stress_view
        from turncheck.reports.viewer import write_view_page

        write_view_page(
            stress_view(raw, report), html, f"turncheck stress: {report.store} · {report.locking}"
        )
    if fmt == "json":
        print_json(report.as_json(), ensure_ascii=True)
    else:
        print("\n".join(report_lines(report)))
        if html is not None:
            print(f"trace viewer: {html}")
    sys.stdout.flush()
    return 0 if report.ok else 1


def _db_path(db: Path) -> Path:
    """``--db`` as the absolute path SQLite will open. A name starting ``file:`` is refused: a
    SQLite built with ``SQLITE_USE_URI`` (Debian's is) reads it as a URI and opens another file
    than the one the fresh-database check looked at; an absolute path never starts so."""
    if str(db).startswith("file:"):
        raise BadParameter(f"--db {db}: a database is named by its path, not a SQLite URI (file:…)")
    return db.absolute()


def _refuse_file_dsn(store: str, dsn: str) -> None:
    """A SQLite database named by ``--dsn`` (a path for a file store, a ``sqlite…://`` URL for
    adk-database) would pass by the fresh-database check: it is named with ``--db`` only."""
    from turncheck.sim.stress.stores import STORES

    if (
        dsn
        and store in STORES
        and not STORES[store].needs_dsn
        and ("://" not in dsn or dsn.startswith("sqlite"))
    ):
        raise BadParameter(
            f"--store {store} --dsn {dsn}: a SQLite database is named with --db PATH (checked to be new or"
            " empty), never --dsn"
        )


_SQLITE_FILES = ("", "-wal", "-shm", "-journal")
"""A SQLite database's files: the database, then what SQLite keeps beside it (WAL mode's log and
shared memory, the rollback journal), each emptied or deleted by a run; for the database and for
the side-car ``DB.turncheck`` the library stores keep their lock and journal in."""


def _check_fresh_db(db: Path, overwrite: bool) -> None:
    """The stores empty the tables they stress, so ``--db`` (and the files SQLite and the
    side-car keep beside it, :data:`_SQLITE_FILES`) must be new or empty: a user's database is refused, never wiped,
    unless ``--overwrite-db`` says to. A symlink or a special file is refused either way."""
    for path in (Path(f"{base}{suffix}") for base in (db, f"{db}.turncheck") for suffix in _SQLITE_FILES):
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise BadParameter(f"--db {db}: {path} is a symlink or not a regular file; give a new file")
        if not overwrite and path.exists() and path.stat().st_size > 0:
            raise BadParameter(
                f"--db {db}: {path} exists and is not empty; give a new file (the run empties its tables),"
                " or pass --overwrite-db to empty them"
            )


def _check_fresh_server(store: str, dsn: str) -> None:
    """A PostgreSQL database (``postgres``, or ``adk-database`` given a ``postgresql`` URL) holding
    a table turncheck did not write is refused unless ``--overwrite-db`` says to: the run empties
    its ``tc_*`` tables, and a user's own ``tc_turns`` would be emptied with them."""
    from turncheck.sim.stress.postgres import foreign_tables

    if store == "postgres":
        foreign = foreign_tables(dsn)
    elif store == "adk-database" and dsn.startswith("postgres"):
        from turncheck.integrations.stores.adk_database import adk_table_of_ours, sidecar_dsn

        foreign = foreign_tables(sidecar_dsn(dsn), adk_table_of_ours)
    else:
        return
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        raise BadParameter(
            f"--dsn {dsn}: the database holds tables turncheck did not write ({', '.join(foreign[:3])}{more});"
            " give a new database (the run empties its tc_* tables), or pass --overwrite-db"
        )


def _clear_history(folder: Path) -> None:
    """Remove an earlier run's history from ``folder`` file by file; a folder holding anything
    else (or a symlink in its place) is refused, so no file turncheck did not write is deleted."""
    from turncheck.sim.stress.history_format import STORE_FILE
    from turncheck.sim.stress.runner import COMPACTOR

    if not folder.exists() and not folder.is_symlink():
        return
    history_file = re.compile(rf"(w\d+|{re.escape(COMPACTOR)})\.\d+\.jsonl|{re.escape(STORE_FILE)}")
    entries = list(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else None
    if entries is None or not all(
        e.is_file() and not e.is_symlink() and history_file.fullmatch(e.name) for e in entries
    ):
        raise BadParameter(f"--out: {folder} holds files turncheck did not write; give another --out")
    for e in entries:
        e.unlink()
    folder.rmdir()


def _run(
    params: StressParams, folder: Path, progress: Callable[[int, int], None], store: str, made: Path
) -> RawRun:
    """The stress run, its history in ``folder``: the store driver's own failure (a refused
    connection, a bad path) is one line, and a Ctrl-C, a full disk or any failure leaves no
    partial history behind: ``made``, the outermost folder this run creates (``folder`` itself,
    or the missing ``--out`` above it), is removed — all of it is this run's."""
    from turncheck.sim.stress.runner import run_stress

    try:
        return run_stress(params, folder, progress)
    except BaseException as exc:
        shutil.rmtree(made, ignore_errors=True)
        if not isinstance(exc, Exception):
            raise
        end_line(progress)
        if isinstance(exc, TurncheckError):
            raise
        raise StoreUnavailable(f"store {store}: {type(exc).__name__}: {exc}") from None


def register(app: typer.Typer) -> None:
    app.command(
        "stress", help="Stress a real session store (SQLite, PostgreSQL, ...) and check the history."
    )(stress_command)
