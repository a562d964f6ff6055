"""Peers on the JVM: Spring AI's and langchain4j's own chat memories, run by Java over the exec protocol.

``bridges/java`` (a Maven project, every version exact) builds one jar and runtime classpath
(``MODULE/target/lib``) per module: Spring AI's ``MessageWindowChatMemory`` once per version line
Maven Central serves — 1.0 and 1.1 cut by message count, 2.0 snaps the cut forward to a user
message (spring-ai #6312, the fix for #5940) — and langchain4j's ``MessageWindowChatMemory`` and
``TokenWindowChatMemory``. Each peer is one main class of one module (:class:`MavenModule`, a
:class:`~integrations.peers.bridge.Bridge` of the folder ``bridges/java``), started by ``java`` once per
run. The Java side (``SpringAiExec``, ``Langchain4jExec``) adds each request's messages to a fresh
memory one ``add`` at a time, as a conversation grows, and answers what the memory holds.

A message window's ``maxMessages`` is how many of the newest messages fit the budget under the
request's costs (ours, at least one), as ``peer:semantic-kernel``'s is; the token window gets the
budget in tokens and counts them with langchain4j's ``OpenAiTokenCountEstimator`` for gpt-4o.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from turncheck.integrations.peers.bridge import Bridge
from turncheck.models.peer import Peer, register_peer

JVM_OPTIONS = ("-XX:+UseSerialGC",)
"""One garbage-collector thread: a peer's JVM shares the machine with the run."""


@dataclass(frozen=True)
class MavenModule(Bridge):
    """One module of ``bridges/java``: built once its jar exists; a library's version is the one
    whose jar Maven copied into the module's runtime classpath (``target/lib``)."""

    module: str = ""

    def version(self, package: str) -> str:
        artifact = package.rpartition(":")[2]
        for jar in sorted((self.folder() / self.module / "target" / "lib").glob(f"{artifact}-*.jar")):
            rest = jar.name[len(artifact) + 1 : -len(".jar")]
            if rest[:1].isdigit():
                return rest
        return "not installed"

    def command(self, main: str, *args: str) -> tuple[str, ...]:
        """The arguments of ``java`` that run ``main`` of this module, from the bridge folder."""
        jar = f"{self.module}/target/turncheck-{self.module}-1.jar"
        return (*JVM_OPTIONS, "-cp", os.pathsep.join((jar, f"{self.module}/target/lib/*")), main, *args)


def module(name: str) -> MavenModule:
    return MavenModule("java", "java", f"{name}/target/turncheck-{name}-1.jar", "mvn -q package", "", name)


SPRING, LC4J = "org.springframework.ai:spring-ai-model", "dev.langchain4j:langchain4j"
OURS = "ours (maxMessages: the newest messages that fit)"
#: peer id, module, main class and arguments, Maven library, what it calls, whose counting
TABLE = (
    ("peer:spring-ai-window-1.0", "spring-ai-1.0", ("turncheck.springai.SpringAiWindow",), SPRING,
     "MessageWindowChatMemory (count cut)", OURS, "#5b8c2a", "1"),
    ("peer:spring-ai-window", "spring-ai-1.1", ("turncheck.springai.SpringAiWindow",), SPRING,
     "MessageWindowChatMemory (count cut)", OURS, "#6db33f", "2"),
    ("peer:spring-ai-window-2.0", "spring-ai-2.0", ("turncheck.springai.SpringAiWindow",), SPRING,
     "MessageWindowChatMemory (turn snapping, #6312)", OURS, "#3d7a1f", "3"),
    ("peer:langchain4j-window", "langchain4j", ("turncheck.langchain4j.Langchain4jWindow", "messages"), LC4J,
     "MessageWindowChatMemory (evicts a call's results with it)", OURS, "#c2185b", "4"),
    ("peer:langchain4j-token-window", "langchain4j", ("turncheck.langchain4j.Langchain4jWindow", "tokens"), LC4J,
     "TokenWindowChatMemory", "langchain4j OpenAiTokenCountEstimator (gpt-4o)", "#880e4f", "+"),
)  # fmt: skip
COMMANDS = {name: (module(mod), main) for name, mod, main, *_ in TABLE} | {
    "jdbc-stress": (module("spring-ai-jdbc"), ("turncheck.springai.jdbc.JdbcStress",))
}
"""Every main of the bridge by name: the peers, and ``jdbc-stress`` (Spring AI's JDBC repository
under concurrent writers, recorded as an operation history: docs/other-languages.md)."""

for _name, _module, _main, _library, _call, _counting, _colour, _marker in TABLE:
    _bridge = module(_module)
    register_peer(Peer(_name, _bridge.projector(_name, *_bridge.command(*_main)), _library, _library, _call,
                       _counting, extra="", colour=_colour, marker=_marker, bridge=_bridge))  # fmt: skip
