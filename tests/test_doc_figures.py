"""Every generated block of figures in README.md and docs/ is what its command produces now.

Quick-scale blocks are regenerated here on every run and compared byte for byte; full-scale
blocks must carry the hash of their result file, and the ``slow`` test reruns their commands.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import TINY_DEMO

from docs.tools.doc_figures import BLOCK, BlockSpec, blocks, main, regenerate, run_command
from turncheck.models.errors import BadParameter

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_docs_have_generated_blocks() -> None:
    specs = [s for p in DOCS for s in blocks(p.read_text(encoding="utf-8"))]
    commands = {c for s in specs for c in s.commands}
    assert (
        "turncheck scenario trigger-gap" in commands
        and "turncheck scenario clock-skew --scale full" in commands
    )
    assert any(s.full for s in specs) and any(not s.full for s in specs)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_quick_blocks_match_what_their_commands_print(
    path: Path, extra_or_skip: Any, request: pytest.FixtureRequest
) -> None:
    text = path.read_text(encoding="utf-8")
    # the page that shows the whole tiny demo is compared with the suite's one run of it
    printed = [request.getfixturevalue("tiny_demo")[0]] if f"cmd='{TINY_DEMO}'" in text else []
    with extra_or_skip():  # a block whose command needs an extra (a BPE cost: tiktoken)
        new, diffs, _ = regenerate(text, path, full=False, printed=printed)
    missing = [m for m in ("tiktoken", "faker", "agents") if importlib.util.find_spec(m) is None]
    if diffs and missing:  # the demo passes over what needs the peers extra, so it prints less
        pytest.skip(f"the figures were made with the peers extra; without {', '.join(missing)} they differ")
    assert not diffs, "stale figures (run python -m docs.tools.doc_figures --write FILE): " + "; ".join(
        f"line {d.line}: {d.why}" for d in diffs
    )
    assert new == text


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_full_blocks_carry_a_result_hash(path: Path) -> None:
    for spec in blocks(path.read_text(encoding="utf-8")):
        if spec.full:
            for digest in (spec.sha256, spec.text):
                assert digest and len(digest) == 16 and int(digest, 16) >= 0, spec.commands


@pytest.mark.slow
@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_full_blocks_match_their_commands_and_hashes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    _, diffs, _ = regenerate(text, path, full=True)
    assert not diffs, "; ".join(f"line {d.line}: {d.why} ({d.commands})" for d in diffs)


def test_a_changed_figure_is_caught_and_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "page.md"
    cmd = "turncheck scenario trigger-gap --param writers=4 --param gap=2 --param iterations=500"
    path.write_text(
        f"x\n<!-- figures kind=table columns=peak,post_peak cmd='{cmd}' -->\n| 99 |\n<!-- /figures -->\n"
    )
    assert main([str(path), "--check"]) == 1
    assert main([str(path), "--write"]) == 0
    assert main([str(path), "--check"]) == 0
    assert "| peak | post_peak |" in path.read_text()


@pytest.mark.parametrize(
    "spec,needle",
    [
        ("kind=table", "cmd"),
        ("kind=pie cmd='turncheck scenario trigger-gap'", "kind"),
        ("oops cmd='turncheck scenario trigger-gap'", "key=value"),
    ],
)
def test_bad_markers_are_refused(spec: str, needle: str) -> None:
    with pytest.raises(BadParameter, match=needle):
        BlockSpec.parse(spec)


def test_only_scenario_commands_run() -> None:
    with pytest.raises(BadParameter, match="only"):
        run_command("rm -rf /")
    with pytest.raises(BadParameter, match="cannot read"):
        run_command("turncheck scenario trigger-gap --iterations 5")
    with pytest.raises(BadParameter, match="cannot read"):
        run_command("turncheck scenario framing --scale huge")


def test_a_block_command_means_what_it_means_on_the_command_line() -> None:
    """No ``--scale`` is the command line's default, ``quick`` (its preset under the ``--param``
    values); a block showing another scale's figures has to name it, as its reader must."""
    params = {
        cmd: run_command(cmd).params
        for cmd in (
            "turncheck scenario key-collapse",
            "turncheck scenario key-collapse --scale tiny --param keys=5",
            "turncheck scenario key-collapse --scale quick",
        )
    }
    quick = params["turncheck scenario key-collapse"]
    assert quick == params["turncheck scenario key-collapse --scale quick"]
    assert (quick["sessions"], quick["keys"]) == (2000, 64)
    assert params["turncheck scenario key-collapse --scale tiny --param keys=5"]["keys"] == 5


