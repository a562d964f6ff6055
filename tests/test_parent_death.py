"""A turncheck killed by SIGKILL (or SIGTERM) leaves no process behind (issue 57, item 5).

Each case starts the real command, waits until its workers (or its trimmer) run, SIGKILLs the
turncheck process alone — no cleanup of ours can run — and asserts that every process it had
started is gone within :data:`GONE_WITHIN` seconds. Before the parent-death signal, the stress
workers went on until ``--seconds`` ran out and the trimmer until its own end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

psutil = pytest.importorskip(
    "psutil", reason="psutil is not installed (it comes with the test extras' dependencies)"
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and process trees need POSIX")

GONE_WITHIN = 5.0
"""Seconds from the parent's SIGKILL that its workers may take to end (the promise is at once on
Linux, :data:`~turncheck.models.parent_death.POLL` elsewhere)."""
START_WITHIN = 60.0
"""Seconds the command may take to start its workers on a loaded machine."""
TURNCHECK = [sys.executable, "-m", "turncheck"]


def descendants_once_running(
    proc: subprocess.Popen[bytes], ready: Callable[[list[psutil.Process]], bool]
) -> list[psutil.Process]:
    """The command's descendants once ``ready`` says they are all there."""
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + START_WITHIN
    while time.monotonic() < deadline:
        assert proc.poll() is None, (
            f"the command ended first: {proc.stderr.read().decode() if proc.stderr else ''}"
        )
        kids = parent.children(recursive=True)
        if ready(kids):
            return kids
        time.sleep(0.1)
    raise AssertionError("the command never started its workers")


def killed_leaves_nothing(
    argv: list[str], cwd: Path, ready: Callable[[list[psutil.Process]], bool], signum: int = signal.SIGKILL
) -> None:
    """``turncheck ARGV`` killed by ``signum`` once ``ready``: none of its descendants is left."""
    killed_leaves_nothing_of([*TURNCHECK, *argv], cwd, ready, signum)


def killed_leaves_nothing_of(
    command: list[str], cwd: Path, ready: Callable[[list[psutil.Process]], bool], signum: int = signal.SIGKILL
) -> None:
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        kids = descendants_once_running(proc, ready)
        time.sleep(0.5)  # every worker past its start-up
        os.kill(proc.pid, signum)
        proc.wait(10)
        _gone, alive = psutil.wait_procs(kids, timeout=GONE_WITHIN)
        assert not alive, f"left running after the parent's SIGKILL: {[p.pid for p in alive]}"
    finally:
        for p in psutil.Process().children(recursive=True):
            if p.pid != proc.pid:
                p.kill()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_stress_workers_end_with_their_parent(tmp_path: Path, signum: int) -> None:
    writers = 3
    killed_leaves_nothing(
        ["stress", "--writers", str(writers), "--seconds", "120", "-q", "-o", str(tmp_path / "out")],
        tmp_path,
        lambda kids: len(kids) >= writers + 1,  # the writers and the compactor
        signum,
    )


def test_sweep_pool_workers_end_with_their_parent(tmp_path: Path) -> None:
    killed_leaves_nothing(
        [
            "sweep",
            "clock-skew",
            "-g",
            "writers=2,4,8,16",
            "--scale",
            "full",
            "-j",
            "2",
            "-q",
            "--out",
            str(tmp_path / "out"),
        ],  # fmt: skip
        tmp_path,
        lambda kids: len(kids) >= 2,
    )


def test_an_exec_trimmer_ends_with_its_parent(tmp_path: Path) -> None:
    """A trimmer that never reads its input (so never sees end of input) and never answers."""
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(300)\n")
    command = f"{sys.executable} slow.py"
    killed_leaves_nothing(
        ["project", "--example", "-q", "--per-request", "--strategy", f"exec:{command}"],
        tmp_path,
        lambda kids: any("slow.py" in " ".join(p.cmdline()) for p in kids if p.is_running()),
    )


def test_where_the_kernel_cannot_signal_the_watch_thread_ends_the_worker(tmp_path: Path) -> None:
    """The portable fallback (no ``prctl``): a parent that forks a worker which polls its
    parent's pid, then is SIGKILLed; the worker ends within a few polls."""
    driver = tmp_path / "driver.py"
    driver.write_text(
        "import os, sys, time\n"
        "from turncheck.models import parent_death\n"
        "parent_death.parent_death_signal = lambda: False\n"
        "parent = os.getpid()\n"
        "if os.fork() == 0:\n"
        "    parent_death.die_with_parent(parent)\n"
        "    time.sleep(300)\n"
        "    os._exit(0)\n"
        "time.sleep(300)\n"
    )
    killed_leaves_nothing_of([sys.executable, str(driver)], tmp_path, lambda kids: len(kids) >= 1)
