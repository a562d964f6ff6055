"""The error types users see: each names the problem in one line the CLI prints as is."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any


class TurncheckError(Exception):
    """Base of every error turncheck raises on purpose; the CLI turns it into one line, exit 2."""


class BadParameter(TurncheckError, ValueError):
    """A parameter out of its range or of the wrong type (negative budget, zero writers...)."""


class UnknownName(TurncheckError, KeyError):
    """An unknown strategy, cost model, scenario, model, invariant or parameter name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def require_regular_file(path: Path, error: type[TurncheckError]) -> None:
    """Refuse, before opening it, an input that is not a regular file: a FIFO blocks the open for
    ever and a device (``/dev/zero``) never ends, so neither may reach a reader."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise error(f"{path}: is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise error(f"{path}: not a regular file (a FIFO or a device cannot be read as input)")


def read_json(path: Path, error: type[TurncheckError]) -> Any:
    """The value of the JSON file ``path``. Every way reading it fails — unreadable, not UTF-8,
    malformed, nested too deep for the parser, an integer past Python's 4300-digit limit — is one
    ``error`` line naming the file: a damaged file is data, never a traceback."""
    require_regular_file(path, error)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: malformed JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise error(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:
        raise error(f"{path}: unreadable JSON ({str(exc).splitlines()[0][:80]})") from None
