"""Defaults and exit statuses the docs state are the ones the code has.

The hand-figure scan (``tests/test_doc_hand_figures.py``) accepts a number written as code —
`` `budget=4` `` — because a command line or a parameter assignment is an input, not a measured
figure. When the prose calls such an assignment a *default*, though, it is a claim about the code,
and it drifts when the code changes: this test reads every `` `name=value` `` that follows the
word "default" (up to the end of its sentence) in README.md and docs/*.md, and requires a
parameter of that name — of a scenario, a model or a cost model — whose default renders as that
value. An aside in parentheses is not a claim; a name no parameter has (`synchronous=FULL`, a
SQLite setting) is not ours to check. Every exit status a page names (`exit 3`, "exits 1") must
be one some command returns.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from turncheck.cli.app import EXIT_BUG, EXIT_INTERRUPTED, EXIT_USAGE
from turncheck.models.catalog import MODELS, factory_parameters
from turncheck.models.cost import EstimateCost
from turncheck.scenarios.base import SCENARIOS
from turncheck.sim.checking import CheckReport

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLAIM = re.compile(r"\bdefaults?\b(.*?)(?:\.\s|\.$|;|\||\n\n|$)", re.S | re.I)
ASIDE = re.compile(r"\([^()]*\)")
EXIT = re.compile(r"\bexit(?:s| status| code)?\s*\**(\d+)", re.I)
ASSIGNMENT = re.compile(r"`([a-z_][a-z0-9_]*)=([^`\s]+)`")


def render(value: Any) -> str:
    """How the docs write a default: ``true``, ``1,3``, ``60000``, ``M1``, ``1.5``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ",".join(render(v) for v in value)
    return str(value)


def code_defaults() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name in SCENARIOS.names():
        for f in dataclasses.fields(SCENARIOS[name].params_type):
            if f.default is not dataclasses.MISSING:
                out.setdefault(f.name, set()).add(render(f.default))
    for name in MODELS.names():
        for key, default in factory_parameters(MODELS[name]).items():
            out.setdefault(key, set()).add(render(default))
    for key, p in inspect.signature(EstimateCost).parameters.items():
        if p.default is not inspect.Parameter.empty:
            out.setdefault(key, set()).add(render(p.default))
    return out


def same(value: str, defaults: set[str]) -> bool:
    if value in defaults:
        return True
    try:
        return any(float(value) == float(d) for d in defaults)
    except ValueError:
        return False


def claims(text: str) -> list[tuple[str, str]]:
    found = []
    for sentence in CLAIM.finditer(text):
        found += ASSIGNMENT.findall(ASIDE.sub("", sentence.group(1)))
    return found


def test_the_claim_reader_reads_a_list_after_defaults() -> None:
    text = "Parameters, with their defaults: `strategy=M1` (M0–M5),\n`budget=4`, `reuse=true`. Then `x=9`."
    assert claims(text) == [("strategy", "M1"), ("budget", "4"), ("reuse", "true")]
    assert claims("(default `cjk_ratio=1.5`; the seed also uses `cjk_ratio=2.5`)") == [("cjk_ratio", "1.5")]
    assert claims("At the defaults without it (`budget=0`), one line") == []


def test_a_drifted_default_is_caught() -> None:
    defaults = code_defaults()
    assert same("4", defaults["budget"]) and same("0", defaults["gap_ms"])
    assert not same("5", {"4"}) and not same("M2", defaults["strategy"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_stated_default_is_the_codes(page: Path) -> None:
    defaults = code_defaults()
    wrong = [
        f"`{name}={value}` (the code's: {sorted(defaults[name])})"
        for name, value in claims(page.read_text(encoding="utf-8"))
        if name in defaults and not same(value, defaults[name])
    ]
    assert not wrong, f"{page.name} states defaults the code does not have: {'; '.join(wrong)}"


def exit_statuses() -> set[int]:
    """What commands return: a check's verdicts, and the CLI's own statuses."""
    verdicts = {
        CheckReport.exit_code.fget(SimpleNamespace(verdict=v)) for v in ("pass", "fail", "inconclusive")
    }  # type: ignore[attr-defined]
    return verdicts | {EXIT_USAGE, EXIT_BUG, EXIT_INTERRUPTED}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_stated_exit_status_is_one_a_command_returns(page: Path) -> None:
    stated = {int(n) for n in EXIT.findall(page.read_text(encoding="utf-8"))}
    assert stated <= exit_statuses(), (
        f"{page.name} names exit statuses no command returns: {stated - exit_statuses()}"
    )


def test_the_exit_statuses_are_read_from_the_code() -> None:
    assert exit_statuses() == {0, 1, 3, EXIT_USAGE, EXIT_BUG, EXIT_INTERRUPTED}
    assert EXIT.findall("exits 1 when …; exit status **2**; Exit code 130") == ["1", "2", "130"]
