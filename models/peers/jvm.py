"""Peers on the JVM: Spring AI's and langchain4j's own chat memories, run by Java over the exec protocol.

``bridges/java`` (a Maven project, every version exact) builds one jar and runtime classpath
(``MODULE/target/lib``) per module: Spring AI's ``MessageWindowChatMemory`` once per version line
Maven Central serves — 1.0 and 1.1 cut by message count, 2.0 snaps the cut forward to a user
message (spring-ai #6312, the fix for #5940) — and langchain4j's ``MessageWindowChatMemory`` and
``TokenWindowChatMemory``. Each peer starts ``java -cp JAR:LIB/* MAIN`` once per run
(:mod:`models.exec_protocol`) and sends it each request; the Java side (``SpringAiExec``,
``Langchain4jExec``) adds the request's messages to a fresh memory one ``add`` at a time, as a
conversation grows, and answers what the memory holds.

A message-count window is told, as its ``maxMessages``, how many of the newest messages fit the
budget under our cost model (:func:`fitting_messages`, at least one), as ``peer:semantic-kernel``
is; the token window gets ``budget − frame`` tokens and counts them with langchain4j's
``OpenAiTokenCountEstimator`` for gpt-4o (its own counting, not ours).

Without ``java`` on the path, or with the bridge not built, a peer is *unavailable*
(:func:`unavailable` says why): the ``peers`` scenario leaves it out unless named, and refuses it
when named. ``TURNCHECK_JAVA_BRIDGE`` points at another built ``bridges/java``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turncheck.models.peers import Peer, register_peer
from turncheck.models.peers.messages import fitting_messages, spans
from turncheck.models.tokenizer import MissingExtra

if TYPE_CHECKING:
    from turncheck.models.cost import CostModel
    from turncheck.models.exec_protocol import ExecTrimmer
    from turncheck.models.history import History
    from turncheck.models.projector import Window

BRIDGE_VARIABLE = "TURNCHECK_JAVA_BRIDGE"
JVM_OPTIONS = ("-XX:+UseSerialGC",)
"""One garbage-collector thread: a peer's JVM shares the machine with the run."""


@dataclass(frozen=True)
class Bridge:
    """A main class of ``bridges/java``: its Maven module, its arguments, and whether its budget
    is a message count (``maxMessages``) rather than tokens."""

    module: str
    main: str
    args: tuple[str, ...] = ()
    counts_messages: bool = True


BRIDGES = {
    "peer:spring-ai-window-1.0": Bridge("spring-ai-1.0", "turncheck.springai.SpringAiWindow"),
    "peer:spring-ai-window": Bridge("spring-ai-1.1", "turncheck.springai.SpringAiWindow"),
    "peer:spring-ai-window-2.0": Bridge("spring-ai-2.0", "turncheck.springai.SpringAiWindow"),
    "peer:langchain4j-window": Bridge(
        "langchain4j", "turncheck.langchain4j.Langchain4jWindow", ("messages",)
    ),
    "peer:langchain4j-token-window": Bridge(
        "langchain4j", "turncheck.langchain4j.Langchain4jWindow", ("tokens",), counts_messages=False
    ),
    "jdbc-stress": Bridge("spring-ai-jdbc", "turncheck.springai.jdbc.JdbcStress"),
}
"""Every main of the bridge by name: the peers, and ``jdbc-stress`` (Spring AI's JDBC repository
under concurrent writers, recorded as an operation history: see docs/other-languages.md)."""


def bridge_dir() -> Path:
    """``bridges/java`` of this checkout, or ``$TURNCHECK_JAVA_BRIDGE``."""
    where = os.environ.get(BRIDGE_VARIABLE)
    return Path(where) if where else Path(__file__).resolve().parents[2] / "bridges" / "java"


def _jar(module: str) -> Path:
    return bridge_dir() / module / "target" / f"turncheck-{module}-1.jar"


def unavailable(module: str) -> str | None:
    """Why the bridge's ``module`` cannot run here (no ``java``, not built), or None."""
    if shutil.which("java") is None:
        return "java is not on the path: install a JDK (17 or later) and Maven, then mvn -q -f bridges/java package"
    jar = _jar(module)
    if not jar.is_file() or not (jar.parent / "lib").is_dir():
        return f"the JVM bridge is not built ({jar} is missing): mvn -q -f bridges/java package"
    return None


def bridge_command(name: str) -> list[str]:
    """The command line that runs ``BRIDGES[name]``."""
    b = BRIDGES[name]
    jar = _jar(b.module)
    classpath = os.pathsep.join((str(jar), str(jar.parent / "lib" / "*")))
    return ["java", *JVM_OPTIONS, "-cp", classpath, b.main, *b.args]


_RUNNING: dict[str, ExecTrimmer] = {}


def _trimmer(name: str) -> ExecTrimmer:
    """The peer's one JVM process for this run (started at its first request)."""
    from turncheck.models.exec_protocol import ExecTrimmer

    reason = unavailable(BRIDGES[name].module)
    if reason is not None:
        raise MissingExtra(f"{name}: {reason}")
    if name not in _RUNNING:
        _RUNNING[name] = ExecTrimmer(bridge_command(name), label=name)
    return _RUNNING[name]


def _projector(name: str) -> Any:
    def project(history: History, budget: int, cost: CostModel) -> Window:
        from turncheck.models.messages import message_projector

        trimmer = _trimmer(name)
        if BRIDGES[name].counts_messages:
            keep = max(1, fitting_messages(history, cost, budget, spans(history)))
            return message_projector(lambda messages, _budget: trimmer(messages, keep), name=name)(
                history, budget, cost
            )
        return message_projector(trimmer, name=name)(history, budget, cost)

    project.__name__ = project.__qualname__ = name.removeprefix("peer:").replace("-", "_").replace(".", "_")
    return project


_SPRING = "org.springframework.ai:spring-ai-model"
_LC4J = "dev.langchain4j:langchain4j"
_OURS = "ours (maxMessages: the newest messages that fit)"
for _name, _library, _version, _call, _counting, _colour, _marker in (
    ("peer:spring-ai-window-1.0", _SPRING, "1.0.9", "MessageWindowChatMemory (count cut)", _OURS, "#5b8c2a", "1"),
    ("peer:spring-ai-window", _SPRING, "1.1.8", "MessageWindowChatMemory (count cut)", _OURS, "#6db33f", "2"),
    ("peer:spring-ai-window-2.0", _SPRING, "2.0.1", "MessageWindowChatMemory (turn snapping, #6312)", _OURS,
     "#3d7a1f", "3"),
    ("peer:langchain4j-window", _LC4J, "1.19.0", "MessageWindowChatMemory (evicts a call's results with it)",
     _OURS, "#c2185b", "4"),
    ("peer:langchain4j-token-window", _LC4J, "1.19.0", "TokenWindowChatMemory",
     "langchain4j OpenAiTokenCountEstimator (gpt-4o)", "#880e4f", "+"),
):  # fmt: skip
    register_peer(
        Peer(_name, _projector(_name), _library, __name__, _call, _counting, extra="", colour=_colour,
             marker=_marker, version=_version,
             unavailable=lambda module=BRIDGES[_name].module: unavailable(module))  # type: ignore[misc]
    )  # fmt: skip
