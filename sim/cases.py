"""Running the real-failure corpus: each case's red and green shapes, or a user's trimmer on it.

:func:`run_case` runs one :class:`~models.cases.Case` both ways — a model variant or parameters
explored over every interleaving (:func:`sim.explorer.explore`), a provider rule on its refused and
accepted histories, a product's log linted as ``lint`` lints it, a history replayed before every
request by the red and the green trimmer — and records what each broke of ``case.breaks``. A
case *behaves as recorded* when the red shape breaks every one of them and the green shape none.
:func:`run_against` replays every history case through a user's own trimmer instead: a case it
breaks is the real failure reproduced. A store case (:class:`~models.cases.StoreInput`) races its
scenario against its red and green reference stores (:func:`sim.store_cases.race_store`, which
``cases run --against store:…`` runs on a user's store).

Invariant: nothing here judges by anything but the registered checks (model properties,
:mod:`models.provider_rules`, :func:`models.lint.lint_events`,
:func:`models.per_request.check_value`), so a case cannot pass on a rule of its own; a bounded
search that did not finish is never read as green.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from turncheck.models.cases import (
    CASES,
    Case,
    HistoryInput,
    LogInput,
    ModelInput,
    RaceInput,
    RuleInput,
    StoreInput,
    StressInput,
)
from turncheck.models.catalog import build_model
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import TurncheckError
from turncheck.models.events import Event, read_jsonl
from turncheck.models.lint import lint_events
from turncheck.models.per_request import check_value, replay_requests
from turncheck.models.projector import Strategy
from turncheck.models.provider_rules import PROVIDERS, events_of, provider_findings
from turncheck.sim.explorer import explore

Status = Literal["as recorded", "differs", "skipped"]


@dataclass(frozen=True)
class CaseRun:
    """What each shape of ``case`` broke of its ``breaks`` (``red``, ``green``) and the verdict;
    ``skipped`` says why the case could not run here (a library absent or at another version)."""

    case: Case
    red: tuple[str, ...]
    green: tuple[str, ...]
    skipped: str | None = None

    @property
    def status(self) -> Status:
        if self.skipped is not None:
            return "skipped"
        return "as recorded" if set(self.red) == set(self.case.breaks) and not self.green else "differs"


def unavailable(spec: HistoryInput) -> str | None:
    """Why a history case cannot run here: a ``peer:`` side's library or bridge is absent, or a
    pinned library is installed at another version than the one the case was recorded on."""
    from importlib.metadata import PackageNotFoundError, version

    from turncheck.models.peer import PEERS

    for side in (spec.red, spec.green):
        if side.startswith("peer:") and (why := PEERS[side].missing()) is not None:
            return why
    for pin in spec.pinned:
        dist, _, wanted = pin.partition("==")
        try:
            found = version(dist)
        except PackageNotFoundError:
            return f"{dist} is not installed (the case was recorded on {pin})"
        if found != wanted:
            return f"{dist} {found} is installed; the case was recorded on {pin}"
    return None


@dataclass(frozen=True)
class Reproduction:
    """A history case run through a user's trimmer: what it broke — the case's own checks, and
    the rules of the API the history's format is named after (``openai-chat result-not-next``)
    — and the first request (its index and the events before it) that broke one; ``broke``
    empty when none did. ``longest`` is the most events one session of the history holds as
    written."""

    case: Case
    broke: tuple[str, ...]
    request: int | None = None
    after_events: int | None = None
    longest: int = 0
    replayed: int = 0
    """The most events one session was replayed to (:func:`continued`)."""

    @property
    def continued(self) -> bool:
        """True when the first offending request lies past the history as written, in the
        session continued by :func:`continued`."""
        return self.after_events is not None and self.after_events > self.longest

    @property
    def reproduced(self) -> tuple[str, ...]:
        """The checks (or the API rule) of the thread's own report the trimmer broke."""
        return tuple(
            b for b in self.broke if b in self.case.breaks or b.partition(" ")[2] in self.case.breaks
        )

    @property
    def refused(self) -> tuple[str, ...]:
        """The API's rules a window broke besides (``provider rule-id``)."""
        return tuple(b for b in self.broke if b not in self.reproduced)


