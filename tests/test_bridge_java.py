"""The JVM bridge (bridges/java): the real Spring AI and langchain4j chat memories answering the
exec protocol, and Spring AI's JDBC repository on PostgreSQL under concurrent JVM writers,
recorded in the operation-history format and checked by ``turncheck stress --check``.

The requests are written to the JVM process exactly as the exec protocol does (one JSON line in,
one line out); without ``java`` or a built bridge (``mvn -q -f bridges/java package``) every test
here skips, naming what is missing.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turncheck.cli.app import main
from turncheck.integrations.peers.jvm import COMMANDS, module
from turncheck.sim.stress.pg_server import throwaway_server
from turncheck.sim.stress.pg_server import unavailable_reason as pg_unavailable

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES, LOG = ROOT / "examples" / "exec", ROOT / "scenarios" / "data" / "example.jsonl"
CALL = {"role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "tool", "arguments": "{}"}}]}  # fmt: skip
TURN: list[dict[str, Any]] = [
    {"role": "user", "content": "what is the weather in Paris"},
    CALL,
    {"role": "tool", "tool_call_id": "c1", "content": "sunny, 21 degrees"},
    {"role": "assistant", "content": "It is sunny in Paris."},
]
HISTORY: list[dict[str, Any]] = [*TURN, {"role": "user", "content": "and tomorrow?"}]


def _needs(name: str) -> list[str]:
    """The command line of the bridge's main ``name`` (run from the bridge folder); skips, saying
    why, when it cannot run here."""
    bridge, main = COMMANDS[name]
    reason = bridge.missing()
    if reason is not None:
        pytest.skip(reason)
    return ["java", *bridge.command(*main)]


def _run(command: list[str], lines: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, input=lines, capture_output=True, text=True, timeout=timeout, check=True,
                          cwd=module("exec").folder())  # fmt: skip


class Running:
    """The peers' JVM processes of one xdist worker, each started at its first request and kept,
    as a bridge peer keeps its command for a run (:meth:`integrations.peers.bridge.Bridge.projector`):
    a JVM's start costs a second or two of CPU, its answer to a request milliseconds. Every
    answer is awaited at most :data:`ANSWER_WITHIN` seconds; what a JVM writes on stderr goes to
    a file of its own, shown when it fails."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: dict[str, tuple[subprocess.Popen[bytes], bytearray]] = {}

    def answers(self, peer: str, lines: str) -> list[dict]:
        """The peer's answer to each of ``lines`` (one JSON request a line), one line each."""
        if peer not in self.processes:
            with open(self.folder / f"{peer.removeprefix('peer:')}.stderr", "wb") as err:
                proc = subprocess.Popen(_needs(peer), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                        cwd=module("exec").folder())  # fmt: skip
            self.processes[peer] = (proc, bytearray())
        proc, pending = self.processes[peer]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(lines.encode())
        proc.stdin.flush()
        deadline = time.monotonic() + ANSWER_WITHIN
        answers = []
        for _ in lines.splitlines():
            while b"\n" not in pending and time.monotonic() < deadline:
                if select.select([proc.stdout], [], [], deadline - time.monotonic())[0]:
                    chunk = os.read(proc.stdout.fileno(), 1 << 16)
                    pending += chunk or b"\n"  # its end: an empty line, which fails below
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            answers.append(json.loads(line or b"null"))
        stderr = (self.folder / f"{peer.removeprefix('peer:')}.stderr").read_text(errors="replace")
        assert proc.poll() is None and all(isinstance(a, dict) for a in answers), (
            proc.poll(),
            answers,
            stderr,
        )
        return answers

    def stop(self) -> None:
        """End each JVM's input, as the exec protocol ends a run, and wait for its exit."""
        for proc, _ in self.processes.values():
            assert proc.stdin is not None
            proc.stdin.close()
        for proc, _ in self.processes.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


ANSWER_WITHIN = 120.0
"""Seconds a JVM's answers to one batch of requests may take, its start included."""


@pytest.fixture(scope="module")
def jvms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    running = Running(tmp_path_factory.mktemp("jvms"))
    try:
        yield running
    finally:
        running.stop()


def ask(jvms: Running, peer: str, *requests: tuple[int, list[dict]]) -> list[list[dict]]:
    """The peer's JVM process answering each request, one JSON line each way (no costs: a message
    window's maxMessages is then the budget itself)."""
    lines = "".join(json.dumps({"budget": b, "messages": m}) + "\n" for b, m in requests)
    return [a["messages"] for a in jvms.answers(peer, lines)]


def test_spring_ai_before_the_snapping_orphans_the_result_every_line_alike(jvms: Running) -> None:
    """maxMessages 3 over user, call, result, reply, user: 1.0 and 1.1 cut by count and open on the
    tool result; 2.0 (turn snapping, #6312) snaps the cut to the newest user message."""
    before = HISTORY[2:]
    assert ask(jvms, "peer:spring-ai-window-1.0", (3, HISTORY)) == [before]
    assert ask(jvms, "peer:spring-ai-window", (3, HISTORY), (5, HISTORY), (1, HISTORY)) == [
        before,
        HISTORY,
        HISTORY[4:],
    ]
    assert ask(jvms, "peer:spring-ai-window-2.0", (3, HISTORY), (5, HISTORY)) == [HISTORY[4:], HISTORY]


