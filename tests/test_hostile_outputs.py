"""Issue 57, hostile input round 3: what turncheck writes appears whole or not at all and never
through a symlink, and an evidence check says when its evidence is missing.

Each class is tried on every writer it concerns: a symlinked member of an output folder
(``scenario``/``sweep``/``plot -o DIR``, the default trace folder), a symlinked log
(``log repair``, ``TurnLog.open``), a full disk (a file-size limit set with ``RLIMIT_FSIZE`` in a
subprocess, and a real 64 KiB tmpfs for ``stress -o`` where root may mount one in a private mount
namespace), a missing folder for ``--trace-out``, and histories ``stress --check`` cannot read.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from turncheck.cli.app import main
from turncheck.models.log_format import StoreError
from turncheck.models.output_files import OutputRefused, write_outputs
from turncheck.models.store import TurnLog


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: a link's target, a file's SHA-256, or ``dir``."""
    out: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        key = str(p.relative_to(folder))
        if p.is_symlink():
            out[key] = "-> " + os.readlink(p)
        elif p.is_file():
            out[key] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[key] = "dir"
    return out


def one_line(err: str, *needles: str) -> None:
    assert err.startswith("turncheck: error:") and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle.lower() in err.lower(), err


# -- a symlinked member of an output folder ----------------------------------------------------

SCENARIO = ["scenario", "clock-skew", "--scale", "tiny", "-q", "-o", "{d}"]
SWEEP = ["sweep", "clock-skew", "--scale", "tiny", "-q", "--grid", "budget=100,200", "-o", "{d}"]


@pytest.mark.parametrize(
    ("argv", "member"),
    [
        (SCENARIO, "clock-skew.json"),
        (SCENARIO, "clock-skew.md"),
        (SWEEP, "sweep-clock-skew.jsonl"),
        (SWEEP, "sweep-clock-skew.json"),
        (["plot", "{results}", "-q", "-o", "{d}"], "{plot}.svg"),
        (["plot", "{results}", "-q", "-o", "{d}"], "{plot}.png"),
    ],
    ids=["scenario-json", "scenario-md", "sweep-jsonl", "sweep-json", "plot-svg", "plot-png"],
)
def test_an_output_folder_writer_refuses_a_symlinked_member(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], member: str
) -> None:
    results = tmp_path / "results"
    assert main(["scenario", "trigger-gap", "--scale", "tiny", "-q", "-o", str(results)]) == 0
    assert main(["plot", str(results), "-o", str(tmp_path / "probe")]) == 0
    plot = sorted(p.stem for p in (tmp_path / "probe").glob("*.svg"))[0]
    shutil.rmtree(tmp_path / "probe")
    out = tmp_path / "out"
    out.mkdir()
    user = tmp_path / "users-file.txt"
    user.write_text("the user's own file\n")
    (out / member.format(plot=plot)).symlink_to(user)
    capsys.readouterr()
    before = snapshot(tmp_path)
    fill = {"d": str(out), "results": str(results)}
    assert main([a.format(**fill) for a in argv]) == 2
    one_line(capsys.readouterr().err, "symlink", member.format(plot=plot))
    assert snapshot(tmp_path) == before


def test_a_symlinked_folder_below_the_output_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "traces").symlink_to(elsewhere)
    before = snapshot(tmp_path)
    with pytest.raises(OutputRefused, match="traces is a symlink"):
        write_outputs(
            {tmp_path / "out" / "a.json": "{}", tmp_path / "out" / "traces" / "t.json": "{}"},
            tmp_path / "out",
        )
    assert snapshot(tmp_path) == before


def test_the_default_trace_folder_refuses_a_symlinked_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["check", "trigger", "-p", "locking=none", "-q", "--database", str(tmp_path / "db")]
    assert main(argv) == 1
    trace = sorted((tmp_path / ".turncheck" / "traces").iterdir())[0]
    user = tmp_path / "users-file.txt"
    user.write_text("mine\n")
    trace.unlink()
    trace.symlink_to(user)
    capsys.readouterr()
    before = snapshot(tmp_path / ".turncheck")
    assert main(argv) == 2
    one_line(capsys.readouterr().err, "symlink", trace.name)
    assert snapshot(tmp_path / ".turncheck") == before and user.read_text() == "mine\n"


