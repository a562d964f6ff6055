"""``turncheck cases``: the real-failure corpus — ``list``, ``show NAME``, ``run [--against STRATEGY]``.

``list`` prints every case (thread, date, state, class, input, what it breaks) and then the
threads recorded but not expressible yet, with what each waits on; its last line counts both.
``run`` runs every case's red and green shapes and exits 0 only when each behaves as recorded
(red breaks what the report shows, green none of it); with ``--against`` it runs the user's own
trimmer on every history case instead and exits 1 naming the threads whose failure reproduces;
``--against store:package.module:Factory`` races the user's session store (openai-agents'
``Session`` protocol) on every store case instead, and prints each reproduced failure's
interleaving (the tasks and awaits that lose the write) and schedule.
Progress goes to stderr unless ``--quiet``; stdout carries the table (or JSON) only.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from turncheck.cli.options import FormatOpt, QuietAlreadyOpt, QuietOpt
from turncheck.cli.stdout_json import print_json
from turncheck.models.cases import STORE_PREFIX

if TYPE_CHECKING:
    from turncheck.models.cases import Case


DATA = "models/corpus/data/"
"""Where a case's command names its file: the corpus's folder, from a checkout's root."""
SHIPPED = re.compile(r"(?<![\w/.-])(examples/(?:races|stores)/[\w-]+\.py)(?=:)")
"""A repository file a case's command names (``examples/races/FILE.py:test``,
``examples/stores/FILE.py:Class``), which the wheel ships as ``turncheck/examples/…``."""


def runnable(command: str) -> str:
    """``command`` as it runs from the working directory: a case's file is named
    ``models/corpus/data/NAME`` where that file is (the root of turncheck's checkout), and by the
    installed package's own folder anywhere else (a user's project, where ``cases list`` printed
    ``turncheck project -H models/corpus/data/…`` and the line stopped at "no such file"); a race
    test or store of the repository (:data:`SHIPPED`) likewise, the wheel shipping its copy."""
    import shlex
    from pathlib import Path

    from turncheck.models.corpus import case_file
    from turncheck.sim.case_libraries import Unavailable, repository_file

    def located(found: re.Match[str]) -> str:
        name = found.group(1)
        return found.group(0) if Path(DATA, name).is_file() else shlex.quote(str(case_file(name)))

    def shipped(found: re.Match[str]) -> str:
        relative = found.group(1)
        if Path(relative).is_file():
            return relative
        try:
            return shlex.quote(str(repository_file(relative)))
        except Unavailable:  # cases run says so when it runs the case
            return relative

    command = re.sub(re.escape(DATA) + r"(\S+)", located, command)
    return re.sub(SHIPPED, shipped, command)


def _case_row(case: Case) -> dict[str, Any]:
    spec = case.input
    return {"name": case.name, "source": case.source, "also": list(case.also), "date": case.date,
            "state": case.state, "class": case.cls, "input": spec.kind, "breaks": list(case.breaks),
            "finding": case.finding, "release": case.release, "red": runnable(spec.command("red")),
            "green": runnable(spec.command("green"))}  # fmt: skip


def _table(cols: list[str], rows: list[list[str]]) -> None:
    from turncheck.reports.tables import markdown_rows

    sys.stdout.write("\n".join(markdown_rows(cols, rows)) + "\n")


def list_command(fmt: FormatOpt = "table", quiet: QuietAlreadyOpt = False) -> None:
    """Every case, then every thread not expressible yet; a last line counting both."""
    from turncheck.models.cases import CASES, PENDING, case_threads

    cases, pending = list(CASES.values()), list(PENDING.values())
    count = f"{len(cases)} cases from {len(case_threads())} threads; {len(pending)} threads pending"
    if fmt == "json":
        for case in cases:
            print_json({"case": _case_row(case)}, separators=(",", ":"))
        for p in pending:
            print_json({"pending": {"source": p.source, "waits_on": p.waits_on, "shows": p.shows}},
                       separators=(",", ":"))  # fmt: skip
        return
    _table(["case", "thread", "date", "state", "class", "caught by", "red shape"],
           [[c.name, c.source, c.date, c.state, c.cls, ", ".join(c.breaks), runnable(c.input.command("red"))]
            for c in cases])  # fmt: skip
    print()
    _table(["pending thread", "waits on"], [[p.source, p.waits_on] for p in pending])
    print(count)


