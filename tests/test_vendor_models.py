"""The vendor-protocol catalogue (integrations/vendors/): each report's shortest counterexample, each fix.

Every model is checked by the real command (``turncheck check NAME --param variant=… --engine
explore``): a ``buggy`` variant exits 1 with the shortest run of the expected length ending in
the expected step (a liveness model's: the lasso of the expected prefix and loop, its loop's
step), a fix (``upstream`` or ``proposed``) exits 0 over its whole state space — except
Spring AI's merged ``turn-snapped``, which still fails — and ADK's raise-on-stale ends
inconclusive (a goal no run reaches, not a broken invariant). Each variant's kind and source are
what ``turncheck list models`` and docs/known-failures.md show. The traces committed under
docs/vendor-traces/ are regenerated here byte for byte, replayed, and one is opened in Chromium.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docs.tools.vendor_traces import CASES as TRACE_CASES
from docs.tools.vendor_traces import TRACES, write_traces
from turncheck.models.catalog import DESCRIPTIONS, MODELS, build_model
from turncheck.models.protocol import as_model
from turncheck.sim.trace import load_trace, replay

VENDORS = (
    "adk-orphan-compaction",
    "adk-session-store",
    "adk-sliding-window",
    "agents-js-compaction",
    "anthropic-background-compaction",
    "openai-agents-compaction",
    "openai-agents-compaction-replace",
    "spring-ai-mongo-save-all",
    "spring-ai-session-branch",
    "spring-ai-window",
)

SAVE_ALL_CRASH = ("writer 1 crashes in saveAll, after deleteByConversationId, before insert: what was written "
                  "stays, it restarts with nothing in memory")  # fmt: skip

# model, parameters, verdict, the property broken first, its counterexample's steps (a lasso's:
# to its loop), the steps round a lasso's loop (None: no lasso), the last step
CHECKS: list[tuple[str, dict[str, str], str, str | None, int, int | None, str]] = [
    ("anthropic-background-compaction", {"variant": "buggy"}, "fail", "tool-result-follows-its-use", 5, None,
     "compactor swaps the summary in for the 2 messages sent"),
    ("anthropic-background-compaction", {"variant": "guarded"}, "pass", None, 0, None, ""),
    ("openai-agents-compaction", {"variant": "buggy"}, "fail", "compaction-accepted", 5, None,
     "session compacts the latest response: 400, no tool output for c0"),
    ("openai-agents-compaction", {"variant": "fixed"}, "pass", None, 0, None, ""),
    ("agents-js-compaction", {"variant": "buggy"}, "fail", "no-write-lost", 5, None,
     "compactor replaces the session with the compaction of 2 items"),
    ("agents-js-compaction", {"variant": "fixed"}, "pass", None, 0, None, ""),
    # its replacement is clearSession, then addItems: a crash between them loses it all, fixed too
    ("agents-js-compaction", {"variant": "fixed", "crashes": "1"}, "fail", "no-write-lost", 4, None,
     "compactor crashes after clearSession, before addItems: what was written stays, it stays down"),
    ("agents-js-compaction", {"variant": "buggy", "crashes": "1"}, "fail", "no-write-lost", 4, None,
     "compactor crashes after clearSession, before addItems: what was written stays, it stays down"),
    ("adk-sliding-window", {"variant": "buggy"}, "fail", "no-pending-call-summarised", 3, None,
     "compactor summarises seq 0..1, range ts 0..2"),
    ("adk-sliding-window", {"variant": "seq-cut"}, "pass", None, 0, None, ""),
    ("adk-session-store", {"variant": "buggy"}, "fail", "runs-not-interleaved", 5, None,
     "server A appends A2: stale, reloads and continues"),
    ("adk-session-store", {"variant": "occ-rerun"}, "pass", None, 0, None, ""),
    ("adk-session-store", {"variant": "raise-on-stale"}, "inconclusive", None, 0, None, ""),
    ("spring-ai-window", {"variant": "buggy"}, "fail", "no-orphan-tool-response", 5, None,
     "writer 1 adds tool_response c1 (keeps 3)"),
    ("spring-ai-window", {"variant": "turn-snapped"}, "fail", "non-empty", 4, None,
     "writer 1 adds tool_call c1 (keeps 0)"),
    ("spring-ai-window", {"variant": "langchain4j"}, "pass", None, 0, None, ""),
    ("spring-ai-window", {"variant": "append-only"}, "pass", None, 0, None, ""),
    ("spring-ai-window", {"variant": "buggy", "writers": "2"}, "fail", "no-lost-append", 4, None,
     "writer 2 saveAll: deletes all, inserts its window + user from request 2"),
    ("spring-ai-window", {"variant": "langchain4j", "writers": "2"}, "fail", "no-lost-append", 4, None,
     "writer 2 saveAll: deletes all, inserts its window + user from request 2"),
    ("spring-ai-window", {"variant": "append-only", "writers": "2"}, "pass", None, 0, None, ""),
    # saveAll is delete, then insert (#6770's MongoDB and Neo4j): a crash between them empties it
    ("spring-ai-window", {"variant": "buggy", "crashes": "1"}, "fail", "no-lost-append", 2, None, SAVE_ALL_CRASH),
    ("spring-ai-window", {"variant": "langchain4j", "crashes": "1"}, "fail", "no-lost-append", 2, None,
     SAVE_ALL_CRASH),
    ("spring-ai-window", {"variant": "turn-snapped", "writers": "2", "crashes": "1"}, "fail", "no-lost-append",
     4, None, SAVE_ALL_CRASH),
    ("spring-ai-window", {"variant": "append-only", "crashes": "1"}, "pass", None, 0, None, ""),
    ("spring-ai-window", {"variant": "append-only", "writers": "2", "crashes": "1"}, "pass", None, 0, None, ""),
    ("adk-orphan-compaction", {"variant": "buggy"}, "fail", "compaction-runs-when-over-threshold", 7, 1,
     "user sends a turn: the prompt grows, over token_threshold, safe_length 0"),
    ("adk-orphan-compaction", {"variant": "dead-call-retry"}, "pass", None, 0, None, ""),
    ("spring-ai-session-branch", {"variant": "buggy"}, "fail", "branch-compacted", 3, 1,
     "user adds a turn on the branch (branch turns over 2; the trigger counts none)"),
    ("spring-ai-session-branch", {"variant": "scoped"}, "pass", None, 0, None, ""),
    ("spring-ai-mongo-save-all", {"variant": "buggy"}, "fail", "history-kept", 3, None,
     "repository crashes after deleteByConversationId, before insert: what was written stays, it restarts "
     "with nothing in memory"),
    ("spring-ai-mongo-save-all", {"variant": "transaction"}, "pass", None, 0, None, ""),
    ("spring-ai-mongo-save-all", {"variant": "buggy", "crashes": "0"}, "pass", None, 0, None, ""),
    ("openai-agents-compaction-replace", {"variant": "buggy"}, "fail", "history-kept", 3, None,
     "session add_items raises: the history is gone"),
    ("openai-agents-compaction-replace", {"variant": "restore-on-failure"}, "fail", "history-kept", 3, None,
     "session crashes after clear_session, before add_items: what was written stays, it restarts with nothing "
     "in memory"),
    ("openai-agents-compaction-replace", {"variant": "restore-on-failure", "crashes": "0"}, "pass", None, 0,
     None, ""),
    ("openai-agents-compaction-replace", {"variant": "one-step-swap"}, "pass", None, 0, None, ""),
]  # fmt: skip


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # check saves its default traces in the working directory


def _check(cli: Any, model: str, params: dict[str, str], *extra: str) -> tuple[int, dict[str, Any]]:
    argv = ["check", model, *(w for k, v in params.items() for w in ("--param", f"{k}={v}"))]
    code, out, _ = cli(*argv, "--engine", "explore", "--format", "json", *extra)
    return code, json.loads(out)


def _last_step(model: str, params: dict[str, str], actions: list[list[Any]]) -> str:
    m = as_model(build_model(model, params))  # as every engine sees it: with its crash points
    state = next(iter(m.init_states()))
    for action in actions[:-1]:
        state = m.step(state, tuple(action))
    return m.format_action(state, tuple(actions[-1]))


@pytest.mark.parametrize(("model", "params", "verdict", "violated", "steps", "loop", "last"), CHECKS,
                         ids=lambda v: v if isinstance(v, str) else None)  # fmt: skip
def test_each_variant_fails_shortest_or_passes_exhaustively(
    cli: Any, model: str, params: dict[str, str], verdict: str, violated: str | None, steps: int,
    loop: int | None, last: str,
) -> None:  # fmt: skip
    code, obj = _check(cli, model, params)
    assert obj["verdict"] == verdict and code == {"pass": 0, "fail": 1, "inconclusive": 3}[verdict]
    assert obj["explore"]["exhaustive"] is True
    assert obj["violated"] == violated
    if violated is not None:
        cx = obj["counterexample"]
        assert cx["source"] == "explore" and cx.get("loop") == (None if loop is None else steps)
        assert cx["steps"] == steps + (loop or 0)
        assert _last_step(model, params, cx["actions"]) == last


def test_the_sliding_window_breaks_both_coverage_invariants(cli: Any) -> None:
    _, obj = _check(cli, "adk-sliding-window", {"variant": "buggy"})
    assert obj["counterexamples"] == {"no-pending-call-summarised": 3, "hidden-only-if-summarised": 4}


def test_raise_on_stale_is_safe_but_the_stale_run_never_answers(cli: Any) -> None:
    _, obj = _check(cli, "adk-session-store", {"variant": "raise-on-stale"})
    assert obj["goals"] == {"both-runs-answered": True, "stale-run-answered": False}
    assert obj["explore"]["properties"]["runs-not-interleaved"]["status"] == "holds"


def test_the_default_engines_agree(cli: Any) -> None:
    """``turncheck check NAME --param variant=buggy`` as the issue runs it: both engines."""
    code, out, _ = cli("check", "anthropic-background-compaction", "--param", "variant=buggy",
                       "--max-examples", "60", "-q")  # fmt: skip
    assert code == 1 and "broken in 5 steps (shortest, by breadth-first search)" in out
    assert "hypothesis shrank its counterexample (tool-result-follows-its-use)" in out


def test_a_variant_the_model_lacks_is_one_line_exit_2(cli: Any) -> None:
    code, out, err = cli("check", "adk-session-store", "--param", "variant=eventual")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "buggy (buggy), raise-on-stale (upstream), occ-rerun (proposed)" in err


@pytest.mark.parametrize(
    ("model", "now", "kind"),
    [("adk-session-store", "occ-rerun", "proposed"), ("spring-ai-window", "append-only", "proposed"),
     ("adk-sliding-window", "seq-cut", "proposed"), ("anthropic-background-compaction", "guarded", "proposed"),
     ("adk-orphan-compaction", "dead-call-retry", "proposed"), ("spring-ai-session-branch", "scoped", "proposed")],
)  # fmt: skip
def test_a_former_fixed_that_no_vendor_merged_is_refused_naming_what_it_is_now(
    cli: Any, model: str, now: str, kind: str
) -> None:
    code, out, err = cli("check", model, "--param", "variant=fixed")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"variant 'fixed' is now '{now}' ({kind}: " in err


# each variant's kind, and a word its source must hold (the pull request, release or report)
KINDS = {
    "adk-orphan-compaction": {"buggy": ("buggy", "#7236"), "dead-call-retry": ("proposed", "PR #7237 (open)")},
    "adk-session-store": {"buggy": ("buggy", "1.24-1.26"), "raise-on-stale": ("upstream", "current since google-adk 1.27"),
                          "occ-rerun": ("proposed", "ours")},
    "adk-sliding-window": {"buggy": ("buggy", "#4740"), "seq-cut": ("proposed", "ours")},
    "agents-js-compaction": {"buggy": ("buggy", "before PR #1842"), "fixed": ("upstream", "PR #1842 (merged)")},
    "anthropic-background-compaction": {"buggy": ("buggy", "compaction-background"), "guarded": ("proposed", "ours")},
    "openai-agents-compaction": {"buggy": ("buggy", "#2317"), "fixed": ("upstream", "PR #2322 (merged)")},
    "openai-agents-compaction-replace": {"buggy": ("buggy", "#3116"), "restore-on-failure": ("upstream", "PR #3117 (merged"),
                                         "one-step-swap": ("proposed", "ours")},
    "spring-ai-mongo-save-all": {"buggy": ("buggy", "#6770"), "transaction": ("proposed", "PR #6774 (MongoDB) and PR #6798")},
    "spring-ai-session-branch": {"buggy": ("buggy", "#35"), "scoped": ("proposed", "#36-#38 (open)")},
    "spring-ai-window": {"buggy": ("buggy", "#5940"), "turn-snapped": ("upstream", "PR #6312 (merged)"),
                         "langchain4j": ("upstream", "PR #666 (merged)"), "append-only": ("proposed", "ours")},
}  # fmt: skip


def test_list_models_shows_each_vendor_model_and_each_variants_kind_and_source(cli: Any) -> None:
    code, out, _ = cli("list", "models")
    models = [line for line in out.splitlines() if not line.startswith(" ")]
    lines = {line.split()[0]: line for line in models}
    assert code == 0 and len(lines) == len(models) == len(MODELS)
    for name in VENDORS:
        assert DESCRIPTIONS[name] and lines[name].endswith(DESCRIPTIONS[name])
        block = out.split(lines[name] + "\n")[1].split("\n")
        shown = {}
        for row in block:
            if not row.startswith("  variant="):
                break
            variant, kind, source = row.split(maxsplit=2)
            shown[variant.removeprefix("variant=")] = (kind, source)
        assert list(shown) == list(KINDS[name]), name  # the default (buggy) first, as the model declares
        for variant, (kind, word) in KINDS[name].items():
            assert shown[variant][0] == kind and word in shown[variant][1], (name, variant)
    assert list(MODELS)[:4] == ["clock", "keys", "projector", "trigger"]  # built-ins list first


def test_the_committed_traces_are_what_the_models_give(tmp_path: Path) -> None:
    fresh = write_traces(tmp_path / "traces")
    committed = sorted(TRACES.glob("*.json"))
    assert sorted(p.name for p in fresh) == [p.name for p in committed]
    for path in fresh:
        assert path.read_bytes() == (TRACES / path.name).read_bytes(), f"regenerate {path.name}"
    assert {model for _stem, model, _params in TRACE_CASES} == set(VENDORS)


@pytest.mark.parametrize("path", sorted(TRACES.glob("*.json")), ids=lambda p: p.name)
def test_each_committed_trace_replays_to_its_break(cli: Any, path: Path, tmp_path: Path) -> None:
    trace = load_trace(path)
    assert replay(build_model(trace.model, trace.params), trace).verdict == "same"
    page = tmp_path / "t.html"
    code, out, _ = cli("replay", str(path), "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert code == 1 and f"trace viewer: {page}" in out and trace.violated in html
    drawn = (
        f'<td class="tcv-loop" colspan="{len(trace.actions) - (trace.loop or 0)}" data-loop="{trace.loop}">'
    )
    assert (drawn in html) == (trace.loop is not None)  # a lasso's loop is drawn over its steps


def test_the_viewer_shows_the_orphan_tool_result(
    open_page: Any, cli: Any, tmp_path: Path, shots: Path
) -> None:
    page_path = tmp_path / "anthropic.html"
    cli("replay", str(TRACES / "anthropic-background-compaction.trace.json"), "--html", str(page_path))
    opened = open_page(page_path, height=620)
    page = opened.page
    page.locator("section.tcv").focus()
    assert page.locator(".tcv-pos").inner_text() == "step 0 of 5"
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    prop = page.locator('.tcv-props tr[data-property="tool-result-follows-its-use"] td')
    assert prop.inner_text() == "holds" and page.locator(".tcv-win li.orphan").count() == 0
    page.keyboard.press("ArrowRight")
    assert prop.inner_text() == "BROKEN"
    assert page.locator(".tcv-win li.orphan").inner_text().startswith("tool_result t0")
    assert "swaps the summary in" in page.locator(".tcv-lanes td.tcv-current.tcv-act").inner_text()
    assert opened.errors == [] and opened.requests == []
    page.screenshot(path=str(shots / "vendor-anthropic-background-compaction.png"))
    page.close()


def test_each_model_says_how_the_real_code_writes_and_declares_the_crash_window_of_two_writes() -> None:
    """The catalogue says, per model, whether the real code writes an update once or twice; a
    model that says ``two:`` declares its crash window (so the explorer can find it), and a
    model that declares one says ``two:`` (issue 53 item 3)."""
    from turncheck.models.crash_points import declares_crashes

    for name in VENDORS:
        model = build_model(name)
        writes = type(model).update_writes
        assert writes.split(":")[0].split(",")[0] in ("one", "one per step", "two", "not modelled"), name
        assert writes.startswith("two:") == declares_crashes(model), (name, writes)
