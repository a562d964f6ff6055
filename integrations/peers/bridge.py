"""Peers in another language: a bridge folder whose commands run real libraries over the exec protocol.

A bridge is a folder of the repository — ``bridges/node`` (npm), ``bridges/java`` (Maven) —
with its build manifest and one command per peer. Its peers are ordinary
:class:`~models.peer.Peer` values whose projector runs ``PROGRAM ARGS`` in that folder through
:func:`~models.exec_protocol.exec_projector`, so they are judged exactly as a user's
``exec:`` trimmer is. The folder is ``$TURNCHECK_<NAME>_BRIDGE`` when set, else the checkout's
``bridges/<name>`` beside these sources (a wheel has none: set the variable to a built checkout).

Invariant kept: a bridge peer that cannot run here — its program not on ``PATH``, its folder
absent or not built — says why in one line (:meth:`Bridge.missing`), naming the build step;
tests skip on that reason, and a run that asks for the peer is refused with it
(:class:`~models.tokenizer.MissingExtra`) before its command is started.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from turncheck.models.tokenizer import MissingExtra

if TYPE_CHECKING:
    from turncheck.models.cost import CostModel
    from turncheck.models.history import History
    from turncheck.models.projector import Window

SOURCES = Path(__file__).resolve().parents[2]
"""The folder holding ``integrations/`` — a checkout's root in an editable install."""


@dataclass(frozen=True)
class Bridge:
    """A bridge folder: the ``program`` that runs its commands, the path inside it that exists
    once ``build`` has run, and where a library's version is read (``manifest``: a JSON file
    with a ``version`` member, ``{package}`` replaced by the library's name)."""

    name: str
    program: str
    built: str
    build: str
    manifest: str

    @property
    def variable(self) -> str:
        return f"TURNCHECK_{self.name.upper()}_BRIDGE"

    def folder(self) -> Path:
        given = os.environ.get(self.variable)
        return Path(given) if given else SOURCES / "bridges" / self.name

    def missing(self) -> str | None:
        """Why the bridge's peers cannot run here, or ``None`` when they can."""
        if shutil.which(self.program) is None:
            return f"{self.program} is not installed (not on PATH)"
        folder = self.folder()
        if not folder.is_dir():
            return f"no {self.name} bridge at {folder} (a checkout's bridges/{self.name}; or set {self.variable})"
        if not (folder / self.built).exists():
            return f"the {self.name} bridge is not built: cd {folder} && {self.build}"
        return None

    def version(self, package: str) -> str:
        """The installed version of ``package`` in the bridge, or ``not installed``."""
        try:
            value = json.loads((self.folder() / self.manifest.format(package=package)).read_text())["version"]
        except (OSError, ValueError, KeyError, TypeError):
            return "not installed"
        return str(value)

    def projector(self, peer: str, *args: str) -> Callable[[History, int, CostModel], Window]:
        """The projector of ``peer``: ``PROGRAM ARGS`` in the bridge folder over the exec
        protocol, started at the peer's first request and kept for the run."""
        started: list[Callable[[History, int, CostModel], Window]] = []

        def project(history: History, budget: int, cost: CostModel) -> Window:
            if not started:
                reason = self.missing()
                if reason is not None:
                    raise MissingExtra(f"{peer} needs the {self.name} bridge: {reason}")
                from turncheck.models.exec_protocol import exec_projector

                started.append(exec_projector([self.program, *args], name=peer, cwd=self.folder()))
            return started[0](history, budget, cost)

        project.strategy_id = peer  # type: ignore[attr-defined]
        return project


NODE = Bridge("node", "node", "node_modules", "npm ci", "node_modules/{package}/package.json")
"""``bridges/node``: the TypeScript libraries, installed from ``package-lock.json`` by ``npm ci``."""
