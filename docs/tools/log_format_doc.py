"""The durable log's byte layout as docs/store.md shows it, computed from the format itself.

docs/store.md describes the framed log (header, frame, a one-turn example, the per-record
overhead of both framings). Typed by hand those numbers would go stale the day the layout
changes; here every offset, size, constant and byte is read off ``models/log_format.py``'s
structs and constants, or off a log really written by ``TurnLog`` — so the page's blocks
(``kind=log-format``, see :mod:`docs.tools.doc_figures`) change exactly when the format does.
``python -m docs.tools.log_format_doc`` prints all of it.

Invariant: the output is a pure function of the format code (the example turn is fixed, the log
is written to a fresh temporary folder).
"""

from __future__ import annotations

import re
import struct
import sys
import tempfile
from pathlib import Path

from turncheck.models import log_format as fmt
from turncheck.models.errors import BadParameter
from turncheck.models.events import Event, Kind
from turncheck.reports.tables import markdown_rows

PARTS = ("header", "frame", "example", "overhead")


def _struct_fields(layout: struct.Struct) -> list[tuple[int, int]]:
    """(offset, size) of each field of a little-endian ``struct`` layout without padding."""
    fields: list[tuple[int, int]] = []
    offset = 0
    for item in re.findall(r"\d*\D", layout.format.lstrip("<")):  # "<8sHHI" -> "8s", "H", "H", "I"
        size = struct.calcsize("<" + item)
        fields.append((offset, size))
        offset += size
    return fields


def header_rows() -> list[list[str]]:
    """The file header: offset, size, field, value."""
    (magic, version, flags, crc) = _struct_fields(fmt.HEADER)
    spelled = " ".join(f"{b:02X}" for b in fmt.FRAME_MAGIC)
    return [
        [str(magic[0]), str(magic[1]), "magic (`FRAME_MAGIC`)", f"`{spelled}`"],
        [str(version[0]), str(version[1]), "format version (`FRAME_VERSION`)", str(fmt.FRAME_VERSION)],
        [str(flags[0]), str(flags[1]), "flags", "0"],
        [str(crc[0]), str(crc[1]), f"CRC32 of bytes 0–{crc[0] - 1}", "—"],
        [str(fmt.HEADER_SIZE), "…", "frames, one per committed turn", "—"],
    ]


def frame_rows() -> list[list[str]]:
    """One frame: size and field; the events fill what the length leaves."""
    (length, crc, number, id_length) = _struct_fields(fmt.FRAME_HEAD)
    after_length = fmt.FRAME_HEAD.size - length[1] - crc[1]  # body bytes before the id
    return [
        [str(length[1]), "body length L"],
        [str(crc[1]), "CRC32 of the body"],
        [str(number[1]), "frame number (counting from zero in write order) — body starts here"],
        [str(id_length[1]), f"turn id length k (1–{fmt.MAX_ID_BYTES}, `MAX_ID_BYTES`)"],
        ["k", "turn id, UTF-8"],
        [
            f"L − {after_length} − k",
            "the turn's events: a JSON array of their JSONL objects (`event_to_dict`, compact, UTF-8 — "
            "the same bytes as the `dumps_event` lines joined by `,` inside `[…]`)",
        ],
    ]


EXAMPLE_TURN = (
    Event(seq=0, session="s1", turn=0, kind=Kind.USER, text="hi"),
    Event(seq=1, session="s1", turn=0, kind=Kind.TERM, text="hello"),
)


def example_log() -> bytes:
    """The bytes of a framed log holding :data:`EXAMPLE_TURN`, written by ``TurnLog``."""
    from turncheck.models.store import TurnLog

    with tempfile.TemporaryDirectory(prefix="turncheck-format-") as folder:
        path = Path(folder) / "one-turn.log"
        with TurnLog.open(path, create=True, fsync="never") as log:
            log.commit(EXAMPLE_TURN)
        return path.read_bytes()


def hexdump(data: bytes) -> list[str]:
    """``xxd``'s layout: offset, eight groups of two bytes, the printable characters."""
    lines = []
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        groups = " ".join(chunk[i : i + 2].hex() for i in range(0, len(chunk), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{at:08x}: {groups:<39}  {text}")
    return lines


def overhead() -> tuple[int, int]:
    """Bytes each framing adds to a record beyond its id and events JSON: (frames, lines)."""
    tid, events = b"x", b"[]"
    frame = len(fmt.encode_frame(0, tid, events)) - len(tid) - len(events)
    line = len(fmt.encode_line(tid, events)) - len(tid) - len(events)
    return frame, line


def render(part: str) -> list[str]:
    """The Markdown lines of one part of the layout (``PARTS``)."""
    if part == "header":
        return markdown_rows(("offset", "size", "field", "value"), header_rows())
    if part == "frame":
        return markdown_rows(("size", "field"), frame_rows())
    if part == "example":
        data = example_log()
        events = ", ".join(f"{e.kind.name} {e.text!r}" for e in EXAMPLE_TURN)
        return [f"A one-turn log ({events}), {len(data)} bytes:", "", "```text", *hexdump(data), "```"]
    if part == "overhead":
        frame, line = overhead()
        return [
            f"Per frame the framing costs {frame} bytes plus the id. The line format "
            f'(`{fmt.LINE_HEADER.decode().strip()}` then one `{{"id":…,"events":[…]}}` line per turn; '
            f"the newline is the commit mark) costs {line} bytes plus the id, and has no checksum."
        ]
    raise BadParameter(f"log format: no part {part!r} (parts: {', '.join(PARTS)})")


def main() -> int:
    for part in PARTS:
        print("\n".join(render(part)), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
