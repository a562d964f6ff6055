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


def test_an_output_block_is_the_commands_printed_lines(tmp_path: Path) -> None:
    """kind=output runs the command in the page's scratch folder (a later command reads what an
    earlier one wrote), keeps the lines asked for, strips a wall-clock time, shows the exit status."""
    path = tmp_path / "page.md"
    check = "turncheck check trigger --param locking=none --param gap=1 --trace-out t.json --engine explore"
    path.write_text(
        f"<!-- figures kind=output keep=^counterexample cmd='{check}' -->\n<!-- /figures -->\n"
        "<!-- figures kind=output 'keep=^replay|^still' 'strip=, [0-9]+ steps$' cmd='turncheck replay t.json' -->\n"
        "<!-- /figures -->\n"
    )
    assert main([str(path), "--write"]) == 0
    text = path.read_text()
    assert f"$ {check}\n...\ncounterexample: bounded-peak-turns broken in 4 steps" in text
    assert "(exit status 1)" in text and "replay of t.json: model trigger (" in text
    assert "), 4 steps\n" not in text  # stripped
    assert main([str(path), "--check"]) == 0
    path.write_text(text.replace("broken in 4 steps", "broken in 3 steps", 1))
    assert main([str(path), "--check"]) == 1


def test_output_blocks_run_only_turncheck_and_copy_only_repository_folders(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- figures kind=output cmd='ls /' -->\n<!-- /figures -->\n")
    with pytest.raises(BadParameter, match="only 'turncheck"):
        regenerate(page.read_text(), page, full=False)
    page = ROOT / "docs" / "nowhere.md"
    with pytest.raises(BadParameter, match="copy="):
        regenerate(
            "<!-- figures kind=output copy=../etc cmd='turncheck --help' -->\n<!-- /figures -->\n",
            page,
            False,
        )
