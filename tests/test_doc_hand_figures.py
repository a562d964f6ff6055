"""No number in README.md or docs/ is typed by hand: each sits in a generated block (see
tests/test_doc_figures.py), in code (a command, an expression, a parameter), or in one of the
allowed forms of :func:`docs.tools.hand_figures.hand_typed_figures` (names such as M0 or
cl100k, seed and section numbers, issue numbers, years, versions, exit statuses, list numbering).

Lines typed before this test existed and not yet converted are listed, verbatim, in
``tests/hand_figures_pending.txt`` (``PATH<TAB>LINE``; empty since every page was converted). That
list may only shrink: a new or edited line with a number fails here, and a listed line that is gone
must be struck from the list.
"""

from __future__ import annotations

from pathlib import Path

from test_docs import RUN_PAGES, SLOW_PAGES

from docs.tools.doc_figures import main
from docs.tools.hand_figures import hand_typed_figures

ROOT = Path(__file__).resolve().parent.parent
PENDING = ROOT / "tests" / "hand_figures_pending.txt"
ELSEWHERE: set[str] = set()  # every page is scanned
# pages whose ``console`` blocks a test runs and compares with what the commands print (the slow
# tier's in CI's slow run)
RUN_CONSOLE = {f"docs/{page}" for page in (*RUN_PAGES, *SLOW_PAGES)} | {
    "docs/your-agent.md",  # test_your_agent_doc.py
    "docs/exec-protocol.md",  # test_exec_protocol.py
}
PAGES = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
         if p.relative_to(ROOT).as_posix() not in ELSEWHERE]  # fmt: skip


def pending() -> set[tuple[str, str]]:
    entries = set()
    for line in PENDING.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            path, _, text = line.partition("\t")
            entries.add((path, text))
    return entries


def found() -> set[tuple[str, str]]:
    return {
        (p.relative_to(ROOT).as_posix(), line)
        for p in PAGES
        for _, line in hand_typed_figures(
            p.read_text(encoding="utf-8"),
            ("console",) if p.relative_to(ROOT).as_posix() in RUN_CONSOLE else (),
        )
    }


def test_no_new_figure_is_typed_by_hand() -> None:
    new = sorted(found() - pending())
    assert not new, "numbers typed by hand (generate them: docs/tools/doc_figures.py):\n" + "\n".join(
        f"{path}: {line}" for path, line in new
    )


def test_the_pending_list_only_shrinks() -> None:
    gone = sorted(pending() - found())
    assert not gone, "converted — strike from tests/hand_figures_pending.txt:\n" + "\n".join(
        f"{path}: {line}" for path, line in gone
    )


def test_a_typed_figure_is_caught_and_code_or_allowed_forms_are_not() -> None:
    page = "\n".join(
        [
            "The peak was 81 live turns.",  # 1: caught
            "Run `turncheck check trigger --param gap=1` on seed 004 §9 (issue 14, 2026).",
            "M0–M5 under cl100k; exit status 2; Python 3.11.",
            "1. a numbered step",
            "```bash",
            "turncheck sweep trigger-gap --grid writers=1,4,8   # about 12 s",  # 6: its comment is caught
            "```",
            "```text",
            "states: 124 distinct",  # 9: output typed by hand
            "```",
            "<!-- figures kind=table cmd='turncheck scenario trigger-gap' -->",
            "| 8 | 81 |",
            "<!-- /figures -->",
            "A hand-typed `26 497` in code is still a number.",  # 14
            "## Seed 004 at full scale. Exit status 2 either way.",  # capitals allowed too
        ]
    )
    assert [n for n, _ in hand_typed_figures(page)] == [1, 6, 9, 14]
    assert [n for n, _ in hand_typed_figures(page, ("text",))] == [1, 6, 14]  # a test runs those blocks


def test_scan_lists_lines_on_the_command_line(tmp_path: Path, capsys: object) -> None:
    page = tmp_path / "p.md"
    page.write_text("fine\nthe peak was 81\n")
    assert main(["--scan", str(page)]) == 0
    assert f"{page}:2: the peak was 81" in capsys.readouterr().out  # type: ignore[attr-defined]
