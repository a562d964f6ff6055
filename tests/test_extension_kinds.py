"""A store, a peer and a locking strategy added from outside the package, one file each.

Each is a module in ``tmp_path`` that registers one value with the public
``turncheck.register_store`` / ``register_peer`` / ``register_locking``; an installed
``*.dist-info`` lists the three under the entry-point group ``turncheck.plugins``, and
``python -m turncheck`` runs in a subprocess, so discovery is the real one. Each is then used
where the built-ins are: ``stress --store``, ``project --strategy peer:NAME`` and the ``peers``
scenario, ``check trigger --param locking=NAME`` and the ``locking`` scenario.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

STORE = textwrap.dedent(
    '''
    """SQLite under a name of its own."""
    import turncheck
    from turncheck.sim.stress.sqlite import SqliteStore


    class SideStore(SqliteStore):
        name = "ext-sqlite"


    turncheck.register_store(turncheck.Store("ext-sqlite", SideStore, "sqlite3", "#0a0b0c", "SQLite, renamed"))
    '''
)
PEER = textwrap.dedent(
    '''
    """A peer that sends the newest turn only."""
    import turncheck


    def newest_turn(history, budget, cost):
        starts = history.seg_starts
        start = starts[-1] if starts else len(history)
        return turncheck.window_from_start(history, budget, cost, start, "peer:ext-newest")


    turncheck.register_peer(turncheck.Peer(
        "peer:ext-newest", newest_turn, library="pytest", module="pytest", call="keep the newest turn",
        counting="none (whole newest turn)", colour="#0d0e0f",
    ))
    '''
)
LOCKING = textwrap.dedent(
    '''
    """trim-to inside the compactor's critical section: the delete count taken at commit, under a lock."""
    import turncheck

    turncheck.register_locking(turncheck.Locking(
        "ext-locked-trim", "trim-to under a lock", "a critical section appends wait for; delete live − M at commit",
        reads="on-trigger", acts="after-gap", locks="appends-until-act", deletes="live-at-commit",
        peak_after_gap=lambda a, g, m: m + 1, turns_to_peak_after_gap=lambda a, g, m: -(-(m + 1) // a),
        post_after_gap=lambda a, g, m: m, declared=lambda a, g, m: m + (1 if g > 0 else 0),
        peak_formula="M + 1", post_formula="M", strength=5, colour="#102030", marker="*",
    ))
    '''
)
MODULES = {"ext_store": STORE, "ext_peer": PEER, "ext_locking": LOCKING}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file per extension, and one installed distribution listing the three."""
    site = tmp_path_factory.mktemp("site")
    for module, source in MODULES.items():
        (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / "ext_kinds-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ext-kinds\nVersion: 1.0\n", encoding="utf-8")
    entries = "".join(f"{m} = {m}\n" for m in MODULES)
    (info / "entry_points.txt").write_text(f"[turncheck.plugins]\n{entries}", encoding="utf-8")
    return site


def turncheck(
    site: Path, cwd: Path, *argv: str, plugins: str = ",".join(MODULES)
) -> subprocess.CompletedProcess[str]:
    # the suite runs with plugins off (tests/conftest.py): switch on exactly the ones named
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg", "TURNCHECK_PLUGINS": plugins}
    return subprocess.run(
        [sys.executable, "-m", "turncheck", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_each_is_listed_after_the_built_ins(site: Path, tmp_path: Path) -> None:
    run = turncheck(site, tmp_path, "list", "--format", "json")
    assert run.returncode == 0, run.stderr
    names = json.loads(run.stdout)
    assert names["stores"] == [
        "sqlite",
        "postgres",
        "agents-sqlite",
        "langgraph-sqlite",
        "adk-database",
        "ext-sqlite",
    ]
    assert names["peers"][0] == "peer:langchain" and names["peers"][-1] == "peer:ext-newest"
    assert names["lockings"] == ["none", "mutex", "cas", "append-sync", "trim-to", "ext-locked-trim"]
    assert names["extensions"] == list(MODULES)


def test_the_store_runs_under_stress(site: Path, tmp_path: Path) -> None:
    run = turncheck(site, tmp_path, "stress", "--store", "ext-sqlite", "--locking", "mutex", "--writers", "2",
                    "--seconds", "0.4", "--quiet", "--format", "json")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["store"] == "ext-sqlite" and report["verdict"] == "ok" and report["appends"] > 0
    wrong = turncheck(site, tmp_path, "stress", "--store", "ext-nope", "--seconds", "0.2", "--quiet")
    assert wrong.returncode == 2 and wrong.stderr == (
        "turncheck: error: unknown store 'ext-nope' (known: sqlite, postgres, agents-sqlite, langgraph-sqlite, "
        "adk-database, ext-sqlite, or package.module:Class)\n"
    )


def test_the_peer_projects_and_runs_in_the_peers_scenario(site: Path, tmp_path: Path) -> None:
    pytest.importorskip("faker", reason="the peers scenario needs the peers extra (faker)")
    run = turncheck(
        site, tmp_path, "project", "--example", "-b", "4000", "-s", "peer:ext-newest", "--format", "json"
    )
    assert run.returncode == 0, run.stderr
    assert all(json.loads(line)["strategy"] == "peer:ext-newest" for line in run.stdout.splitlines())
    run = turncheck(site, tmp_path, "scenario", "peers", "--scale", "tiny", "--quiet", "--out", "out",
                    "--param", "strategies=M5,peer:ext-newest", "--param", "cost=estimate")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads((tmp_path / "out" / "peers.json").read_text(encoding="utf-8"))
    tables = {t["name"]: t for t in result["tables"]}
    assert {r[0] for r in tables["peers"]["rows"]} == {"M5", "peer:ext-newest"}
    (library,) = tables["libraries"]["rows"]
    assert library[:2] == ["peer:ext-newest", "pytest"] and library[3:] == [
        "keep the newest turn",
        "none (whole newest turn)",
    ]


def test_the_locking_is_checked_and_simulated(site: Path, tmp_path: Path) -> None:
    params = ("--param", "locking=ext-locked-trim", "--param", "writers=2", "--param", "gap=1")
    run = turncheck(site, tmp_path, "check", "trigger", *params, "--param", "max_turns=2", "--param", "turns=3",
                    "--invariant", "bounded-peak-turns")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "explored worst-case peak 3 = closed form M + 1 with A=2, G=1, M=2 = 3 — agrees" in run.stdout
    run = turncheck(site, tmp_path, "scenario", "locking", "--scale", "tiny", "--quiet", "--out", "out",
                    "--param", "locking=ext-locked-trim,mutex")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = json.loads((tmp_path / "out" / "locking.json").read_text(encoding="utf-8"))
    table = result["tables"][0]
    rows = [dict(zip(table["columns"], r, strict=True)) for r in table["rows"]]
    ours = [r for r in rows if r["locking"] == "ext-locked-trim"]
    assert ours and all(r["within_bound"] and r["peak"] <= r["declared_bound"] for r in ours)
    wrong = turncheck(site, tmp_path, "check", "trigger", "--param", "locking=ext-nope")
    assert wrong.returncode == 2 and "ext-locked-trim" in wrong.stderr and len(wrong.stderr.splitlines()) == 1


def test_a_colour_is_taken_once(tmp_path: Path) -> None:
    """A colour draws one series of its kind: a second taker is refused, naming the holder."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "ext_red.py").write_text(
        "import turncheck\nturncheck.register_strategy('RED', lambda h, b, c: None, colour='#d62728')\n",
        encoding="utf-8",
    )
    info = site / "ext_red-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ext-red\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[turncheck.plugins]\nred = ext_red\n", encoding="utf-8")
    run = turncheck(site, tmp_path, "list", plugins="red")
    assert run.returncode == 2 and len(run.stderr.splitlines()) == 1
    assert "strategy 'RED': colour '#d62728' is taken by strategy 'M0'" in run.stderr
