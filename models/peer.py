"""What a peer is: a library's own trimmer behind our projector signature, and the registry of them.

Each peer converts a history to the library's own message objects (tool calls with ids, tool
results), lets the library choose what to keep, and maps the result back to our events: a
suffix window with our structural report, or — when the library's choice is not a suffix — a
:class:`~models.selection.PeerWindow` describing exactly what it sends.

This module holds only the kind: :class:`Peer`, :data:`PEERS` and :func:`register_peer`
(``turncheck.register_peer`` for an extension), and the ``peer:`` strategy resolver. The built-in
peers know their libraries, so they live in :mod:`turncheck.integrations.peers`, the registry's
home: it is imported by name on the registry's first lookup (:class:`~models.registry.Registry`),
and imports each built-in module, which registers its peers (``turncheck list peers`` lists them;
the ``peers`` scenario's ``libraries`` table says what each one calls). The libraries are optional
(extras ``peers`` and ``frameworks``) and imported only when a peer first runs.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from turncheck.models.extras import install_hint
from turncheck.models.projector import RESOLVERS, Strategy
from turncheck.models.registry import Registry

if TYPE_CHECKING:
    from turncheck.models.cost import CostModel
    from turncheck.models.history import History
    from turncheck.models.projector import Window


class PeerBridge(Protocol):
    """What a peer in another language runs through (``turncheck.integrations.peers.bridge.Bridge``)."""

    def missing(self) -> str | None: ...

    def version(self, library: str) -> str: ...


@dataclass(frozen=True)
class Peer:
    """A registered peer: the projector that runs the library, and what the ``peers`` scenario
    reports about it.

    ``library`` is the distribution whose version is reported and ``module`` the import that must
    succeed for the peer to run (installed by the extra ``extra``) — or, for a peer in another
    language, the package its ``bridge`` (:mod:`integrations.peers.bridge`) installs; ``call`` says
    what it runs, ``counting`` whose token counting it trims by. ``colour``, ``marker``,
    ``linestyle`` and ``hollow`` draw it in every plot; a peer without a colour takes the next
    free one.
    """

    name: str
    project: Callable[[History, int, CostModel], Window]
    library: str
    module: str
    call: str
    counting: str
    extra: str = "peers"
    colour: str | None = None
    marker: str | None = None
    linestyle: str = "--"
    hollow: bool = False
    bridge: PeerBridge | None = None

    def missing(self) -> str | None:
        """Why the peer cannot run here (its library or bridge is absent), or ``None``; looks,
        never imports (litellm must be imported offline)."""
        if self.bridge is not None:
            return self.bridge.missing()
        try:
            found = importlib.util.find_spec(self.module) is not None
        except ImportError:
            found = False
        if found:
            return None
        return (
            f"{self.name} needs {self.module}, which is not installed: {install_hint(self.extra)}"
        )

    def version(self) -> str:
        """The version of ``library`` that runs, or ``not installed``."""
        if self.bridge is not None:
            return self.bridge.version(self.library)
        try:
            return importlib.metadata.version(self.library)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"


PEERS: Registry[Peer] = Registry("peer", home="turncheck.integrations.peers")
"""Every peer by id (``peer:NAME``): the built-ins, then what extensions registered."""


def register_peer(peer: Peer) -> Peer:
    """Register ``peer`` under its id; refused if the id or the colour is taken."""
    return PEERS.register(peer.name, peer)


def resolve_peer(spec: str) -> Strategy:
    """The projector of the peer ``spec`` (``peer:NAME``); its library is imported when it runs."""
    return PEERS[spec].project


RESOLVERS.register("peer:", resolve_peer)
