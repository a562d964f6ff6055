"""``-v/--verbose``: turncheck's log lines on stderr (INFO, ``-vv`` DEBUG too), the same stdout
and byte-identical result files with or without it, and no handler left behind."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest


def test_verbose_logs_to_stderr_only_and_changes_no_result_file(cli, tmp_path: Path) -> None:
    quiet = cli("scenario", "clock-skew", "--scale", "tiny", "-q", "-o", str(tmp_path / "a"))
    loud = cli("-v", "scenario", "clock-skew", "--scale", "tiny", "-q", "-o", str(tmp_path / "b"))
    assert (quiet.code, loud.code) == (0, 0) and quiet.out == loud.out and quiet.err == ""
    a, b = sorted((tmp_path / "a").iterdir()), sorted((tmp_path / "b").iterdir())
    assert [p.name for p in a] == [p.name for p in b] and all(
        x.read_bytes() == y.read_bytes() for x, y in zip(a, b, strict=True)
    )
    assert loud.err.splitlines() == [f"turncheck: INFO turncheck.reports.tables: wrote {p}" for p in b]
    assert logging.getLogger("turncheck").handlers == []


def test_verbose_names_the_engine_and_the_states_and_vv_adds_debug(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the counterexample's trace goes to .turncheck/traces
    plain = cli("check", "projector", "--engine", "explore", "--format", "json")
    info = cli("-v", "check", "projector", "--engine", "explore", "--format", "json")
    debug = cli("-vv", "check", "projector", "--engine", "explore", "--format", "json")
    assert plain.code == info.code == debug.code == 1 and plain.out == info.out == debug.out
    assert "INFO turncheck.sim.checking: check projector: engine explore, 3 properties" in info.err
    assert "INFO turncheck.sim.checking: explorer: 585 distinct states, 596 transitions, depth 6" in info.err
    assert "DEBUG" not in info.err and "DEBUG turncheck.sim.checking: properties: " in debug.err
    assert plain.err == "" and logging.getLogger("turncheck").level == logging.NOTSET


def test_verbose_after_the_command_logs_as_before_it(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Users type ``turncheck check projector -v``: the flag after the command (or on both sides)
    logs what the flag before it does, once, and changes no output."""
    monkeypatch.chdir(tmp_path)
    before = cli("-v", "check", "projector", "--engine", "explore", "--format", "json")
    after = cli("check", "projector", "--engine", "explore", "--format", "json", "-v")
    both = cli("-v", "check", "projector", "--engine", "explore", "--format", "json", "-v")
    assert before.code == after.code == both.code == 1 and before.out == after.out == both.out
    timeless = [re.sub(r"in [0-9.]+ s", "in T s", r.err) for r in (before, after, both)]
    assert timeless[0] == timeless[1] == timeless[2] and "INFO turncheck.sim.checking" in after.err
    deeper = cli("log", "create", str(tmp_path / "t.log"), "-v")
    assert deeper.code == 0 and "Traceback" not in deeper.err
    assert logging.getLogger("turncheck").handlers == []


def test_verbose_after_a_group_logs_as_before_it(cli, tmp_path: Path) -> None:
    """``turncheck cases -v list`` and ``turncheck log -v create …``: -v right after a command
    group (before its subcommand) was "No such option: -v"."""
    for argv in (["cases", "{v}", "list"], ["log", "{v}", "create", str(tmp_path / "{n}.log")]):
        for n, v in enumerate(("-v", "--verbose", "-vv")):
            done = cli(*(a.format(v=v, n=n) for a in argv))
            assert done.code == 0 and "No such option" not in done.err, (argv, v, done)
    assert logging.getLogger("turncheck").handlers == []


def _leaf_commands() -> list[tuple[str, Any]]:
    from turncheck.cli.app import _command

    stack, leaves = [("", _command())], []
    while stack:
        name, command = stack.pop()
        subs = getattr(command, "commands", None)
        if subs:
            stack += [(f"{name} {k}".strip(), v) for k, v in subs.items()]
        else:
            leaves.append((name, command))
    return sorted(leaves, key=lambda pair: pair[0])


def test_every_command_takes_q_and_v_after_it() -> None:
    """``-q`` as users type it after any command (issue 55): ``turncheck init -q``, ``list -q``,
    ``cases list -q``, ``import … -q`` and ``log create -q`` were "No such option: -q"."""
    missing = [
        (name, flag)
        for name, command in _leaf_commands()
        for flag in ("-q", "-v")
        if flag not in {o for p in command.params for o in getattr(p, "opts", ())}
    ]
    assert missing == []


def test_q_after_a_quiet_command_changes_nothing_and_silences_imports_summary(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for argv in (["list", "strategies"], ["cases", "list"], ["cases", "show", "spring-ai-count-cut"]):
        plain, quiet = cli(*argv), cli(*argv, "-q")
        assert plain.code == quiet.code == 0 and plain.out == quiet.out and quiet.err == "", argv
    root = Path(__file__).resolve().parent.parent
    log = str(root / "examples" / "your-agent" / "requests.jsonl")
    loud = cli("import", "--from", "openai-chat", log, "-o", str(tmp_path / "a.jsonl"))
    quiet = cli("import", "--from", "openai-chat", log, "-o", str(tmp_path / "b.jsonl"), "-q")
    assert loud.code == quiet.code == 0 and loud.err.startswith("wrote ") and quiet.err == ""
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    done = cli("init", "-q")
    assert done.code == 0 and (tmp_path / "trim.py").is_file() and done.err == ""


def test_quiet_after_a_group_or_before_the_command_quiets_the_subcommand(cli, tmp_path: Path) -> None:
    """``turncheck cases -q run`` and ``turncheck -q cases run`` were "No such option: -q"; they
    quiet the subcommand as its own ``-q`` does (no progress on stderr), and change no output."""
    loud = cli("cases", "run")
    assert loud.code == 0 and "cases run" in loud.err  # its progress, without -q
    for argv in (["cases", "-q", "run"], ["-q", "cases", "run"]):
        done = cli(*argv)
        assert (done.code, done.err, done.out) == (0, "", loud.out), argv
    made = cli("log", "--quiet", "create", str(tmp_path / "a.log"))
    assert made.code == 0 and made.err == "" and (tmp_path / "a.log").exists()
    demo = cli("-q", "demo", "--scale", "tiny", "-o", str(tmp_path / "d"))
    assert demo.code == 0 and demo.err == "" and "turncheck demo" in demo.out


def test_quiet_on_a_group_is_only_a_default() -> None:
    """The group's ``-q`` sets the subcommands' default, as ``[tool.turncheck]`` does, keeping any
    default the configuration gave them."""
    from turncheck.cli.app import _command, _quiet_defaults

    group = _command()
    given = _quiet_defaults(group.commands["cases"], {"run": {"format": "json"}})  # type: ignore[attr-defined]
    assert given["run"] == {"format": "json", "quiet": True} and given["list"] == {"quiet": True}