@pytest.mark.parametrize("own", [".turncheck/traces", ".turncheck/hypothesis", ".turncheck"])
def test_check_refuses_its_own_folder_as_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, own: str
) -> None:
    """A held-out variant of the symlinked member: the folder itself. ``.turncheck/traces`` as a
    link to a user's folder had check write its traces there (exit 1), replacing any file of the
    same name; Hypothesis's database went there too."""
    monkeypatch.chdir(tmp_path)
    users = tmp_path / "users-folder"
    users.mkdir()
    (users / "mine.txt").write_text("mine\n")
    (tmp_path / own).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / own).symlink_to(users)
    before = snapshot(tmp_path)
    assert main(["check", "trigger", "-p", "locking=none", "-q"]) == 2
    one_line(capsys.readouterr().err, "symlink", own)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("own", ["results", "traces", "plots"])
def test_demo_refuses_its_own_subfolder_as_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], own: str
) -> None:
    """``demo -o DIR`` with ``DIR/results`` (or ``traces``, ``plots``) a link to a user's folder
    wrote its files into that folder, exit 0."""
    users = tmp_path / "users-folder"
    users.mkdir()
    (users / "mine.txt").write_text("mine\n")
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / own).symlink_to(users)
    before = snapshot(tmp_path)
    assert main(["demo", "--scale", "tiny", "-q", "-o", str(tmp_path / "demo")]) == 2
    one_line(capsys.readouterr().err, "symlink", own)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
def test_log_export_refuses_a_symlinked_out_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dangling: bool
) -> None:
    """A dangling symlink as ``log export -o`` was refused as "cannot inspect e.jsonl (No such
    file or directory)"; either kind is refused as the symlink it is, and nothing is created."""
    log = tmp_path / "a.log"
    with TurnLog.open(log, create=True):
        pass
    target = tmp_path / "users-file.txt"
    if not dangling:
        target.write_text("mine\n")
    (tmp_path / "e.jsonl").symlink_to(target)
    before = snapshot(tmp_path)
    assert main(["log", "export", str(log), "-o", str(tmp_path / "e.jsonl")]) == 2
    one_line(capsys.readouterr().err, "e.jsonl is a symlink")
    assert snapshot(tmp_path) == before


# -- a symlinked log ------------------------------------------------------------------------------


def _damaged_log(path: Path) -> int:
    with TurnLog.open(path, create=True):
        pass
    size = path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b"\x00torn tail")
    return size


def test_log_repair_refuses_a_symlinked_log_unless_told_to_follow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    size = _damaged_log(tmp_path / "real.log")
    (tmp_path / "link.log").symlink_to("real.log")
    before = snapshot(tmp_path)
    assert main(["log", "repair", str(tmp_path / "link.log")]) == 2
    one_line(capsys.readouterr().err, "link.log", "symlink")
    assert snapshot(tmp_path) == before
    assert main(["log", "repair", str(tmp_path / "link.log"), "--follow-symlink"]) == 0
    assert (tmp_path / "real.log").stat().st_size == size


def test_turnlog_open_refuses_a_symlink_for_writing_unless_told_to_follow(tmp_path: Path) -> None:
    from turncheck.models.events import Event, Kind

    with TurnLog.open(tmp_path / "real.log", create=True):
        pass
    link = tmp_path / "link.log"
    link.symlink_to("real.log")
    before = snapshot(tmp_path)
    for create in (False, True):
        with pytest.raises(StoreError, match="symlink"):
            TurnLog.open(link, create=create)
    dangling = tmp_path / "dangling.log"
    dangling.symlink_to("nowhere.log")
    with pytest.raises(StoreError, match="symlink"):
        TurnLog.open(dangling, create=True)
    assert not (tmp_path / "nowhere.log").exists()
    assert snapshot(tmp_path) == {**before, "dangling.log": "-> nowhere.log"}
    with TurnLog.open(link, readonly=True) as log:  # reading through a link writes nothing
        assert log.turns() == ()
    turn = [Event(0, "s", 0, Kind.USER, text="hi", chars=2), Event(1, "s", 0, Kind.TERM, text="ok", chars=2)]
    with TurnLog.open(link, follow_symlinks=True) as log:
        log.commit(turn)
    assert link.is_symlink() and (tmp_path / "real.log").stat().st_size > 16


# -- a full disk ----------------------------------------------------------------------------------


