"""Scenario ``testbench-fit``: the small fitting run that chooses the ``seed004-fit`` preset.

The seed states the result sizes, call counts and ``p_result``, but not the sizes of call
arguments or final replies, and every *level* of its tables (not the structural identities)
depends on them. This run tries a small grid of those two ranges on the clean manifold, compares
every seed figure of that manifold it computes — counts scaled from the seed's 60 000 × 50 to this
run's size, ratios (``overrun``) as they are — and ranks the candidates by their **largest**
relative deviation ``|ours / seed − 1|``. The judgement holds the documented preset
(:data:`scenarios.testbench.PROFILES`) equal to the winner, so the preset cannot drift from the
run that chose it.

Left out of the objective, and reported: **M4 orphanRes at CJK ratio 2.5**. The seed has 112
orphans in 114 fallback windows there (M4 keeps an orphan in 98 % of its fallbacks) while at ratio
1.5 it keeps 191 in 6 502 (3 %); a fallback to M0's cut keeps an orphan only when that cut lands
between a CALL and its RESULT, which no size range makes near-certain — no preset fits it.
``maxCost`` (a maximum over windows, which grows with the number of windows) is compared only at
the seed's scale. The dirty manifolds' figures are out of sample here (``p_results`` is 1.0).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from turncheck.scenarios.base import (
    Judgement,
    Progress,
    Scenario,
    ScenarioResult,
    Table,
    params_dict,
    register,
    require,
)
from turncheck.scenarios.testbench import PROFILES, TestbenchParams, plan_manifolds, run_manifolds
from turncheck.scenarios.testbench_tables import SEED_FIGURES, Runs, figure
from turncheck.sim.executor import LocalExecutor

UNFITTABLE = {(1.0, 2.5, 4000, "M4", "orphanRes")}
SCALE_FREE = ("overrun",)  # figures compared as they are; every other one is a count
SEED_SIZE = 60_000 * 50


@dataclass(frozen=True)
class TestbenchFitParams:
    """Candidates: every (call_chars upper bound × term_chars upper bound); 20 is the lower bound."""

    __test__ = False

    sessions: int = 12_000
    call_hi: tuple[int, ...] = (140, 200)
    term_hi: tuple[int, ...] = (400, 600)
    jobs: int = 1

    def __post_init__(self) -> None:
        require(self.sessions >= 100, f"parameter sessions must be >= 100, got {self.sessions}")
        require(
            all(v > 20 for v in (*self.call_hi, *self.term_hi)), "parameters call_hi, term_hi must be > 20"
        )
        require(self.jobs >= 1, f"parameter jobs must be >= 1, got {self.jobs}")


def deviations(p: TestbenchParams, progress: Progress) -> list[tuple[str, float, float, float]]:
    """(figure, seed scaled to this run, ours, ours / seed) for every fittable clean-manifold figure."""
    runs = run_manifolds(plan_manifolds(p), LocalExecutor(p.jobs), progress)
    r = Runs(p, runs)
    size = p.n_sessions * p.turns / SEED_SIZE
    out = []
    for key, seed_v in SEED_FIGURES.items():
        pr, ratio, budget, strategy, name = key
        if key in UNFITTABLE or name == "maxCost" or pr not in r.by_p:
            continue
        if (ratio, budget, strategy) not in r.by_p[pr].aggregates:
            continue
        ours = float(figure(r.agg(budget, strategy, pr, ratio), name))
        scaled = seed_v if name in SCALE_FREE else seed_v * size
        shown = scaled if name in SCALE_FREE else round(scaled, 1)
        out.append(
            (f"{strategy} {name} (ratio {ratio}, budget {budget})", shown, ours, round(ours / scaled, 4))
        )
    return out


def run(params: TestbenchFitParams, progress: Progress) -> ScenarioResult:
    base = TestbenchParams(sessions=params.sessions, p_results=(1.0,), jobs=params.jobs, summarising=())
    candidates = [(c, t) for c in params.call_hi for t in params.term_hi]
    rows = []
    figures: dict[tuple[int, int], list[tuple[str, float, float, float]]] = {}
    for i, (c, t) in enumerate(candidates):
        progress(i, len(candidates))
        p = replace(base, call_chars=(20, c), term_chars=(20, t))
        figs = deviations(p, lambda d, n: None)
        figures[(c, t)] = figs
        worst = max(figs, key=lambda f: abs(f[3] - 1))
        rows.append((f"20–{c}", f"20–{t}", round(abs(worst[3] - 1), 4), worst[0], worst[3]))
    progress(len(candidates), len(candidates))
    best = min(range(len(rows)), key=lambda i: (rows[i][2], i))
    best_c, best_t = candidates[best]
    default = (TestbenchParams.call_chars[1], TestbenchParams.term_chars[1])  # type: ignore[index]
    cand_table = Table(
        "candidates",
        f"Fitting run: largest relative deviation from the seed, clean manifold, {params.sessions} sessions",
        ("call_chars", "term_chars", "max deviation", "worst figure", "its ours / seed"),
        tuple(rows),
        "Counts scaled from the seed's 60 000 × 50 turns to this run; overrun ratios compared as they are. "
        "M4 orphanRes at ratio 2.5 is left out (no preset can fit it: the seed keeps an orphan in 112 of "
        "114 fallbacks there, in 191 of 6 502 at ratio 1.5); maxCost only at the seed's scale.",
    )
    by_default = figures.get(default)
    fig_rows = tuple(
        (name, seed_v, *((d[2], d[3]) if by_default is not None else (None, None)), ours, ratio)
        for (name, seed_v, ours, ratio), d in zip(
            figures[(best_c, best_t)], by_default or figures[(best_c, best_t)], strict=True
        )
    )
    fig_table = Table(
        "figures",
        "Every fitted seed figure: default generator vs the winning candidate",
        ("figure", "seed (scaled)", "default", "default / seed", "fitted", "fitted / seed"),
        fig_rows,
    )
    preset = PROFILES["seed004-fit"]
    documented = (preset.get("call_chars"), preset.get("term_chars"))
    judgements = (
        Judgement(
            "the seed004-fit preset is this run's winner",
            documented == ((20, best_c), (20, best_t)),
            f"winner call_chars 20–{best_c}, term_chars 20–{best_t} (max deviation {rows[best][2]}); "
            f"preset {documented}",
        ),
    )
    return ScenarioResult("testbench-fit", params_dict(params), 0, (cand_table, fig_table), judgements)


SCENARIO = register(
    Scenario(
        name="testbench-fit",
        params_type=TestbenchFitParams,
        run=run,
        summary="Choose the seed004-fit generator preset: smallest largest deviation from the seed's figures.",
    )
)
