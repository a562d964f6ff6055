"""What a scenario is: a typed parameter set, a run function, and the result it returns.

Every named experiment registers one :class:`Scenario`. Parameters are a frozen dataclass with
defaults, so ``--param k=v`` strings are parsed and range-checked in one place and an unknown or
ill-typed parameter is an error that names it. A run returns a :class:`ScenarioResult`: data only
(tables, judgement lines, parameters and seed), which ``reports`` renders and writes. Results
carry no timings, so the same seed and parameters give byte-identical result files.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from turncheck.models.display import Cell as Cell
from turncheck.models.display import data_frame, esc, html_table
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.parameters import parse_value
from turncheck.models.parameters import split_assignments as split_assignments
from turncheck.models.registry import Registry
from turncheck.sim.executor import Progress as Progress
from turncheck.sim.executor import no_progress as no_progress


@dataclass(frozen=True)
class Table:
    """One table in a seed's shape: named columns and rows of plain values."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    reading: str = ""

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.name}: row {row!r} does not match columns {self.columns}")

    def column(self, name: str) -> list[Cell]:
        i = self.columns.index(name)
        return [row[i] for row in self.rows]

    def records(self) -> list[dict[str, Cell]]:
        """One dict per row, column name → value (what ``to_records`` gives for any result type)."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    to_records = records

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame`` (pandas is optional: ``turncheck[notebook]``)."""
        return data_frame(self.records(), self.columns)

    def _repr_html_(self) -> str:
        """The table as the HTML report shows it: title, reading, rows."""
        reading = f"<br><i>{esc(self.reading)}</i>" if self.reading else ""
        return f"<p><b>{esc(self.title)}</b>{reading}</p>" + html_table(self.columns, self.rows)


@dataclass(frozen=True)
class Judgement:
    """A PASS/FAIL line with the figures behind it (the seed's reproduction criteria)."""

    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.detail}"


@dataclass(frozen=True)
class ScenarioResult:
    """One run's tables and judgements (``NAME.json``, byte-reproducible from params and seed).

    ``attachments`` are further files written beside it (a name relative to the output folder →
    a result of its own, or text): what must not sit in ``NAME.json`` — wall-clock measurements,
    which vary run to run (each such file says so), or counterexample traces the viewer opens.
    They are not part of the result's equality or of ``NAME.json``.
    """

    scenario: str
    params: Mapping[str, Any]
    seed: int
    tables: tuple[Table, ...]
    judgements: tuple[Judgement, ...] = ()
    attachments: Mapping[str, ScenarioResult | str] = field(default_factory=dict, compare=False)

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise UnknownName(f"result of {self.scenario} has no table {name!r}")

    def to_records(self, table: str | None = None) -> list[dict[str, Cell]]:
        """The rows of the table named ``table`` (may be omitted when the result has one table)."""
        return self._only(table).records()

    def to_pandas(self, table: str | None = None) -> Any:
        """The table named ``table`` as a ``pandas.DataFrame`` (see :meth:`to_records`)."""
        return self._only(table).to_pandas()

    def _only(self, table: str | None) -> Table:
        if table is not None:
            return self.table(table)
        if len(self.tables) != 1:
            names = ", ".join(t.name for t in self.tables) or "none"
            raise UnknownName(f"result of {self.scenario} has {len(self.tables)} tables ({names}): name one")
        return self.tables[0]

    def _repr_html_(self) -> str:
        """A notebook's view: the judgement lines, then every table."""
        params = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items())) or "none"
        lines = "".join(f"<li>{esc(j.line())}</li>" for j in self.judgements)
        return (
            f"<p><b>{esc(self.scenario)}</b>: seed {esc(self.seed)}; parameters: {esc(params)}</p>"
            + (f"<ul>{lines}</ul>" if lines else "")
            + "".join(t._repr_html_() for t in self.tables)
        )


UNPLACED = 1000
"""The :attr:`Scenario.order` of a scenario that declares none: after every placed one, by name."""


@dataclass(frozen=True)
class Scenario:
    """A named experiment. ``run(params, progress)`` must be deterministic given ``params``.

    Besides its parameters and run, a scenario declares everything the rest of turncheck needs to
    know about it, so adding one is one new file:

    * ``presets``: what ``--scale`` means for it — scale → ``k=v`` strings, as on the command
      line (:mod:`turncheck.scenarios.presets` applies them; ``full`` defaults to its defaults);
    * ``demo_skip``: scale → why ``turncheck demo`` passes it over at that scale;
    * ``demo_sweep``: scale → (``--grid`` axes, fixed ``k=v``) of a sweep the demo runs right
      after it (the peak-vs-maxTurns lines come from trigger-gap's);
    * ``order``: where the demo runs it and the report places its section (smaller first; equal
      orders, and scenarios that declare none, by name).
    """

    name: str
    params_type: type
    run: Callable[[Any, Progress], ScenarioResult]
    summary: str
    check: Callable[[Any], None] | None = None
    presets: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    demo_skip: Mapping[str, str] = field(default_factory=dict)
    demo_sweep: Mapping[str, tuple[tuple[str, ...], Mapping[str, str]]] = field(default_factory=dict)
    order: int = UNPLACED