def _limited(limit: int) -> Callable[[], None]:
    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return set_limit


def _turncheck(cwd: Path, argv: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    """``-B``: under the size limit a module compiled now would leave a cut ``.pyc`` in the tree."""
    return subprocess.run(
        [sys.executable, "-B", "-m", "turncheck", *argv], cwd=cwd, capture_output=True, text=True, timeout=300,
        preexec_fn=_limited(limit), check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["check", "trigger", "-p", "locking=none", "-q", "--trace-out", "t.json"], "t.json"),
        (["check", "trigger", "-p", "locking=none", "-q"], ".turncheck/traces/trigger-"),
        (SWEEP[:-1] + ["out/sub"], "out/sub/sweep-clock-skew."),
        (SCENARIO[:-1] + ["out"], "out/clock-skew."),
        (["log", "create", "new.log"], "new.log"),
        (["generate", "--sessions", "3", "-o", "g.jsonl"], "g.jsonl"),
        (["import", "{chat}", "--from", "openai-chat", "-o", "i.jsonl"], "i.jsonl"),
    ],
    ids=["trace-out", "default-traces", "sweep", "scenario", "log-create", "generate", "import"],
)
def test_a_full_disk_leaves_nothing_half_written(tmp_path: Path, argv: list[str], names: str) -> None:
    """A 12-byte file-size limit (EFBIG, as on a full disk): one line naming the path, exit 2, and
    the folder exactly as before — no 0-byte or cut file, no temporary file, no new folder."""
    work = tmp_path / "work"
    work.mkdir()
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}]))
    database = ["--database", str(tmp_path / "db")] if argv[0] == "check" else []
    before = snapshot(work)
    done = _turncheck(work, [a.format(chat=chat) for a in argv] + database, limit=12)
    assert done.returncode == 2, done
    one_line(done.stderr, names, "File too large")
    assert "torn tail" not in done.stderr  # log create said "cannot repair the torn tail"
    assert snapshot(work) == before


def test_trace_out_into_a_missing_folder_creates_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", "trigger", "-p", "locking=none", "-q", "--database", str(tmp_path / "db")]
    before = snapshot(tmp_path)
    assert main([*argv, "--trace-out", str(tmp_path / "missing" / "dir" / "t.json")]) == 2
    one_line(capsys.readouterr().err, "--trace-out", "does not exist")
    assert snapshot(tmp_path) == before


def _can_mount_tmpfs() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare(1) to mount a private tmpfs"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return None if probe.returncode == 0 else f"cannot mount a tmpfs here: {probe.stderr.decode().strip()}"


def test_stress_out_on_a_full_disk_is_one_line_and_leaves_no_history(tmp_path: Path) -> None:
    """The history on a real 64 KiB tmpfs (the database in /tmp): every worker hits ENOSPC; the
    parent says so in one line, no worker prints a traceback, and the folder is gone."""
    reason = _can_mount_tmpfs()
    if reason is not None:
        pytest.skip(reason)
    disk = tmp_path / "disk"
    disk.mkdir()
    argv = f"{sys.executable} -m turncheck stress --seconds 1 -q -o {disk}/run"
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {disk} && {argv}; echo $?; ls -A {disk}"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    code, listing = done.stdout.split("\n", 1)
    assert code == "2", done
    one_line(done.stderr, f"{disk}/run/history/", "no space left on device", "history is incomplete")
    assert listing.strip() == ""


@pytest.mark.parametrize("trace_out", [True, False], ids=["trace-out", "default-traces"])
def test_check_on_a_full_disk_leaves_no_empty_example_file(tmp_path: Path, trace_out: bool) -> None:
    """``check`` run in a folder on a full 64 KiB tmpfs, its example database there too (the
    default ``.turncheck/hypothesis``): Hypothesis wrote each example through the system's temporary
    folder, could not rename it across filesystems (EXDEV) and wrote it in place instead, leaving
    0-byte example files. The trace is refused in one line; no file of 0 bytes is left."""
    reason = _can_mount_tmpfs()
    if reason is not None:
        pytest.skip(reason)
    disk = tmp_path / "disk"
    disk.mkdir()
    out = " --trace-out t.json" if trace_out else ""
    script = (
        f"mount -t tmpfs -o size=64k tmpfs {disk} && cd {disk} && head -c 1M /dev/zero > filler 2>/dev/null;"
        f" {sys.executable} -m turncheck check trigger -p locking=none -q{out}; echo $?;"
        f" find {disk} -type f -empty"
    )
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300,
                          check=False)  # fmt: skip
    code, empty = done.stdout.split("\n", 1)
    assert code == "2", done
    one_line(done.stderr, "t.json" if trace_out else ".turncheck/traces/", "no space left on device")
    assert empty.strip() == "", empty


