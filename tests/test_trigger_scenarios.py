"""The trigger-gap and locking scenarios: shape, bounds, determinism of result files, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import get_scenario, no_progress, parse_params


def run(name: str, **params: str):  # type: ignore[no-untyped-def]
    sc = get_scenario(name)
    return sc.run(parse_params(sc, params), no_progress)


def test_trigger_gap_seed_rows_shape() -> None:
    result = run("trigger-gap", iterations="5000")
    rows = result.table("peaks").records()
    assert [(r["max_turns"], r["writers"], r["gap"]) for r in rows] == [
        (8, 1, 0), (8, 1, 2), (8, 1, 5), (8, 4, 5), (8, 8, 0), (8, 8, 2), (8, 8, 5), (16, 8, 5),
    ]  # fmt: skip
    for r in rows:
        assert r["peak"] <= r["worst_case"]  # type: ignore[operator]
        if r["gap"] == 0:
            assert r["peak"] == r["max_turns"]
        else:
            assert r["peak"] > r["max_turns"]  # type: ignore[operator]
        assert r["seed_peak"] is not None
    peak = {(r["max_turns"], r["writers"], r["gap"]): r["peak"] for r in rows}
    assert peak[(8, 1, 2)] < peak[(8, 1, 5)] < peak[(8, 4, 5)] < peak[(8, 8, 5)]
    assert all(j.passed for j in result.judgements)


def test_trigger_gap_single_row_and_result_files_are_byte_identical(tmp_path: Path) -> None:
    a = run("trigger-gap", writers="4", gap="2", locking="trim-to", iterations="3000")
    b = run("trigger-gap", writers="4", gap="2", locking="trim-to", iterations="3000")
    (row,) = a.table("peaks").records()
    assert row["declared_bound"] == 16 and row["peak"] <= 16  # type: ignore[operator]
    write_result(a, tmp_path / "a")
    write_result(b, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names and names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for n in names:
        assert (tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes()


def test_locking_scenario_bounds_and_costs() -> None:
    result = run("locking", writers="1,4", gap="0,2", slots="400", budget="0")
    rows = result.table("locking").records()
    assert len(rows) == 5 * 2 * 2
    for r in rows:
        if r["locking"] in ("mutex", "append-sync"):
            assert r["within_bound"] is True
        if r["worst_case"] is not None:
            assert r["peak"] <= r["worst_case"]  # type: ignore[operator]
    by = {(r["locking"], r["writers"], r["gap"]): r for r in rows}
    assert by[("mutex", 4, 2)]["latency_p99"] > 0 and by[("none", 4, 2)]["latency_max"] == 0
    assert by[("mutex", 4, 2)]["throughput"] < 1.0
    assert by[("cas", 4, 2)]["starved"] is True and by[("cas", 4, 2)]["retries"] > 0
    assert by[("none", 4, 2)]["peak"] > 8  # type: ignore[operator]
    cas, mutex, free = by[("cas", 4, 2)], by[("mutex", 4, 2)], by[("none", 4, 2)]
    assert cas["compaction_wait"] >= 2 * (cas["max_retry_streak"] - 1) > 0 and cas["writer_wait"] == 0  # type: ignore[operator]
    assert mutex["writer_wait"] >= 2 and mutex["compaction_wait"] == 0  # type: ignore[operator]
    assert (free["compaction_wait"], free["writer_wait"]) == (0, 0)
    assert all(j.passed for j in result.judgements)


@pytest.mark.parametrize(
    "name,params,needle",
    [
        ("trigger-gap", {"gap": "-1"}, "gap"),
        ("trigger-gap", {"writers": "0"}, "writers"),
        ("trigger-gap", {"max_turns": "0"}, "max_turns"),
        ("trigger-gap", {"writers": "many"}, "writers"),
        ("trigger-gap", {"locking": "spin"}, "locking"),
        ("trigger-gap", {"iterations": "0"}, "iterations"),
        ("locking", {"gap": "2,-1"}, "gap"),
        ("locking", {"writers": "0"}, "writers"),
        ("locking", {"locking": "none,spin"}, "locking"),
        ("clock-skew", {"sessions": "0"}, "sessions"),
        ("key-collapse", {"keys": "0"}, "keys"),
    ],
)
def test_bad_scenario_parameters_name_the_parameter(name: str, params: dict[str, str], needle: str) -> None:
    with pytest.raises(BadParameter, match=needle):
        parse_params(get_scenario(name), params)


def test_unknown_scenario_parameter() -> None:
    with pytest.raises(UnknownName, match="colour"):
        parse_params(get_scenario("trigger-gap"), {"colour": "1"})


@pytest.mark.slow
def test_full_scale_clock_and_keys_reproduce_the_seed_direction() -> None:
    clock = {r["order"]: r for r in run("clock-skew").table("orders").records()}
    assert clock["seq"]["orphanRes"] == 0 and clock["ts"]["orphanRes"] > 0  # type: ignore[operator]
    collapsed, control = run("key-collapse").table("keys").records()
    assert control["mixedSources"] == control["turnSrcMix"] == control["dupCallId"] == 0
    assert collapsed["mixedSources"] > 200  # type: ignore[operator]
