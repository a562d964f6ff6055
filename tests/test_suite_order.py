"""The suite's own order (issue 58 item 9): the heaviest modules start the run, and xdist's
``worksteal`` hands an idle worker the tail of the other's queue (tests/conftest.py)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import HEAVIEST_FIRST, heaviest_first, unknown_test_modules

ROOT = Path(__file__).resolve().parent.parent


def test_every_module_named_first_is_a_test_module_once() -> None:
    assert HEAVIEST_FIRST and unknown_test_modules(HEAVIEST_FIRST) == []
    assert len(set(HEAVIEST_FIRST)) == len(HEAVIEST_FIRST)
    # a renamed or removed module is named, as is anything that is not a test module of tests/
    assert unknown_test_modules(("tests/test_gone.py", "tests/conftest.py", "docs/test_x.py")) == [
        "tests/test_gone.py",
        "tests/conftest.py",
        "docs/test_x.py",
    ]


def test_the_named_modules_come_first_in_their_order_and_the_rest_keeps_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import conftest

    monkeypatch.setattr(conftest, "HEAVIEST_FIRST", ("tests/test_c.py", "tests/test_a.py"))
    ids = ["tests/test_a.py::x", "tests/test_b.py::y", "tests/test_c.py::z[1]", "tests/test_a.py::w",
           "tests/test_d.py::v", "tests/test_c.py::z[2]"]  # fmt: skip
    items: list[Any] = [SimpleNamespace(nodeid=i) for i in ids]
    heaviest_first(items)
    assert [i.nodeid for i in items] == [
        "tests/test_c.py::z[1]", "tests/test_c.py::z[2]", "tests/test_a.py::x", "tests/test_a.py::w",
        "tests/test_b.py::y", "tests/test_d.py::v",
    ]  # fmt: skip


def test_this_run_started_with_the_heaviest_modules(request: pytest.FixtureRequest) -> None:
    """The order of this very run (each xdist worker collects the whole of it, in one order)."""
    modules = [item.nodeid.partition("::")[0] for item in request.session.items]
    ranks = [HEAVIEST_FIRST.index(m) if m in HEAVIEST_FIRST else len(HEAVIEST_FIRST) for m in modules]
    assert ranks == sorted(ranks)


def test_the_readme_command_steals_work(request: pytest.FixtureRequest) -> None:
    import conftest

    def chosen(dist: str, numprocesses: int | None) -> str:
        config: Any = SimpleNamespace(option=SimpleNamespace(dist=dist, numprocesses=numprocesses))
        conftest.pytest_cmdline_main(config)
        return str(config.option.dist)

    assert chosen("no", 2) == "worksteal"  # -n logical, as the README runs it
    assert chosen("load", 2) == "load" and chosen("no", None) == "no" and chosen("no", 0) == "no"
    if os.environ.get("PYTEST_XDIST_WORKER"):  # this very run, when it runs under xdist
        assert (
            os.environ["TURNCHECK_SUITE_DIST"] == "worksteal"
            or "--dist" in request.config.invocation_params.args
        )
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "--dist" not in pyproject["tool"]["pytest"]["ini_options"]["addopts"]  # refused without xdist


def test_made_once_makes_a_folder_once_per_run_and_again_after_a_failed_make(
    made_once: Callable[[str, Callable[[Path], None]], Path], request: pytest.FixtureRequest
) -> None:
    made: list[Path] = []

    def make(folder: Path) -> None:
        made.append(folder)
        (folder / "input").write_text("made", encoding="utf-8")

    def broken(folder: Path) -> None:
        (folder / "half").write_text("", encoding="utf-8")
        raise OSError("disk full")

    name = f"made-once-{os.getpid()}-{request.node.name}"  # this worker's own
    first = made_once(name, make)
    assert made_once(name, make) == first and made == [first] and (first / "input").read_text() == "made"
    with pytest.raises(OSError, match="disk full"):
        made_once(f"{name}-again", broken)
    again = made_once(f"{name}-again", make)
    assert made == [first, again] and sorted(p.name for p in again.iterdir()) == ["input"]