def test_an_output_block_is_the_commands_printed_lines(tmp_path: Path) -> None:
    """kind=output runs the command in the page's scratch folder (a later command reads what an
    earlier one wrote), keeps the lines asked for, strips a wall-clock time, shows the exit status."""
    path = tmp_path / "page.md"
    check = "turncheck check trigger --param locking=none --param gap=1 -i bounded-peak-turns --trace-out t.json --engine explore"
    path.write_text(
        f"<!-- figures kind=output keep=^counterexample cmd='{check}' -->\n<!-- /figures -->\n"
        "<!-- figures kind=output 'keep=^replay|^still' 'strip=, [0-9]+ steps$' cmd='turncheck replay t.json' -->\n"
        "<!-- /figures -->\n"
    )
    assert main([str(path), "--write"]) == 0
    text = path.read_text()
    assert f"$ {check}\n...\ncounterexample: bounded-peak-turns broken in 4 steps" in text
    assert text.count("(exit status 1)") == 2  # check: a counterexample (saved); replay: still fails
    assert "replay of t.json: model trigger (" in text  # replay: still fails
    assert "), 4 steps\n" not in text  # stripped
    assert main([str(path), "--check"]) == 0
    path.write_text(text.replace("broken in 4 steps", "broken in 3 steps", 1))
    assert main([str(path), "--check"]) == 1


def test_an_output_block_already_printed_is_taken_as_printed(tmp_path: Path) -> None:
    """``printed``: a command the caller already ran (the suite's tiny demo) is not run again, its
    lines are the block's; a command not among them runs."""
    from importlib.metadata import version

    from docs.tools.doc_figures import Printed

    path = tmp_path / "page.md"
    text = (
        "<!-- figures kind=output cmd='turncheck demo --scale tiny -o demo --quiet' -->\n<!-- /figures -->\n"
        "<!-- figures kind=output keep=^turncheck cmd='turncheck --version' -->\n<!-- /figures -->\n"
    )
    ran = Printed("turncheck demo --scale tiny -o demo --quiet", "turncheck demo — as printed before\n", 0)
    new, _, done = regenerate(text, path, full=False, printed=[ran])
    assert done == 2 and "turncheck demo — as printed before\n" in new and "tiny scale" not in new
    assert f"\nturncheck {version('turncheck')}\n" in new


