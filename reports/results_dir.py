"""What a results directory holds: scenario result files and counterexample traces, read once.

``turncheck report`` and ``turncheck plot`` draw only from files — a result file
(``turncheck-result/1``, written by ``scenario``, ``sweep`` or ``demo``) or a counterexample trace
(``turncheck-trace/1``, written by ``check``) — never from a re-run. This module finds them under
a directory (recursively, in sorted path order so a page is the same for the same files), reads
each one, and refuses a file that is not what it claims with one line naming the file. JSON files
of other kinds are listed as skipped, not errors: a results directory may hold anything else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turncheck.models.errors import TurncheckError, read_json
from turncheck.reports.tables import RESULT_FORMAT, result_from_json
from turncheck.scenarios.base import ScenarioResult
from turncheck.sim.trace import FORMAT as TRACE_FORMAT
from turncheck.sim.trace import Trace, trace_from_json


class ResultFileError(TurncheckError, ValueError):
    """A file that should be a turncheck result or trace but cannot be read as one."""


class WrongResultKind(TurncheckError, ValueError):
    """A result file of another scenario than the one a plot draws (e.g. locking for peaks)."""


@dataclass(frozen=True)
class ResultFile:
    """One scenario result and the file it came from (``path`` is shown, never re-read)."""

    path: Path
    result: ScenarioResult

    @property
    def scenario(self) -> str:
        return self.result.scenario


@dataclass(frozen=True)
class TraceFile:
    """One counterexample trace and the file it came from."""

    path: Path
    trace: Trace


@dataclass(frozen=True)
class ResultsDir:
    """Everything readable under ``root``: results, traces, and the JSON files passed over."""

    root: Path
    results: tuple[ResultFile, ...]
    traces: tuple[TraceFile, ...]
    skipped: tuple[tuple[Path, str], ...]

    def of(self, *scenarios: str) -> list[ResultFile]:
        """The results of the named scenarios, in path order."""
        return [r for r in self.results if r.scenario in scenarios]

    def relative(self, path: Path) -> str:
        """``path`` as shown on a page: relative to the root when it is inside it."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def result_from_object(obj: Any, where: str) -> ScenarioResult:
    """A decoded result object as a :class:`ScenarioResult`; any defect is one line naming ``where``."""
    if not isinstance(obj, dict) or obj.get("format") != RESULT_FORMAT:
        found = obj.get("format") if isinstance(obj, dict) else type(obj).__name__
        raise ResultFileError(
            f"{where}: not a turncheck result file (format {found!r}, expected {RESULT_FORMAT!r})"
        )
    try:
        return result_from_json(obj)
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultFileError(f"{where}: damaged result file ({type(exc).__name__}: {exc})") from None


def load_result(path: str | Path) -> ScenarioResult:
    """Read one result file written by ``write_result`` (``NAME.json``).

    Raises
    ------
    ResultFileError
        No such file, not JSON, or JSON of another kind (a trace, a sweep's ``.jsonl`` line …).
    """
    p = Path(path)
    if not p.is_file():
        raise ResultFileError(f"{p}: no such result file")
    return result_from_object(read_json(p, ResultFileError), str(p))


def require_scenario(result: ScenarioResult, accepted: Sequence[str], plot: str, where: str = "") -> None:
    """Refuse a result of another scenario, naming the plot, what it needs and what it got."""
    if result.scenario not in accepted:
        origin = f" ({where})" if where else ""
        raise WrongResultKind(
            f"plot {plot} needs a result of {' or '.join(accepted)}, got {result.scenario!r}{origin}"
        )


def _json_files(root: Path) -> Iterable[Path]:
    return sorted(p for p in root.rglob("*.json") if p.is_file())


def file_kind(path: Path) -> str | None:
    """``"result"`` or ``"trace"`` for a JSON file of either format (a scenario's attachments are
    both: measured results and traces beside its own), else None."""
    if path.suffix != ".json":
        return None
    obj = read_json(path, ResultFileError)
    kind = obj.get("format") if isinstance(obj, dict) else None
    return {RESULT_FORMAT: "result", TRACE_FORMAT: "trace"}.get(kind) if isinstance(kind, str) else None


def read_results_dir(root: str | Path) -> ResultsDir:
    """Read every result and trace under ``root``.

    A ``.json`` file whose ``format`` is neither a result's nor a trace's is skipped with a reason;
    one that claims to be a result or trace but is damaged is an error (a page must not silently
    leave a run out).

    Raises
    ------
    ResultFileError
        ``root`` is missing or not a directory, or a claimed result/trace file is damaged.
    """
    base = Path(root)
    if not base.exists():
        raise ResultFileError(f"{base}: no such directory")
    if not base.is_dir():
        raise ResultFileError(f"{base}: not a directory")
    results: list[ResultFile] = []
    traces: list[TraceFile] = []
    skipped: list[tuple[Path, str]] = []
    for path in _json_files(base):
        try:
            obj = read_json(path, ResultFileError)
        except ResultFileError as exc:
            skipped.append((path, str(exc).removeprefix(f"{path}: ")))
            continue
        kind = obj.get("format") if isinstance(obj, dict) else None
        if kind == RESULT_FORMAT:
            results.append(ResultFile(path, result_from_object(obj, str(path))))
        elif kind == TRACE_FORMAT:
            traces.append(TraceFile(path, trace_from_json(obj, str(path))))
        else:
            skipped.append((path, f"not a turncheck result or trace (format {kind!r})"))
    return ResultsDir(base, tuple(results), tuple(traces), tuple(skipped))


__all__ = [
    "ResultFile",
    "ResultFileError",
    "ResultsDir",
    "TraceFile",
    "WrongResultKind",
    "load_result",
    "read_results_dir",
    "require_scenario",
    "result_from_object",
]
