"""``lint --from FORMAT --follow FILE`` (issue 51, item 4): a trace linted as it is written.

The writer is a real process appending OTLP JSON lines (one ``resourceSpans`` document a line,
as the collector's file exporter writes them) while ``turncheck`` follows the file in another real
process; the test reads the follower's stdout as it comes, truncates and rotates the file under
it, and stops it with SIGINT, as Ctrl-C does.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from turncheck.models.errors import BadParameter
from turncheck.models.follow import Tail, follow_findings
from turncheck.models.request_lint import Conversations

USER = {"role": "user", "parts": [{"type": "text", "content": "weather in Oslo?"}]}
CALL = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {}}]}
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "rain"}]}
CLEAN = [USER, CALL, RESULT]
ORPHAN = [USER, RESULT]  # the call trimmed away, its result sent: orphan-result


def span_line(n: int, inputs: list[Any], conversation: str = "conv") -> str:
    """One OTLP JSON line holding one ``chat`` span (trace and span id ``n``)."""
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
             {"key": "gen_ai.conversation.id", "value": {"stringValue": conversation}},
             {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(inputs)}}]  # fmt: skip
    span = {"traceId": f"{n:032x}", "spanId": f"{n:016x}", "startTimeUnixNano": str(n), "attributes": attrs}
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n"


WRITER = """
import sys, time
from pathlib import Path
path, stop, filler, lines = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
with path.open("a") as fh:
    for line in lines:
        fh.write(line)
        fh.flush()
        time.sleep(0.3)
    while not stop.exists():  # still growing: a record that is no finding now and then, never an ending
        fh.write(filler)
        fh.flush()
        time.sleep(0.2)
