"""The stores ``turncheck stress`` runs against: a registry of :class:`Store` values, and a
picklable :class:`StoreSpec` each process opens itself.

A store is one module that implements :class:`turncheck.models.session_store.SessionStore` and
registers itself with :func:`register_store` (``turncheck.register_store`` for an extension);
the built-ins (``sqlite``, ``postgres``, ``agents-sqlite``, ``langgraph-sqlite``, ``adk-database``) are the modules
``turncheck.sim.stress`` imports, then those of ``turncheck.integrations.stores`` (the library-backed ones). ``--store pkg.mod:Class`` still names a user's class directly,
constructed with one string argument (``--dsn``, or the database path when no DSN is given).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.registry import Registry
from turncheck.models.session_store import SessionStore
from turncheck.models.user_code import load_object


@dataclass(frozen=True)
class Store:
    """A registered store: ``open(target)`` builds a fresh, unconnected instance, ``target``
    being the database file or, when ``needs_dsn``, the ``--dsn`` connection string.

    ``library`` names what it runs on, ``colour`` draws it in every plot (one store, one colour),
    ``notes`` says in a line what it is."""

    name: str
    open: Callable[[str], SessionStore]
    library: str
    colour: str
    notes: str
    needs_dsn: bool = False


STORES: Registry[Store] = Registry("store", home=("turncheck.sim.stress", "turncheck.integrations.stores"))
"""Every store by name: the built-ins, then what extensions registered."""


def register_store(store: Store) -> Store:
    """Register ``store`` under its name; refused if the name or the colour is taken."""
    return STORES.register(store.name, store)


@dataclass(frozen=True)
class StoreSpec:
    """Which store and where: ``kind`` is a registered name or ``pkg.mod:Class``; ``target`` the
    database path (file stores) or DSN (``postgres`` and user classes given ``--dsn``)."""

    kind: str
    target: str


def check_spec(spec: StoreSpec) -> None:
    """Refuse an unknown store name or a missing DSN before any process starts."""
    if ":" in spec.kind:
        _user_class(spec.kind)
    elif spec.kind not in STORES:
        raise UnknownName(
            f"unknown store {spec.kind!r} (known: {', '.join(STORES)}, or package.module:Class)"
        )
    elif STORES[spec.kind].needs_dsn and not spec.target:
        raise BadParameter(f"--store {spec.kind} needs --dsn (e.g. 'host=/tmp/pg dbname=postgres')")


def _user_class(ref: str) -> type:
    cls = load_object(ref, "store", noun="class")  # package.module:Class or path/file.py:Class
    if not isinstance(cls, type):
        raise UnknownName(f"store {ref!r} is not a class")
    contract = [m for m, v in vars(SessionStore).items() if callable(v) and not m.startswith("_")]
    missing = [m for m in contract if not callable(getattr(cls, m, None))]
    if missing:
        raise BadParameter(
            f"store {ref!r} does not implement the session-store contract: no {', '.join(missing)}"
        )
    return cls


def open_store(spec: StoreSpec) -> SessionStore:
    """A fresh, unconnected store instance for this process."""
    if ":" in spec.kind:
        store: SessionStore = _user_class(spec.kind)(spec.target)
        return store
    return STORES[spec.kind].open(spec.target)
