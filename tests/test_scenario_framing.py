"""Scenario ``framing`` (seed 004 §8) at a reduced scale; the full 200 000 records are marked slow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind, dumps_event
from turncheck.reports.tables import write_result
from turncheck.scenarios.base import get_scenario, parse_params
from turncheck.scenarios.framing import FramingParams, build, event_records, run

SMALL = FramingParams(records=2000, tears=(260, 940, 1580), at=940)


def quiet(done: int, total: int) -> None:
    assert 0 < done <= total


@pytest.fixture(scope="module")
def small():  # type: ignore[no-untyped-def]
    return run(SMALL, quiet)


def test_records_are_the_stores_event_serialization() -> None:
    records = event_records(12, seed=7)
    for i, rec in enumerate(records):
        kind = [Kind.USER, Kind.CALL, Kind.RESULT, Kind.TERM][i % 4]
        chars = json.loads(rec)["chars"]
        call = f"c{i // 4}" if kind in (Kind.CALL, Kind.RESULT) else None
        event = Event(i, f"s{i // 200}", (i // 4) % 50, kind, call_id=call, ts=float(i), chars=chars)
        assert rec == dumps_event(event).encode()
    assert event_records(12, seed=7) == records != event_records(12, seed=8)


def test_torn_tail_table_matches_the_seed_shape(small) -> None:  # type: ignore[no-untyped-def]
    table = small.table("torn_tail")
    assert table.column("torn at record") == [260, 260, 940, 940, 1580, 1580]
    assert table.column("framing") == ["lines", "frames"] * 3
    assert table.column("records recovered") == table.column("torn at record")
    assert table.column("torn detected") == [1] * 6
    units = table.column("lines/frames read")
    assert units[0::2] == [261, 941, 1581] and units[1::2] == [260, 940, 1580]  # the seed's +1 line


def test_torn_then_append_counts_per_reader(small) -> None:  # type: ignore[no-untyped-def]
    rows = {(r["framing"], r["reader"]): r for r in small.table("torn_then_append").records()}
    lines, frames = build(event_records(2000, SMALL.seed))
    assert rows["lines", "lax fields"]["phantom"] == 1 and rows["lines", "lax fields"]["missing"] == 1
    assert rows["lines", "strict, skip bad lines"]["missing"] == 1  # the record after the torn one
    for framing, f in (("lines", lines), ("frames", frames)):
        stop = rows[framing, "store stop"]
        assert stop["outcome"] == f"refused at byte {f.starts[940]}" and stop["returned"] == 0
        resync = rows[framing, "store resync"]
        counts = (resync["returned"], resync["intact"], resync["phantom"], resync["missing"])
        assert counts == (1999, 1999, 0, 0)
        assert resync["bytes skipped"] == len(f.records[940]) // 2


def test_flipped_digit_is_only_caught_by_frames(small) -> None:  # type: ignore[no-untyped-def]
    rows = {(r["framing"], r["reader"]): r for r in small.table("flipped_digit").records()}
    for reader in ("store stop", "store resync"):
        assert rows["lines", reader]["phantom"] == 1 and rows["lines", reader]["outcome"] == "opened"
    assert rows["frames", "store stop"]["outcome"].startswith("refused at byte")
    assert rows["frames", "store resync"]["phantom"] == 0 and rows["frames", "store resync"]["missing"] == 1


def test_judgements_pass_and_bytes_are_reported(small) -> None:  # type: ignore[no-untyped-def]
    assert all(j.passed for j in small.judgements), [j.line() for j in small.judgements if not j.passed]
    sizes = {r["framing"]: r for r in small.table("bytes_on_disk").records()}
    assert sizes["frames"]["bytes on disk"] > 0 and sizes["lines"]["size vs lines"] == 1.0


def test_deterministic_result_files(tmp_path: Path, small) -> None:  # type: ignore[no-untyped-def]
    write_result(small, tmp_path / "a")
    write_result(run(SMALL, quiet), tmp_path / "b")
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes()


def test_registered_with_seed_defaults_and_checked_parameters() -> None:
    scenario = get_scenario("framing")
    params = parse_params(scenario, ["records=20000"])
    assert params.tear_points() == (2600, 9400, 15800) and params.append_point() == 9400
    assert FramingParams().tear_points() == (26_000, 94_000, 158_000)
    with pytest.raises(BadParameter, match="tears"):
        parse_params(scenario, ["records=1000", "tears=5,2000"])
    with pytest.raises(BadParameter, match="records"):
        parse_params(scenario, ["records=10"])
    with pytest.raises(BadParameter, match="at must be"):
        parse_params(scenario, ["records=1000", "at=999"])


@pytest.mark.slow
def test_full_scale_seed_figures() -> None:
    result = run(FramingParams(), quiet)
    assert all(j.passed for j in result.judgements)
    units = result.table("torn_tail").column("lines/frames read")
    assert units == [26001, 26000, 94001, 94000, 158001, 158000]
