"""Every command × every malformed input class: one line, exit 2, no traceback, nothing left.

Issue 17, classes 6 and 7; every command that reads a file (each ``import`` format and
``log repair`` too). Inputs of at most 1 KB that once ended in a traceback (deep nesting,
integers past Python's 4300-digit limit, ``ts`` = 1e400, ``chars`` = 2⁶³, lone surrogates
in names, ANSI escapes and newlines in a session name) or took the machine (a trace naming 10⁹
writers, ``chars`` = 10¹⁰). This in-process table checks the error contract; the same inputs
under a 1 GiB address-space limit and a 10 s timeout are in tests/test_tiny_inputs.py.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.importers import FORMATS

EV = '{"seq":0,"session":"s","turn":0,"kind":"USER","chars":3}\n{"seq":1,"session":"s","turn":0,"kind":"TERM","chars":3}\n'
TURN_END = '{"seq":1,"session":"s","turn":0,"kind":"TERM"}\n'
STRUCTURAL = {
    "deep list": "[" * 50000 + "\n",
    "deep object": '{"a":' * 50000 + "\n",
    "5000-digit int": '{"seq":1' + "0" * 5000 + ',"session":"s","turn":0,"kind":"USER"}\n',
}
EVENTS = {
    "ts 1e400": '{"seq":0,"session":"s","turn":0,"kind":"USER","ts":1e400}\n' + TURN_END,
    "chars 2**63": '{"seq":0,"session":"s","turn":0,"kind":"USER","chars":9223372036854775808}\n' + TURN_END,
    "chars 1e10": '{"seq":0,"session":"s","turn":0,"kind":"USER","chars":10000000000}\n' + TURN_END,
    "surrogate session": '{"seq":0,"session":"s\\ud800","turn":0,"kind":"USER"}\n',
    "surrogate call_id": '{"seq":0,"session":"s","turn":0,"kind":"CALL","call_id":"\\udfff"}\n',
    "ansi and newline": '{"seq":0,"session":"\\u001b[31mX\\nturncheck: fake","turn":-1,"kind":"USER"}\n',
    "NaN ts": '{"seq":0,"session":"s","turn":0,"kind":"USER","ts":NaN}\n',
    "binary": "\x00\x7f\x01garbage",
}
HUGE_TRACE = json.dumps({
    "format": "turncheck-trace/1", "model": "trigger", "params": {"writers": 10**9},
    "violated": "bounded-peak-turns", "actions": [["append", 0]],
})  # fmt: skip
IMPORT_FORMATS = tuple(FORMATS)  # every registered format, in registration order


def _importer(fmt: str) -> Callable[[str], list[str]]:
    return lambda f: ["import", f, "--from", fmt, "-o", str(Path(f).parent / "o.jsonl")]


COMMANDS = {
    "project": lambda f: ["project", "-H", f, "-b", "100", "-s", "REQ"],
    "project M1": lambda f: ["project", "-H", f, "-b", "100", "-s", "M1", "--cost", "utf8-json"],
    "lint": lambda f: ["lint", f],
    "log verify": lambda f: ["log", "verify", f, "-q"],
    "log export": lambda f: ["log", "export", f, "-q"],
    "replay": lambda f: ["replay", f],
    "report": lambda f: ["report", str(Path(f).parent), "-o", str(Path(f).parent / "r.html"), "-q"],
    "plot": lambda f: ["plot", str(Path(f).parent), "-o", str(Path(f).parent / "plots"), "-q"],
    "log repair": lambda f: ["log", "repair", f],
    **{f"import {fmt}": _importer(fmt) for fmt in IMPORT_FORMATS},
}
EVENT_READERS = ("project", "project M1", "lint", "log verify", "log export", "replay")
CASES = [(c, k, t) for c in COMMANDS for k, t in STRUCTURAL.items()]
CASES += [(c, k, t) for c in EVENT_READERS for k, t in EVENTS.items()]
CASES += [("replay", "10**9 writers", HUGE_TRACE), ("report", "10**9 writers", HUGE_TRACE)]


def _input(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    f = d / ("trace.json" if "writers" in text else "input.json")
    f.write_bytes(text.encode("utf-8", "surrogatepass"))
    assert f.stat().st_size <= 1024 or text in STRUCTURAL.values()
    return f


@pytest.mark.parametrize(("command", "kind", "text"), CASES, ids=[f"{c}-{k}" for c, k, _ in CASES])
def test_a_malformed_input_is_one_line_exit_2_nothing_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, kind: str, text: str
) -> None:
    f = _input(tmp_path, text)
    code = main(COMMANDS[command](str(f)))
    out, err = capsys.readouterr()
    if command in ("report", "plot") and code == 0:  # a directory's unreadable file is passed over, named
        assert "Traceback" not in err and ("passed over" in out or "0 plot(s)" in out or "writers" in kind), (
            out
        )
        return
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("turncheck: error: "), err
    assert "Traceback" not in err and "\x1b" not in err
    assert sorted(p.name for p in f.parent.iterdir()) == [f.name]


# a FIFO as input or output once blocked the command for ever; /dev/zero as input never ended
FIFO_COMMANDS: dict[str, Callable[[str, str], list[str]]] = {
    "lint": lambda fifo, ok: ["lint", fifo],
    "lint --from": lambda fifo, ok: ["lint", "--from", "openai-chat", fifo],
    "replay": lambda fifo, ok: ["replay", fifo],
    "project": lambda fifo, ok: ["project", "-H", fifo, "-b", "4"],
    "replay --html": lambda fifo, ok: ["replay", ok, "--html", fifo],
    "explore --dot": lambda fifo, ok: ["explore", "trigger", "-p", "writers=1", "--dot", fifo],
    "explore --graphml": lambda fifo, ok: ["explore", "trigger", "-p", "writers=1", "--graphml", fifo],
    "explore --html": lambda fifo, ok: ["explore", "trigger", "-p", "writers=1", "--html", fifo],
    "check --trace-out": lambda fifo, ok: ["check", "trigger", "-p", "writers=1", "--trace-out", fifo],
    "stress --html": lambda fifo, ok: ["stress", "--seconds", "0.2", "--html", fifo],
    "lint /dev/zero": lambda fifo, ok: ["lint", "/dev/zero"],
}


@pytest.mark.parametrize("name", sorted(FIFO_COMMANDS))
def test_a_fifo_or_device_is_refused_before_it_blocks(tmp_path: Path, name: str) -> None:
    import os
    import subprocess

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    trace = tmp_path / "t.json"
    assert main(["check", "trigger", "-p", "writers=2", "-p", "gap=1", "--engine", "explore",
                 "--trace-out", str(trace)]) == 1  # fmt: skip
    before = sorted(p.name for p in tmp_path.iterdir())
    cmd = [sys.executable, "-m", "turncheck", *FIFO_COMMANDS[name](str(fifo), str(trace))]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "regular file" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("fmt", ["openai-chat", "anthropic", "langchain"])
def test_a_lone_surrogate_in_imported_text_is_one_line_and_leaves_no_part_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    records = {
        "openai-chat": [{"role": "user", "content": "hi \ud800"}],
        "anthropic": [{"role": "user", "content": [{"type": "text", "text": "hi \ud800"}]}],
        "langchain": [{"type": "human", "data": {"content": "hi \ud800"}}],
    }
    log = tmp_path / "log.json"
    log.write_text(json.dumps(records[fmt]), encoding="utf-8")  # json escapes it: the file is valid UTF-8
    assert main(["import", str(log), "--from", fmt, "-o", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lone surrogate" in err and "record 1" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.json"]
