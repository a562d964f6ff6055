"""A parameter written as a string (``--param k=v``) read as the type it is declared with.

Scenarios declare their parameters as dataclass fields (the annotation is the type) and protocol
models as keyword arguments with defaults (the default's type is the type); both read a value
through :func:`parse_value`, so ``writers=4``, ``gap=0,2``, ``flag=yes`` or ``cost=none`` mean
the same everywhere, and a value of the wrong type is a :class:`BadParameter` naming the
parameter.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable
from typing import Any

from turncheck.models.errors import BadParameter

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def parse_value(raw: str, annotation: Any, name: str) -> Any:
    """``raw`` as a value of ``annotation``: ``int``, ``float``, ``bool``, ``str``, a
    ``Literal`` (one of its values), ``X | None`` (``none``/``null``/empty is None) or
    ``tuple[X, ...]`` (comma-separated); any other annotation keeps the string."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if raw.lower() in ("none", "null", ""):
            return None
        return parse_value(raw, args[0], name)
    if origin is tuple:
        (inner, *_rest) = typing.get_args(annotation)
        return tuple(parse_value(part, inner, name) for part in raw.split(",") if part != "")
    if origin is typing.Literal:
        allowed = typing.get_args(annotation)
        if raw not in allowed:
            raise BadParameter(f"parameter {name}: {raw!r} is not one of {', '.join(map(str, allowed))}")
        return raw
    if annotation is bool:
        if raw.lower() in TRUE:
            return True
        if raw.lower() in FALSE:
            return False
        raise BadParameter(f"parameter {name}: {raw!r} is not a boolean")
    if annotation is int:
        try:
            return int(raw)
        except ValueError:
            raise BadParameter(f"parameter {name}: {raw!r} is not an integer") from None
    if annotation is float:
        try:
            return float(raw)
        except ValueError:
            raise BadParameter(f"parameter {name}: {raw!r} is not a number") from None
    return raw


def type_of_default(default: Any) -> Any:
    """The type a keyword argument's default declares: its own type, a tuple of integers for a
    tuple, a string for anything else."""
    if isinstance(default, bool):
        return bool
    if isinstance(default, (int, float)):
        return type(default)
    if isinstance(default, tuple):
        return tuple[int, ...]
    return str


def split_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["writers=4", "gap = 2"]`` → ``{"writers": "4", "gap": "2"}``: the ``--param k=v``
    spelling of every command; a later value for the same name wins, as on a command line. Here,
    beside :func:`parse_value`, so a command that reads ``--param`` imports no scenario code."""
    pairs: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise BadParameter(f"parameter {item!r} must be written k=v")
        k, v = item.split("=", 1)
        pairs[k.strip().replace("-", "_")] = v
    return pairs
