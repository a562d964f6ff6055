"""The structural report of a window and its aggregation over many windows.

Counter names are the seed's (``orphanRes``, ``pairSplit`` …) so tables read like the seed.
Per window: ``orphanRes``, ``orphanCall``, ``repairs``, ``tieInversions``, ``seqInversions``,
``mispair``, ``turnSrcMix`` and ``dupCallId`` count; ``pairSplit``, ``overBudget``, ``empty``,
``droppedPartial``, ``fallback`` and ``mixedSources`` are 0/1; ``keptCost`` is the window's cost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from turncheck.models.display import data_frame, html_table


class Report(NamedTuple):
    """One window's counters. A NamedTuple rather than a dataclass: it is built on the hot
    path of every projection and must stay immutable and cheap."""

    orphanRes: int
    orphanCall: int
    pairSplit: int
    overBudget: int
    keptCost: int
    empty: int
    droppedPartial: int
    fallback: int
    repairs: int
    tieInversions: int
    seqInversions: int
    mispair: int
    mixedSources: int
    turnSrcMix: int
    dupCallId: int

    def to_records(self) -> list[dict[str, int]]:
        """The counters as one record (a row of a table of windows)."""
        return [self._asdict()]

    def to_pandas(self) -> Any:
        """:meth:`to_records` as a one-row ``pandas.DataFrame`` (pandas is optional: ``turncheck[notebook]``)."""
        return data_frame(self.to_records())

    def _repr_html_(self) -> str:
        return "<p><b>structural report of the window</b></p>" + html_table(self._fields, [self])


COUNTERS: tuple[str, ...] = Report._fields


@dataclass
class Aggregate:
    """Totals over many windows of one strategy and budget.

    ``rate(name)`` is the share of windows where the counter is non-zero; ``overrun`` is the
    seed's 越界倍数, Σ keptCost / (budget × windows).
    """

    budget: int
    windows: int = 0
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    hits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    maxCost: int = 0
    coverage: int = 0
    """Coverage errors (:func:`models.summarising.coverage_errors`) over the windows, for the
    strategies that make summaries; not a counter of the structural report."""

    def add(self, report: Report) -> None:
        self.windows += 1
        totals, hits = self.totals, self.hits
        for name, value in zip(COUNTERS, report, strict=True):
            if value:
                totals[name] += value
                hits[name] += 1
        if report.keptCost > self.maxCost:
            self.maxCost = report.keptCost

    def extend(self, reports: Iterable[Report]) -> None:
        """``add`` of each report, column by column (sums and counts at C speed; same totals)."""
        rows = list(reports)
        if not rows:
            return
        self.windows += len(rows)
        totals, hits = self.totals, self.hits
        for name, column in zip(COUNTERS, zip(*rows, strict=True), strict=True):
            totals[name] += sum(column)
            hits[name] += len(column) - column.count(0)
        top = max(r.keptCost for r in rows)
        if top > self.maxCost:
            self.maxCost = top

    def add_totals(self, windows: int, totals: dict[str, int], hits: dict[str, int], max_cost: int) -> None:
        """Totals computed elsewhere over ``windows`` windows (per counter: the sum, and how many
        windows have it non-zero; the largest ``keptCost``), as ``add`` of each would give."""
        if not windows:
            return
        self.windows += windows
        for name in COUNTERS:
            self.totals[name] += totals[name]
            self.hits[name] += hits[name]
        if max_cost > self.maxCost:
            self.maxCost = max_cost

    def merge(self, other: Aggregate) -> None:
        if other.budget != self.budget:
            raise ValueError("cannot merge aggregates of different budgets")
        self.windows += other.windows
        for name in COUNTERS:
            self.totals[name] += other.totals[name]
            self.hits[name] += other.hits[name]
        self.maxCost = max(self.maxCost, other.maxCost)
        self.coverage += other.coverage

    def __getitem__(self, name: str) -> int:
        if name == "maxCost":
            return self.maxCost
        if name == "windows":
            return self.windows
        if name == "coverage":
            return self.coverage
        return self.totals[name]

    def rate(self, name: str) -> float:
        return self.hits[name] / self.windows if self.windows else 0.0

    @property
    def overrun(self) -> float:
        """Σ keptCost / (budget × windows)."""
        return self.totals["keptCost"] / (self.budget * self.windows) if self.windows else 0.0

    def as_dict(self) -> dict[str, int | float]:
        out: dict[str, int | float] = {"windows": self.windows, "budget": self.budget}
        out.update(self.totals)
        out["maxCost"] = self.maxCost
        out["overrun"] = round(self.overrun, 6)
        return out