def case_events(file: str, fmt: str | None) -> list[Event]:
    """A case's file of ``models/corpus/data``, read by its format's importer (our JSONL when
    ``fmt`` is None)."""
    from turncheck.models.corpus import case_file
    from turncheck.models.importers import import_events

    path = case_file(file)
    return import_events(fmt, path) if fmt is not None else read_jsonl(path)


def history_events(spec: HistoryInput) -> list[Event]:
    """The history of a history case."""
    return case_events(spec.file, spec.fmt)


def _log_breaks(spec: LogInput, file: str, breaks: Sequence[str]) -> tuple[str, ...]:
    """The problems of ``breaks`` the log ``file`` shows as ``lint --provider`` finds them: its
    structural checks (a summary over an open call, a dangling call) and the provider's rules."""
    report = lint_events([(0, e) for e in case_events(file, spec.fmt)], keep=0, provider=spec.provider)
    return tuple(b for b in breaks if report.counts.get(b))


def replay_breaks(
    events: Sequence[Event],
    spec: HistoryInput,
    strategy: str | Strategy,
    checks: Sequence[str],
    provider: str | None = None,
    first: bool = False,
    written: dict[str, int] | None = None,
) -> tuple[tuple[str, ...], int | None, int | None]:
    """The ``checks`` some request's window breaks when ``strategy`` trims each session of
    ``events`` before every model request, and the first offending request (index, end); with
    ``provider``, each rule of that API a window breaks as well, named ``provider rule-id``.
    ``first``: stop at the first offending request, its breaks the answer (a reproduction needs
    one request; a user's trimmer is not made to trim the rest of a long session for it).
    ``written``: a session's length as written, before :func:`continued` repeated it — its
    requests are projected as :func:`sampled` chooses; a session not named, every request."""
    broke: dict[str, None] = {}
    at: tuple[int, int] | None = None
    sessions: dict[str, list[Event]] = {}
    for e in events:
        sessions.setdefault(e.session, []).append(e)
    for name, evs in sessions.items():
        n = (written or {}).get(name)
        chosen = None if n is None else sampled(n, len(evs))
        for req in replay_requests(name, evs, spec.budget, strategy, EstimateCost(), chosen):
            bad = [c for c in checks if check_value(req.window, c)]
            if provider is not None:
                bad += [f"{provider} {rule}" for rule, _ in provider_findings(provider, req.window.events, sent=True)]
            if bad and at is None:
                at = (req.index, req.end)
            broke.update(dict.fromkeys(bad))
            if bad and first:
                return tuple(broke), req.index, req.end
    return tuple(broke), *(at or (None, None))


def _model_breaks(spec: ModelInput, shape: str, breaks: Sequence[str]) -> tuple[str, ...]:
    result = explore(build_model(spec.model, spec.params(shape)))
    if not result.exhausted:
        raise TurncheckError(f"model {spec.model} {shape}: search stopped at {result.bound}")
    violated = {p.name for p in result.violations}
    return tuple(b for b in breaks if b in violated)


def _rule_breaks(spec: RuleInput, refused: bool) -> tuple[str, ...]:
    rule = next(r for r in PROVIDERS[spec.provider] if r.id == spec.rule)
    return (rule.id,) if rule.check(events_of(rule.refused if refused else rule.clean)) else ()


