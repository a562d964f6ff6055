"""The one registration mechanism: names in order, one registration per name, unknown names listed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.errors import TurncheckError
from turncheck.models.registry import DuplicateRegistration, Registry, UnknownRegistration


def test_register_direct_and_as_decorator_keeps_registration_order() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("two", 2)

    @reg.register("double")
    def double(x: int) -> int:
        return 2 * x

    reg.register("one", 1)
    assert reg.names() == ("two", "double", "one")
    assert list(reg) == ["two", "double", "one"]
    assert reg["double"] is double and double(4) == 8  # the decorator hands the function back
    assert "one" in reg and "three" not in reg and len(reg) == 3


def test_a_name_is_registered_once() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("one", 1)
    with pytest.raises(DuplicateRegistration, match="number 'one' is registered twice"):
        reg.register("one", 11)
    assert reg["one"] == 1


def test_an_unknown_name_is_one_line_naming_the_choices() -> None:
    reg: Registry[int] = Registry("number")
    reg.register("one", 1)
    reg.register("two", 2)
    with pytest.raises(UnknownRegistration) as info:
        reg["three"]
    assert isinstance(info.value, TurncheckError) and isinstance(info.value, KeyError)
    assert str(info.value) == "unknown number 'three' (known: one, two)"


def test_the_home_module_is_imported_before_the_first_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built-ins register when their home is imported; the first lookup imports it, once."""
    import turncheck.models.registry as registry_module

    reg: Registry[int] = Registry("number", home="tc_numbers_home")
    monkeypatch.setattr(registry_module, "_probe", reg, raising=False)
    (tmp_path / "tc_numbers_home.py").write_text(
        "import turncheck.models.registry as r\nr._probe.register('one', 1)\nr._probe.register('two', 2)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert reg.names() == ("one", "two")
    assert reg["two"] == 2 and reg.names() == ("one", "two")  # imported once: nothing registered twice


def test_turncheck_list_shows_every_registry_built_ins_in_their_order(cli: Any) -> None:
    code, out, _ = cli("list", "--format", "json")
    assert code == 0
    names = json.loads(out)
    assert names.pop("format") == "turncheck/1"  # stdout JSON names its format
    assert names["strategies"][:7] == ["M0", "M1", "M2", "M3", "M4", "M5", "REQ"]
    assert names["scenarios"][:3] == ["trigger-gap", "locking", "testbench"]  # the story order
    assert {"trigger", "projector", "clock", "keys"} <= set(names["models"])
    assert names["plots"][0] == "peaks-vs-max-turns" and names["plots"][-1] == "counterexample"
    assert set(names) == {
        "strategies",
        "models",
        "scenarios",
        "plots",
        "stores",
        "peers",
        "lockings",
        "formats",
        "extensions",
    }  # benchmarks: not shipped
    code, out, _ = cli("list", "plots")
    assert code == 0 and out.splitlines() == names["plots"]
    code, out, err = cli("list", "widgets")
    assert code == 2 and out == "" and len(err.splitlines()) == 1


def test_every_kind_is_listed_by_its_singular_too(cli: Any) -> None:
    """``list model`` is ``list models``: one rule gives every kind its singular."""
    from turncheck.cli.listing import KINDS, singular

    words = [singular(kind) for kind in KINDS]
    assert words == [
        "strategy",
        "model",
        "scenario",
        "plot",
        "store",
        "peer",
        "locking",
        "format",
        "extension",
    ]
    for kind, word in zip(KINDS, words, strict=True):
        assert cli("list", word) == cli("list", kind) and cli("list", kind).code == 0, word
        one, many = (json.loads(cli("list", w, "--format", "json").out) for w in (word, kind))
        assert one == many and list(one) == ["format", kind]  # the stdout JSON format key, then the kind
    code, out, _ = cli("list", "--help")
    assert code == 0 and "each also in the singular ('list model' is 'list models')" in " ".join(out.split())
    code, out, err = cli("list", "modle")
    assert (
        code == 2
        and out == ""
        and err
        == (
            "turncheck: error: unknown kind 'modle' (known: strategies, models, scenarios, plots, stores, peers, "
            "lockings, formats, extensions, each also in the singular)\n"
        )
    )


def test_an_unknown_name_from_the_command_line_lists_the_choices(cli: Any) -> None:
    code, _, err = cli("bench", "nope")
    assert code == 2 and err.startswith("turncheck: error: unknown benchmark 'nope' (known: check, ")


def test_random_generators_are_built_in_one_place() -> None:
    """Every seeded numpy stream comes from turncheck.models.random_streams (one table)."""
    root = Path(__file__).resolve().parent.parent
    found = [
        str(p.relative_to(root))
        for folder in (
            "models",
            "sim",
            "scenarios",
            "reports",
            "cli",
            "integrations",
            "benchmarks",
            "turncheck",
        )
        for p in (root / folder).rglob("*.py")
        if re.search(r"SeedSequence\(|default_rng\(|np\.random\.Generator\(", p.read_text(encoding="utf-8"))
    ]
    assert found == ["models/random_streams.py"]


def test_a_directly_imported_scenario_module_does_not_move_it_in_the_listing() -> None:
    """Importing one built-in scenario module before the registry's home registers it after every
    module the home imports meanwhile; the listing still follows the scenarios' own order."""
    code = (
        "import turncheck.scenarios.locking\n"
        "from turncheck.scenarios.base import SCENARIOS\n"
        "print(','.join(SCENARIOS.names()[:3]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "trigger-gap,locking,testbench"


@pytest.mark.parametrize(
    "first",
    ["turncheck.sim.stress.stores", "turncheck.integrations.stores", "turncheck.integrations.plots",
     "turncheck.integrations.stores.adk_database", "turncheck.models.projector"],
)  # fmt: skip
def test_a_kind_with_a_home_in_the_integrations_lists_the_same_whoever_is_imported_first(first: str) -> None:
    """A registry with two homes (the core's, then one in turncheck.integrations) lists the core's
    built-ins first even when an integration module is imported before either home: a built-in
    registering as its home is imported never loads the later home first."""
    code = (
        f"import {first}\n"
        "from turncheck.sim.stress.stores import STORES\n"
        "from turncheck.reports.plots.plot import PLOTS\n"
        "from turncheck.models.projector import resolve_strategy\n"
        "print(','.join(STORES.names()))\n"
        "print(','.join(PLOTS.names()[-2:]))\n"
        "print(resolve_strategy('peer:langchain').__module__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "sqlite,postgres,agents-sqlite,langgraph-sqlite,adk-database",
        "peers,counterexample",
        "turncheck.integrations.peers.langchain_trim",
    ]


def test_a_located_name_imports_its_home_alone_and_the_listing_keeps_its_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``locate`` names the one home of a built-in: a lookup of ``b1`` imports ``tc_home_b``
    alone (issue 58 item 7: a lone ``check`` imports one model); listing then imports the rest,
    and ``key`` lists them as if every home had been imported in order. A name ``locate`` places
    in a home that does not register it, or in a module that is no home, falls back to every
    home: nothing but a declared home is ever imported for a name."""
    import turncheck.models.registry as registry_module

    homes = ("tc_home_a", "tc_home_b")
    reg: Registry[str] = Registry(
        "letter", home=homes, key=lambda value: value[0], locate={"b1": "tc_home_b", "a9": "tc_home_a",
                                                                 "z": "tc_not_a_home"}.get,
    )  # fmt: skip
    monkeypatch.setattr(registry_module, "_probe", reg, raising=False)
    for home, names in (("tc_home_a", ("a1", "a2")), ("tc_home_b", ("b1",))):
        lines = "".join(f"r._probe.register({n!r}, {n!r})\n" for n in names)
        (tmp_path / f"{home}.py").write_text(f"import turncheck.models.registry as r\n{lines}", encoding="utf-8")
    (tmp_path / "tc_not_a_home.py").write_text("raise SystemExit('imported')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in (*homes, "tc_not_a_home"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    assert reg["b1"] == "b1"
    assert "tc_home_b" in sys.modules and "tc_home_a" not in sys.modules  # the one home, not the other
    assert reg.names() == ("a1", "a2", "b1")  # every home now, in key order though b came first
    fresh: Registry[str] = Registry("letter", home=homes, locate={"z": "tc_not_a_home", "a9": "tc_home_a"}.get)
    monkeypatch.setattr(registry_module, "_probe", fresh, raising=False)
    for module in homes:
        monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(UnknownRegistration, match=r"unknown letter 'z' \(known: a1, a2, b1\)"):
        fresh["z"]  # not a home: never imported (it would exit), the full lookup refuses the name
    assert "tc_not_a_home" not in sys.modules
    with pytest.raises(UnknownRegistration, match="unknown letter 'a9'"):
        fresh["a9"]  # its home does not register it: every home is asked, then refused
