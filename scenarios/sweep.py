"""Sweeps: a scenario run over a grid of parameters, cells in parallel, one merged table.

A sweep is the cartesian product of ``--grid name=v1,v2,…`` lists (times ``--seeds`` replicates)
over one scenario's parameters. Every cell is parsed and validated *before* anything runs, so a
bad value anywhere is one error naming the parameter and nothing is written. Each cell's seed is
derived from the sweep seed, the cell's own parameters and its replicate number (a hash, not a
counter), so a cell's result does not depend on how many cells there are, on ``--jobs``, or on
the order cells finish; results are merged in cell order.

Cells run through an :class:`Executor`, which only maps a picklable function over tasks and
returns results in task order: :class:`~turncheck.sim.executor.LocalExecutor` (this process, or a process pool) is the
first implementation; a cluster executor only has to provide the same ``map``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.scenarios.base import (
    Cell,
    Progress,
    Scenario,
    ScenarioResult,
    Table,
    get_scenario,
    no_progress,
    param_fields,
    params_dict,
    parse_params,
)
from turncheck.sim.executor import Executor, LocalExecutor

#: how a cell's object is dumped as one line (the ``.jsonl`` file and ``sweep --format json``)
JSON_LINE: dict[str, Any] = {"ensure_ascii": False, "sort_keys": True, "separators": (",", ":")}

# -- the grid -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepCell:
    """One cell: the scenario, its parameter assignments (as given), the replicate and seed."""

    index: int
    scenario: str
    assignments: tuple[tuple[str, str], ...]
    replicate: int
    seed: int

    @property
    def grid(self) -> dict[str, str]:
        return dict(self.assignments)


def parse_grid(items: Sequence[str]) -> dict[str, list[str]]:
    """``["writers=1,4,8", "gap=0,2"]`` → ``{"writers": ["1","4","8"], "gap": ["0","2"]}``."""
    grid: dict[str, list[str]] = {}
    for item in items:
        if "=" not in item:
            raise BadParameter(f"grid {item!r} must be written name=v1,v2,...")
        name, raw = item.split("=", 1)
        name = name.strip().replace("-", "_")
        values = [v.strip() for v in raw.split(",") if v.strip()]
        if not name or not values:
            raise BadParameter(f"grid {item!r} must be written name=v1,v2,...")
        if name in grid:
            raise BadParameter(f"grid parameter {name} given twice")
        grid[name] = values
    return grid


def cell_seed(sweep_seed: int, scenario: str, assignments: Mapping[str, str], replicate: int) -> int:
    """A cell's seed: a hash of the sweep seed, the scenario, the cell's parameters and replicate."""
    text = json.dumps([sweep_seed, scenario, sorted(assignments.items()), replicate], separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:7], "big")


def plan_cells(
    scenario: Scenario,
    grid: Mapping[str, Sequence[str]],
    fixed: Mapping[str, str] | None = None,
    seeds: int = 1,
    seed: int = 0,
) -> list[SweepCell]:
    """Every cell of the grid, each parsed and validated now (errors name the parameter)."""
    if seeds < 1:
        raise BadParameter(f"parameter seeds must be >= 1, got {seeds}")
    fields_ = param_fields(scenario.params_type)
    fixed = {k.strip().replace("-", "_"): v for k, v in (fixed or {}).items()}
    for name in (*grid, *fixed):
        if name not in fields_:
            raise UnknownName(
                f"scenario {scenario.name} has no parameter {name!r} (parameters: {', '.join(fields_)})"
            )
    if "seed" in grid or "seed" in fixed:
        raise BadParameter("parameter seed is derived per cell; give the sweep seed with --seed")
    both = set(grid) & set(fixed)
    if both:
        raise BadParameter(f"parameter {sorted(both)[0]} is both a grid axis and a fixed --param")
    names = list(grid)
    cells: list[SweepCell] = []
    for values in itertools.product(*(grid[n] for n in names)):
        assignments = {**fixed, **dict(zip(names, values, strict=True))}
        parse_params(scenario, assignments)  # validate now: nothing runs if any cell is bad
        for rep in range(seeds):
            s = cell_seed(seed, scenario.name, assignments, rep)
            cells.append(SweepCell(len(cells), scenario.name, tuple(assignments.items()), rep, s))
    return cells


def run_cell(cell: SweepCell) -> ScenarioResult:
    """Run one cell (in a worker process): the scenario with the cell's parameters and seed."""
    scenario = get_scenario(cell.scenario)
    params = parse_params(scenario, dict(cell.assignments))
    if "seed" in param_fields(scenario.params_type):
        params = dataclasses.replace(params, seed=cell.seed)
    return scenario.run(params, no_progress)