def _race_breaks(spec: RaceInput, pins: Sequence[str], install: bool) -> tuple[str, ...]:
    """The race test's name when ``turncheck race`` fails it against ``pins``, else nothing;
    :class:`~sim.case_libraries.Unavailable` when the releases or the test cannot be had, or
    the race ends in neither verdict."""
    import os
    import subprocess
    import sys

    from turncheck.sim.case_libraries import Unavailable, library_path, repository_file

    file, _, test = spec.test.partition(":")
    path, where = repository_file(file), library_path(pins, install)
    env = dict(os.environ)
    if where is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(where), env.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "turncheck", "race", f"{path}:{test}", "-n", str(spec.schedules), "-q"],
                          capture_output=True, text=True, env=env, timeout=900)  # fmt: skip
    if proc.returncode not in (0, 1):
        raise Unavailable(
            f"turncheck race exited {proc.returncode}: {(proc.stderr.strip().splitlines() or [''])[-1]}"
        )
    return (test,) if proc.returncode == 1 else ()


def _first_open_breaks(spec: StressInput, store: str) -> tuple[str, ...]:
    """``first-open`` when a concurrent first open of ``store`` failed, else nothing; a store of
    ``examples/stores`` is :class:`~sim.case_libraries.Unavailable` outside a checkout."""
    from turncheck.sim.case_libraries import repository_file
    from turncheck.sim.stress.first_open import first_opens

    if store.startswith("examples/"):
        file, _, cls = store.partition(":")
        store = f"{repository_file(file)}:{cls}"
    return () if first_opens(store, spec.openers, spec.rounds).ok else ("first-open",)


def run_case(case: Case, install: bool = False) -> CaseRun:
    """Both shapes of ``case``, each judged by the registered checks; ``install`` lets a race
    case install the releases it pins into the cache (:mod:`sim.case_libraries`)."""
    spec = case.input
    if isinstance(spec, StoreInput):
        return _store_run(case, spec)
    if isinstance(spec, RaceInput):
        from turncheck.sim.case_libraries import Unavailable

        try:
            return CaseRun(
                case, _race_breaks(spec, spec.red, install), _race_breaks(spec, spec.green, install)
            )
        except Unavailable as exc:
            return CaseRun(case, (), (), str(exc))
    if isinstance(spec, StressInput):
        from turncheck.sim.case_libraries import Unavailable

        try:
            return CaseRun(case, _first_open_breaks(spec, spec.red), _first_open_breaks(spec, spec.green))
        except Unavailable as exc:
            return CaseRun(case, (), (), str(exc))
    if isinstance(spec, ModelInput):
        red, green = (_model_breaks(spec, v, case.breaks) for v in (spec.red, spec.green))
    elif isinstance(spec, RuleInput):
        red, green = _rule_breaks(spec, True), _rule_breaks(spec, False)
    elif isinstance(spec, LogInput):
        red, green = _log_breaks(spec, spec.red, case.breaks), _log_breaks(spec, spec.green, case.breaks)
    else:
        if (reason := unavailable(spec)) is not None:
            return CaseRun(case, (), (), reason)
        events = history_events(spec)
        red = replay_breaks(events, spec, spec.red, case.breaks)[0]
        green = replay_breaks(events, spec, spec.green, case.breaks)[0]
    return CaseRun(case, red, green)


def _store_run(case: Case, spec: StoreInput) -> CaseRun:
    """A store case's scenario raced against its red and its green reference store; skipped
    when a pinned library is absent or at another version than recorded."""
    from turncheck.sim.store_cases import library_versions, race_store

    why, note = library_versions(spec.pinned)
    if why is not None or note:
        return CaseRun(case, (), (), why or note)
    red, green = (race_store(case, store) for store in (spec.red, spec.green))
    return CaseRun(case, case.breaks if red.reproduced else (), case.breaks if green.reproduced else ())


def store_cases() -> tuple[Case, ...]:
    """The cases a session store can be raced on (their input a store scenario)."""
    return tuple(c for c in CASES.values() if isinstance(c.input, StoreInput))


def history_cases() -> tuple[Case, ...]:
    """The cases a trimmer can be run on: their input a history, or a log whose thread reports
    a trimmer's window (:attr:`~models.cases.LogInput.trimmed`: its green log is the history)."""
    return tuple(
        c for c in CASES.values()
        if isinstance(c.input, HistoryInput) or (isinstance(c.input, LogInput) and c.input.trimmed is not None)
    )  # fmt: skip


