"""``turncheck import``: a foreign agent log (``turncheck list formats``) as our JSONL.

The conversion is :func:`models.importers.import_log`; this command only writes the result,
atomically (a ``.part`` file renamed into place), so a refused input leaves nothing behind. A log
that reads but is broken (an orphaned result, a call answered twice…) is written as it is, with
one warning line on stderr naming every finding ``lint --from`` makes — the rules of the format's
own API among them (``results-not-first``, ``response-count-mismatch``…), which are what the
provider refuses the log for — while ``lint`` names each finding's record.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from turncheck.cli.options import names_in_help, out_option
from turncheck.models.errors import BadParameter
from turncheck.models.events import EventFormatError

FromOpt = Annotated[
    str | None,
    typer.Option(
        "--from", help="Read the log in this format instead of our JSONL (turncheck list formats names them)."
    ),
]


def warn_opaque(path: Path, opaque: Mapping[str, int]) -> None:
    """The one warning line for the parts of ``path`` kept as opaque content, if any
    (:func:`~models.chat_log.opaque_warning`): every command that reads ``--from`` prints it."""
    from turncheck.models.chat_log import opaque_warning

    kept = opaque_warning(opaque)
    if kept:
        print(f"warning: {path}: {kept}", file=sys.stderr)


def warn_nothing_read(path: Path, source: str, events: int) -> None:
    """One warning line when ``--from source`` found no event in ``path`` while another format
    reads events there: "0 events … clean" is then the wrong reader's verdict, not the log's
    (a pi session read ``--from claude-code``, whose reader skips every line of it)."""
    from turncheck.models.importers import formats_reading

    if events:
        return
    others = [name for name in formats_reading(path) if name != source]
    if others:
        print(f"warning: {path}: no event read as --from {source}; it reads as --from {others[0]}",
              file=sys.stderr)  # fmt: skip


@contextmanager
def read_as_ours(path: Path) -> Iterator[None]:
    """Reading ``path`` as turncheck JSONL (``lint``, ``project`` without ``--from``): when the
    file is refused and a registered format reads it (:func:`models.importers.formats_reading`),
    the one line names that ``--from``, instead of leaving "malformed JSON" as the only clue."""
    try:
        yield
    except EventFormatError as exc:
        from turncheck.models.importers import formats_reading

        names = formats_reading(path)
        if not names:
            raise
        also = f" (it also reads as {', '.join(names[1:])})" if names[1:] else ""
        raise EventFormatError(
            f"{path} reads as --from {names[0]}{also}, not as turncheck JSONL ({exc})"
        ) from None


def format_names() -> list[str]:
    """The registered log formats (for help texts; imports the formats when called)."""
    from turncheck.models.importers import FORMATS

    return list(FORMATS)


def import_command(
    path: Annotated[Path, typer.Argument(help="The log to convert.")],
    source: Annotated[str, typer.Option("--from", help="The format of PATH (turncheck list formats).")],
    out: Annotated[Path | None, out_option("Output JSONL file (default: stdout).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing output file.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No 'wrote …' line on stderr (warnings and errors stay).")
    ] = False,
) -> None:
    """Convert a chat log into a turncheck JSONL event log (kinds, call pairing, turns)."""
    from turncheck.models.events import write_jsonl
    from turncheck.models.importers import FORMATS, import_log
    from turncheck.models.sent_windows import lint_imported

    if out is not None and out.exists() and not force:
        raise BadParameter(f"{out} exists; pass --force to overwrite")
    imported = import_log(source, path)
    events = imported.events
    provider = FORMATS[source].provider
    report = lint_imported(imported, keep=1, provider=provider)
    warn_opaque(path, imported.opaque)
    if not report.clean:
        found = ", ".join(f"{n} {problem}" for problem, n in report.counts.items() if n)
        how = f"turncheck lint --from {source} {path}"
        if provider is None and not report.requests:  # no API's rules were run: say how to run one's
            how += f" --provider API; {report.rules_checked()}"
        print(f"warning: {path} is written as it is, with {found} ({how})", file=sys.stderr)
    if out is None:
        write_jsonl(events, sys.stdout)
        return
    from turncheck.models.output_files import output_file

    with output_file(out, text=True) as fh:  # whole or nothing, never through a symlink
        n = write_jsonl(events, fh)
    sessions = len({e.session for e in events})
    if not quiet:
        print(f"wrote {n} events in {sessions} sessions to {out}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command(
        "import",
        cls=names_in_help(format_names),
        help="Convert a chat log ({names}) to turncheck JSONL.",
        short_help="Convert an OpenAI / Anthropic / Gemini / LangChain / … log to JSONL.",
    )(import_command)
