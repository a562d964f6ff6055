"""Liveness: ``eventually`` and ``leads_to`` under weak and strong fairness, checked by the
explorer as fair loops, reported as lassos, saved, replayed, and never passed by Hypothesis."""

from __future__ import annotations

import json
import random
import shutil
from array import array
from collections import deque
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from turncheck.models.errors import BadParameter
from turncheck.models.protocol import Property, ProtocolModel
from turncheck.sim.explorer import explore
from turncheck.sim.liveness import Graph, Transitions, components, fair_loop
from turncheck.sim.trace import load_trace, replay
from turncheck.sim.witness import NotASymmetry, counterexample

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "orphan_compaction.py"


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The orphan example as a user's file next to the command: ``./model.py:OrphanCompaction``."""
    shutil.copy(EXAMPLE, tmp_path / "model.py")
    monkeypatch.chdir(tmp_path)
    return "./model.py:OrphanCompaction"


def _orphan(fixed: bool) -> ProtocolModel[Any, Any]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("orphan_compaction", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model: ProtocolModel[Any, Any] = module.OrphanCompaction(fixed)
    return model


# -- Property -------------------------------------------------------------------------------------


def test_a_misspelt_expectation_is_refused_and_leads_to_is_an_eventually_property() -> None:
    with pytest.raises(BadParameter, match="'evenutally' is not one of always, sometimes, eventually"):
        Property("x", "evenutally", bool)  # type: ignore[arg-type]
    with pytest.raises(BadParameter, match="only an eventually-property has a 'when'"):
        Property("x", "always", bool, when=bool)
    p = Property.leads_to("drains", bool, lambda s: s == 0, "doc")
    assert (p.expectation, p.when, p.holds(0), p.doc) == ("eventually", bool, True, "doc")


# -- the done-when example: an orphan disables the compactor for ever ------------------------------


def test_the_orphan_fails_with_a_lasso_printed_and_saved_and_the_fix_passes(cli: Any, example: str) -> None:
    code, out, _err = cli("check", example, "--engine", "explore", "--trace-out", "t.json")
    assert code == 1
    assert "due-compaction-runs  eventually  violated: lasso of 3 steps to a 2-step loop" in out
    assert "↻ loop: steps 4–5 repeat for ever (step 5 is back in the state after step 3)" in out
    assert "crashes: its call never gets a" in out and "answers without the crashed call's" in out
    assert "FAIL: due-compaction-runs is violated" in out
    saved = json.loads(Path("t.json").read_text(encoding="utf-8"))
    assert saved["loop"] == 3 and saved["timeline"]["broken_at"] == 3
    assert saved["actions"] == [["ask"], ["call"], ["crash"], ["answer"], ["ask"]]
    code, out, _err = cli("replay", "t.json", "--model", example)
    assert code == 1 and "still fails the same way: due-compaction-runs never holds on the loop" in out
    code, out, _err = cli("check", example, "--param", "fixed=true", "--engine", "explore")
    assert code == 0 and "due-compaction-runs  eventually  holds" in out


def test_the_saved_lasso_no_longer_fails_on_the_fixed_model(cli: Any, example: str) -> None:
    assert cli("check", example, "--engine", "explore", "--trace-out", "t.json").code == 1
    result = replay(_orphan(fixed=True), load_trace("t.json"))
    assert result.verdict == "passes" and "not fair: 'compact'" in result.message


def test_hypothesis_never_passes_an_eventually_property_and_both_takes_the_explorers_verdict(
    cli: Any, example: str
) -> None:
    code, out, _err = cli(
        "check", example, "--param", "fixed=true", "--engine", "hypothesis", "--max-examples", "5"
    )
    assert code == 3 and "not checked by this engine" in out and "INCONCLUSIVE" in out
    code, out, _err = cli(
        "check", example, "--engine", "both", "--max-examples", "5", "--trace-out", "t.json"
    )
    assert code == 1 and "violated: lasso" in out
    code, out, _err = cli(
        "check", example, "--format", "json", "--engine", "hypothesis", "--max-examples", "5"
    )
    assert code == 3 and json.loads(out)["not_checked"] == ["due-compaction-runs"]


def test_weak_fairness_lets_every_tool_call_starve_the_fixed_compactor() -> None:
    """A call in flight disables the compactor, so only strong fairness forces it to run."""
    model = _orphan(fixed=True)
    model.fair_actions = lambda: ("compact",)  # type: ignore[method-assign]
    model.strongly_fair_actions = lambda: ()  # type: ignore[method-assign]
    result = explore(model)
    assert result.outcome("due-compaction-runs").status == "violated"
    run = counterexample(model, result, "due-compaction-runs")
    assert run.loop is not None and ("call",) in run.actions[run.loop :]
    assert fair_loop(model, model.properties()[0], run.states, run.actions, run.loop) is None


# -- small models with known answers ---------------------------------------------------------------


class Counter(ProtocolModel[int, tuple[str]]):
    """0 → 1 → … → ``top``, where it stops (stutters); with ``wait``, every state below the top
    may also wait (a step back to itself)."""

    name = "counter"

    def __init__(self, top: int = 2, wait: bool = False, fair: tuple[Hashable, ...] = ()) -> None:
        self.top, self.wait, self.fair = top, wait, fair

    def init_states(self) -> list[int]:
        return [0]

    def actions(self, state: int) -> list[tuple[str]]:
        if state == self.top:
            return []
        return [("add",), ("wait",)] if self.wait else [("add",)]

    def step(self, state: int, action: tuple[str]) -> int:
        return state + 1 if action[0] == "add" else state

    def properties(self) -> tuple[Property[int], ...]:
        return (
            Property("reaches-top", "eventually", lambda s: s == self.top),
            Property.leads_to("one-leads-to-zero", lambda s: s == 1, lambda s: s == 0),
        )

    def fair_actions(self) -> tuple[Hashable, ...]:
        return self.fair


def test_a_state_with_no_enabled_action_stutters_for_ever() -> None:
    model = Counter(top=2)
    result = explore(model)
    assert result.outcome("reaches-top").status == "holds"
    o = result.outcome("one-leads-to-zero")
    assert (o.status, o.depth, o.loop) == ("violated", 2, 0)
    run = counterexample(model, result, "one-leads-to-zero")
    assert run.actions == (("add",), ("add",)) and run.loop == 2 and run.states[-1] == 2


def test_without_fairness_any_loop_counts_and_weak_fairness_removes_it() -> None:
    o = explore(Counter(top=2, wait=True)).outcome("reaches-top")
    assert (o.status, o.depth, o.loop) == ("violated", 0, 1)  # wait for ever at 0
    assert explore(Counter(top=2, wait=True, fair=("add",))).outcome("reaches-top").status == "holds"
    assert explore(Counter(top=2, wait=True, fair=("wait",))).outcome("reaches-top").status == "violated"


class Swap(ProtocolModel[tuple[int, int], tuple[str]]):
    """Two interchangeable writers who swap places for ever: one state up to symmetry."""

    name = "swap"

    def __init__(self, canonical_ok: bool = True) -> None:
        self.ok = canonical_ok

    def init_states(self) -> list[tuple[int, int]]:
        return [(0, 1)]

    def actions(self, state: tuple[int, int]) -> list[tuple[str]]:
        return [("swap",)] if self.ok or state != (1, 0) else []

    def step(self, state: tuple[int, int], action: tuple[str]) -> tuple[int, int]:
        return (state[1], state[0])

    def canonical(self, state: tuple[int, int]) -> tuple[int, int]:
        return (min(state), max(state))

    def properties(self) -> tuple[Property[tuple[int, int]], ...]:
        return (Property("meet", "eventually", lambda s: s[0] == s[1]),)


def test_a_loop_up_to_symmetry_is_followed_round_until_the_models_own_states_repeat() -> None:
    model = Swap()
    result = explore(model)
    assert result.distinct == 1 and result.outcome("meet").loop == 1
    run = counterexample(model, result, "meet")
    assert run.states == ((0, 1), (1, 0), (0, 1)) and run.loop == 0
    assert explore(model, symmetry=False).outcome("meet").loop == 2


def test_a_lasso_that_is_not_real_on_the_unreduced_model_is_refused() -> None:
    """``canonical`` merges (1, 0), which stops, with (0, 1), which swaps: not a symmetry."""
    model = Swap(canonical_ok=False)
    result = explore(model)
    assert result.outcome("meet").status == "violated"
    with pytest.raises(NotASymmetry):
        counterexample(model, result, "meet")


def test_tarjan_finds_the_components_networkx_finds() -> None:
    rng = random.Random(7)
    n = 400
    edges = sorted({(rng.randrange(n), rng.randrange(n)) for _ in range(700)})
    first = array("q", [0] * (n + 1))
    for a, _b in edges:
        first[a + 1] += 1
    for v in range(n):
        first[v + 1] += first[v]
    ours = {frozenset(c) for c in components(first, array("q", [b for _a, b in edges]))}
    theirs = nx.strongly_connected_components(nx.DiGraph(edges))
    assert ours == {frozenset(c) for c in theirs if len(c) > 1}


def test_the_components_within_some_states_are_networkx_s_on_those_states() -> None:
    """``Graph.loops`` renumbers the states it is given and runs Tarjan's algorithm on the
    transitions between them alone."""
    import numpy as np

    rng = random.Random(8)
    graph = _graph(rng, 300, 700)
    keep = np.array([v for v in range(300) if v % 5], np.int64)
    ours = {frozenset(c.tolist()) for c in graph.loops(keep)}
    g = nx.DiGraph([(a, b) for a, b, _x in graph.edges if a % 5 and b % 5])
    assert ours == {frozenset(c) for c in nx.strongly_connected_components(g) if len(c) > 1}


def _graph(rng: random.Random, n: int, m: int) -> Graph:
    """A random graph over ``n`` states (the last few unexpanded) as the explorer records one:
    rows by source, each transition an action named by a fair kind or not."""
    pairs = sorted((rng.randrange(n - 3), rng.randrange(n)) for _ in range(m))
    out = array("q", [0] * (n - 3))
    for a, _b in pairs:
        out[a] += 1
    actions = [(rng.choice("abc"), rng.randrange(2)) for _ in pairs]
    edges = Transitions(array("q", [b for _a, b in pairs]), actions, out)
    assert [(a, b) for a, b, _x in edges] == pairs
    return Graph(n, n - 3, edges, ("a",), ("b",))


@pytest.mark.parametrize("seed", range(6))
def test_the_array_passes_agree_with_the_plain_definitions(seed: int) -> None:
    """``cyclic`` is the fixpoint of removing states with no transition in or out (self loops
    aside) and keeps every component networkx finds; ``single_loops`` are the stuttering states
    and the self-looping ones whose self loops take every fair name they enable."""
    rng = random.Random(seed)
    n = 60
    graph = _graph(rng, n, rng.choice((40, 90, 150)))
    ring = [(a, b) for a, b, _x in graph.edges if a != b]
    alive = set(range(n))
    while True:
        kept = {v for v in alive if any(a == v and b in alive for a, b in ring)}
        kept &= {v for v in kept if any(b == v and a in kept for a, b in ring)}
        if kept == alive:
            break
        alive = kept
    assert graph.cyclic.nonzero()[0].tolist() == sorted(alive)
    loops = [c for c in nx.strongly_connected_components(nx.DiGraph(ring)) if len(c) > 1]
    assert all(c <= alive for c in loops)
    single = []
    for v in range(n - 3):
        row = [(b, graph.bits(x)) for a, b, x in graph.edges if a == v]
        enabled = taken = 0
        for b, code in row:
            enabled |= code
            taken |= code if b == v else 0
        if not row or (any(b == v for b, _c in row) and not enabled & ~taken):
            single.append(v)
    assert graph.single_loops.tolist() == single


def _queue_walk(
    rows: list[list[tuple[int, Any]]], start: int, allowed: Any, goal: Any, at_least_one: bool
) -> tuple[list[int], list[Any]] | None:
    """The shortest path a first-in first-out queue finds (the walk as it was written first)."""
    if not at_least_one and goal[start]:
        return [start], []
    prev: dict[int, tuple[int, Any]] = {}
    seen, queue = {start}, deque([start])
    while queue:
        v = queue.popleft()
        for w, a in rows[v]:
            if not allowed[w]:
                continue
            if goal[w]:
                ids, acts = [w, v], [a]
                while v != start:
                    v, b = prev[v]
                    ids.append(v)
                    acts.append(b)
                return ids[::-1], acts[::-1]
            if w not in seen:
                seen.add(w)
                prev[w] = (v, a)
                queue.append(w)
    return None


@pytest.mark.parametrize("seed", range(12))
def test_a_walk_a_level_at_a_time_finds_the_path_a_queue_finds(seed: int) -> None:
    """Lassos shown in the docs must not change: the walk reads a whole level at a time, and
    returns the very path a queue would, to a goal given as states or as one state."""
    import numpy as np

    from turncheck.sim.liveness import _walk

    rng = random.Random(seed)
    n = 50
    graph = _graph(rng, n, rng.choice((50, 100, 200)))
    rows: list[list[tuple[int, Any]]] = [[] for _ in range(n)]
    for a, b, x in graph.edges:
        rows[a].append((b, x))
    allowed = np.array([rng.random() < 0.8 for _ in range(n)])
    goals = [np.array([rng.random() < 0.1 for _ in range(n)]), rng.randrange(n)]
    for goal in goals:
        marked = goal if isinstance(goal, np.ndarray) else np.arange(n) == goal
        for start in range(n):
            for at_least_one in (False, True):
                expected = _queue_walk(rows, start, allowed, marked, at_least_one)
                if expected is None:
                    with pytest.raises(AssertionError, match="unreachable"):
                        _walk(graph, start, allowed, goal, at_least_one)
                else:
                    assert _walk(graph, start, allowed, goal, at_least_one) == expected


def test_a_model_without_eventually_properties_records_no_transitions() -> None:
    from turncheck.models.trigger import TriggerModel

    props = [p for p in TriggerModel().properties() if p.expectation != "eventually"]
    assert explore(TriggerModel(), properties=props).edges is None


def test_a_trace_loop_out_of_range_is_refused(tmp_path: Path) -> None:
    from turncheck.sim.trace import TraceFormatError

    bad = {"format": "turncheck-trace/1", "model": "m", "violated": "p", "actions": [["a"]], "loop": 2}
    (tmp_path / "t.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(TraceFormatError, match="field 'loop'"):
        load_trace(tmp_path / "t.json")


# -- the lasso in the trace viewer, in a real browser ---------------------------------------------


def test_the_viewer_draws_the_loop_and_next_goes_round_it(cli: Any, example: str, open_page: Any) -> None:
    assert cli("check", example, "--engine", "explore", "--trace-out", "t.json").code == 1
    assert cli("replay", "t.json", "--model", example, "--html", "t.html").code == 1
    opened = open_page(Path("t.html").resolve())
    page = opened.page
    bar = page.locator(".tcv-loopbar td.tcv-loop")
    assert bar.get_attribute("colspan") == "2" and bar.get_attribute("data-loop") == "3"
    assert "steps 4–5 repeat for ever: step 5 is back in the state after step 3" in bar.inner_text()
    assert page.locator(".tcv-loopbar svg.tcv-loop-arrow").count() == 1
    # the bracket spans exactly the loop's columns (steps 4 and 5)
    box, four, five = (
        page.locator(sel).bounding_box()
        for sel in (".tcv-loopbar td.tcv-loop", 'th.tcv-col[data-step="4"]', 'th.tcv-col[data-step="5"]')
    )
    assert abs(box["x"] - four["x"]) < 2 and abs(box["x"] + box["width"] - five["x"] - five["width"]) < 2
    assert page.locator("th.tcv-inloop").count() == 2
    page.click("button[data-act=broken]")
    assert page.locator("section.tcv").get_attribute("data-current") == "3"
    assert "loop starts: due-compaction-runs never holds from here" in page.locator(".tcv-now").inner_text()
    page.locator("section.tcv").focus()
    page.keyboard.press("End")
    assert "back in the state after step 3" in page.locator(".tcv-now").inner_text()
    assert not page.locator("button[data-act=next]").is_disabled()
    page.keyboard.press("ArrowRight")  # round the loop again: step 4
    assert page.locator("section.tcv").get_attribute("data-current") == "4"
    assert "on the loop" in page.locator(".tcv-now").inner_text()
    prop = page.locator('.tcv-props tr[data-property="due-compaction-runs"] td')
    assert prop.inner_text() == "not here"
    assert opened.errors == [] and opened.requests == []
    page.screenshot(path="loop.png")
    page.close()


# -- the trigger model's liveness ------------------------------------------------------------------


@pytest.mark.parametrize("locking", ["none", "trim-to", "cas", "mutex", "append-sync"])
def test_every_trigger_compaction_commits_and_every_writer_finishes_under_fairness(locking: str) -> None:
    from turncheck.models.trigger import DUE_COMPACTION_RUNS, WRITERS_FINISH, TriggerModel

    result = explore(TriggerModel(writers=3, gap=2, locking=locking, turns=3))
    assert result.exhausted
    assert result.outcome(DUE_COMPACTION_RUNS).status == "holds"
    assert result.outcome(WRITERS_FINISH).status == "holds"


def test_without_fair_appends_a_trigger_writer_waits_for_ever_and_the_lasso_is_real() -> None:
    """The slot that ends with nobody appending is a step back to itself; only fairness of
    appends rules that loop out. Found up to symmetry, concretised on the named writers."""
    from turncheck.models.trigger import WRITERS_FINISH, TriggerModel

    model = TriggerModel(writers=2, gap=1, locking="mutex", turns=2)
    model.fair_actions = lambda: ("tick", "compact")  # type: ignore[method-assign]
    result = explore(model)
    o = result.outcome(WRITERS_FINISH)
    assert (o.status, o.depth, o.loop) == ("violated", 0, 1)
    run = counterexample(model, result, WRITERS_FINISH)
    assert run.actions == (("tick",),) and run.loop == 0 and run.states[0][8] is not None


@pytest.mark.parametrize(("writers", "gap", "turns"), [(2, 1, 6), (3, 1, 4), (2, 2, 4)])
def test_cas_never_starves_a_writer_only_the_compactor(writers: int, gap: int, turns: int) -> None:
    """Measured: under ``cas`` no lock ever keeps a writer out, so every writer appends all its
    turns; what starves is the compaction, and only while writers keep appending."""
    from turncheck.models.trigger import DUE_COMPACTION_RUNS, WRITERS_FINISH, TriggerModel

    result = explore(TriggerModel(writers=writers, gap=gap, locking="cas", turns=turns))
    assert result.exhausted and result.saturation is None
    assert result.outcome(WRITERS_FINISH).status == result.outcome(DUE_COMPACTION_RUNS).status == "holds"


@pytest.fixture(scope="module")
def cas_unbounded() -> Any:
    from turncheck.models.trigger import TriggerModel

    model = TriggerModel(writers=2, gap=1, locking="cas", turns=0)
    return model, explore(model)


def test_with_unbounded_writers_cas_starves_the_compactor_in_a_lasso_the_model_replays(
    cas_unbounded: Any,
) -> None:
    """Live turns grow for ever, so the loop is found over the counting abstraction; on the
    model's own states it is replayed three passes, each ending in the class it began in with
    more live turns, and every commit on it fails."""
    from turncheck.models.trigger import DUE_COMPACTION_RUNS
    from turncheck.sim.witness import SATURATED_PASSES

    model, result = cas_unbounded
    o = result.outcome(DUE_COMPACTION_RUNS)
    assert result.exhausted and o.status == "violated" and o.loop == 7
    run = counterexample(model, result, DUE_COMPACTION_RUNS)
    assert run.loop is not None and len(run.actions) - run.loop == o.loop
    starts = [run.states[run.loop - k * o.loop] for k in reversed(range(SATURATED_PASSES))] + [run.states[-1]]
    assert len({model.canonical(s) for s in starts}) == 1
    assert [s[0] for s in starts] == sorted({s[0] for s in starts}) and len(set(starts)) == len(starts)
    loop = run.states[run.loop :]
    assert all(s[3] >= 0 for s in loop) and ("compact",) in run.actions[run.loop :]
    assert all(
        model.deletes(s) == 0
        for s, a in zip(loop, run.actions[run.loop :], strict=False)
        if a[0] == "compact"
    )
    assert fair_loop(model, model.properties()[-1], run.states, run.actions, run.loop) is None
    short = fair_loop(model, model.properties()[-1], run.states[:-1], run.actions[:-1], run.loop)
    assert short is not None and "does not close" in short


def test_the_counting_abstraction_is_exact_on_random_runs(cas_unbounded: Any) -> None:
    """Merged states enable the same actions, lead to merged states and agree on every
    property: what makes a loop over the classes an infinite run of the model."""
    model, _result = cas_unbounded
    props = model.properties()
    rng, highest = random.Random(7), 0
    for _run in range(20):
        s = next(iter(model.init_states()))
        for _step in range(120):
            c = model.canonical(s)
            assert model.canonical(c) == c
            assert [p.holds(s) for p in props] == [p.holds(c) for p in props]
            acts, abstract = model.actions(model.canonical(s)), model.actions((*s[:8], None))
            assert [a[0] for a in acts] == [a[0] for a in abstract]
            a = rng.choice(acts)
            nxt = model.step((*s[:8], None), a)
            assert model.canonical(nxt) == model.canonical(model.step(c, a))
            s, highest = nxt, max(highest, nxt[0])
    assert highest > model.config.max_turns + 2 + 4  # the runs went well past the cap


@pytest.mark.parametrize("locking", ["mutex", "append-sync", "none"])
def test_with_unbounded_writers_a_due_compaction_runs_under_every_other_strategy(locking: str) -> None:
    from turncheck.models.trigger import DUE_COMPACTION_RUNS, TriggerModel

    result = explore(TriggerModel(writers=2, gap=1, locking=locking, turns=0))
    assert result.exhausted and result.saturation is None
    assert result.outcome(DUE_COMPACTION_RUNS).status == "holds"


def test_the_cas_lasso_is_printed_saved_and_replays(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """Issue 28's command as written: the default trigger's writers never stop (``turns=0``),
    so the starvation of the compaction under ``cas`` is found without a parameter for it."""
    monkeypatch.chdir(tmp_path)
    args = ("check", "trigger", "--param", "locking=cas", "--engine", "explore")
    code, out, _err = cli(*args, "--trace-out", "t.json")
    assert (
        code == 1 and "due-compaction-runs    eventually  violated: lasso of 7 steps to a 7-step loop" in out
    )
    assert "saturation: cas with unbounded writers" in out
    assert (
        "↻ loop: steps 22–28 repeat for ever (step 28 is back in the class of the state after step 21" in out
    )
    assert "commit fails (turns appended since the read); re-reads count=13" in " ".join(out.split())
    code, out, _err = cli("replay", "t.due-compaction-runs.json", "--html", "t.html")
    assert "still fails the same way: due-compaction-runs never holds on the loop" in out
    page = Path("t.html").read_text()
    assert "steps 22–28 repeat for ever: step 28 is back in the class of the state after step 21" in page


@pytest.mark.parametrize(("locking", "code"), [("cas", 1), ("mutex", 0), ("append-sync", 0)])
def test_the_due_compaction_checked_alone_fails_only_under_cas(
    cli: Any, tmp_path: Path, monkeypatch: Any, locking: str, code: int
) -> None:
    """``-i due-compaction-runs`` leaves out the safety invariants (``mutex`` breaks
    ``within-max-turns`` by design), so the exit status is the liveness verdict alone: the
    compaction starves under ``cas`` (a lasso of failing commits), never under the locks."""
    monkeypatch.chdir(tmp_path)
    only = ("-i", "due-compaction-runs", "--engine", "explore", "--trace-out", "t.json")
    ran = cli("check", "trigger", "--param", f"locking={locking}", *only)
    assert ran.code == code
    if code:
        assert "due-compaction-runs  eventually  violated: lasso of 7 steps to a 7-step loop" in ran.out
        assert "counterexample: due-compaction-runs never holds — a lasso of" in ran.out
        assert "commit fails (turns appended since the read)" in " ".join(ran.out.split())
        assert "FAIL: due-compaction-runs is violated" in ran.out and Path("t.json").is_file()
    else:
        assert "due-compaction-runs  eventually  holds" in ran.out and "lasso" not in ran.out
        assert ran.out.rstrip().endswith("every eventually-property holds on every fair run")


# -- the catalogue's liveness models ----------------------------------------------------------------


def test_fairness_by_kind_lets_the_roots_compactions_excuse_the_branch() -> None:
    from turncheck.models.catalog import build_model

    model = build_model("spring-ai-session-branch", {"variant": "scoped"})
    assert explore(model).outcome("branch-compacted").status == "holds"
    model.fair_actions = lambda: ("compact",)  # type: ignore[method-assign]
    run = counterexample(model, explore(model), "branch-compacted")
    assert run.loop is not None and ("compact", "root") in run.actions[run.loop :]


def test_a_report_tells_a_lasso_with_its_loop(cli: Any, example: str) -> None:
    """A user's lasso from its recorded words; a catalogue model's replayed, loop marked."""
    from turncheck.reports.html import _transcript
    from turncheck.reports.results_dir import TraceFile

    assert cli("check", example, "--engine", "explore", "--trace-out", "user.json").code == 1
    text = _transcript(TraceFile(Path("user.json"), load_trace("user.json")))
    assert "↻ loop: the steps after 3 repeat for ever" in text and text.endswith("never holds on the loop")
    assert (
        cli("check", "spring-ai-session-branch", "--engine", "explore", "--trace-out", "vendor.json").code
        == 1
    )
    text = _transcript(TraceFile(Path("vendor.json"), load_trace("vendor.json")))
    assert "↻ loop: step 4 repeats for ever" in text and "still fails the same way" in text