# -- merging ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    """The cells and their results, in cell order."""

    scenario: str
    grid: dict[str, list[str]]
    seed: int
    seeds: int
    cells: tuple[SweepCell, ...]
    results: tuple[ScenarioResult, ...]

    def merged(self) -> ScenarioResult:
        """One table: the grid columns, replicate and seed, then each cell's first table's rows."""
        axes = list(self.grid)
        first = [r.tables[0] for r in self.results]
        inner: list[str] = []
        for t in first:
            inner.extend(c for c in t.columns if c not in inner and c not in axes)
        columns = (*axes, "replicate", "cell_seed", *inner)
        rows: list[tuple[Cell, ...]] = []
        for cell, t in zip(self.cells, first, strict=True):
            g = cell.grid
            for rec in t.records():
                rows.append((*(_typed(rec.get(a, g[a])) for a in axes), cell.replicate, cell.seed,
                             *(rec.get(c) for c in inner)))  # fmt: skip
        title = first[0].title if first else self.scenario
        table = Table("sweep", f"Sweep of {self.scenario}: {title}", columns, tuple(rows))
        params = {"grid": {k: list(v) for k, v in self.grid.items()}, "seeds": self.seeds}
        return ScenarioResult(f"sweep-{self.scenario}", params, self.seed, (table,))

    def to_records(self) -> list[dict[str, Cell]]:
        """The rows of :meth:`merged`: one per row of each cell's first table, with its grid values."""
        return self.merged().to_records()

    def to_pandas(self) -> Any:
        """:meth:`to_records` as a ``pandas.DataFrame`` (pandas is optional: ``turncheck[notebook]``)."""
        return self.merged().to_pandas()

    def _repr_html_(self) -> str:
        return self.merged()._repr_html_()

    def json_objects(self) -> list[dict[str, Any]]:
        """One object per cell: its parameters, seed and every table's records."""
        return [
            {
                "cell": cell.index,
                "scenario": self.scenario,
                "grid": {k: _typed(cell.grid[k]) for k in self.grid},
                "replicate": cell.replicate,
                "seed": cell.seed,
                "params": params_dict_of(res),
                "tables": {t.name: t.records() for t in res.tables},
            }
            for cell, res in zip(self.cells, self.results, strict=True)
        ]

    def json_lines(self) -> list[str]:
        """:meth:`json_objects`, one compact JSON line each (``sweep-SCENARIO.jsonl``)."""
        return [json.dumps(obj, **JSON_LINE) for obj in self.json_objects()]


def params_dict_of(result: ScenarioResult) -> dict[str, Any]:
    return dict(sorted(result.params.items()))


def _typed(value: Any) -> Cell:
    if not isinstance(value, str):
        return value  # type: ignore[no-any-return]
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def sweep(
    scenario_name: str,
    grid_items: Sequence[str],
    *,
    fixed: Mapping[str, str] | None = None,
    seeds: int = 1,
    seed: int = 0,
    executor: Executor | None = None,
    progress: Progress = no_progress,
) -> SweepResult:
    """Plan, validate and run a sweep; see the module docstring for the determinism contract."""
    scenario = get_scenario(scenario_name)
    grid = parse_grid(grid_items)
    if not grid:
        raise BadParameter("a sweep needs at least one --grid name=v1,v2,...")
    cells = plan_cells(scenario, grid, fixed, seeds, seed)
    results = (executor or LocalExecutor()).map(run_cell, cells, progress)
    return SweepResult(scenario.name, grid, seed, seeds, tuple(cells), tuple(results))


__all__ = [
    "SweepCell", "SweepResult", "cell_seed", "params_dict",
    "parse_grid", "plan_cells", "run_cell", "sweep",
]  # fmt: skip
