"""The ``adk-database`` store: one Google ADK session in ADK's own ``DatabaseSessionService``.

``DatabaseSessionService(db_url)`` keeps sessions and their events in SQLAlchemy tables over an
asyncio driver: ``sqlite+aiosqlite:///PATH`` for ``--db PATH``, or the URL given as ``--dsn``
(``postgresql+psycopg://…``, the test PostgreSQL server); a SQLite file is switched to WAL, as
the ``sqlite`` store is (in ADK's default rollback journal a reader waits for every writer),
with the same busy timeout. The adapter uses only what an ADK
agent's runtime does with it: ``get_session`` to read the session, ``append_event`` per event
(a turn is four events — user text, a model ``function_call``, its ``function_response``, the
model's reply — appended one by one, as the runner appends them as they are produced), and, to
delete the oldest turns, what ADK itself does: append a compaction event
(``EventActions(compaction=EventCompaction(start_timestamp, end_timestamp, compacted_content))``)
whose timestamp range covers them. ADK never deletes an event; the live turns are the events its
request builder still shows (``_process_compaction_events``: raw events inside a compaction's
range are hidden).

``append_event`` refuses a session object older than the stored one (``StaleSessionError``, "Please
reload the session"); the adapter reloads and appends again, as that message asks. The service has
no transaction spanning calls, no count and no version a writer could compare, so, as for
``agents-sqlite``, the trigger's header, the lock and the journal live in a side-car
(:mod:`turncheck.integrations.stores.sidecar`): ``PATH.turncheck`` for SQLite, ``tc_*`` tables in the same
PostgreSQL database for a server.
"""

from __future__ import annotations

import contextlib
import sqlite3
import warnings
from pathlib import Path
from typing import Any

from turncheck.integrations.stores.sidecar import SidecarStore
from turncheck.models.errors import TurncheckError
from turncheck.models.extras import install_hint
from turncheck.models.session_store import TURN_KINDS
from turncheck.sim.stress.postgres import PostgresStore
from turncheck.sim.stress.sqlite import BUSY_TIMEOUT_S
from turncheck.sim.stress.stores import Store, register_store

APP, USER, SESSION_ID = "turncheck", "turncheck", "turncheck-stress"
_KEY = "turncheck"


def database_url(target: str) -> str:
    """ADK's ``db_url`` for ``target``: a URL as given, a file path as ``sqlite+aiosqlite:///PATH``
    with the path quoted, so that SQLAlchemy opens that very file: pasted in raw, a ``?`` in the
    path starts a query (``user.db?mode=rwc`` opened ``user.db``, past the fresh-database check)
    and a ``%`` an escape (``us%65r.db`` opened ``user.db``)."""
    if "://" in target:
        return target
    from sqlalchemy.engine import URL

    return URL.create("sqlite+aiosqlite", database=str(Path(target).resolve())).render_as_string(False)


_ADK_TABLES = {"sessions", "events", "app_states", "user_states"}


def adk_table_of_ours(conn: Any, name: str) -> bool:
    """Whether ``name``, in a PostgreSQL database given as ``--dsn``, is one of ADK's session
    tables holding only the rows of turncheck's app (``APP``), or ADK's schema-version table: what
    an earlier ``adk-database`` run leaves; any other app's session is a user's."""
    if name == "adk_internal_metadata":
        return True
    if name not in _ADK_TABLES:
        return False
    import psycopg

    try:
        row = conn.execute(
            f"SELECT count(*) FROM {name} WHERE app_name IS DISTINCT FROM %s", (APP,)
        ).fetchone()
    except psycopg.Error:  # not ADK's table: no app_name column
        return False
    return int(row[0]) == 0


def needs_adk(exc: ImportError) -> str:
    """The one line refusing the store when google-adk, or a library it brings, is missing."""
    return f"store adk-database needs google-adk ({exc.name} is not installed): {install_hint('adk')}"


def sidecar_dsn(url: str) -> str:
    """The libpq URI of a ``postgresql+DRIVER://`` URL, for the side-car's own connection."""
    scheme, rest = url.split("://", 1)
    return f"{scheme.split('+')[0]}://{rest}"


def turn_events(turn: int) -> list[Any]:
    """Turn ``turn`` as ADK events, each carrying ``custom_metadata={"turncheck": [turn, kind]}``."""
    from google.adk.events import Event
    from google.genai import types

    call = f"call_{turn}"
    parts = {
        "U": ("user", "user", types.Part(text=f"question {turn}")),
        "C": (APP, "model", types.Part(function_call=types.FunctionCall(id=call, name="lookup", args={"turn": turn}))),
        "R": (APP, "user", types.Part(function_response=types.FunctionResponse(
            id=call, name="lookup", response={"result": f"result {turn}"}))),
        "A": (APP, "model", types.Part(text=f"answer {turn}")),
    }  # fmt: skip
    return [
        Event(
            invocation_id=f"turn-{turn}",
            author=author,
            content=types.Content(role=role, parts=[part]),
            custom_metadata={_KEY: [turn, kind]},
        )  # fmt: skip
        for kind, (author, role, part) in ((k, parts[k]) for k in TURN_KINDS)
    ]