def test_spring_ai_snapped_window_empties_when_no_user_message_follows_the_cut(jvms: Running) -> None:
    """The snapped cut runs past every message when no user message follows it: at maxMessages 3
    the reply's add empties the memory (itself included); at 2 the result's add did, and the reply
    then lands alone — a window opening on an assistant reply, the snapping notwithstanding."""
    assert ask(jvms, "peer:spring-ai-window-2.0", (3, TURN), (2, TURN)) == [[], TURN[3:]]
    assert ask(jvms, "peer:spring-ai-window", (3, TURN), (2, TURN)) == [TURN[1:], TURN[2:]]


def test_langchain4j_windows_evict_the_result_with_its_call(jvms: Running) -> None:
    # evicting the call takes its result with it: the window is smaller than maxMessages
    assert ask(jvms, "peer:langchain4j-window", (3, HISTORY), (4, HISTORY)) == [HISTORY[3:], HISTORY[1:]]
    (tight, loose, none) = ask(
        jvms, "peer:langchain4j-token-window", (20, HISTORY), (500, HISTORY), (1, HISTORY)
    )
    assert loose == HISTORY and none == []
    assert tight and tight == HISTORY[len(HISTORY) - len(tight) :] and tight[0]["role"] != "tool"


def test_a_bad_request_is_an_error_line_not_a_crash(jvms: Running) -> None:
    """Each bad request gets an error line, and the same process answers the next good one."""
    answers = jvms.answers("peer:langchain4j-window", '{"messages": 3}\n[]\n')
    assert len(answers) == 2 and all(set(a) == {"error"} for a in answers)
    assert ask(jvms, "peer:langchain4j-window", (4, HISTORY)) == [HISTORY[1:]]


def test_a_java_trimmer_in_ten_lines_answers_as_the_same_rule_in_python(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/exec/KeepLast.java over ExecTrimmer gives, request by request, what keep_last.py
    gives as a ``messages:`` trimmer: the JSON output byte for byte but for the strategy's name."""
    exec_module = module("exec")
    if (reason := exec_module.missing()) is not None:
        pytest.skip(reason)
    monkeypatch.chdir(EXAMPLES)
    jar = exec_module.folder() / exec_module.built
    outputs = []
    for strategy in (f"exec:java -cp {jar}:{jar.parent / 'lib'}/* KeepLast.java", "messages:keep_last.py:fn"):
        code = main(["project", "-q", "-H", str(LOG), "-b", "6", "--strategy", strategy, "--per-request",
                     "--format", "json"])  # fmt: skip
        out = capsys.readouterr().out
        assert code == 0 and out.count(f'"strategy":"{strategy}"') == 3
        outputs.append(out.replace(strategy, "S"))
    assert outputs[0] == outputs[1] and json.loads(outputs[0].splitlines()[-1])["orphanRes"] > 0


def test_without_a_built_bridge_a_peer_is_refused_in_one_line(tmp_path: Path) -> None:
    """In a process of its own: a peer keeps the command it started for the rest of its process,
    so in this worker an earlier test's run of the same peer would answer in its place."""
    env = {**os.environ, module("exec").variable: str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "turncheck", "project", "--example", "-q", "--per-request", "--strategy",
         "peer:langchain4j-window"], capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    code, err = done.returncode, done.stderr
    assert code == 2 and err.count("\n") == 1 and "peer:langchain4j-window needs the java bridge: " in err
    assert "(not on PATH)" in err or "mvn -q package" in err


# -- Spring AI's JdbcChatMemoryRepository under 4 concurrent JVM writers ---------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_spring_ai_jdbc_repository_under_four_jvm_writers_is_checked_from_its_history(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    command = _needs("jdbc-stress")
    reason = pg_unavailable()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server can be started here: {reason}")
    port, history, turns = _free_port(), tmp_path / "history", 15
    with throwaway_server(port):
        url = f"jdbc:postgresql://127.0.0.1:{port}/postgres?user=postgres"
        _run([*command, url, "4", str(turns), str(history)], "", timeout=300)
    code = main(["stress", "--check", str(history), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    lines = [json.loads(x) for p in sorted(history.glob("*.jsonl")) for x in p.read_text().splitlines()]
    acked = {x["turn"] for x in lines if x["op"] == "append" and x["type"] == "ok"}
    final = next(x["live"] for x in lines if x["op"] == "final")
    assert report["journaled"] is False and report["appends"] == len(acked) == 4 * turns
    assert report["lost"] == len(acked - set(final))  # what the checker counts is what the store lost
    assert code == (
        0 if report["lost"] == 0 and len(final) == len(set(final)) and not report["bad_reads"] else 1
    )
