"""Each provider's rules (models.provider_rules) on event sequences, in ``lint --provider`` and in
``project --per-request --fail-on PROVIDER``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.events import Event
from turncheck.models.provider_rules import (
    PROVIDERS,
    REGISTRY,
    RULES,
    ProviderRule,
    events_of,
    provider_findings,
)


def log(spec: str) -> list[Event]:
    """``"U Ca Ra T"``: kinds with call ids, one turn per USER (:func:`events_of`)."""
    return events_of(spec)


@pytest.mark.parametrize("rule", REGISTRY, ids=[f"{r.provider}:{r.id}" for r in REGISTRY])
def test_every_registered_rule_refuses_its_example_and_accepts_the_clean_one(rule: ProviderRule) -> None:
    """The registry walked both ways: a rule without a refused and a clean example, an error text
    and a source fails here."""
    assert rule.id in RULES and rule.error.strip() and rule.provider in PROVIDERS
    assert all(re.fullmatch(r"[\w.-]+/[\w.-]+#\d+|https://\S+", s) for s in rule.source.split(", ")), (
        rule.source
    )
    refused, clean = log(rule.refused), log(rule.clean)
    assert rule.check(refused), f"{rule.refused!r} does not break {rule.id}"
    assert rule.id in {r for r, _ in provider_findings(rule.provider, refused)}
    assert rule.check(clean) == [] and provider_findings(rule.provider, clean) == []


NONE: dict[str, list[tuple[str, int]]] = {p: [] for p in PROVIDERS}
CASES = [  # history, provider -> the rules broken, as (rule, position); a provider left out breaks none
    ("U Ca Cb Rb Ra T", NONE),
    ("U Ca Ra Cb Rb T", NONE),
    ("U Ca Cb", NONE),  # the calls are out: no request holds them unanswered yet
    ("Ra U T", {"openai-chat": [("result-not-next", 0)], "anthropic": [("result-not-next", 0)],
                "bedrock": [("result-not-next", 0)],
                "gemini": [("response-count-mismatch", 0)], "openai-responses": [("orphan-output", 0)]}),
    ("U Ca T U Ra T", {"openai-chat": [("call-not-answered-next", 1), ("result-not-next", 4)],
                       "anthropic": [("call-not-answered-next", 1), ("results-not-first", 2), ("result-not-next", 4)],
                       "gemini": [("response-count-mismatch", 2), ("response-count-mismatch", 4)],
                       "openai-responses": [("output-missing", 1)],  # refused at the second USER's request
                       "bedrock": [("call-not-answered-next", 1), ("roles-not-alternating", 2), ("result-not-next", 4)]}),
    ("U Ca Cb Ra T", {"openai-chat": [("call-not-answered-next", 2)],
                      "anthropic": [("call-not-answered-next", 2), ("results-not-first", 3)],
                      "gemini": [("response-count-mismatch", 3)], "openai-responses": [("output-missing", 2)],
                      "bedrock": [("call-not-answered-next", 2)]}),
    ("U Ca U Ra T", {"openai-chat": [("call-not-answered-next", 1), ("result-not-next", 3)],  # text before the result
                     "anthropic": [("call-not-answered-next", 1), ("results-not-first", 2), ("result-not-next", 3)],
                     "gemini": [("response-count-mismatch", 2), ("response-count-mismatch", 3)],
                     "openai-responses": [("output-missing", 1)], "bedrock": [("call-not-answered-next", 1), ("result-not-next", 3)]}),
    ("U Ca Ra U T", NONE),  # text after the result
    ("U Ca Ra Ra T", {"anthropic": [("results-not-first", 2)], "gemini": [("response-count-mismatch", 2)]}),
    ("U Ca Cb Ra Cc Rc Rb T", {"openai-chat": [("call-not-answered-next", 2), ("result-not-next", 6)],
                               "anthropic": [("call-not-answered-next", 2), ("results-not-first", 3),
                                             ("results-not-first", 5), ("result-not-next", 6)],
                               "gemini": [("response-count-mismatch", 3), ("response-count-mismatch", 5)],
                               "openai-responses": [("output-missing", 2)],  # the request after Ra lacks Rb
                               "bedrock": [("call-not-answered-next", 2), ("result-not-next", 6)]}),
    ("U T Ca Ra T", {"gemini": [("call-turn-misplaced", 2)], "bedrock": [("roles-not-alternating", 2)]}),
    ("U U T", {"bedrock": [("roles-not-alternating", 1)]}),  # a resend after a refused request: two user messages
    ("U Ca Ra T T U", {"bedrock": [("roles-not-alternating", 4)]}),
    ("U T U T", NONE),
    ("Ca Ra T U", {"gemini": [("call-turn-misplaced", 0)], "bedrock": [("first-not-user", 0)]}),
    ("T U Ca Ra", {"bedrock": [("first-not-user", 0)]}),
    ("U Ca Ra Cb>a Rb", NONE),  # the thinking (or reasoning) rides with a, which is sent
    ("U Cb>a Rb", {"anthropic": [("thinking-not-sent", 1)], "openai-responses": [("reasoning-not-sent", 1)],
                   "bedrock": [("thinking-not-sent", 1)]}),  # Claude on Bedrock: the same turn refused
    ("U Cb>a Rb T U", {"openai-responses": [("reasoning-not-sent", 1)]}),  # Anthropic: a finished turn's thinking may go
]  # fmt: skip


@pytest.mark.parametrize(("spec", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_provider_refuses_what_its_api_refuses(
    spec: str, expected: dict[str, list[tuple[str, int]]]
) -> None:
    for provider in PROVIDERS:
        found = sorted(provider_findings(provider, log(spec)), key=lambda f: (f[1], f[0]))
        assert found == sorted(expected.get(provider, []), key=lambda f: (f[1], f[0])), provider


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
    assert report["counts"]["response-count-mismatch"] == 2 and report["counts"]["result-not-next"] == 0
    assert report["examples"]["response-count-mismatch"][1] == "line 7: seq 6 session s turn 1 RESULT b"
    assert main(["lint", str(f), "--provider", "openai-chat", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["examples"]["result-not-next"] == [
        "line 7: seq 6 session s turn 1 RESULT b"
    ]
    assert main(["lint", str(f), "--provider", "openai-responses", "--format", "json"]) == 1
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert counts["orphan-output"] == 0 and counts["output-missing"] == 1
    assert main(["lint", str(f), "--provider", "bedrock", "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["counts"]["call-not-answered-next"] == 1
    assert main(["lint", str(f), "--provider", "mistral"]) == 2
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


def test_a_clean_lint_says_which_apis_rules_it_checked_and_which_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 50: ``clean: no structural problems`` read the same whether an API's rules were
    checked or none was; a clean verdict names the rules it covered, or says none was."""
    f = write(tmp_path, "U Ca Ra T U T")
    capsys.readouterr()
    assert main(["lint", str(f)]) == 0
    clean = capsys.readouterr().out.splitlines()[-1]
    assert clean == (
        "clean: no structural problems; no API's rules checked (--provider "
        f"{', '.join(PROVIDERS)} checks all of one API's)"
    )
    for provider, rules in PROVIDERS.items():
        assert main(["lint", str(f), "--provider", provider]) == 0
        ids = sorted({r.id for r in rules})
        assert capsys.readouterr().out.splitlines()[-1] == (
            f"clean: no structural problems; nothing {provider} refuses (its {len(ids)} rules: {', '.join(ids)})"
        )
    src = tmp_path / "chat.json"  # the format's own API is checked without --provider
    src.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    assert main(["lint", "--from", "openai-chat", str(src)]) == 0
    assert "; nothing openai-chat refuses (its 2 rules: " in capsys.readouterr().out
    assert main(["lint", str(f), "--format", "json"]) == 0  # and for scripts
    assert json.loads(capsys.readouterr().out)["rules_checked"] == clean.split("; ", 1)[1]


