"""The exec protocol: a trimmer in another language, run as a child process, gives exactly the
windows of the same trimmer in Python; every way the command fails is one line, and the
command is stopped and reaped (its children too)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.integrations.peers.requests import replay
from turncheck.models.cost import EstimateCost
from turncheck.models.errors import BadParameter, UnknownName
from turncheck.models.events import read_jsonl
from turncheck.models.exec_protocol import ExecError, exec_projector, request_timeout
from turncheck.models.history import History
from turncheck.models.message_spans import span_costs
from turncheck.models.messages import history_messages, message_projector
from turncheck.models.projector import check_strategy, project, resolve_strategy
from turncheck.models.selection import PeerWindow
from turncheck.models.user_code import names_code
from turncheck.models.workload import WorkloadParams, generate_events

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples" / "exec"
SCHEMA = ROOT / "docs" / "exec-protocol.schema.json"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed (the exec protocol's JS trimmer)")
PY = sys.executable


def script(tmp_path: Path, name: str, body: str) -> str:
    """A Python trimmer command over the protocol (the failure cases need no Node)."""
    path = tmp_path / name
    path.write_text("import json, os, sys, time\n" + body)
    return f"{PY} {path}"


ECHO = (
    "for line in sys.stdin:\n    print(json.dumps({'messages': json.loads(line)['messages']}), flush=True)\n"
)


@pytest.fixture
def example() -> History:
    events = [
        e for e in read_jsonl(ROOT / "scenarios" / "data" / "example.jsonl") if e.session == "support-42"
    ]
    return History(sorted(events, key=lambda e: e.seq), costs=(EstimateCost(),))


@needs_node
def test_the_done_when_command_is_byte_identical_but_for_the_name(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``turncheck project -H LOG -b 6 --strategy "exec:node keep_last.mjs" --per-request --format
    json`` prints what ``messages:keep_last.py:fn`` prints, byte for byte but for the name."""
    monkeypatch.chdir(EXAMPLES)
    log = ROOT / "scenarios" / "data" / "example.jsonl"
    outputs = []
    for strategy in ("exec:node keep_last.mjs", "messages:keep_last.py:fn"):
        code, out, err = cli("project", "-q", "-H", str(log), "-b", "6", "--strategy", strategy,
                             "--per-request", "--format", "json")  # fmt: skip
        assert code == 0 and err == "", err
        assert out.count(f'"strategy":"{strategy}"') == 3  # two sessions and the total
        outputs.append(out.replace(strategy, "S"))
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0].splitlines()[-1])["orphanRes"] > 0  # the comparison can see a break


@needs_node
def test_every_request_of_a_workload_gets_the_python_trimmers_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES)
    cost = EstimateCost()
    by_session: dict[str, list] = {}
    for e in generate_events(WorkloadParams(sessions=3, turns=6, p_result=0.9, p_parallel=0.3, seed=7)):
        by_session.setdefault(e.session, []).append(e)
    sessions = list(by_session.values())
    node, python = resolve_strategy("exec:node keep_last.mjs"), resolve_strategy("messages:keep_last.py:fn")
    assert resolve_strategy("exec:node keep_last.mjs") is node  # one command per run
    compared = 0
    for events in sessions:
        for budget in (1, 4, 9):
            ours = replay(events, budget, "exec:node keep_last.mjs", cost)
            theirs = replay(events, budget, "messages:keep_last.py:fn", cost)
            for a, b in zip(ours, theirs, strict=True):
                assert (a.start, a.end, a.cost, a.report, [e.seq for e in a.events]) == (
                    b.start, b.end, b.cost, b.report, [e.seq for e in b.events])  # fmt: skip
                compared += 1
    assert compared > 100 and node is not python


