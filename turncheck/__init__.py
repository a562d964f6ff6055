"""turncheck: simulate and model-check the context layer of LLM agents.

The public Python API is the handful of names below; everything else under ``turncheck.*`` is
internal and may change between versions. Names are imported on first use (PEP 562), so
``import turncheck`` stays cheap and pulls in neither matplotlib nor the scenarios.

The sub-packages are layered, each importing only those before it::

    turncheck.models     the domain: events, turns, cost models, strategies, protocols, the log
    turncheck.sim        engines: SimPy runner, Hypothesis machine, explorer, executors
    turncheck.scenarios  named experiments and sweeps over them
    turncheck.reports    tables, plots and the HTML report
    turncheck.cli        the ``turncheck`` command line
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"


def _checkout_path(here: str) -> list[str]:
    """Where the sub-packages are found when this file is a repository checkout's
    ``turncheck/__init__.py``: the design card keeps ``models/``, ``sim/``, ``cli/``… beside this
    folder, and pyproject.toml maps each onto ``turncheck.*``. From a checkout's root the working
    folder comes first on ``sys.path``, so ``python -m turncheck`` imports this copy even when a
    wheel is installed; the parent folder joins ``__path__`` so that ``turncheck.cli`` is the
    checkout's ``cli/`` and checkout and install never disagree. Installed (no pyproject.toml and
    no ``models/`` beside it), the package keeps its own folder only."""
    root = os.path.dirname(here)
    marks = ("pyproject.toml", os.path.join("models", "__init__.py"), os.path.join("cli", "__init__.py"))
    return [root] if all(os.path.isfile(os.path.join(root, m)) for m in marks) else []


__path__ = [*__path__, *(p for p in _checkout_path(os.path.dirname(__file__)) if p not in __path__)]

_PUBLIC: dict[str, str] = {
    # events and logs
    "Event": "turncheck.models.events",
    "Kind": "turncheck.models.events",
    "read_jsonl": "turncheck.models.events",
    "write_jsonl": "turncheck.models.events",
    "History": "turncheck.models.history",
    "TurnLog": "turncheck.models.store",
    # checking a trace's requests where they arrive (a tracing back-end's evaluator)
    "lint_request": "turncheck.models.request_lint",
    "Conversations": "turncheck.models.request_lint",
    # the projector
    "Window": "turncheck.models.projector",
    "project": "turncheck.models.projector",
    "STRATEGIES": "turncheck.models.projector",
    "resolve_strategy": "turncheck.models.projector",
    "window_from_start": "turncheck.models.projector",
    "fit_start": "turncheck.models.projector",
    "message_trimmer": "turncheck.models.messages",
    "exec_projector": "turncheck.models.exec_protocol",
    # cost models
    "CostModel": "turncheck.models.cost",
    "EstimateCost": "turncheck.models.cost",
    "Utf8JsonCost": "turncheck.models.cost",
    "make_cost": "turncheck.models.cost",
    # protocols and their checkers
    "ProtocolModel": "turncheck.models.protocol",
    "Property": "turncheck.models.protocol",
    "build_model": "turncheck.models.catalog",
    "Policy": "turncheck.models.policy",
    "explore": "turncheck.sim.explorer",
    "machine_for": "turncheck.sim.stateful",
    "select_properties": "turncheck.sim.checking",
    "Trace": "turncheck.sim.trace",
    "load_trace": "turncheck.sim.trace",
    # experiments
    "sweep": "turncheck.scenarios.sweep",
    "TurncheckError": "turncheck.models.errors",
    # extending turncheck: one registry per kind (turncheck.models.registry); a module listed
    # under the entry-point group "turncheck.plugins" is imported before the CLI lists choices
    "register_strategy": "turncheck.models.projector",
    "register_model": "turncheck.models.catalog",
    "DemoCheck": "turncheck.models.catalog",
    "register_scenario": "turncheck.scenarios.base",
    "Scenario": "turncheck.scenarios.base",
    "ScenarioResult": "turncheck.scenarios.base",
    "Table": "turncheck.scenarios.base",
    "Judgement": "turncheck.scenarios.base",
    "register_plot": "turncheck.reports.plots.plot",
    "Plot": "turncheck.reports.plots.plot",
    "register_store": "turncheck.sim.stress.stores",
    "Store": "turncheck.sim.stress.stores",
    "SessionStore": "turncheck.models.session_store",
    "WriteTx": "turncheck.models.session_store",
    "SessionHeader": "turncheck.models.session_store",
    "JournalEntry": "turncheck.models.session_store",
    "StoreBusy": "turncheck.models.session_store",
    "ConnectionLost": "turncheck.models.session_store",
    "register_peer": "turncheck.models.peer",
    "Peer": "turncheck.models.peer",
    "register_locking": "turncheck.models.locking",
    "Locking": "turncheck.models.locking",
    "register_format": "turncheck.models.importers",
    "LogFormat": "turncheck.models.importers",
    "Imported": "turncheck.models.importers",
}

__all__ = [
    "__version__",
    "Event",
    "Kind",
    "read_jsonl",
    "write_jsonl",
    "History",
    "TurnLog",
    "lint_request",
    "Conversations",
    "Window",
    "project",
    "STRATEGIES",
    "resolve_strategy",
    "window_from_start",
    "fit_start",
    "message_trimmer",
    "exec_projector",
    "CostModel",
    "EstimateCost",
    "Utf8JsonCost",
    "make_cost",
    "ProtocolModel",
    "Property",
    "build_model",
    "Policy",
    "explore",
    "machine_for",
    "select_properties",
    "Trace",
    "load_trace",
    "sweep",
    "TurncheckError",
    "register_strategy",
    "register_model",
    "DemoCheck",
    "register_scenario",
    "Scenario",
    "ScenarioResult",
    "Table",
    "Judgement",
    "register_plot",
    "Plot",
    "register_store",
    "Store",
    "SessionStore",
    "WriteTx",
    "SessionHeader",
    "JournalEntry",
    "StoreBusy",
    "ConnectionLost",
    "register_peer",
    "Peer",
    "register_locking",
    "Locking",
    "register_format",
    "LogFormat",
    "Imported",
]

if TYPE_CHECKING:
    from turncheck.models.catalog import DemoCheck, build_model, register_model
    from turncheck.models.cost import CostModel, EstimateCost, Utf8JsonCost, make_cost
    from turncheck.models.errors import TurncheckError
    from turncheck.models.events import Event, Kind, read_jsonl, write_jsonl
    from turncheck.models.exec_protocol import exec_projector
    from turncheck.models.history import History
    from turncheck.models.importers import Imported, LogFormat, register_format
    from turncheck.models.locking import Locking, register_locking
    from turncheck.models.messages import message_trimmer
    from turncheck.models.peer import Peer, register_peer
    from turncheck.models.policy import Policy
    from turncheck.models.projector import (
        STRATEGIES,
        Window,
        fit_start,
        project,
        register_strategy,
        resolve_strategy,
        window_from_start,
    )
    from turncheck.models.protocol import Property, ProtocolModel
    from turncheck.models.request_lint import Conversations, lint_request
    from turncheck.models.session_store import (
        ConnectionLost,
        JournalEntry,
        SessionHeader,
        SessionStore,
        StoreBusy,
        WriteTx,
    )
    from turncheck.models.store import TurnLog
    from turncheck.reports.plots.plot import Plot, register_plot
    from turncheck.scenarios.base import Judgement, Scenario, ScenarioResult, Table, register_scenario
    from turncheck.scenarios.sweep import sweep
    from turncheck.sim.checking import select_properties
    from turncheck.sim.explorer import explore
    from turncheck.sim.stateful import machine_for
    from turncheck.sim.stress.stores import Store, register_store
    from turncheck.sim.trace import Trace, load_trace


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'turncheck' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