# -- evidence that cannot be read -------------------------------------------------------------


@pytest.fixture(scope="module")
def stress_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stress") / "run"
    argv = [
        "stress",
        "--seconds",
        "0.5",
        "--quiet",
        "--locking",
        "mutex",
        "--kill",
        "--kills",
        "1",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    return out / "history"


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _dev_zero(p: Path) -> None:
    p.symlink_to("/dev/zero")


def _folder(p: Path) -> None:
    p.mkdir()


@pytest.mark.parametrize(
    "replace", [_fifo, _dev_zero, _folder, None], ids=["fifo", "dev-zero", "folder", "missing"]
)
@pytest.mark.parametrize("victim", ["w1.0.jsonl", "c.0.jsonl", "restart"])
def test_stress_check_refuses_a_history_it_could_not_read(
    stress_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    replace: Callable[[Path], None] | None,
    victim: str,
) -> None:
    history = tmp_path / "history"
    shutil.copytree(stress_run, history)
    header = json.loads((history / "store.jsonl").read_text().splitlines()[0])
    if victim == "restart":
        role, _, k = header["kills"][0].rpartition(".")
        victim = f"{role}.{int(k) + 1}.jsonl"
    (history / victim).unlink()
    if replace is not None:
        replace(history / victim)
    assert main(["stress", "--check", str(tmp_path)]) == 2
    one_line(capsys.readouterr().err, "evidence is incomplete")
    assert main(["stress", "--check", str(stress_run)]) == 0


@pytest.mark.parametrize("cut", ["mid-line", "at-a-line", "emptied"])
@pytest.mark.parametrize("role", ["writer", "compactor"])
def test_stress_check_refuses_a_history_cut_short(
    stress_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], cut: str, role: str
) -> None:
    """A held-out variant of the unreadable history: one that reads, but cut short (truncated, a
    copy that stopped). The cut lines were dropped as a kill's torn write, the appends counted
    fell (1 066 to 696 in one run) and the check said what it said of the whole history."""
    history = tmp_path / "history"
    shutil.copytree(stress_run, history)
    store = [json.loads(line) for line in (history / "store.jsonl").read_text().splitlines()]
    killed, committed = store[0]["kills"], {c["id"] for c in store if c.get("op") == "commit"}
    prefix = "w" if role == "writer" else "c"  # a process not killed, with a committed operation

    def records(p: Path) -> list[bytes]:
        return p.read_bytes().splitlines(keepends=True)

    def last_commit(lines: list[bytes]) -> int:
        return max((k for k, x in enumerate(lines) if json.loads(x).get("id") in committed), default=-1)

    victim = next((p.name for p in sorted(history.glob(f"{prefix}*.jsonl"))
                   if p.name[:-6] not in killed and last_commit(records(p)) >= 0), None)  # fmt: skip
    if victim is None:
        pytest.skip(f"no {role} of this short run committed an operation outside a kill")
    lines = records(history / victim)
    last = last_commit(lines)  # the cut drops the last operation the journal committed, at least
    kept = {"mid-line": b"".join(lines[:last]) + lines[last][:10], "at-a-line": b"".join(lines[:last]),
            "emptied": b""}[cut]  # fmt: skip
    (history / victim).write_bytes(kept)
    assert main(["stress", "--check", str(tmp_path)]) == 2
    one_line(capsys.readouterr().err, "evidence is incomplete", victim.removesuffix(".jsonl"))
    assert main(["stress", "--check", str(stress_run)]) == 0