def event_tag(event: Any) -> tuple[int, str]:
    """(turn, kind) of an event written by :func:`turn_events` ((-1, "?") for any other)."""
    tag = (event.custom_metadata or {}).get(_KEY)
    return (int(tag[0]), str(tag[1])) if isinstance(tag, list) and len(tag) == 2 else (-1, "?")


class AdkDatabaseStore(SidecarStore):
    """``DatabaseSessionService(database_url(target))``, session ``SESSION_ID``, plus the side-car."""

    name = "adk-database"

    def __init__(self, target: str) -> None:
        try:  # SQLAlchemy comes with google-adk: without it the store is refused as without ADK
            self.url = database_url(target)
            if self.url.startswith("sqlite"):
                from sqlalchemy.engine import make_url

                database = str(make_url(self.url).database)
        except ImportError as exc:
            raise TurncheckError(needs_adk(exc)) from None
        if self.url.startswith("sqlite"):
            super().__init__(database)
        else:
            super().__init__(self.url, PostgresStore(sidecar_dsn(self.url)))
        self._service: Any = None

    @property
    def service(self) -> Any:
        if self._service is None:
            try:
                from google.adk.flows.llm_flows.context import _compaction  # noqa: F401  (in the parent: forks inherit it)
                from google.adk.sessions import DatabaseSessionService
            except ImportError as exc:
                raise TurncheckError(needs_adk(exc)) from None
            warnings.filterwarnings("ignore", module="google.adk")  # its experimental-feature notices
            sqlite = {"connect_args": {"timeout": BUSY_TIMEOUT_S}} if self.url.startswith("sqlite") else {}
            self._service = DatabaseSessionService(db_url=self.url, **sqlite)
        return self._service

    def session(self) -> Any:
        session = self.call(self.service.get_session(app_name=APP, user_id=USER, session_id=SESSION_ID))
        if session is None:
            raise TurncheckError(f"store adk-database: session {SESSION_ID!r} is gone from {self.url}")
        return session

    def append(self, session: Any, event: Any) -> Any:
        """``append_event``, reloading the session when ADK says it is stale."""
        from google.adk.errors import StaleSessionError

        while True:
            try:
                self.call(self.service.append_event(session, event))
                return session
            except StaleSessionError:
                session = self.session()

    def items(self) -> list[Any]:
        from google.adk.flows.llm_flows.context._compaction import _process_compaction_events

        shown = _process_compaction_events(self.session().events)
        return [e for e in shown if not e.actions.compaction]

    def tag(self, item: Any) -> tuple[int, str]:
        return event_tag(item)

    def add_turn(self, turn: int) -> None:
        session = self.session()
        for event in turn_events(turn):
            session = self.append(session, event)

    def remove(self, items: list[Any], turns: set[int]) -> None:
        """One compaction event over the timestamps of the events of ``turns``."""
        from google.adk.events import Event, EventActions
        from google.adk.events.event_actions import EventCompaction
        from google.genai import types

        stamps = [e.timestamp for e in items if event_tag(e)[0] in turns]
        if not stamps:
            return
        summary = types.Content(role="model", parts=[types.Part(text=f"turns {sorted(turns)} compacted")])
        compaction = EventCompaction(
            start_timestamp=min(stamps), end_timestamp=max(stamps), compacted_content=summary
        )
        self.append(self.session(), Event(author="user", invocation_id=Event.new_id(),
                                          actions=EventActions(compaction=compaction)))  # fmt: skip

    def clear(self) -> None:
        if self.url.startswith("sqlite"):  # WAL, persistent in the file: readers never wait on writers
            with contextlib.closing(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)) as db:
                db.execute("PRAGMA journal_mode=WAL")
        self.call(self.service.delete_session(app_name=APP, user_id=USER, session_id=SESSION_ID))
        self.call(self.service.create_session(app_name=APP, user_id=USER, session_id=SESSION_ID))

    def release(self) -> None:
        if self._service is not None:
            self.call(self._service.close())
            self._service = None


register_store(Store("adk-database", AdkDatabaseStore, "google-adk", "#8c564b",
                     "a Google ADK session in DatabaseSessionService (SQLite or PostgreSQL), compaction events as"
                     " deletes, lock and journal in a side-car"))  # fmt: skip