"""


def follower(path: Path, *extra: str, fmt: str = "otel") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "turncheck", "lint", "--from", fmt, "--follow", str(path), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
    )  # fmt: skip


def next_line(proc: subprocess.Popen[str], timeout: float = 30) -> str:
    """The follower's next stdout line, waited for at most ``timeout`` seconds (read from the pipe
    a byte at a time: a buffered reader would hold lines ``select`` cannot see)."""
    assert proc.stdout is not None
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        byte = os.read(proc.stdout.fileno(), 1) if ready else b""
        if not byte:
            proc.kill()
            pytest.fail(f"no finding within {timeout} s; stderr: {proc.communicate()[1]}")
        line += byte
    return line.decode()


def interrupt(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


@pytest.fixture
def trace(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "spans.jsonl"


def test_an_orphan_is_reported_while_the_writer_is_still_writing(trace: Path, tmp_path: Path) -> None:
    stop = tmp_path / "stop"
    lint = follower(trace, "--format", "json")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(trace), str(stop), span_line(1, CLEAN),
                               span_line(1, CLEAN), span_line(2, ORPHAN)])  # fmt: skip
    try:
        finding = json.loads(next_line(lint))
        assert writer.poll() is None  # reported while the file is still growing
        assert finding["problem"] == "orphan-result"
        assert finding["where"].startswith(f"request {trace}:2: trace {2:032x} span {2:016x}")
        second = json.loads(next_line(lint))
        assert second["problem"] == "result-not-next" and ":2:" in second["where"]  # openai-chat's rule
        time.sleep(1)  # more clean lines: nothing more printed
        code, out, err = interrupt(lint)
    finally:
        stop.touch()
        writer.wait(timeout=30)
        if lint.poll() is None:
            lint.kill()
    assert code == 130 and out == ""
    assert err.splitlines()[-1] == "turncheck: interrupted" and "Traceback" not in err
    assert "2 findings" in err.splitlines()[-2]


def test_truncation_and_rotation_are_followed(trace: Path) -> None:
    trace.write_text(span_line(1, CLEAN))
    lint = follower(trace)
    try:
        with trace.open("a") as fh:
            fh.write(span_line(2, ORPHAN))
        assert next_line(lint).startswith(f"orphan-result: request {trace}:2: trace {2:032x}")
        next_line(lint)
        time.sleep(0.5)
        trace.write_text(span_line(3, ORPHAN))  # truncated, then a shorter file written
        assert next_line(lint).startswith(f"orphan-result: request {trace}:1: trace {3:032x}")
        next_line(lint)
        trace.rename(trace.with_suffix(".1"))  # rotated: a new file under the name
        time.sleep(0.5)
        trace.write_text(span_line(4, CLEAN) + span_line(5, ORPHAN))
        assert next_line(lint).startswith(f"orphan-result: request {trace}:2: trace {5:032x}")
        code, out, err = interrupt(lint)
    finally:
        if lint.poll() is None:
            lint.kill()
    assert code == 130 and "Traceback" not in err
    assert f"{trace}: truncated" in err and f"{trace}: rotated" in err


def test_a_malformed_line_is_named_and_following_goes_on(trace: Path) -> None:
    trace.write_text("not json\n" + span_line(1, ORPHAN))
    lint = follower(trace)
    try:
        assert next_line(lint).startswith(f"orphan-result: request {trace}:2:")
        code, _, err = interrupt(lint)
    finally:
        if lint.poll() is None:
            lint.kill()
    assert code == 130 and f"{trace}:1: malformed JSON (Expecting value); skipped" in err


@pytest.mark.parametrize(("fmt", "name"), [("langfuse", "langfuse-trimmed.json"), ("langsmith", "langsmith-trimmed.jsonl"),
                                           ("otel", "../your-agent/trace.jsonl")])  # fmt: skip
def test_each_trace_format_follows_as_lint_request_reads_it(tmp_path: Path, fmt: str, name: str) -> None:
    """A JSON-lines export (a Langfuse trace, a LangSmith run, an OTLP document a line) followed
    gives, line by line, the findings ``lint_request`` gives each of its records: a trace line is
    split into its observations, never read as one record that is no model call."""
    from test_request_lint import TRACES, records

    import turncheck

    source = (TRACES / name).resolve()
    lines = (
        [json.dumps(t) for t in json.loads(source.read_text())]
        if fmt == "langfuse"
        else source.read_text().split("\n")
    )
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(line for line in lines if line.strip()) + "\n")
    followed = follow_findings(Tail(path, poll=0.01), fmt, state=Conversations(limit=10))
    found = [f.problem for _ in range(len(path.read_text().splitlines())) for f in next(followed)]
    followed.close()
    expected = [f.problem for r in records(fmt, source) for f in turncheck.lint_request(r, format=fmt)]
    assert found == expected and "orphan-result" in found


def test_the_idlest_conversation_is_forgotten_past_the_limit() -> None:
    state = Conversations(limit=2)
    for name in ("a", "b", "a", "c"):
        state.sent(name)
    assert list(state.requests) == ["a", "c"] and state.requests["a"] == 2


def test_a_line_past_the_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(span_line(1, ORPHAN) + "x" * 300)
    found = follow_findings(Tail(path, poll=0.01, max_line=200), "otel", state=Conversations(limit=1))
    assert [f.problem for f in next(found)] == ["orphan-result", "result-not-next"]
    with pytest.raises(BadParameter, match=r"big.jsonl:2: a line longer than 200 bytes"):
        next(found)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--follow", "F"], "--follow reads a foreign log as it grows: give --from"),
        (
            ["--from", "claude-code", "--follow", "F", "--budget", "9"],
            "--budget checks the requests of a trace",
        ),
        (["--from", "otel", "--follow", "F", "F"], "--follow follows one file"),
    ],
)
def test_follow_refusals_are_one_line(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    (tmp_path / "F").write_text(span_line(1, CLEAN))
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("lint", *args)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1


# -- a format read whole: a Claude Code session file -------------------------------------------------

CLAUDE_CODE = Path(__file__).resolve().parent.parent / "examples" / "formats"


def claude_code_records() -> list[str]:
    """A session as Claude Code writes it: two parallel calls, one result lost (anthropics/claude-code
    #31330), then the user writes again: that request goes out with a call unanswered."""
    from test_import_claude_code import rec, res, use

    return [json.dumps(r) + "\n" for r in [
        rec("user", "u1", None, "run two"), rec("assistant", "a1", "u1", [use("t1")], mid="m1"),
        rec("assistant", "a2", "a1", [use("t2")], mid="m1"), rec("user", "r2", "a2", res("t2")),
        rec("user", "u2", "r2", "what were they?"), rec("assistant", "a3", "u2", [{"type": "text", "text": "?"}]),
    ]]  # fmt: skip


def test_a_claude_code_session_is_followed_while_claude_code_writes_it(tmp_path: Path) -> None:
    session, stop = tmp_path / "session.jsonl", tmp_path / "stop"
    progress = json.dumps({"type": "progress", "data": {}}) + "\n"  # never sent to the model: skipped
    lint = follower(session, fmt="claude-code")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(session), str(stop), progress,
                               *claude_code_records()])  # fmt: skip
    try:
        first = next_line(lint)
        assert writer.poll() is None
        assert first == f"dangling-call: {session}:2: seq 1 session session turn 0 CALL t1\n"
        assert next_line(lint).startswith("call-not-answered-next: ") and next_line(lint).startswith(
            "results-not-first"
        )
        code, out, err = interrupt(lint)
    finally:
        stop.touch()
        writer.wait(timeout=30)
        if lint.poll() is None:
            lint.kill()
    assert (
        code == 130
        and out == ""
        and err.splitlines()[-1] == "turncheck: interrupted"
        and "Traceback" not in err
    )


