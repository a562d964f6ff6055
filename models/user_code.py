"""User code by reference: the one place a user's projector, model or trimmer is loaded from.

A reference is ``package.module:name`` (imported with the working directory on the import path,
as ``python -m`` does) or ``path/to/file.py:name`` (loaded from that file; a reference is a file
when its module part ends in ``.py`` or contains a path separator). Every command and scenario
that accepts a strategy id or a model name resolves user code here, so the rules and the
one-line errors (:class:`~models.errors.UnknownName`) are the same everywhere.

Invariant kept: code is loaded only from the reference given — never from a path found in a
data file — and a file is executed at most once per process (its module is cached under a name
derived from its absolute path), so two resolutions of one reference return the same object;
loading a file writes nothing beside it (no ``__pycache__``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from pathlib import Path
from typing import Any

from turncheck.models.errors import UnknownName


def is_reference(ref: str) -> bool:
    """True when ``ref`` names user code (``module:name``) rather than a built-in id."""
    module_ref, sep, attr = ref.rpartition(":")
    return bool(sep) and bool(module_ref) and bool(attr)


def names_code(value: object) -> bool:
    """Whether a parameter value (a trace's, a result file's) refers to user code that building
    its model would import or run: ``module:name``, ``file.py:name``, ``messages:module:name``
    or ``exec:COMMAND``. Built-in ids and ``peer:NAME`` (a library's trimmer, imported by name)
    are not code."""
    if not isinstance(value, str) or value.startswith("peer:"):
        return False
    if value.startswith("exec:"):
        return True
    return is_reference(value.removeprefix("messages:"))


LOADED: set[str] = set()
"""The files of every module of the user's this process loaded: a fault raised in one of them is
the user's code failing (one line, exit 2), not a bug in turncheck (:func:`fault_in_user_code`)."""


def fault_in_user_code(exc: BaseException) -> str | None:
    """One line for ``exc`` when its innermost frame in the user's own loaded code is known:
    ``ValueError: boom (in step, ./model.py:12)``; else ``None``."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in LOADED]
    if not frames:
        return None
    where = frames[-1]
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}{': ' + detail if detail else ''} (in {where.name}, {where.filename}:{where.lineno})"


def is_file_reference(module_ref: str) -> bool:
    return module_ref.endswith(".py") or "/" in module_ref or "\\" in module_ref


def _module_from_file(module_ref: str, what: str) -> Any:
    path = Path(module_ref)
    if not path.is_file():
        raise UnknownName(f"{what} file {module_ref!r} does not exist")
    name = "turncheck_user_" + "".join(c if c.isalnum() else "_" for c in str(path.resolve()))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UnknownName(f"cannot load {what} file {module_ref!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    LOADED.add(str(spec.origin))
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ beside it
    added = [d for d in import_roots(path) if d not in sys.path]
    sys.path[:0] = added
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise UnknownName(f"cannot load {what} file {module_ref!r}: {type(exc).__name__}: {exc}") from None
    finally:
        sys.dont_write_bytecode = writes_bytecode
        for folder in added:
            sys.path.remove(folder)
    return module


def import_roots(path: Path) -> list[str]:
    """Where the imports of the file at ``path`` are looked up while it loads, as ``python -m
    pytest`` looks them up for a test file: its base folder (the first folder up from it with no
    ``__init__.py``: pytest's ``prepend`` import mode), then the working directory."""
    base = path.resolve().parent
    while (base / "__init__.py").is_file() and base.parent != base:
        base = base.parent
    return list(dict.fromkeys([str(base), str(Path.cwd())]))


def _module_by_name(module_ref: str, what: str) -> Any:
    cwd = str(Path.cwd())
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_ref)
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            LOADED.add(file)
        return module
    except ImportError as exc:
        raise UnknownName(f"cannot import {what} module {module_ref!r}: {exc}") from None
    except Exception as exc:  # the module itself raised while importing
        raise UnknownName(
            f"cannot import {what} module {module_ref!r}: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        if added:
            sys.path.remove(cwd)


def load_module(module_ref: str, what: str) -> Any:
    """The module named by ``package.module`` or ``path/to/file.py``."""
    if is_file_reference(module_ref):
        return _module_from_file(module_ref, what)
    return _module_by_name(module_ref, what)


def load_object(ref: str, what: str, *, noun: str = "function", values: tuple[type, ...] = ()) -> Any:
    """The callable (or instance of one of ``values``) named by ``package.module:name`` or
    ``path/file.py:name``.

    Parameters
    ----------
    ref
        The reference, exactly as the user wrote it.
    what
        What the object is for (``projector``, ``model``) — the first word of every error.
    noun
        What the name should be (``function``, ``class``) in the "has no …" error.

    Raises
    ------
    UnknownName
        Malformed reference, missing file, failed import, or no callable of that name.
    """
    module_ref, _, attr = ref.rpartition(":")
    if not module_ref or not attr:
        raise UnknownName(f"{what} reference {ref!r} must be written package.module:{noun} or file.py:{noun}")
    module = load_module(module_ref, what)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
    if obj is None or not (callable(obj) or isinstance(obj, values)):
        raise UnknownName(f"{ref!r}: module {module_ref!r} has no {noun} {attr!r}")
    return obj


def projector_signature(fn: Any, ref: str | None = None) -> Any:
    """``fn`` when it takes a projector's ``(history, budget, cost)``; else an error naming what it
    takes — a ``(messages, budget)`` function is a message trimmer, and its call with three
    arguments would be a ``TypeError`` inside the replay (a traceback, not the user's mistake named).
    A callable whose signature Python cannot read is taken as it is."""
    import inspect

    try:
        signature = inspect.signature(fn, follow_wrapped=False)  # the wrapper is what is called
    except (TypeError, ValueError):
        return fn
    try:
        signature.bind(None, None, None)
    except TypeError:
        try:
            signature.bind(None, None)
            how = f"passed as messages:{ref}" if ref else "decorated with @turncheck.message_trimmer"
            hint = f": a message trimmer (messages, budget) is {how}"
        except TypeError:
            hint = ""
        name = ref or getattr(fn, "__qualname__", repr(fn))
        raise UnknownName(f"projector {name} takes {signature}, not (history, budget, cost){hint}") from None
    return fn