def test_an_echo_in_python_is_the_whole_history_and_requests_follow_the_schema(
    tmp_path: Path, example: History
) -> None:
    record = tmp_path / "requests.jsonl"
    body = (f"out = open({str(record)!r}, 'a')\n" "for line in sys.stdin:\n    out.write(line); out.flush()\n"
            "    print(json.dumps({'messages': json.loads(line)['messages']}), flush=True)\n")  # fmt: skip
    w = project(example, 10_000, exec_projector(script(tmp_path, "echo.py", body)), EstimateCost())
    assert (w.start, w.end) == (0, len(example)) and w.strategy.startswith("exec:")
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    assert [r["budget"] for r in requests] == [10_000] and len(requests[0]["messages"]) == 14
    spans, messages = history_messages(example)
    assert requests[0]["messages"] == messages and requests[0]["costs"] == span_costs(
        example, EstimateCost(), spans
    )
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    assert schema["$id"] == "urn:turncheck:exec-protocol:1"
    validator = jsonschema.Draft202012Validator
    validator.check_schema(schema)

    def valid(kind: str, value: object) -> bool:
        return validator({"$ref": f"#/$defs/{kind}", "$defs": schema["$defs"]}).is_valid(value)

    assert valid("request", requests[0]) and validator(schema).is_valid(requests[0])
    assert valid("response", {"messages": requests[0]["messages"]}) and valid("error", {"error": "too small"})
    assert valid("refused", {"refused": "nothing fits"}) and not valid(
        "refused", {"refused": "x", "messages": []}
    )
    assert not valid("response", {"messages": [1]}) and not valid("request", {"messages": []})
    assert not validator(schema).is_valid({"budget": 3})


def test_a_refusal_is_a_refused_request_and_the_run_goes_on(tmp_path: Path, example: History) -> None:
    body = "for line in sys.stdin:\n    print(json.dumps({'refused': 'nothing fits'}), flush=True)\n"
    strategy = exec_projector(script(tmp_path, "refuse.py", body))
    windows = replay(example.events, 30, strategy, EstimateCost())  # type: ignore[arg-type]
    assert len(windows) > 3
    assert all(
        isinstance(w, PeerWindow) and w.refused and w.events == [] and not w.report.empty for w in windows
    )


def test_some_of_a_messages_parallel_calls_are_those_calls_not_an_invented_message(example: History) -> None:
    """A library that prunes calls one by one sends part of a parallel-call message: the calls it
    kept are those events of the log, the others dropped inside the window."""
    spans, messages = history_messages(example)
    k = next(i for i, m in enumerate(messages) if len(m.get("tool_calls") or []) > 1)

    def second_call_only(msgs, budget):
        part = {**msgs[k], "tool_calls": msgs[k]["tool_calls"][1:]}
        return [msgs[k - 1], part, *msgs[k + 1 :]]

    w = message_projector(second_call_only)(example, 10_000, EstimateCost())
    assert isinstance(w, PeerWindow) and w.invented == 0
    assert k > 0 and w.events[1] == example.events[spans[k].start + 1]
    assert w.dropped_inside == (spans[k].start,) and w.report.orphanRes == 1  # the dropped call's result


def gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs: no process at all, or a zombie (dead, its status not yet
    collected — an orphaned grandchild is reaped by init, which may take its time: this
    container's init took about 2 s)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # Linux: the state letter follows the parenthesised command name
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


FAILURES = {
    "crash": ("sys.stdin.readline(); sys.exit(3)\n", "the command exited with status 3 before answering"),
    "killed": ("sys.stdin.readline(); os.kill(os.getpid(), 9)\n", "the command was killed by SIGKILL before answering"),
    "garbage": ("sys.stdin.readline(); print('hello', flush=True); time.sleep(60)\n",
                "malformed answer (not a JSON line): 'hello'"),
    "shape": ("sys.stdin.readline(); print('[1, 2]', flush=True); time.sleep(60)\n",
              'malformed answer (want {"messages": [...]}, {"refused": "..."} or {"error": "..."}): \'[1, 2]\''),
    "not-objects": ("sys.stdin.readline(); print('{\"messages\": [3]}', flush=True); time.sleep(60)\n",
                    "malformed answer: message 1 is not a JSON object"),
    "error": ("sys.stdin.readline(); print(json.dumps({'error': 'too small'}), flush=True); time.sleep(60)\n",
              "the trimmer answered error: too small"),
    "hang": ("sys.stdin.readline(); time.sleep(60)\n", "no answer within 1 s (TURNCHECK_EXEC_TIMEOUT sets it)"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_each_failure_is_one_line_naming_command_and_request_and_stops_it(
    case: str, tmp_path: Path, example: History
) -> None:
    """The command (and a child it started) is gone after the error: killed and reaped."""
    body, message = FAILURES[case]
    pids = tmp_path / "pids"
    spawn = (f"import subprocess\nchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
             f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n")  # fmt: skip
    command = script(tmp_path, f"{case}.py", spawn + body)
    strategy = exec_projector(command, timeout=1.0)
    with pytest.raises(ExecError) as raised:
        project(example, 10_000, strategy, EstimateCost())
    text = str(raised.value)
    assert text == f"exec:{command}: request 1 (budget 10000, 14 messages): {message}"
    assert "\n" not in text
    pid, child = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while not (gone(pid) and gone(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert gone(pid) and gone(child)
    finally:
        for left in (pid, child):
            if not gone(left):
                os.kill(left, signal.SIGKILL)


def test_a_command_is_started_once_and_stopped_at_its_end(tmp_path: Path, example: History) -> None:
    starts = tmp_path / "starts"
    body = f"open({str(starts)!r}, 'a').write('x')\n" + ECHO
    strategy = exec_projector(script(tmp_path, "once.py", body))
    windows = replay(example.events, 30, strategy, EstimateCost())  # type: ignore[arg-type]
    assert len(windows) > 3 and starts.read_text() == "x"
    trimmer = strategy.trimmer  # type: ignore[attr-defined]
    proc = trimmer._proc
    assert trimmer.stop() == 0 and proc.poll() == 0


def test_the_cli_prints_one_line_exit_2_and_nothing_on_stdout(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hang.py").write_text("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
    monkeypatch.setenv("TURNCHECK_EXEC_TIMEOUT", "0.5")
    code, out, err = cli("project", "--example", "-q", "--per-request", "--strategy", f"exec:{PY} hang.py")
    assert (code, out) == (2, "")
    assert err == (f"turncheck: error: exec:{PY} hang.py: request 1 (budget 4000, 1 messages): "
                   "no answer within 0.5 s (TURNCHECK_EXEC_TIMEOUT sets it)\n")  # fmt: skip


def test_stderr_passes_through(tmp_path: Path, example: History, capfd: pytest.CaptureFixture[str]) -> None:
    body = "sys.stderr.write('trimmer says hi\\n'); sys.stderr.flush()\n" + ECHO
    project(example, 100, exec_projector(script(tmp_path, "talk.py", body)), EstimateCost())
    assert "trimmer says hi" in capfd.readouterr().err


def test_bad_commands_and_timeouts_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BadParameter, match="exec: needs a command"):
        check_strategy("exec:")
    with pytest.raises(BadParameter, match="program 'no-such-trimmer-xyz' not found"):
        check_strategy("exec:no-such-trimmer-xyz --flag")
    with pytest.raises(BadParameter, match="No closing quotation"):
        check_strategy("exec:node 'trim.mjs")
    with pytest.raises(UnknownName, match="exec:COMMAND"):
        resolve_strategy("nothing-like-a-strategy")
    for raw in ("0", "-1", "soon", "inf", "nan"):
        monkeypatch.setenv("TURNCHECK_EXEC_TIMEOUT", raw)
        with pytest.raises(BadParameter, match="TURNCHECK_EXEC_TIMEOUT must be a positive number"):
            request_timeout()
    monkeypatch.setenv("TURNCHECK_EXEC_TIMEOUT", "2.5")
    assert request_timeout() == 2.5
    assert main(["project", "--example", "-q", "--strategy", "exec:no-such-trimmer-xyz"]) == 2


def test_an_exec_strategy_is_code_a_trace_never_runs() -> None:
    assert names_code("exec:node trim.mjs") and not names_code("peer:langchain")


@needs_node
def test_the_page_runs_as_written(tmp_path: Path, wheel_venv: Path, built_wheel: Path) -> None:
    """docs/exec-protocol.md through the docs runner (tests/doc_pages.py), in the fresh venv: each
    console block prints exactly what it shows, the Python block runs, and the JavaScript is the
    example file's; the protocol's JSON lines and the bash line are illustrations."""
    import doc_pages

    def illustration(lang: str, code: str) -> None:
        assert lang in ("json", "bash"), f"exec-protocol.md: a {lang or 'plain'} block that nothing runs"

    steps = doc_pages.read("exec-protocol.md", (ROOT / "docs" / "exec-protocol.md").read_text(), illustration)
    assert [next(iter(s.run)) for s in steps] == ["turncheck", "turncheck", "turncheck", "python"]
    results = doc_pages.run(steps, doc_pages.scratch(tmp_path), wheel_venv, built_wheel)
    assert doc_pages.check("exec-protocol.md", steps, results) == 3


@pytest.mark.parametrize("own_session", [False, True], ids=["child", "child-that-calls-setsid"])
def test_a_finished_run_leaves_no_process_behind(tmp_path: Path, own_session: bool) -> None:
    """The real command line in a process of its own: once it exits, so has the command (it read
    end of input at exit), and its children with it — a child that left the command's process
    group by ``setsid()`` included (issue 57: it outlived the run)."""
    import subprocess

    pids = tmp_path / "pids"
    body = (f"import subprocess\nchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
            f"start_new_session={own_session}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n" + ECHO)  # fmt: skip
    command = script(tmp_path, "lingering.py", body)
    done = subprocess.run([PY, "-m", "turncheck", "project", "--example", "-q", "--per-request", "--strategy",
                           f"exec:{command}"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "| (total) |" in done.stdout
    pid, child = map(int, pids.read_text().split())
    deadline = time.monotonic() + 5
    while not (gone(pid) and gone(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert gone(pid) and gone(child)
    finally:
        for left in (pid, child):
            if not gone(left):
                os.kill(left, signal.SIGKILL)


def limit_memory(address_space: int) -> Callable[[], None]:
    """A ``preexec_fn`` that caps the child's address space (``RLIMIT_AS``)."""
    import resource

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return apply


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
@pytest.mark.parametrize("end", ["\\n", ""], ids=["a-300-MB-line", "a-line-that-never-ends"])
def test_an_answer_past_the_cap_is_one_line_under_a_memory_limit(tmp_path: Path, end: str) -> None:
    """An answer line longer than MAX_ANSWER_BYTES is refused once that much is read — with or
    without its newline — in one line, exit 2, under a 1 GiB address-space limit (issue 57: one
    1 GiB line took turncheck to 1.45 GB and read as "exited with status 0 before answering")."""
    import subprocess

    body = (f"sys.stdin.readline()\nsys.stdout.write('{{\"messages\": [\"' + 'x' * (300 << 20) + '\"]}}{end}')\n"
            "sys.stdout.flush()\ntime.sleep(60)\n")  # fmt: skip
    command = script(tmp_path, "big.py", body)
    started = time.monotonic()
    done = subprocess.run(
        [PY, "-m", "turncheck", "project", "--example", "-q", "--per-request", "--strategy", f"exec:{command}"],
        capture_output=True, text=True, timeout=120, preexec_fn=limit_memory(1 << 30),
        env={**os.environ, "TURNCHECK_EXEC_TIMEOUT": "30"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"turncheck: error: exec:{command}: request 1 (budget 4000, 1 messages): "
                           "answer line longer than 64 MiB (MAX_ANSWER_BYTES), not read further\n")  # fmt: skip
    assert time.monotonic() - started < 25  # at the cap, not at the timeout


def test_a_helper_the_command_leaves_dies_with_it_and_its_half_answer_is_refused(tmp_path: Path) -> None:
    """The command writes part of its answer and exits, leaving a helper (in a session of its
    own) to finish the line half a second later: the answer was given up 50 ms after the exit as
    "exited with status 0 before answering", and the helper outlived the run (issue 57). The
    helper now dies with the command (the guard is its subreaper), and what the command wrote is
    judged: a line without its end, malformed."""
    from turncheck.models.exec_protocol import ExecError, ExecTrimmer

    marker = tmp_path / "helper-alive"
    body = (
        "req = json.loads(sys.stdin.readline())\n"
        "line = json.dumps({'messages': req['messages'], 'note': 'x' * (4 << 20)})\n"
        "sys.stdout.write(line[:-1]); sys.stdout.flush()\n"
        "if os.fork() == 0:\n"
        "    os.setsid(); time.sleep(1.5)\n"
        f"    open({str(marker)!r}, 'w').close(); sys.stdout.write(line[-1:] + '\\n'); os._exit(0)\n"
        "os._exit(0)\n"
    )
    trimmer = ExecTrimmer([PY, script(tmp_path, "late.py", body).split(" ", 1)[1]], label="late", timeout=20)
    with pytest.raises(ExecError) as caught:
        trimmer.exchange({"budget": 100, "messages": [{"role": "user", "content": "hi"}], "costs": [5]})
    assert "malformed answer" in str(caught.value) and "before answering" not in str(caught.value)
    time.sleep(2.5)
    assert not marker.exists()  # the setsid() helper was killed, not left running


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
def test_an_answer_under_the_cap_that_memory_cannot_hold_is_one_line_naming_the_cap(tmp_path: Path) -> None:
    """A 60 MB answer (under the 64 MiB cap) of 30 million numbers with 250 MB of address space
    left: a MemoryError in the reader or the parser was "exited with status 0 before answering"
    (or a bare "out of memory" naming a budget the run never reached); it names the cap now."""
    import subprocess

    command = script(tmp_path, "numbers.py", "sys.stdin.readline()\nsys.stdout.write('{\"messages\": [')\n"
                     "for _ in range(30):\n    sys.stdout.write('0,' * 1_000_000)\n"
                     "sys.stdout.write('0]}\\n')\nsys.stdout.flush()\n")  # fmt: skip
    setup = (  # the limit set once the command's modules are loaded: 250 MB more than they take
        "import contextlib, io, resource, sys\n"
        "from turncheck.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['project', '--example', '-q', '--per-request'])\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + (250 << 20), resource.RLIM_INFINITY))\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [PY, "-c", setup, "project", "--example", "-q", "--per-request", "--strategy", f"exec:{command}"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "TURNCHECK_EXEC_TIMEOUT": "60"},
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "before answering" not in done.stderr and "MAX_ANSWER_BYTES" in done.stderr, done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard is Linux's (prctl)")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_setsid_helper_dies_when_turncheck_is_killed(tmp_path: Path, sig: signal.Signals) -> None:
    """``kill -9`` (or SIGTERM) of a run whose trimmer started a helper in a session of its own:
    the trimmer died with turncheck (its parent-death signal), the helper lived on under init."""
    import subprocess

    pids = tmp_path / "helper.pid"
    body = (
        "if os.fork() == 0:\n"
        f"    os.setsid(); open({str(pids)!r}, 'w').write(str(os.getpid())); time.sleep(60); os._exit(0)\n"
        "for line in sys.stdin:\n"
        "    time.sleep(30)\n"
    )
    command = script(tmp_path, "slow.py", body)
    run = subprocess.Popen([PY, "-m", "turncheck", "project", "--example", "-q", "--per-request",
                            "--strategy", f"exec:{command}"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        helper = int(pids.read_text())
        run.send_signal(sig)
        run.wait(10)
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{helper}") and time.monotonic() < deadline:
            time.sleep(0.05)
        alive = (
            os.path.exists(f"/proc/{helper}")
            and b"Z" not in open(f"/proc/{helper}/stat", "rb").read().split()[2:3]
        )
    finally:
        run.kill()
    if alive:
        os.kill(helper, signal.SIGKILL)
    assert not alive
