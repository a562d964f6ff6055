"""Message-level projectors: ``fn(messages, budget) -> messages`` mapped back onto the log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.cost import EstimateCost, make_cost
from turncheck.models.events import read_jsonl
from turncheck.models.history import History
from turncheck.models.messages import MessageWindow, history_messages, message_projector, message_trimmer
from turncheck.models.projector import resolve_strategy, window_from_start
from turncheck.models.selection import PeerWindow

TESTS = Path(__file__).parent
EXAMPLE = TESTS.parent / "scenarios" / "data" / "example.jsonl"


def example(cost=None) -> History:
    events = [e for e in read_jsonl(EXAMPLE) if e.session == "support-42"]
    return History(sorted(events, key=lambda e: e.seq), costs=(cost or EstimateCost(),))


@pytest.mark.parametrize(
    "name", ["estimate", "utf8-json", "bpe:o200k_base"], ids=["estimate", "utf8-json", "bpe"]
)
def test_a_suffix_of_messages_is_exactly_our_window(name: str) -> None:
    if name.startswith("bpe:"):
        pytest.importorskip("tiktoken", reason="the BPE cost needs the peers extra (tiktoken)")
    cost = make_cost(name)
    h = example(cost)
    spans, messages = history_messages(h)
    for k, span in enumerate(spans):
        w = message_projector(lambda msgs, budget, k=k: msgs[k:])(h, 10_000, cost)
        expected = window_from_start(h, 10_000, cost, span.start)
        assert not isinstance(w, PeerWindow)
        assert (w.start, w.cost, w.report) == (expected.start, expected.cost, expected.report)


def test_dropped_and_invented_messages_are_reported_and_costed() -> None:
    h = example()
    spans, messages = history_messages(h)
    dropped = message_projector(lambda msgs, budget: [msgs[0], *msgs[2:]])(h, 10_000, EstimateCost())
    assert isinstance(dropped, PeerWindow) and dropped.dropped_inside == tuple(spans[1].positions)
    summary = {"role": "user", "content": "x" * 40}
    invented = message_projector(lambda msgs, budget: [summary, msgs[-1]])(h, 10_000, EstimateCost())
    assert (
        isinstance(invented, MessageWindow) and invented.invented_positions == (0,) and invented.invented == 1
    )
    last = h.events[-1]
    assert invented.cost == 10 + EstimateCost().event_cost(last)  # 40 ASCII chars = 10 tokens
    assert invented.report.mixedSources == 0 and [e.kind.name for e in invented.events] == ["USER", "TERM"]


def test_decorator_and_langchain_flavour() -> None:
    pytest.importorskip(
        "langchain_core", reason="the langchain flavour needs the peers extra (langchain-core)"
    )

    @message_trimmer
    def keep_two(messages, budget):
        return messages[-2:]

    @message_trimmer(flavour="langchain")
    def keep_two_lc(messages, budget):
        from langchain_core.messages import BaseMessage

        assert all(isinstance(m, BaseMessage) for m in messages)
        return messages[-2:]

    h = example()
    a, b = keep_two(h, 10_000, EstimateCost()), keep_two_lc(h, 10_000, EstimateCost())
    assert (a.start, a.cost, a.report) == (b.start, b.cost, b.report)
    assert resolve_strategy(keep_two) is keep_two


def test_cli_messages_spelling_costs_with_the_chosen_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tiktoken", reason="the BPE cost needs the peers extra (tiktoken)")
    shutil.copy(TESTS / "my_trim.py", tmp_path / "my_trim.py")
    monkeypatch.chdir(tmp_path)
    rows = {}
    for cost in ("estimate", "bpe:o200k_base"):
        argv = ["project", "--example", "-q", "--format", "json", "--session", "support-42", "--cost", cost,
                "--strategy", "messages:my_trim:summarize"]  # fmt: skip
        assert main(argv) == 0
        rows[cost] = json.loads(capsys.readouterr().out)
    assert rows["estimate"]["strategy"] == "messages:my_trim:summarize"
    assert rows["estimate"]["invented"] == 1 and rows["estimate"]["nonSuffix"] == 1
    assert rows["estimate"]["cost"] != rows["bpe:o200k_base"]["cost"]
    assert main(["project", "--example", "-q", "--strategy", "messages:./my_trim.py:not_a_list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "returned str, not a list of messages" in err


def test_a_trimmer_broken_before_any_event_prints_its_counterexample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trimmer that always prepends a summary message goes over a small budget on the empty
    history: a counterexample of 0 steps, which stopped ``check projector`` with a traceback
    (``max() arg is an empty sequence`` in the transcript, exit 70). It prints, saves and replays."""
    (tmp_path / "summary_trim.py").write_text(
        "def trim(messages, budget):\n"
        "    return [{'role': 'system', 'content': 'summary of earlier turns'}] + messages[-3:]\n"
    )
    monkeypatch.chdir(tmp_path)
    code = main(["check", "projector", "-q", "-p", "strategy=messages:summary_trim.py:trim", "-p", "budget=4"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err, err
    assert "counterexample: within-budget broken in 0 steps" in out and "FAIL: " in out
    (trace,) = (tmp_path / ".turncheck" / "traces").glob("projector-within-budget-*.json")
    code = main(["replay", str(trace), "--param", "strategy=messages:summary_trim.py:trim"])
    out, err = capsys.readouterr()
    assert code == 1 and "still fails the same way: within-budget broken at step 0" in out, out + err