def show_command(
    name: Annotated[str, typer.Argument(help="A case name (turncheck cases list).")],
    quiet: QuietAlreadyOpt = False,
) -> None:
    """One case in full: its thread, input, what it breaks and the commands of both shapes."""
    from turncheck.models.cases import CASES

    row = _case_row(CASES[name])
    for key, value in row.items():
        print(f"{key + ':':9} {', '.join(value) if isinstance(value, list) else value}")


def run_command(
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            help="Run your trimmer (messages:FILE.py:fn, exec:'CMD', package.module:fn, a strategy id) "
            "on every history case, or race your session store (store:package.module:Factory, called "
            "with a session id; openai-agents' Session protocol) on every store case; exit 1 when a "
            "real failure reproduces.",
        ),
    ] = None,
    install: Annotated[
        bool,
        typer.Option(
            "--install",
            help="Install the library releases a race case pins (pip --no-deps, into TURNCHECK_CACHE) "
            "when absent; without it such a case is skipped, saying so.",
        ),
    ] = False,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
) -> None:
    """Run every case (red and green), or your trimmer on every history case."""
    from turncheck.cli.progress import end_line, progress_for
    from turncheck.models.cases import CASES
    from turncheck.models.projector import resolve_strategy
    from turncheck.sim.cases import history_cases, run_against, run_case

    if against is not None and against.startswith(STORE_PREFIX):
        _run_against_store(against, fmt, quiet)
        return
    if against is not None:
        resolve_strategy(against)  # refused before any work, one line
    chosen = history_cases() if against is not None else tuple(CASES.values())
    progress = progress_for("cases run", quiet, "cases")
    results: list[Any] = []
    try:
        for case in chosen:
            results.append(run_against(case, against) if against is not None else run_case(case, install))
            progress(len(results), len(chosen))
    except BaseException:
        end_line(progress)
        raise
    if against is not None:
        _print_against(results, against, fmt)
    else:
        _print_runs(results, fmt)


def _print_runs(runs: list[Any], fmt: str) -> None:
    differs = [r for r in runs if r.status == "differs"]
    skipped = [r for r in runs if r.status == "skipped"]
    if fmt == "json":
        for r in runs:
            print_json({"case": r.case.name, "source": r.case.source, "breaks": list(r.case.breaks),
                        "red": list(r.red), "green": list(r.green), "status": r.status, "skipped": r.skipped},
                       separators=(",", ":"))  # fmt: skip
    else:
        _table(["case", "thread", "red breaks", "green breaks", "status"],
               [[r.case.name, r.case.source, ", ".join(r.red) or "-", ", ".join(r.green) or "-",
                 r.status if r.skipped is None else f"skipped: {r.skipped}"] for r in runs])  # fmt: skip
        ran = len(runs) - len(skipped)
        if differs:
            print(f"FAIL: {len(differs)} of {ran} cases run differ from the record: "
                  f"{', '.join(r.case.name for r in differs)}")  # fmt: skip
        else:
            print(f"OK: all {ran} cases run behave as recorded (red breaks what the thread reports, green none "
                  f"of it); {len(skipped)} skipped, each with its reason; pending threads are not run")  # fmt: skip
    if differs:
        raise typer.Exit(1)


def _verdict(r: Any) -> str:
    """What a trimmer did on one history case: the thread's failure reproduced, windows the
    history's API refuses for another rule, or neither."""
    said = (["reproduces: " + ", ".join(r.reproduced)] if r.reproduced else []) + (
        ["the API refuses: " + ", ".join(r.refused)] if r.refused else []
    )
    return "; ".join(said) or "holds"


def _first(r: Any) -> str:
    """The first offending request, and whether it lies past the history as written."""
    if r.request is None:
        return "-"
    where = f"; the session continued past its {r.longest} written" if r.continued else ""
    return f"{r.request} (after {r.after_events} events{where})"