def test_output_blocks_run_only_turncheck_and_copy_only_repository_folders(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- figures kind=output cmd='ls /' -->\n<!-- /figures -->\n")
    with pytest.raises(BadParameter, match="only 'turncheck"):
        regenerate(page.read_text(), page, full=False)
    page = ROOT / "docs" / "nowhere.md"
    with pytest.raises(BadParameter, match="copy="):
        regenerate(
            "<!-- figures kind=output copy=../etc cmd='turncheck --help' -->\n<!-- /figures -->\n",
            page,
            False,
        )


def test_copy_takes_several_folders_each_a_repository_folder() -> None:
    """``copy=A,B`` copies each folder before the command runs: ``cases list`` then names the
    race test and the corpus files relative to the scratch folder, as from the checkout's root
    (with the corpus alone, the race test is named where the checkout has it); a folder of the
    list outside the repository is refused like a single one."""
    page = ROOT / "docs" / "nowhere.md"
    block = "<!-- figures kind=output {copy} cmd='turncheck cases list' -->\n<!-- /figures -->\n"
    both, _, _ = regenerate(block.format(copy="copy=models/corpus/data,examples"), page, False)
    assert "turncheck race examples/races/agents_compaction.py:" in both and " models/corpus/data/" in both
    alone, _, _ = regenerate(block.format(copy="copy=models/corpus/data"), page, False)
    assert f"turncheck race {ROOT / 'examples' / 'races' / 'agents_compaction.py'}:" in alone
    with pytest.raises(BadParameter, match="copy='../etc'"):
        regenerate(block.format(copy="copy=examples,../etc"), page, False)


def test_a_bench_block_is_rendered_from_its_committed_result_file(tmp_path: Path) -> None:
    """Timings are never re-measured in a test: the table must match the committed file."""
    import json

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "docs" / "results").mkdir(parents=True)
    run = {"topic": "trigger", "scale": "quick", "cores": 2, "load_average": {"start": [1.5, 1, 1], "end": [2.25, 1, 1]},
           "compare": [{"path": "SimPy runner", "unit": "µs per event", "target": "≤ 1.5× bare SimPy", "note": "",
                        "contenders": [
                            {"name": "simulate", "role": "turncheck", "median": 3.1345, "best": 2.9, "rounds": 3,
                             "peak_mib": None, "turncheck_over_this": None},
                            {"name": "bare SimPy", "role": "ceiling", "median": 1.25, "best": 1.0, "rounds": 3,
                             "peak_mib": 12.0, "turncheck_over_this": 2.5076}]}]}  # fmt: skip
    result = tmp_path / "docs" / "results" / "bench.jsonl"
    result.write_text(json.dumps(run) + "\n")
    page = tmp_path / "docs" / "performance.md"
    cmd = "turncheck bench trigger --compare --scale quick --format json"
    page.write_text(
        f"<!-- figures kind=bench src=docs/results/bench.jsonl cmd='{cmd}' -->\n<!-- /figures -->\n"
    )
    assert main([str(page), "--write"]) == 0 and main([str(page), "--check"]) == 0
    text = page.read_text()
    assert (
        "|  | ceiling: bare SimPy | 1.250 | 1.000 | µs per event | turncheck ÷ ceiling 2.51× | +12 MiB |"
        in text
    )
    assert "| SimPy runner | turncheck: simulate | 3.135 |" in text and "load average 1.50 → 2.25" in text
    assert "SimPy runner: CPU split" not in text  # notes only when the marker asks for them
    run["compare"][0]["note"] = "CPU split 1.0 s + 2.0 s"  # type: ignore[index]
    result.write_text(json.dumps(run) + "\n")
    page.write_text(
        f"<!-- figures kind=bench columns=note src=docs/results/bench.jsonl cmd='{cmd}' -->\n<!-- /figures -->\n"
    )
    assert main([str(page), "--write"]) == 0 and "- SimPy runner: CPU split 1.0 s + 2.0 s" in page.read_text()
    run["compare"][0]["contenders"][0]["median"] = 3.5  # type: ignore[index]
    result.write_text(json.dumps(run) + "\n")
    assert main([str(page), "--check"]) == 1


@pytest.mark.parametrize(
    "src,needle", [("", "needs src="), ("../x.jsonl", "needs src="), ("docs/none.jsonl", "cannot read")]
)
def test_a_bench_block_needs_a_readable_file_in_the_repository(src: str, needle: str) -> None:
    marker = "kind=bench" + (f" src={src}" if src else "")
    text = f"<!-- figures {marker} cmd='turncheck bench --compare --format json' -->\n<!-- /figures -->\n"
    with pytest.raises(BadParameter, match=needle):
        regenerate(text, ROOT / "docs" / "performance.md", full=False)


def test_a_pins_block_follows_the_constraints_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "constraints.txt").write_text("# pins\nFaker==40.63.0\ntiktoken==0.14.0\n")
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        "<!-- figures kind=pins columns=tiktoken,faker src=constraints.txt cmd='pip' -->\n<!-- /figures -->\n"
    )
    assert main([str(page), "--check"]) == 1
    assert main([str(page), "--write"]) == 0
    text = page.read_text()
    assert "| `tiktoken` | 0.14.0 |\n| `faker` | 40.63.0 |" in text  # in the order named, names normalised
    assert main([str(page), "--check"]) == 0
    (tmp_path / "constraints.txt").write_text("faker==41.0.0\ntiktoken==0.14.0\n")
    assert main([str(page), "--check"]) == 1  # a new pin makes the page stale
    page.write_text(text.replace("columns=tiktoken,faker", "columns=tiktoken,numpy"))
    with pytest.raises(BadParameter, match="pins no 'numpy'"):
        main([str(page), "--check"])


def test_log_format_blocks_follow_the_format_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from docs.tools import log_format_doc
    from turncheck.models import log_format

    page = tmp_path / "store.md"
    cmd = "cmd='python -m docs.tools.log_format_doc'"
    page.write_text(
        "".join(
            f"<!-- figures kind=log-format table={part} {cmd} -->\n<!-- /figures -->\n"
            for part in log_format_doc.PARTS
        )
    )
    assert main([str(page), "--write"]) == 0
    text = page.read_text()
    data = log_format_doc.example_log()
    assert (
        f"), {len(data)} bytes:" in text
        and "| 0 | 8 | magic (`FRAME_MAGIC`) | `89 54 43 4C 0D 0A 1A 0A` |" in text
    )
    assert "| 16 | … | frames, one per committed turn | — |" in text and "| L − 5 − k |" in text
    assert main([str(page), "--check"]) == 0
    monkeypatch.setattr(log_format, "MAX_ID_BYTES", 127)  # a change of the format shows on the page
    assert main([str(page), "--check"]) == 1
    with pytest.raises(BadParameter, match="log-format"):
        regenerate(
            f"<!-- figures kind=log-format table=footer {cmd} -->\n<!-- /figures -->\n", page, full=False
        )


