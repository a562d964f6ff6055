"""The exec protocol's incremental mode (issue 58): once a command answers ``"incremental": true``,
each request carries ``keep`` and only what changed, the command rebuilds exactly the list a whole
request would have carried, and its windows are the whole mode's; a long session then sends each
request what was appended, not the history again."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from turncheck.integrations.peers.requests import replay
from turncheck.models.cost import EstimateCost
from turncheck.models.events import Event, Kind
from turncheck.models.exec_protocol import ExecError, common_prefix, exec_projector
from turncheck.models.history import History
from turncheck.models.messages import history_messages
from turncheck.models.projector import project
from turncheck.models.workload import WorkloadParams, generate_events

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples" / "exec"
PY = sys.executable

RECORDER = """
import json, sys
out = open(sys.argv[1], "a")
held = []
for line in sys.stdin:
    out.write(line); out.flush()
    request = json.loads(line)
    del held[request.get("keep", 0):]
    held.extend(request["messages"])
    print(json.dumps({"messages": held[-3:], "incremental": %s}), flush=True)
"""


def recorder(tmp_path: Path, incremental: bool) -> tuple[str, Path]:
    """A keep-last-3 command that writes every request line it reads to a file."""
    script, record = tmp_path / f"rec_{incremental}.py", tmp_path / f"requests_{incremental}.jsonl"
    script.write_text(RECORDER % ("True" if incremental else "False"))
    return f"{PY} {script} {record}", record


def sessions(seed: int = 11) -> list[list[Event]]:
    by: dict[str, list[Event]] = {}
    for e in generate_events(WorkloadParams(sessions=3, turns=40, p_result=0.9, p_parallel=0.5, seed=seed)):
        by.setdefault(e.session, []).append(e)
    return list(by.values())


def test_windows_are_the_whole_modes_and_the_command_holds_every_request_whole(tmp_path: Path) -> None:
    cost, compared = EstimateCost(), 0
    whole_cmd, _ = recorder(tmp_path, incremental=False)
    inc_cmd, record = recorder(tmp_path, incremental=True)
    whole, inc = exec_projector(whole_cmd, name="whole"), exec_projector(inc_cmd, name="inc")
    for events in sessions():
        for budget in (5, 40):
            a, b = replay(events, budget, whole, cost), replay(events, budget, inc, cost)
            for x, y in zip(a, b, strict=True):
                assert (x.start, x.end, x.cost, x.report, [e.seq for e in x.events]) == (
                    y.start, y.end, y.cost, y.report, [e.seq for e in y.events])  # fmt: skip
                compared += 1
    held: list[dict[str, object]] = []
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert "keep" not in lines[0] and all("keep" in r for r in lines[1:])  # whole until it asked
    for r in lines:
        del held[r.get("keep", 0) :]
        held.extend(r["messages"])
        assert len(r["costs"]) == len(r["messages"])
    assert compared > 100


def test_the_rebuilt_list_is_the_whole_request_message_for_message(tmp_path: Path) -> None:
    """Request by request over one session, the command's rebuilt list equals history_messages."""
    command, record = recorder(tmp_path, incremental=True)
    strategy, cost = exec_projector(command), EstimateCost()
    events = sessions(5)[0]
    history, wanted = History([], costs=(cost,)), []
    for e in events:
        history.append(e)
        if e.kind in (Kind.USER, Kind.RESULT):
            project(history, 30, strategy, cost)
            wanted.append(history_messages(history)[1])
    held: list[dict[str, object]] = []
    for want, line in zip(wanted, record.read_text().splitlines(), strict=True):
        r = json.loads(line)
        del held[r.get("keep", 0) :]
        held.extend(r["messages"])
        assert held == want


def test_a_long_session_sends_what_was_appended_not_the_history_again(tmp_path: Path) -> None:
    cost = EstimateCost()
    events = [e for s in sessions(3)[:1] for e in s]
    sent = {}
    for incremental in (False, True):
        command, record = recorder(tmp_path, incremental)
        replay(events, 30, exec_projector(command), cost)
        sent[incremental] = record.stat().st_size
    assert sent[True] * 5 < sent[False], sent  # 40 turns: the whole mode re-sends all of them each time


def test_common_prefix_takes_the_fast_paths_and_the_scan() -> None:
    a, b, c = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "tool"}
    grown = {"role": "assistant", "content": "b", "tool_calls": []}
    assert common_prefix([a, b], [a, b, c]) == 2  # appended
    assert common_prefix([a, b], [a, grown, c]) == 1  # the last message grew
    assert common_prefix([a, b, c], [c, b, c]) == 0  # a new session
    assert common_prefix([a, b, c, a], [a, c, c, a]) == 1  # a summary replaced the middle
    assert common_prefix([], [a]) == 0 and common_prefix([a], []) == 0


def test_an_incremental_member_that_is_not_a_boolean_is_one_line(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text(
        "import json, sys\nfor line in sys.stdin:\n"
        "    print(json.dumps({'messages': [], 'incremental': 'yes'}), flush=True)\n"
    )
    history = History([Event(0, "s", 0, Kind.USER, text="hi")])
    with pytest.raises(ExecError, match="incremental must be true or false"):
        project(history, 10, exec_projector(f"{PY} {script}"), EstimateCost())


@pytest.mark.parametrize("example", ["keep_last_incremental.py", "keep_last_incremental.mjs"])
def test_the_incremental_examples_give_keep_lasts_windows(example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    program = PY if example.endswith(".py") else shutil.which("node")
    if program is None:
        pytest.skip("node is not installed (the exec protocol's JS trimmer)")
    monkeypatch.chdir(EXAMPLES)
    cost, compared = EstimateCost(), 0
    ours = exec_projector(f"{program} {example}")
    for events in sessions(9):
        for budget in (1, 4, 9):
            a = replay(events, budget, ours, cost)
            b = replay(events, budget, "messages:keep_last.py:fn", cost)
            for x, y in zip(a, b, strict=True):
                assert (x.start, x.end, x.report, [e.seq for e in x.events]) == (
                    y.start, y.end, y.report, [e.seq for e in y.events])  # fmt: skip
                compared += 1
    assert compared > 100