def test_a_call_still_running_is_no_finding_until_a_request_goes_without_it(tmp_path: Path) -> None:
    from turncheck.models.follow import follow_whole_file

    session = tmp_path / "session.jsonl"
    records = claude_code_records()
    found = follow_whole_file(session, "claude-code", provider="anthropic", poll=0.01)
    seen = []
    for n in range(1, len(records) + 1):
        session.write_text("".join(records[:n]))
        seen.append(sorted(f.problem for f in next(found)))
    found.close()
    assert seen == [[], [], [], [], ["call-not-answered-next", "dangling-call", "results-not-first"], []]


@pytest.mark.parametrize("appended", [True, False], ids=["appended-lines", "whole-file"])
@pytest.mark.parametrize(
    "name", ["claude-code-compaction.jsonl", "claude-code-session.jsonl", "claude-code-cli.jsonl"]
)
def test_line_by_line_a_session_names_what_lint_names(tmp_path: Path, name: str, appended: bool) -> None:
    """Written a line at a time, the session's requests name, each once, what ``lint --from
    claude-code`` names of the whole file (the compaction over a running subagent's call among
    them, anthropics/claude-code#90036) — followed from the appended lines (what ``--follow``
    does for claude-code) and by reading the whole file again (formats read only whole)."""
    from turncheck.models.follow import follow_session_lines, follow_whole_file
    from turncheck.models.importers import import_log
    from turncheck.models.sent_windows import lint_imported

    source = CLAUDE_CODE / name
    session = tmp_path / name
    found = (
        follow_session_lines(Tail(session, poll=0.01), "claude-code", provider="anthropic")
        if appended
        else follow_whole_file(session, "claude-code", provider="anthropic", poll=0.01)
    )
    named = []
    for line in source.read_text(encoding="utf-8").splitlines(keepends=True):
        with session.open("a", encoding="utf-8") as fh:
            fh.write(line)
        named += [(f.problem, f.where.replace(str(session), name)) for f in next(found)]
    found.close()
    report = lint_imported(import_log("claude-code", source), 1000, "anthropic")
    whole = [(p, w.replace(str(source), name)) for p, ws in report.examples.items() for w in ws]
    assert sorted(named) == sorted(whole) and len(set(named)) == len(named)
    assert ("summary-covers-open-call" in {p for p, _ in named}) == (name == "claude-code-compaction.jsonl")


def test_a_change_costs_the_bytes_appended_not_the_file(tmp_path: Path) -> None:
    """The claude-code follower reads each appended byte once: after a long session, one more
    record costs its own bytes (``Tail.bytes_read``), and a record never sent (a progress line,
    its payload) is kept as its links only."""
    from test_import_claude_code import rec, res, use

    from turncheck.models.follow import follow_session_lines

    session = tmp_path / "session.jsonl"
    lines, parent = [], None
    for n in range(300):  # a long clean session: a prompt, a call, its result, an answer, a progress line
        turn = [rec("user", f"u{n}", parent, "again"), rec("assistant", f"a{n}", f"u{n}", [use(f"t{n}")], mid=f"m{n}"),
                rec("user", f"r{n}", f"a{n}", res(f"t{n}")), rec("assistant", f"e{n}", f"r{n}", [{"type": "text", "text": "ok"}], mid=f"n{n}"),
                {"type": "progress", "uuid": f"p{n}", "parentUuid": f"e{n}", "data": {"output": "x" * 2000}}]  # fmt: skip
        lines += [json.dumps(r) + "\n" for r in turn]
        parent = f"p{n}"
    session.write_text("".join(lines))
    tail = Tail(session, poll=0.01)
    found = follow_session_lines(tail, "claude-code", provider="anthropic")
    assert next(found) == []
    assert tail.bytes_read == session.stat().st_size
    orphan = json.dumps(rec("user", "u-last", parent, res("t-gone"))) + "\n"
    before = tail.bytes_read
    with session.open("a") as fh:
        fh.write(orphan)
    assert [f.problem for f in next(found)] == ["orphan-result", "result-not-next"]
    assert tail.bytes_read - before == len(orphan.encode())
    found.close()