def test_a_window_sent_on_calls_without_their_results_is_refused_not_pending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 50: a trimmer that drops the newest tool output sends ``U Ca`` at the request made
    once the output arrived; the rules read calls at the end as a pending batch, so every
    provider's ``--fail-on`` passed it (the log ended there, so no later request showed it).
    A window is a request as it goes out: its last calls are sent without their results."""
    pending = log("U Ca Cb")
    assert all(provider_findings(p, pending) == [] for p in PROVIDERS)  # a whole log: the tools run
    sent = {p: provider_findings(p, pending, sent=True) for p in PROVIDERS}
    assert sent == {
        "openai-chat": [("call-not-answered-next", 1), ("call-not-answered-next", 2)],
        "anthropic": [("call-not-answered-next", 1), ("call-not-answered-next", 2)],
        "openai-responses": [("output-missing", 1), ("output-missing", 2)],
        "gemini": [],
        "bedrock": [("call-not-answered-next", 1), ("call-not-answered-next", 2)],
    }
    assert all(provider_findings(p, log("U Ca Ra"), sent=True) == [] for p in PROVIDERS)
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "an output too long to send again"},
    ]))  # fmt: skip
    trim = tmp_path / "trim.py"
    trim.write_text("def drop_long_outputs(messages, budget):\n"
                    "    return [m for m in messages if not (m.get('role') == 'tool' and len(m['content']) > 10)]\n")  # fmt: skip
    for provider in ("openai-chat", "openai-responses", "anthropic", "bedrock"):
        capsys.readouterr()
        args = ["project", "--from", "openai-chat", "-H", str(chat), "--per-request", "-q",
                "-s", f"messages:{trim}:drop_long_outputs", "--fail-on", provider]  # fmt: skip
        assert main(args) == 1, provider
        assert (
            capsys.readouterr()
            .out.splitlines()[-1]
            .startswith(f"FAIL: session chat, request 1 (after 3 events): {provider}")
        )
