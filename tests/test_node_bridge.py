"""The Node bridge (bridges/node): its peers say why they cannot run, and a run asking for one
is refused with that reason; built, it runs the exact versions its package-lock.json pins."""

from __future__ import annotations

import json
from pathlib import Path

import doc_pages
import pytest

from turncheck.integrations.peers.bridge import NODE
from turncheck.integrations.peers.node_peers import TABLE
from turncheck.integrations.scenarios.peers import check
from turncheck.models.cost import EstimateCost
from turncheck.models.history import History
from turncheck.models.peer import PEERS
from turncheck.models.tokenizer import MissingExtra
from turncheck.scenarios.base import get_scenario, parse_params

ROOT = Path(__file__).resolve().parent.parent
NODE_PEERS = sorted(p for p in PEERS if PEERS[p].bridge is NODE)


def test_the_node_peers_are_registered_and_listed(cli) -> None:
    assert NODE_PEERS == ["peer:agents-js-session", "peer:langchainjs-trim", "peer:mastra-token-limiter",
                          "peer:mastra-token-limiter-contiguous", "peer:vercel-prune"]  # fmt: skip
    code, out, _ = cli("list", "peers")
    assert code == 0 and all(p in out.split() for p in NODE_PEERS)
    assert sorted(row[0] for row in TABLE) == NODE_PEERS
    assert all((ROOT / "bridges" / "node" / row[1][0]).is_file() for row in TABLE)


def test_without_node_or_npm_ci_a_node_peer_is_missing_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli
) -> None:
    monkeypatch.setenv("TURNCHECK_NODE_BRIDGE", str(tmp_path))
    assert NODE.missing() in (
        f"the node bridge is not built: cd {tmp_path} && npm ci",
        "node is not installed (not on PATH)",
    )
    assert PEERS["peer:vercel-prune"].missing() == NODE.missing()
    monkeypatch.setenv("TURNCHECK_NODE_BRIDGE", str(tmp_path / "absent"))
    if NODE.missing() != "node is not installed (not on PATH)":
        assert (
            NODE.missing()
            == f"no node bridge at {tmp_path / 'absent'} (a checkout's bridges/node; or set TURNCHECK_NODE_BRIDGE)"
        )
    monkeypatch.setenv("PATH", str(tmp_path))
    assert NODE.missing() == "node is not installed (not on PATH)"
    assert NODE.version("ai") == "not installed"
    project = NODE.projector("peer:vercel-prune", "peers/vercel-prune.mjs")  # not started yet
    with pytest.raises(
        MissingExtra, match=r"^peer:vercel-prune needs the node bridge: node is not installed"
    ):
        project(History([]), 100, EstimateCost())
    pytest.importorskip("faker", reason="the peers scenario needs the peers extra (faker)")
    with pytest.raises(MissingExtra, match="node is not installed"):
        check(parse_params(get_scenario("peers"), ["strategies=M0,peer:agents-js-session", "cost=estimate"]))
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("scenario", "peers", "-q", "-p", "strategies=peer:langchainjs-trim", "-p", "cost=estimate",
                         "--out", "out")  # fmt: skip
    assert (code, out) == (2, "") and err.count("\n") == 1 and "node is not installed" in err
    assert not (tmp_path / "out").exists()


def test_built_it_runs_the_pinned_versions() -> None:
    if (reason := NODE.missing()) is not None:
        pytest.skip(reason)
    lock = json.loads((ROOT / "bridges" / "node" / "package-lock.json").read_text())
    wanted = json.loads((ROOT / "bridges" / "node" / "package.json").read_text())["dependencies"]
    for package, version in wanted.items():
        assert version[0].isdigit(), f"{package} is not pinned exactly: {version}"
        assert lock["packages"][f"node_modules/{package}"]["version"] == version == NODE.version(package)
    assert {PEERS[p].library for p in NODE_PEERS} <= set(wanted)
    assert "ai" in wanted


def test_the_guide_shows_the_pins_and_the_loop_of_the_example() -> None:
    import re

    page = (ROOT / "docs" / "other-languages.md").read_text(encoding="utf-8")
    (shown,) = re.findall(r'^```json title="bridges/node/package\.json"\n(.*?)^```', page, re.S | re.M)
    pins = json.loads((ROOT / "bridges" / "node" / "package.json").read_text())["dependencies"]
    assert re.findall(r'^ +"([^"]+)": "([^"]+)",?$', shown, re.M) == list(pins.items())
    (loop,) = re.findall(r'^```javascript title="examples/exec/keep_last\.mjs"\n(.*?)^```', page, re.S | re.M)
    doc_pages.excerpt("other-languages.md", "examples/exec/keep_last.mjs", loop)  # the runner's rule
    typescript = page[page.index("## TypeScript") :].split("\n## ", 1)[0]  # the Java half has its own
    assert [t for t in re.findall(r"^\| `(peer:[\w-]+)`", typescript, re.M)] == [row[0] for row in TABLE]
