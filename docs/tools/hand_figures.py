"""Numbers typed by hand in README.md and docs/: the scan that keeps every figure generated.

A digit in a page must sit in a generated block (:mod:`docs.tools.doc_figures`), in code (a
command, an expression, a parameter: an inline span holding a letter or an operator, a fenced
command's own words), or match one of the allowed forms below: names with digits in them (M0,
cl100k, U+2028), seed and section numbers, issue numbers, years, versions, exit statuses and list
numbering. ``tests/test_doc_hand_figures.py`` runs it over every page and fails on any line it finds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from docs.tools.doc_figures import BLOCK

_ALLOWED = re.compile(
    r"\b(?i:seeds?) \d{3}(?:\s*(?:and|,|/)\s*\d{3})*\b|§\s?\d+(?:\.\d+)*(?:\s*[–-]\s*§?\d+)?"
    r"|#\d+|\bissues? \d+(?:\s*(?:and|,|–)\s*\d+)*|\b(?:19|20)\d\d\b"
    r"|\b(?:Python|version|v)\s?\d+(?:\.\d+)+|\b(?i:exit(?:s| status| code)?)\s*\**\d+\**"
    r"|^\s*(?:#{1,6}\s+)?\d+\.\s"
)
_NUMBER = re.compile(r"(?<![\w.+#§/\-])\d(?:[\d,.\u202f\u2009 ]*\d)?(?![\w])")
_COMMAND = re.compile(
    r"^\s*(?:\$\s*)?(?:turncheck|python|pip|pytest|git|apt-get|cd|export|uv|ruff|mypy|mkdocs|\.ci/)\b"
)
_CODE_FENCES = (
    "bash",
    "sh",
    "shell",
    "python",
    "py",
    "toml",
    "yaml",
    "json",
    "jsonl",
    "ini",
    "dot",
    "mermaid",
    "javascript",
    "typescript",
    "java",
)


def hand_typed_figures(text: str, checked_fences: Sequence[str] = ()) -> list[tuple[int, str]]:
    """Every line of a Markdown page that holds a number typed by hand: ``(line number, line)``.

    ``checked_fences`` names fence languages whose blocks a test already runs and compares on this
    page (``console`` on the pages tests/test_docs.py and tests/test_your_agent_doc.py execute)."""
    text = BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = (stripped[3:].strip().split() or [""])[0] if fence is None else None
            continue
        probe = line
        if fence is not None:
            if fence in checked_fences:
                continue
            if fence in _CODE_FENCES or _COMMAND.match(line):
                probe = line.partition(" # ")[2] if " # " in line else ""  # a command: only its comment
        else:
            probe = re.sub(r"`[^`]*[A-Za-z=<>()+*/_\[\]{}|:-][^`]*`", "", probe)
        probe = re.sub(r"\]\([^)]*\)|<!--.*?-->|<[^>]+>", " ", probe)
        if _NUMBER.search(_ALLOWED.sub(" ", probe)):
            found.append((number, line))
    return found


__all__ = ["hand_typed_figures"]
