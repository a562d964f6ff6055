"""Store selection for ``turncheck stress``: a picklable description each process opens itself.

``sqlite`` (a file), ``postgres`` (a DSN), ``agents-sqlite`` (the OpenAI Agents SDK's
``SQLiteSession`` on a file), ``langgraph-sqlite`` (a LangGraph thread checkpointed by
``SqliteSaver`` in a file) or ``pkg.mod:Class`` — a user's class implementing
:class:`turncheck.models.session_store.SessionStore`, constructed with one string argument
(``--dsn``, or the database path when no DSN is given).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.session_store import SessionStore

BUILTIN_STORES = ("sqlite", "postgres", "agents-sqlite", "langgraph-sqlite")


@dataclass(frozen=True)
class StoreSpec:
    """Which store and where: ``kind`` is a built-in name or ``pkg.mod:Class``; ``target`` the
    database path (file stores) or DSN (``postgres`` and user classes given ``--dsn``)."""

    kind: str
    target: str


def check_spec(spec: StoreSpec) -> None:
    """Refuse an unknown store name or a missing DSN before any process starts."""
    if spec.kind == "postgres" and not spec.target:
        raise BadParameter("--store postgres needs --dsn (e.g. 'host=/tmp/pg dbname=postgres')")
    if spec.kind not in BUILTIN_STORES and ":" not in spec.kind:
        raise UnknownName(
            f"unknown store {spec.kind!r} (known: {', '.join(BUILTIN_STORES)}, or package.module:Class)"
        )
    if ":" in spec.kind:
        _user_class(spec.kind)


def _user_class(ref: str) -> type:
    module_name, _, cls_name = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UnknownName(f"store {ref!r}: cannot import {module_name!r} ({exc})") from None
    cls = getattr(module, cls_name, None)
    if not isinstance(cls, type):
        raise UnknownName(f"store {ref!r}: {module_name} has no class {cls_name!r}")
    missing = [
        m
        for m in ("setup", "connect", "close", "write", "header", "read_window", "journal", "live_ids")
        if not callable(getattr(cls, m, None))
    ]
    if missing:
        raise BadParameter(
            f"store {ref!r} does not implement the session-store contract: no {', '.join(missing)}"
        )
    return cls


def open_store(spec: StoreSpec) -> SessionStore:
    """A fresh, unconnected store instance for this process."""
    if spec.kind == "sqlite":
        from turncheck.sim.stress.sqlite import SqliteStore

        return SqliteStore(spec.target)
    if spec.kind == "postgres":
        from turncheck.sim.stress.postgres import PostgresStore

        return PostgresStore(spec.target)
    if spec.kind == "agents-sqlite":
        from turncheck.sim.stress.agents_sqlite import AgentsSqliteStore

        return AgentsSqliteStore(spec.target)
    if spec.kind == "langgraph-sqlite":
        from turncheck.sim.stress.langgraph_sqlite import LanggraphSqliteStore

        return LanggraphSqliteStore(spec.target)
    store: SessionStore = _user_class(spec.kind)(spec.target)
    return store
