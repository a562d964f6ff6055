"""The vendor catalogue's counterexamples, saved as traces under ``docs/vendor-traces/``.

Each case is one ``turncheck check NAME --param … --engine explore --trace-out DIR/STEM.trace.json``
of a failing variant of a model in :mod:`turncheck.integrations.vendors`: the explorer's shortest run
of the first violated property at ``STEM.trace.json``, each further violated property's beside
it as ``STEM.trace.PROPERTY.json`` (what ``check`` writes); a broken eventually-property's is a
lasso, its ``loop`` field the step its loop starts after. The files are a pure function of the
models, so ``tests/test_vendor_models.py`` regenerates them and compares bytes; after a change
to a model, ``python -m docs.tools.vendor_traces`` rewrites them (``--out DIR`` elsewhere) and
``turncheck replay docs/vendor-traces/STEM.trace.json --html PAGE`` shows one in the viewer.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Sequence
from pathlib import Path

from turncheck.cli.app import main as turncheck

TRACES = Path(__file__).resolve().parent.parent / "vendor-traces"

CASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("anthropic-background-compaction", "anthropic-background-compaction", ("variant=buggy",)),
    ("openai-agents-compaction", "openai-agents-compaction", ("variant=buggy",)),
    ("agents-js-compaction", "agents-js-compaction", ("variant=buggy",)),
    ("adk-sliding-window", "adk-sliding-window", ("variant=buggy",)),
    ("adk-session-store", "adk-session-store", ("variant=buggy",)),
    ("spring-ai-window", "spring-ai-window", ("variant=buggy",)),
    ("spring-ai-window-turn-snapped", "spring-ai-window", ("variant=turn-snapped",)),
    ("spring-ai-window-save-all", "spring-ai-window", ("variant=buggy", "writers=2")),
    ("adk-orphan-compaction", "adk-orphan-compaction", ("variant=buggy",)),
    ("spring-ai-session-branch", "spring-ai-session-branch", ("variant=buggy",)),
    ("spring-ai-mongo-save-all", "spring-ai-mongo-save-all", ("variant=buggy",)),
    ("openai-agents-compaction-replace", "openai-agents-compaction-replace", ("variant=buggy",)),
    (
        "openai-agents-compaction-replace-restore",
        "openai-agents-compaction-replace",
        ("variant=restore-on-failure",),
    ),
)
"""(file stem, model, parameters): every failing variant the docs page shows."""


def write_traces(out: Path) -> list[Path]:
    """Run every case into ``out``; the files written, in case order. A case that no longer
    fails (exit status other than 1) is an error: its page section would show nothing."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for stem, model, params in CASES:
        path = out / f"{stem}.trace.json"
        argv = ["check", model, *(w for p in params for w in ("--param", p)), "--engine", "explore", "-q"]
        with contextlib.redirect_stdout(io.StringIO()):
            code = turncheck([*argv, "--trace-out", str(path)])
        if code != 1:
            raise SystemExit(f"turncheck {' '.join(argv)} exited {code}, not 1: no counterexample to save")
        written += [path, *sorted(out.glob(f"{stem}.trace.*.json"))]
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--out", type=Path, default=TRACES, help="folder to write (default docs/vendor-traces)"
    )
    args = parser.parse_args(argv)
    for path in write_traces(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
