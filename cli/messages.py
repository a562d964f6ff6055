"""What the command line prints about a refused command: one line, safe for a terminal.

An error message can carry text from the user's files (a session name, a call id, a path). Such
text may hold newlines, which would split the one-line error (and let a file spoof a second line),
or ANSI escape sequences, which would drive the terminal. :func:`one_line` keeps every printable
character and spells every control character as an escape, so the message is one line that says
exactly what the file held.
"""

from __future__ import annotations

import unicodedata


def _escaped(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(message: str) -> str:
    """``message`` with every control or line/paragraph separator character escaped."""
    return "".join(
        _escaped(ch) if unicodedata.category(ch) in ("Cc", "Zl", "Zp", "Cs") else ch for ch in message
    )
