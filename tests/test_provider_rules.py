"""Each provider's rules (models.provider_rules) on event sequences, in ``lint --provider`` and in
``project --per-request --fail-on PROVIDER``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.events import Event, Kind
from turncheck.models.provider_rules import PROVIDERS, provider_findings

K = {"U": Kind.USER, "C": Kind.CALL, "R": Kind.RESULT, "T": Kind.TERM}


def log(spec: str) -> list[Event]:
    """``"U Ca Ra T"``: kinds with call ids, one turn per USER."""
    out: list[Event] = []
    turn = -1
    for i, word in enumerate(spec.split()):
        turn += word == "U"
        out.append(Event(i, "s", max(turn, 0), K[word[0]], word[1:] or None))
    return out


CASES = [  # history, provider -> the rules broken, as (rule, position)
    ("U Ca Cb Rb Ra T", {p: [] for p in PROVIDERS}),
    ("U Ca Ra Cb Rb T", {p: [] for p in PROVIDERS}),
    ("Ra U T", {"openai-chat": [("result-not-next", 0)], "anthropic": [("result-not-next", 0)],
                "gemini": [("result-not-next", 0)], "openai-responses": [("orphan-output", 0)]}),
    ("U Ca T U Ra T", {"openai-chat": [("call-not-answered-next", 1), ("result-not-next", 4)],
                       "anthropic": [("call-not-answered-next", 1), ("result-not-next", 4)],
                       "gemini": [("call-not-answered-next", 1), ("result-not-next", 4)], "openai-responses": []}),
    ("U Ca Cb Ra T", {"openai-chat": [("call-not-answered-next", 2)], "anthropic": [("call-not-answered-next", 2)],
                      "gemini": [("call-not-answered-next", 2), ("response-count-mismatch", 3)], "openai-responses": []}),
    ("U Ca Cb", {p: [] for p in PROVIDERS}),  # the calls are out: no request holds them unanswered yet
]  # fmt: skip


@pytest.mark.parametrize(("spec", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_provider_refuses_what_its_api_refuses(
    spec: str, expected: dict[str, list[tuple[str, int]]]
) -> None:
    for provider, found in expected.items():
        assert sorted(provider_findings(provider, log(spec)), key=lambda f: (f[1], f[0])) == sorted(
            found, key=lambda f: (f[1], f[0])
        ), provider


def write(tmp_path: Path, spec: str) -> Path:
    f = tmp_path / "log.jsonl"
    rows = [{"seq": e.seq, "session": e.session, "turn": e.turn, "kind": e.kind.name,
             **({"call_id": e.call_id} if e.call_id else {})} for e in log(spec)]  # fmt: skip
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f


def test_lint_provider_names_the_result_and_the_format_chooses_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(tmp_path, "U Ca Cb Ra T U Rb T")  # b answered a turn later, after a user message
    assert main(["lint", str(f), "--provider", "gemini", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["response-count-mismatch"] == 1 and report["counts"]["result-not-next"] == 1
    assert report["examples"]["result-not-next"] == ["line 7: seq 6 session s turn 1 RESULT b"]
    assert main(["lint", str(f), "--provider", "openai-responses", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["counts"]["orphan-output"] == 0
    assert main(["lint", str(f), "--provider", "bedrock"]) == 2
    src = tmp_path / "chat.json"  # adjacent in the log, but another message stands between
    src.write_text(json.dumps([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "still there?"}, {"role": "tool", "tool_call_id": "a", "content": "1"}]))  # fmt: skip
    capsys.readouterr()
    assert main(["lint", "--from", "openai-chat", str(src)]) == 1
    out = capsys.readouterr().out
    assert (
        f"{src}: session 'chat': record 4: seq 3 session chat turn 1 RESULT a" in out
        and "result-not-next" in out
    )
    assert main(["lint", "--from", "openai-chat", str(src), "--provider", "openai-responses"]) == 1
    assert "result-not-next" not in capsys.readouterr().out


def test_fail_on_a_provider_gates_the_windows_it_would_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/your-agent.md: starting on a user message is safe with OpenAI roles, not Anthropic's."""
    log_file = tmp_path / "w.jsonl"
    assert main(["generate", "--sessions", "3", "--turns", "8", "-q", "-o", str(log_file)]) == 0
    trim = Path(__file__).resolve().parent.parent / "examples" / "your-agent" / "trim.py"
    totals = {}
    for fn in ("keep_recent_from_user", "keep_recent_from_user_anthropic_roles"):
        code = main(["project", "-q", "-H", str(log_file), "-b", "800", "--strategy", f"messages:{trim}:{fn}",
                     "--per-request", "--fail-on", "anthropic,orphanRes", "--format", "json"])  # fmt: skip
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        totals[fn] = (code, next(r for r in rows if r.get("session") == "(total)"))
    assert totals["keep_recent_from_user"][0] == 0 and totals["keep_recent_from_user"][1]["anthropic"] == 0
    code, total = totals["keep_recent_from_user_anthropic_roles"]
    assert code == 1 and total["anthropic"] > 0 and total["orphanRes"] > 0