CHECKS_ORDER = 25
"""The place of the demo's model-checking result (``checks``): after locking, whose bounds the
checks prove, before the testbench."""

SCENARIOS: Registry[Scenario] = Registry(
    "scenario",
    home=("turncheck.scenarios.builtin", "turncheck.integrations.scenarios"),
    key=attrgetter("order"),
)
"""Every scenario by name, built-ins by their :attr:`Scenario.order`; :mod:`turncheck.scenarios.builtin`
imports each built-in scenario module, :mod:`turncheck.integrations.scenarios` those that run
other products' code."""


def register(scenario: Scenario) -> Scenario:
    """Add ``scenario`` under its name (public as ``turncheck.register_scenario``); a name is
    taken once."""
    return SCENARIOS.register(scenario.name, scenario)


register_scenario = register


def scenarios() -> dict[str, Scenario]:
    """Every scenario by name, alphabetically (the order ``scenario --list`` shows)."""
    return dict(sorted(SCENARIOS.items()))


def get_scenario(name: str) -> Scenario:
    return SCENARIOS[name]


def section_order(result_name: str) -> tuple[int, int, str]:
    """Where a result named ``result_name`` is told: a scenario at its :attr:`Scenario.order`, a
    result it writes beside its own (``NAME-PART``, e.g. ``peers-timing``) right after it, then
    ``sweep-NAME``, the demo's ``checks`` at :data:`CHECKS_ORDER`;
    anything else after all of them, by name."""
    if result_name == "checks":
        return (CHECKS_ORDER, 0, "")
    base, sub = result_name, 0
    if result_name.startswith("sweep-"):
        base, sub = result_name[len("sweep-") :], 2
    scenario = SCENARIOS.get(base)
    if scenario is None and "-" in base:  # a result a scenario writes beside its own (peers-timing)
        owner = max((n for n in SCENARIOS if base.startswith(n + "-")), key=len, default=None)
        if owner is not None:
            base, sub, scenario = owner, 1, SCENARIOS[owner]
    return (scenario.order if scenario is not None else UNPLACED, sub, base)


def param_fields(params_type: type) -> dict[str, Any]:
    hints = typing.get_type_hints(params_type)
    return {f.name: hints[f.name] for f in dataclasses.fields(params_type)}


def parse_params(scenario: Scenario, assignments: Iterable[str] | Mapping[str, str], base: Any = None) -> Any:
    """Build the scenario's parameters from ``k=v`` strings (or a mapping of strings).

    Dashes and underscores are interchangeable in names. The result is validated by the
    parameter type's ``__post_init__`` and the scenario's ``check``; every error names the
    parameter.
    """
    fields_ = param_fields(scenario.params_type)
    if isinstance(assignments, Mapping):
        pairs = {k: str(v) for k, v in assignments.items()}
    else:
        pairs = split_assignments(assignments)
    values: dict[str, Any] = {}
    for key, raw in pairs.items():
        name = key.strip().replace("-", "_")
        if name not in fields_:
            raise UnknownName(
                f"scenario {scenario.name} has no parameter {key!r} (parameters: {', '.join(fields_)})"
            )
        values[name] = parse_value(raw.strip(), fields_[name], name)
    try:
        params = dataclasses.replace(base, **values) if base is not None else scenario.params_type(**values)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, BadParameter):
            raise
        raise BadParameter(f"scenario {scenario.name}: {exc}") from None
    if scenario.check is not None:
        scenario.check(params)
    return params


def params_dict(params: Any) -> dict[str, Any]:
    """Parameters as plain JSON values (tuples become lists)."""
    out: dict[str, Any] = {}
    for k, v in dataclasses.asdict(params).items():
        out[k] = list(v) if isinstance(v, tuple) else v
    return out


def require(condition: bool, message: str) -> None:
    """Parameter validation for ``__post_init__``: raise :class:`BadParameter` naming the problem."""
    if not condition:
        raise BadParameter(message)


def rows(records: Sequence[Mapping[str, Cell]], columns: Sequence[str]) -> tuple[tuple[Cell, ...], ...]:
    return tuple(tuple(r[c] for c in columns) for r in records)