def _print_against(reps: list[Any], against: str, fmt: str) -> None:
    from turncheck.sim.cases import COPIES

    hit = [r for r in reps if r.broke]
    if fmt == "json":
        for r in reps:
            print_json({"case": r.case.name, "source": r.case.source, "against": against, "broke": list(r.broke),
                        "reproduced": list(r.reproduced), "refused": list(r.refused), "request": r.request,
                        "after_events": r.after_events, "history_events": r.longest,
                        "replayed_events": r.replayed}, separators=(",", ":"))  # fmt: skip
    else:
        _table(["case", "thread", "checks", "your trimmer", "first request"],
               [[r.case.name, r.case.source, ", ".join(r.case.breaks), _verdict(r),
                 _first(r)] for r in reps])  # fmt: skip
        if hit:
            threads = ", ".join(dict.fromkeys(r.case.source for r in hit))
            print(f"FAIL: {against} breaks {len(hit)} of {len(reps)} history cases (the thread's failure, or a rule "
                  f"of the history's API): {threads}")  # fmt: skip
        else:
            longest = max((r.longest for r in reps), default=0)
            replayed = min((r.replayed for r in reps), default=0)
            copies = ", ".join(map(str, sorted(COPIES)))
            print(f"OK: {against} reproduces none of the {len(reps)} history cases, each window also checked by "
                  f"its history's API rules; each history (the longest holds {longest} events) was replayed as "
                  f"written and continued to at least {replayed} events, its turns repeated with fresh call ids: a "
                  "trimmer keeping more than that sends it whole; your trimmer ran before every request of the "
                  f"history as written, of its copies {copies} and of its last copy (a cut of the last N messages "
                  "or of a budget has the same shape in every copy from the one where it starts to cut), not of "
                  "the other copies; the model, rule, store and other log cases do not run against a trimmer, and "
                  "`turncheck check projector` tries every small history")  # fmt: skip
    if hit:
        raise typer.Exit(1)


def _run_against_store(store: str, fmt: str, quiet: bool) -> None:
    """Every store case raced against the user's store (loaded and checked first, one line
    when it cannot be); exit 1 naming the threads whose failure reproduces."""
    from turncheck.cli.progress import end_line, progress_for
    from turncheck.sim.cases import store_cases
    from turncheck.sim.store_cases import check_store, load_store, race_store

    factory = load_store(store)
    check_store(factory)
    chosen = store_cases()
    progress = progress_for("cases run", quiet, "store cases")
    runs: list[Any] = []
    try:
        for case in chosen:
            runs.append(race_store(case, store, factory))
            progress(len(runs), len(chosen))
    except BaseException:
        end_line(progress)
        raise
    _print_store_runs(runs, store, fmt)


def _print_store_runs(runs: list[Any], store: str, fmt: str) -> None:
    hit = [r for r in runs if r.reproduced]
    ran = [r for r in runs if r.skipped is None]
    if fmt == "json":
        for r in runs:
            print_json({"case": r.case.name, "source": r.case.source, "against": store, "reproduced": r.reproduced,
                        "failure": list(r.report[:1]), "schedule": r.token, "explored": r.explored,
                        "skipped": r.skipped}, separators=(",", ":"))  # fmt: skip
    else:
        _table(["case", "thread", "checks", "your store", "explored"],
               [[r.case.name, r.case.source, ", ".join(r.case.breaks),
                 f"skipped: {r.skipped}" if r.skipped else "reproduces" if r.reproduced else "holds",
                 r.explored or "-"] for r in runs])  # fmt: skip
        for r in hit:
            print(f"\n{r.case.name} ({', '.join(r.case.threads)}):")
            print("\n".join(r.report))
        if hit:
            threads = ", ".join(dict.fromkeys(r.case.source for r in hit))
            print(f"FAIL: {store} reproduces {len(hit)} of {len(ran)} store failures run: {threads}")
        else:
            print(f"OK: {store} reproduces none of the {len(ran)} store cases run ({len(runs) - len(ran)} skipped, "
                  "each with its reason); a bounded search, seed 0 — not every schedule or fault; the history, "
                  "model and rule cases do not run against a store")  # fmt: skip
    if hit:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    from turncheck.cli.app import print_help_if_bare

    cases_app = typer.Typer(
        help="The real-failure corpus: each reported failure a case (list, show, run, run --against).",
        invoke_without_command=True,
        callback=print_help_if_bare,
    )
    cases_app.command("list", help="List every case and every thread pending, with what it waits on.")(
        list_command
    )
    cases_app.command("show", help="Show one case: thread, input, what it breaks, both commands.")(
        show_command
    )
    cases_app.command(
        "run", help="Run every case (exit 0 only when each behaves as recorded), or --against your trimmer."
    )(run_command)
    app.add_typer(cases_app, name="cases")