def test_a_record_never_sent_is_kept_as_its_links() -> None:
    from turncheck.integrations.formats.claude_code import followed

    progress = {
        "type": "progress",
        "uuid": "p",
        "parentUuid": "a",
        "data": {"output": "x" * 5000},
        "cwd": "/",
    }
    assert followed(progress) == {"type": "progress", "uuid": "p", "parentUuid": "a"}
    message = {"type": "user", "uuid": "u", "parentUuid": None, "message": {"role": "user", "content": "hi"}}
    assert followed(message) is message


@pytest.mark.parametrize("fmt", ["otel", "claude-code"])
def test_sigterm_ends_follow_as_ctrl_c_does(tmp_path: Path, fmt: str) -> None:
    """SIGTERM (a service manager stopping the monitor, ``timeout``, ``docker stop``) ends
    ``--follow`` as Ctrl-C does: the count line, ``turncheck: interrupted``, exit 130, no traceback."""
    path = tmp_path / "f.jsonl"
    path.write_text(span_line(1, ORPHAN) if fmt == "otel" else "".join(claude_code_records()))
    lint = follower(path, fmt=fmt)
    try:
        next_line(lint)  # following: a finding printed
        lint.send_signal(signal.SIGTERM)
        out, err = lint.communicate(timeout=30)
    finally:
        if lint.poll() is None:
            lint.kill()
    assert lint.returncode == 130, err
    assert err.splitlines()[-1] == "turncheck: interrupted" and "Traceback" not in err
    assert "findings" in err.splitlines()[-2]


def test_a_follow_started_with_sigint_ignored_still_stops_on_sigint(tmp_path: Path) -> None:
    """A script's ``turncheck lint --follow F &`` inherits SIGINT ignored (POSIX shells ignore it in
    a background job); ``kill -INT`` must still end the monitor as Ctrl-C does, not leave it running."""
    path = tmp_path / "f.jsonl"
    path.write_text(span_line(1, ORPHAN))
    lint = subprocess.Popen(
        [sys.executable, "-m", "turncheck", "lint", "--from", "otel", "--follow", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    try:
        next_line(lint)
        rc, _, err = interrupt(lint)
    finally:
        if lint.poll() is None:
            lint.kill()
    assert rc == 130, err
    assert err.splitlines()[-1] == "turncheck: interrupted" and "Traceback" not in err


def test_a_database_is_not_followed(cli: Any, tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "sessions.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE messages (x)")
    code, out, err = cli("lint", "--from", "goose", "--follow", str(db))
    assert (
        code == 2 and "is a SQLite database (lint it without --follow)" in err and len(err.splitlines()) == 1
    )


def test_a_json_document_written_without_a_final_newline_is_followed(tmp_path: Path) -> None:
    """Found with a held-out history (issue 51): Pydantic AI's ``dump_json`` and ``json.dump``
    write a document with no newline after it, and ``--follow`` waited for a complete line that
    never came — nothing was checked, whatever the file held. Now a file whose last byte closes
    the document is read: rewritten in place with the poisoned history, then replaced whole
    (``os.replace``), each finding is printed while the follower runs."""
    history = tmp_path / "history.json"
    clean = (CLAUDE_CODE / "pydantic-ai-clean.json").read_bytes().rstrip()
    poisoned = (CLAUDE_CODE / "pydantic-ai-poisoned.json").read_bytes().rstrip()
    history.write_bytes(clean)
    proc = follower(history, "--format", "json", fmt="pydantic-ai")
    time.sleep(1)
    history.write_bytes(poisoned)
    first = json.loads(next_line(proc))
    assert first["problem"] == "dangling-call", first
    replaced = tmp_path / "history.json.tmp"
    replaced.write_bytes(clean)
    os.replace(replaced, history)
    time.sleep(1)
    code, _, err = interrupt(proc)
    assert code == 130 and "Traceback" not in err, err
    assert "rotated" in err and "changes read" in err, err
