"""``lint [--from FORMAT] DIR|GLOB`` (issue 51, item 6): an archive of logs, each file linted on its
own, the same bytes on one process, on ``--jobs`` processes, and on a real Dask cluster.

The cluster is the one tests/test_executor_dask.py starts (a scheduler and two worker processes,
each importing turncheck on its own); those tests are skipped, with the reason, without the
optional extra ``dask[distributed]``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_lint_follow import CLEAN, ORPHAN, span_line

from turncheck.cli.project import example_history


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """Three days of OTLP exports, one with an orphaned result, and one of our own logs."""
    root = tmp_path / "traces"
    (root / "day2").mkdir(parents=True)
    (root / "day1.jsonl").write_text(span_line(1, CLEAN) + span_line(2, CLEAN, "other"))
    (root / "day2" / "a.jsonl").write_text(span_line(3, CLEAN) + span_line(4, ORPHAN))
    (root / "day3.jsonl").write_text(span_line(5, CLEAN))
    return root


def alone(cli: Any, *args: str) -> tuple[int, str]:
    code, out, _ = cli("lint", *args)
    return code, out


def test_each_file_reads_as_it_does_alone_in_sorted_order(cli: Any, archive: Path) -> None:
    code, out, err = cli("lint", "--from", "otel", str(archive), "-q")
    files = sorted(archive.rglob("*.jsonl"))
    expected = "".join(alone(cli, "--from", "otel", str(f))[1] for f in files)
    assert code == 1 and err == ""
    assert out == expected + "3 files: 2 clean, 1 with problems, 0 not read\n"
    assert files[1].name == "a.jsonl" and f"request {files[1]}:2: record 2: trace {4:032x}" in out


def test_a_clean_archive_exits_0(cli: Any, archive: Path) -> None:
    (archive / "day2" / "a.jsonl").unlink()
    code, out, _ = cli("lint", "--from", "otel", str(archive), "-q")
    assert code == 0 and out.endswith("2 files: 2 clean, 0 with problems, 0 not read\n")


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_jobs_give_the_bytes_of_one_process(cli: Any, archive: Path, fmt: str) -> None:
    one = cli("lint", "--from", "otel", str(archive), "-q", "--format", fmt)
    two = cli("lint", "--from", "otel", str(archive), "-q", "--format", fmt, "--jobs", "2")
    assert one == two and one.code == 1
    if fmt == "json":
        assert [json.loads(line)["clean"] for line in one.out.splitlines()] == [True, False, True]


@pytest.mark.parametrize("name", ["day1.jsonl", "day2/a.jsonl", "day4.jsonl"])
def test_one_file_on_jobs_prints_what_lint_file_prints(cli: Any, archive: Path, name: str) -> None:
    (archive / "day4.jsonl").write_text("{}\n")  # not OTel: the same one-line refusal, exit 2
    one = cli("lint", "--from", "otel", str(archive / name))
    assert cli("lint", "--from", "otel", str(archive / name), "--jobs", "2") == one
    assert one.code == {"day1.jsonl": 0, "day2/a.jsonl": 1, "day4.jsonl": 2}[name]


def test_a_glob_and_several_files(cli: Any, archive: Path) -> None:
    pattern = cli("lint", "--from", "otel", f"{archive}/**/*.jsonl", "-q")
    folder = cli("lint", "--from", "otel", str(archive), "-q")
    assert pattern == folder
    listed = cli("lint", "--from", "otel", str(archive / "day3.jsonl"), str(archive / "day1.jsonl"), "-q")
    assert listed.code == 0 and listed.out.index("day1.jsonl") < listed.out.index("day3.jsonl")


def test_a_file_not_read_is_one_line_and_the_run_goes_on(cli: Any, archive: Path) -> None:
    bad = archive / "day2" / "b.jsonl"
    bad.write_text('{"resourceSpans": 7}\n')
    code, out, err = cli("lint", "--from", "otel", str(archive), "-q")
    assert code == 2  # the verdict does not cover b.jsonl
    assert (
        err
        == f"turncheck: error: {bad}:1: 'resourceSpans' must be a list, got int (not checked; the run goes on)\n"
    )
    assert str(archive / "day3.jsonl") in out  # the files after it were linted
    assert out.endswith(
        f"4 files: 2 clean, 1 with problems, 1 not read ({bad}): not covered by this verdict\n"
    )


def test_our_own_logs_too(cli: Any, tmp_path: Path) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(example_history(), tmp_path / name)
    code, out, _ = cli("lint", str(tmp_path), "-q")
    assert out == alone(cli, str(tmp_path / "a.jsonl"))[1] + alone(cli, str(tmp_path / "b.jsonl"))[1] + (
        "2 files: 0 clean, 2 with problems, 0 not read\n"
    )
    assert code == 1


@pytest.mark.parametrize("spec", ["empty", "empty/*.jsonl"])
def test_nothing_to_lint_is_refused(cli: Any, tmp_path: Path, spec: str) -> None:
    (tmp_path / "empty").mkdir()
    code, out, err = cli("lint", "--from", "otel", str(tmp_path / spec))
    assert code == 2 and out == "" and "holds no file to lint" in err


def test_a_dask_cluster_gives_the_bytes_of_one_process(cli: Any, archive: Path, dask_scheduler: str) -> None:
    """A real scheduler and two worker processes (tests/test_executor_dask.py's cluster): stdout
    and ``--format json`` byte for byte those of one process."""
    (archive / "day2" / "b.jsonl").write_text('{"resourceSpans": 7}\n')  # one file not read, too
    for fmt in ("table", "json"):
        one = cli("lint", "--from", "otel", str(archive), "-q", "--format", fmt)
        on_dask = cli(
            "lint", "--from", "otel", str(archive), "-q", "--format", fmt, "--scheduler", dask_scheduler
        )
        assert on_dask == one and one.code == 2