def run_against(case: Case, strategy: str | Strategy) -> Reproduction:
    """``strategy`` (a user's trimmer, as ``--strategy`` takes it) on a history case: each
    request's window judged by the case's checks and by every rule of the API its format is
    named after (:attr:`~models.cases.HistoryInput.provider`), so a window the API refuses for
    another reason than the thread's is a reproduction too. Each session is replayed as
    written and then :func:`continued`, so a trimmer that keeps more messages than the written
    history holds is still made to cut it."""
    spec, checks = case.input, case.breaks
    if isinstance(spec, LogInput):  # a trimmer's window: the green log is the whole history
        assert spec.trimmed is not None  # history_cases() chose it
        provider: str | None = spec.provider
        events, checks = case_events(spec.green, spec.fmt), ()
        spec = HistoryInput(spec.green, spec.fmt, spec.trimmed, "", "")
    else:
        assert isinstance(spec, HistoryInput)  # history_cases() chose it
        events, provider = history_events(spec), spec.provider
    sessions: dict[str, list[Event]] = {}
    for e in events:
        sessions.setdefault(e.session, []).append(e)
    long = [continued(evs) for evs in sessions.values()]
    lengths = {name: len(evs) for name, evs in sessions.items()}
    broke, request, end = replay_breaks([e for evs in long for e in evs], spec, strategy, checks, provider, True,
                                        lengths)  # fmt: skip
    written = max(lengths.values(), default=0)
    return Reproduction(case, broke, request, end, written, max(map(len, long), default=0))


LONG_SESSION = 500
"""Events each session of a history case is continued to under ``--against``."""


COPIES = frozenset({1, 2, 3, 4, 6, 8, 12, 16})
"""The copies of a continued session (:func:`continued`; copy 0 is the history as written) whose
requests ``--against`` projects, with the last copy; the others only grow the prompt."""


def sampled(written: int, total: int) -> Callable[[int], bool]:
    """Which requests of a session continued from ``written`` events to ``total`` are projected:
    each one of the history as written, and each one of a copy in :data:`COPIES` or the last copy.

    A copy repeats the written turns, so a window that keeps the last N messages, or a budget's
    worth, has the same shape at the same point of any copy from the one where it starts to cut
    on: the last copy meets every such cut up to its own length, the sampled copies those that
    start early, at a tenth of the trimmer calls of the whole continuation (a quadratic trimmer
    of a user's made ``cases run --against`` run for minutes)."""
    last = (total - 1) // written

    def at(end: int) -> bool:
        copy = (end - 1) // written
        return copy == 0 or copy in COPIES or copy == last

    return at


def continued(events: Sequence[Event], at_least: int = LONG_SESSION) -> list[Event]:
    """One session's events as written, then its turns again and again — each copy's seqs,
    turns and call ids fresh (``call~k``), a summary's span moved with it — until it holds at
    least ``at_least`` events: the conversation going on as the reported one did, so a trimmer
    that keeps more than the written history holds still meets the thread's shape when it cuts.
    The requests of the history as written come first, unchanged."""
    if not events:
        return []
    span = max(e.seq for e in events) - min(e.seq for e in events) + 1
    turns = max(e.turn for e in events) - min(e.turn for e in events) + 1
    out: list[Event] = list(events)
    k = 0
    while len(out) < at_least:
        k += 1
        out += [_copy(e, k, k * span, k * turns) for e in events]
    return out


def _copy(e: Event, k: int, seqs: int, turns: int) -> Event:
    def fresh(name: str | None) -> str | None:
        return None if name is None else f"{name}~{k}"

    covers = None if e.covers is None else (e.covers[0] + seqs, e.covers[1] + seqs)
    return replace(e, seq=e.seq + seqs, turn=e.turn + turns, call_id=fresh(e.call_id), covers=covers,
                   tied_to=fresh(e.tied_to), caller=fresh(e.caller))  # fmt: skip
