"""The turncheck pytest plugin (entry point ``pytest11``): the ``check_projector`` fixture and
the ``race`` marker.

Installed with turncheck; pytest loads it by itself. A test asks for the fixture and calls it
with its projector; the check runs under the active Hypothesis settings profile::

    def test_my_trimmer(check_projector):
        check_projector(my_trimmer, checks=["orphanRes", "overBudget"])

The marker ``@pytest.mark.turncheck(checks=[...], cost=...)`` sets the fixture's defaults for
one test (a keyword given to the call still wins).

``@pytest.mark.race(schedules=100, strategy="random", depth=2, seed=0, schedule=None,
max_steps=100_000, max_seconds=60.0, faults=False, fault_error=InjectedFault)`` on an ``async def`` test runs it as ``turncheck race`` does — on a plain ``def`` test, its threads and
their I/O calls (:mod:`turncheck.sim.race.threads`) — under controlled schedules, failing at
the first one that fails with its shrunk interleaving and token; ``schedule="TOKEN"`` replays
that one; ``faults=True`` then injects faults as ``turncheck race --faults`` does
(``fault_error``: the exception class an injected error raises, or its name as ``--fault-error``
takes it, ``"TimeoutError"`` or ``"pkg.mod:Error"``; ``fault_kinds``: which of
``"error,cancel,crash"`` it injects). Its fixtures are made once and given to every schedule, so a test builds the state it
races inside its body; a failure after the first schedule names the fixtures the schedules shared.

Importing the plugin is cheap: turncheck's checking code is imported when the fixture is first
used, the race scheduler when a marked test runs.
"""

from __future__ import annotations

import inspect
import shlex
from collections.abc import Callable
from typing import Any

import pytest

RACE_OPTIONS = ("schedules", "strategy", "depth", "seed", "schedule", "max_steps", "max_seconds", "faults",
                "fault_error", "fault_kinds")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "turncheck(checks=..., cost=...): defaults for the check_projector fixture in this test"
    )
    config.addinivalue_line(
        "markers",
        "race(schedules=100, strategy='random', depth=2, seed=0, schedule=None): run this async test "
        "(or this def test's threads) under controlled schedules (turncheck race)",
    )
    if not config.pluginmanager.has_plugin("turncheck-race"):
        config.pluginmanager.register(RaceRunner(), "turncheck-race")


def race_test_function(pyfuncitem: pytest.Function) -> Callable[..., Any] | None:
    """The ``async def`` a race-marked item runs: its ``obj``, or — where pytest-asyncio wrapped
    it in a synchronous runner (``functools.wraps``, as its auto mode does) — the first
    coroutine function down the ``__wrapped__`` chain; None when there is none."""
    func: Any = pyfuncitem.obj
    while func is not None:
        if inspect.iscoroutinefunction(func):
            return func  # type: ignore[no-any-return]
        func = getattr(func, "__wrapped__", None)
    return None


