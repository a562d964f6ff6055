"""Every generated block of figures in README.md and docs/ is what its command produces now.

Quick-scale blocks are regenerated here on every run and compared byte for byte; full-scale
blocks must carry the hash of their result file, and the ``slow`` test reruns their commands.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from turncheck.models.errors import BadParameter
from turncheck.reports.doc_figures import BlockSpec, blocks, main, regenerate, run_command

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_docs_have_generated_blocks() -> None:
    specs = [s for p in DOCS for s in blocks(p.read_text(encoding="utf-8"))]
    commands = {c for s in specs for c in s.commands}
    assert "turncheck scenario trigger-gap" in commands and "turncheck scenario clock-skew" in commands
    assert any(s.full for s in specs) and any(not s.full for s in specs)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_quick_blocks_match_what_their_commands_print(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    new, diffs, _ = regenerate(text, path, full=False)
    assert not diffs, (
        "stale figures (run python -m turncheck.reports.doc_figures --write FILE): "
        + "; ".join(f"line {d.line}: {d.why}" for d in diffs)
    )
    assert new == text


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_full_blocks_carry_a_result_hash(path: Path) -> None:
    for spec in blocks(path.read_text(encoding="utf-8")):
        if spec.full:
            assert spec.sha256 and len(spec.sha256) == 16 and int(spec.sha256, 16) >= 0, spec.commands


@pytest.mark.slow
@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_full_blocks_match_their_commands_and_hashes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    _, diffs, _ = regenerate(text, path, full=True)
    assert not diffs, "; ".join(f"line {d.line}: {d.why} ({d.commands})" for d in diffs)


def test_a_changed_figure_is_caught_and_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "page.md"
    cmd = "turncheck scenario trigger-gap --param writers=4 --param gap=2 --param iterations=500"
    path.write_text(
        f"x\n<!-- figures kind=table columns=peak,post_peak cmd='{cmd}' -->\n| 99 |\n<!-- /figures -->\n"
    )
    assert main([str(path), "--check"]) == 1
    assert main([str(path), "--write"]) == 0
    assert main([str(path), "--check"]) == 0
    assert "| peak | post_peak |" in path.read_text()


@pytest.mark.parametrize(
    "spec,needle",
    [
        ("kind=table", "cmd"),
        ("kind=pie cmd='turncheck scenario trigger-gap'", "kind"),
        ("oops cmd='turncheck scenario trigger-gap'", "key=value"),
    ],
)
def test_bad_markers_are_refused(spec: str, needle: str) -> None:
    with pytest.raises(BadParameter, match=needle):
        BlockSpec.parse(spec)


def test_only_scenario_commands_run() -> None:
    with pytest.raises(BadParameter, match="only"):
        run_command("rm -rf /")
    with pytest.raises(BadParameter, match="cannot read"):
        run_command("turncheck scenario trigger-gap --iterations 5")
