"""What a scenario is: a typed parameter set, a run function, and the result it returns.

Every named experiment registers one :class:`Scenario`. Parameters are a frozen dataclass with
defaults, so ``--param k=v`` strings are parsed and range-checked in one place and an unknown or
ill-typed parameter is an error that names it. A run returns a :class:`ScenarioResult`: data only
(tables, judgement lines, parameters and seed), which ``reports`` renders and writes. Results
carry no timings, so the same seed and parameters give byte-identical result files.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.sim.executor import Progress as Progress
from turncheck.sim.executor import no_progress as no_progress

Cell = int | float | str | bool | None


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
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


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


@dataclass(frozen=True)
class Scenario:
    """A named experiment. ``run(params, progress)`` must be deterministic given ``params``."""

    name: str
    params_type: type
    run: Callable[[Any, Progress], ScenarioResult]
    summary: str
    check: Callable[[Any], None] = field(default=lambda p: None)


_REGISTRY: dict[str, Scenario] = {}


def register(scenario: Scenario) -> Scenario:
    if scenario.name in _REGISTRY:
        raise ValueError(f"scenario {scenario.name} registered twice")
    _REGISTRY[scenario.name] = scenario
    return scenario


def scenarios() -> dict[str, Scenario]:
    import turncheck.scenarios as _pkg  # noqa: F401  (importing the package registers every scenario)

    return dict(sorted(_REGISTRY.items()))


def get_scenario(name: str) -> Scenario:
    known = scenarios()
    if name not in known:
        raise UnknownName(f"unknown scenario {name!r} (known: {', '.join(known)})")
    return known[name]


def _convert(raw: str, annotation: Any, name: str) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if raw.lower() in ("none", "null", ""):
            return None
        return _convert(raw, args[0], name)
    if origin is tuple:
        (inner, *_rest) = typing.get_args(annotation)
        return tuple(_convert(part, inner, name) for part in raw.split(",") if part != "")
    if origin is typing.Literal:
        allowed = typing.get_args(annotation)
        if raw not in allowed:
            raise BadParameter(f"parameter {name}: {raw!r} is not one of {', '.join(map(str, allowed))}")
        return raw
    if annotation is bool:
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise BadParameter(f"parameter {name}: {raw!r} is not a boolean")
    if annotation is int:
        try:
            return int(raw)
        except ValueError:
            raise BadParameter(f"parameter {name}: {raw!r} is not an integer") from None
    if annotation is float:
        try:
            return float(raw)
        except ValueError:
            raise BadParameter(f"parameter {name}: {raw!r} is not a number") from None
    return raw


def param_fields(params_type: type) -> dict[str, Any]:
    hints = typing.get_type_hints(params_type)
    return {f.name: hints[f.name] for f in dataclasses.fields(params_type)}


def split_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["writers=4", "gap = 2"]`` → ``{"writers": "4", "gap": "2"}``: the ``--param k=v``
    spelling of every command; a later value for the same name wins, as on a command line."""
    pairs: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise BadParameter(f"parameter {item!r} must be written k=v")
        k, v = item.split("=", 1)
        pairs[k.strip().replace("-", "_")] = v
    return pairs


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
        values[name] = _convert(raw.strip(), fields_[name], name)
    try:
        params = dataclasses.replace(base, **values) if base is not None else scenario.params_type(**values)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, BadParameter):
            raise
        raise BadParameter(f"scenario {scenario.name}: {exc}") from None
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