def test_the_provider_rules_table_follows_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/your-agent.md's rules table is the registry: each rule's API, error text and source
    are on the page, and a rule added to the registry makes the page stale."""
    import dataclasses

    from docs.tools import provider_rules_doc
    from turncheck.models.provider_rules import REGISTRY

    page = tmp_path / "rules.md"
    page.write_text(
        "<!-- figures kind=provider-rules cmd='python -m docs.tools.provider_rules_doc' -->\n<!-- /figures -->\n"
    )
    assert main([str(page), "--write"]) == 0 and main([str(page), "--check"]) == 0
    text = page.read_text()
    for rule in REGISTRY:
        row = next(line for line in text.splitlines() if f"| {rule.provider} | `{rule.id}` |" in line)
        assert rule.error in row and all(s in row for s in rule.source.split(", ")), rule.id
    extra = dataclasses.replace(REGISTRY[0], provider="mistral")
    monkeypatch.setattr(provider_rules_doc, "REGISTRY", (*REGISTRY, extra))
    assert main([str(page), "--check"]) == 1


def test_a_block_can_read_a_committed_result_file(tmp_path: Path) -> None:
    from turncheck.reports.tables import dumps_result

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    cmd = "turncheck scenario trigger-gap --param writers=4 --param gap=2 --param iterations=500"
    result = tmp_path / "docs" / "results" / "tg.json"
    result.parent.mkdir(parents=True)
    result.write_text(dumps_result(run_command(cmd)))
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        f"<!-- figures kind=table columns=peak src=docs/results/tg.json cmd='{cmd}' -->\n<!-- /figures -->\n"
    )
    assert main([str(page), "--write"]) == 0
    assert "Read from `docs/results/tg.json`" in page.read_text()
    assert main([str(page), "--check"]) == 0
    data = json.loads(result.read_text())
    table = data["tables"][0]
    table["rows"][0][table["columns"].index("peak")] += 1  # a figure in the file drifts: the page is stale
    result.write_text(json.dumps(data))
    assert main([str(page), "--check"]) == 1
    result.write_text(result.read_text().replace('"peak"', '"peak_typo"'))  # a column gone: refused
    with pytest.raises(BadParameter, match="no column"):
        main([str(page), "--check"])


def test_a_hand_edit_of_a_full_scale_figure_fails_the_quick_check(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    full = next(m for m in BLOCK.finditer(readme) if BlockSpec.parse(m.group("spec")).full)
    body = full.group("body")
    digit = next(i for i, ch in enumerate(body) if ch.isdigit() and i > body.index("\n"))
    edited = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1 :]
    page = tmp_path / "page.md"
    for text, differs in ((full.group(0), False), (full.group(0).replace(body, edited), True)):
        page.write_text(text, encoding="utf-8")
        _, diffs, _ = regenerate(text, page, full=False)
        assert bool(diffs) is differs and all("edited by hand" in d.why for d in diffs)


def test_only_limits_a_full_run_to_the_blocks_it_names(tmp_path: Path) -> None:
    """``--full --only REGEX`` reruns just the full blocks whose command matches; the others keep
    their text (and their text hash is still checked)."""
    from docs.tools.doc_figures import text_hash

    cmd = "turncheck scenario trigger-gap --param writers=4 --param gap=2 --param iterations=20"
    other = cmd.replace("iterations=20", "iterations=10")
    page = tmp_path / "page.md"
    stale = "| 99 |\n"
    page.write_text(
        f"<!-- figures kind=table columns=peak scale=full sha256=0 text={text_hash(stale)} cmd='{other}' -->\n"
        f"{stale}<!-- /figures -->\n"
        f"<!-- figures kind=table columns=peak scale=full sha256=0 text=0 cmd='{cmd}' -->\n{stale}<!-- /figures -->\n"
    )
    assert main([str(page), "--write", "--full", "--only", "iterations=20"]) == 0
    first, second = page.read_text().split("<!-- /figures -->")[:2]
    assert first.endswith(stale) and "| 99 |" not in second