@pytest.mark.parametrize(
    "cut", ["after-the-last-commit", "a-read-mid-file", "the-end-line-alone", "a-line-doubled"]
)
def test_stress_check_refuses_a_history_that_lost_only_reads_or_failures(
    stress_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], cut: str
) -> None:
    """Reads and failed operations commit nothing, so the journal cross-check cannot see them go:
    a cut after a process's last committed operation, or one read taken out of the middle, was
    checked as the whole history (fewer reads checked, exit 0). Each process not killed ends its
    file with an ``end`` line counting its operations; the history says ``"ends": true``."""
    history = tmp_path / "history"
    shutil.copytree(stress_run, history)
    store = [json.loads(line) for line in (history / "store.jsonl").read_text().splitlines()]
    killed, committed = store[0]["kills"], {c["id"] for c in store if c.get("op") == "commit"}
    assert store[0]["ends"] is True


    def ops_of(path: Path) -> list[dict[str, object]]:
        return [json.loads(x) for x in path.read_bytes().splitlines()]

    # a process not killed that committed and read (on a loaded machine one may have done neither)
    victim = next(p for p in sorted(history.glob("w*.jsonl")) if p.name[:-6] not in killed
                  and any(x.get("id") in committed for x in ops_of(p)) and any(x["op"] == "read" for x in ops_of(p)))  # fmt: skip
    lines = victim.read_bytes().splitlines(keepends=True)
    ops = ops_of(victim)
    assert ops[-1]["op"] == "end" and ops[-1]["ops"] == len(lines) - 1
    last = max(k for k, x in enumerate(ops) if x.get("id") in committed)
    reads = [k for k, x in enumerate(ops) if x["op"] == "read"]
    kept = {
        "after-the-last-commit": lines[: last + 1],  # the reads and the failed append after it
        "a-read-mid-file": [x for k, x in enumerate(lines) if k != reads[len(reads) // 2]],
        "the-end-line-alone": lines[:-1],
        "a-line-doubled": [*lines[:1], *lines],
    }[cut]
    assert all(json.loads(x).get("id") not in committed for x in lines if x not in kept)  # no commit lost
    victim.write_bytes(b"".join(kept))
    assert main(["stress", "--check", str(tmp_path)]) == 2
    one_line(capsys.readouterr().err, "evidence is incomplete", victim.name.removesuffix(".jsonl"))
    assert main(["stress", "--check", str(stress_run)]) == 0


def test_stress_check_of_a_history_without_end_lines_still_checks_it(
    stress_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A history an earlier turncheck or another client wrote has no ``ends`` and no end lines:
    it is checked as before, not refused for lacking them."""
    history = tmp_path / "history"
    shutil.copytree(stress_run, history)
    for path in history.glob("*.jsonl"):
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        rows = [{k: v for k, v in r.items() if k != "ends"} for r in rows if r["op"] != "end"]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["stress", "--check", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""


def test_stress_check_of_another_clients_history_counts_no_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client with its own file names (a JVM harness's) is checked, not refused for them."""
    lines = [
        {"op": "history", "format": "turncheck-history", "version": 1, "store": "mine", "locking": "none",
         "max_turns": 8, "writers": 2, "journal": False},
        {"op": "final", "live": []},
    ]  # fmt: skip
    (tmp_path / "store.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "thread-7.jsonl").write_text("")
    assert main(["stress", "--check", str(tmp_path)]) == 1  # checked: no append, so no progress
    out, err = capsys.readouterr()
    assert err == "" and "VIOLATED no-progress" in out


# -- log verify's exit codes are its help's ------------------------------------------------------


@pytest.mark.parametrize("policy", ["stop", "resync"])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_log_verify_exits_1_for_a_checksum_corrupt_tail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str, fmt: str
) -> None:
    from turncheck.models.events import Event, Kind

    log = tmp_path / "c.log"
    with TurnLog.open(log, create=True) as store:
        for t in range(3):
            store.commit(
                [
                    Event(2 * t, "s", t, Kind.USER, text="hi", chars=2),
                    Event(2 * t + 1, "s", t, Kind.TERM, text="ok", chars=2),
                ]
            )
        last = store.turns()[-1].offset
    data = bytearray(log.read_bytes())
    data[last + 25] ^= 0x7F
    log.write_bytes(bytes(data))
    assert main(["log", "verify", "--help"]) == 0
    assert "1 damaged" in capsys.readouterr().out
    assert main(["log", "verify", str(log), "--policy", policy, "--format", fmt]) == 1
    out, err = capsys.readouterr()
    assert err == "" and ("skipped" if (policy, fmt) == ("resync", "table") else "damaged") in out
    assert log.read_bytes() == bytes(data)