class RaceRunner:
    """Runs ``race``-marked tests. Registered in :func:`pytest_configure`, after every
    entry-point plugin, so that among the ``tryfirst`` implementations of
    ``pytest_pyfunc_call`` (anyio's plugin has one) pluggy calls ours first: a marked test is
    never run once under a plain event loop and reported passed."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        marker = pyfuncitem.get_closest_marker("race")
        return None if marker is None else run_race(pyfuncitem, marker)


def run_race(pyfuncitem: pytest.Function, marker: pytest.Mark) -> bool:
    """Run a ``race``-marked ``async def`` or ``def`` test under controlled schedules (see the module)."""
    test = race_test_function(pyfuncitem)
    if test is None and inspect.isfunction(pyfuncitem.obj):
        test = pyfuncitem.obj  # a def test: its threads run under the scheduler
    if test is None:
        pytest.fail("@pytest.mark.race needs an async def or a def test", pytrace=False)
    backend: Any = pyfuncitem.funcargs.get("anyio_backend")  # a name, or (name, options)
    name = backend if isinstance(backend, str) or backend is None else backend[0]
    if name not in (None, "asyncio"):
        pytest.skip(f"@pytest.mark.race explores asyncio schedules; this run's anyio_backend is {name!r}")
    unknown = sorted(set(marker.kwargs) - set(RACE_OPTIONS))
    if unknown or marker.args:
        pytest.fail(f"@pytest.mark.race takes only {', '.join(RACE_OPTIONS)} (got {unknown or marker.args})",
                    pytrace=False)  # fmt: skip
    from turncheck.models.errors import TurncheckError
    from turncheck.sim.race.explore import explore, failure_report, run_schedule
    from turncheck.sim.race.fault_search import fault_kinds, search_faults
    from turncheck.sim.race.schedule import parse_token

    options = dict(marker.kwargs)
    token, max_steps = options.pop("schedule", None), options.pop("max_steps", 100_000)
    max_seconds = options.pop("max_seconds", 60.0)
    faults, named = options.pop("faults", False), options.pop("fault_error", None)
    args = {name: pyfuncitem.funcargs[name] for name in inspect.signature(test).parameters}

    def one_run() -> Any:
        return test(**args)

    if not inspect.iscoroutinefunction(test):  # a synchronous test: its threads are scheduled
        from turncheck.sim.race.threads import threaded_test

        one_run = threaded_test(one_run, pyfuncitem.name)

    runs_before = 0  # schedules run on the same fixture values before the failing one
    try:  # a malformed option is one line, as the CLI's usage errors are, never a traceback
        error = marker_fault_error(named)
        kinds = fault_kinds(options.pop("fault_kinds", "error,cancel,crash"))
        if token is not None:
            run = run_schedule(
                one_run, parse_token(token), max_steps=max_steps, max_seconds=max_seconds, error=error
            )
        else:
            explored = explore(one_run, max_steps=max_steps, max_seconds=max_seconds, **options)
            run, runs_before = explored.failing, explored.schedules - 1
            if faults and run is None:
                runs_before = explored.schedules
                budget = options.get("schedules", 100)
                run = search_faults(one_run, budget=budget, strategy=options.get("strategy", "random"),
                                    depth=options.get("depth", 2), seed=options.get("seed", 0),
                                    bounds=(max_steps, max_seconds), error=error, kinds=kinds).failing  # fmt: skip
    except TurncheckError as exc:
        pytest.fail(f"@pytest.mark.race: {exc}", pytrace=False)
    if run is not None and run.failure is not None:
        marker_extra, cli_extra = replay_fault_error(named) if run.faults else ("", "")
        how = f"@pytest.mark.race(schedule={run.schedule.token!r}{marker_extra})"
        if not args:
            how += (f", or turncheck race {pyfuncitem.path}:{pyfuncitem.originalname}"
                    f" --schedule {run.schedule.token}{cli_extra}")  # fmt: skip
        report = failure_report(run, how, pyfuncitem.nodeid)
        shared = shared_fixtures(args) if runs_before else []
        if shared:
            report.append(
                f"note: fixtures made once for every schedule: {', '.join(shared)}; {runs_before} schedule(s) "
                "ran on them before this one and may have left state that fails it: replay the schedule alone "
                "with the marker above, or build what the test races in its body"
            )
        pytest.fail("\n".join(report), pytrace=False)
    return True


IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), range)


def shared_fixtures(args: dict[str, Any]) -> list[str]:
    """The arguments of a race-marked test that one schedule can change for the next: every value
    but ``anyio_backend`` and plain immutable ones (numbers, strings, tuples of them, as
    ``parametrize`` gives)."""

    def immutable(value: Any) -> bool:
        if isinstance(value, tuple | frozenset):
            return all(immutable(v) for v in value)
        return isinstance(value, IMMUTABLE)

    return [name for name, value in args.items() if name != "anyio_backend" and not immutable(value)]


def marker_fault_error(named: object) -> type[BaseException]:
    """The exception class the marker's ``fault_error`` names: the class itself, or a string as
    ``--fault-error`` takes it (``"TimeoutError"``, ``"pkg.mod:Error"``); anything else is one
    :class:`~turncheck.models.errors.BadParameter` line."""
    from turncheck.models.errors import BadParameter
    from turncheck.sim.race.faults import InjectedFault, fault_error

    if named is None:
        return InjectedFault
    if isinstance(named, str):
        return fault_error(named)
    if isinstance(named, type) and issubclass(named, BaseException):
        return named
    raise BadParameter(
        f"fault_error {named!r} is not an exception class (e.g. TimeoutError, 'TimeoutError' or 'pkg.mod:Error')"
    )


def replay_fault_error(named: object) -> tuple[str, str]:
    """What a fault token's replay adds so that it raises the same type: the marker's keyword
    and the CLI's ``--fault-error``; nothing for the default."""
    if named is None:
        return "", ""
    if isinstance(named, str):
        return f", fault_error={named!r}", f" --fault-error {shlex.quote(named)}"
    assert isinstance(named, type)
    builtin = named.__module__ == "builtins"
    return (f", fault_error={named.__qualname__}",
            f" --fault-error {named.__qualname__ if builtin else f'{named.__module__}:{named.__qualname__}'}")  # fmt: skip


@pytest.fixture
def check_projector(request: pytest.FixtureRequest) -> Callable[..., None]:
    """:func:`turncheck.testing.check_projector`, with the ``turncheck`` marker's defaults."""
    from turncheck.testing import check_projector as check

    marker = request.node.get_closest_marker("turncheck")
    defaults: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}

    def run(projector: Any, **options: Any) -> None:
        __tracebackhide__ = True
        check(projector, **{"key": request.node.nodeid, **defaults, **options})

    return run


@pytest.fixture
def known_failures() -> Any:
    """The real-failure corpus against your trimmer or your session store, and two trimmers
    diffed: ``known_failures.check(trimmer)`` (:func:`turncheck.testing.check_known_failures`),
    ``known_failures.check_store(Factory)`` (:func:`turncheck.testing.check_store_failures`: the
    store cases raced against an openai-agents ``Session`` the factory makes from a session id)
    and ``known_failures.diff(old, new, events, budget)`` (:func:`turncheck.testing.check_diff`).
    Call ``check_store`` from a plain ``def`` test: it runs its own event loops."""
    from types import SimpleNamespace

    from turncheck.testing import check_diff, check_known_failures, check_store_failures

    return SimpleNamespace(check=check_known_failures, check_store=check_store_failures, diff=check_diff)
