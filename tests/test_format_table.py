"""docs/your-agent.md's format table names every reader ``--from`` takes, each with the product
versions its tests were built from (issue 51, "Done when"); a version written ``PKG vX`` is the pin
the suite runs with, so a moved pin or a new reader without its row fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

from turncheck.models.importers import FORMATS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "your-agent.md"
VERSION = re.compile(r"(?<![\w.-])([a-z][a-z0-9-]*) v(\d+(?:\.\d+)+)\b")


def table() -> dict[str, tuple[str, str]]:
    """The rows of the table under "Every format `--from` reads": format → (product, versions)."""
    section = DOC.read_text(encoding="utf-8").split("## Every format `--from` reads", 1)[1]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.split("\n### ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            name = cells[0].strip("`")
            assert name not in rows, f"{name} has two rows"
            rows[name] = (cells[1], cells[2])
    return rows


def pins() -> dict[str, str]:
    """Package → version: constraints.txt, and the Node bridge's package-lock.json."""
    out = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split(";")[0].split("==")
            out[name.strip().lower()] = version.strip()
    lock = json.loads((ROOT / "bridges" / "node" / "package-lock.json").read_text(encoding="utf-8"))
    for path, package in lock.get("packages", {}).items():
        if path.startswith("node_modules/") and "/node_modules/" not in path[13:]:
            out.setdefault(path[len("node_modules/") :], package.get("version", ""))
    return out


def test_every_reader_has_a_row_naming_what_its_tests_were_built_from() -> None:
    rows = table()
    assert sorted(rows) == sorted(FORMATS), (
        sorted(set(FORMATS) - set(rows)),
        sorted(set(rows) - set(FORMATS)),
    )
    for name, (product, versions) in rows.items():
        assert product and versions, name


def test_each_version_named_is_the_pin_the_suite_runs_with() -> None:
    known = pins()
    checked = 0
    for name, (_, versions) in table().items():
        for package, version in VERSION.findall(versions):
            if package in known:
                assert known[package] == version, f"{name}: {package} v{version}, pinned {known[package]}"
                checked += 1
    assert checked >= 12  # the pinned libraries the readers' tests run: a table that names none is no check
