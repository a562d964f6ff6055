"""A Ctrl-C while the local pool starts its workers is the parent's alone.

A terminal's SIGINT reaches the whole process group. A worker ignores it from its initializer on,
but before that — in ``multiprocessing``'s own bootstrap, right after the fork — it ran the
handler inherited from the parent and printed a ``KeyboardInterrupt`` traceback (seen under load
on ``sweep`` with 2 workers, tests/test_cli_interrupt.py). The pool now starts its workers with
SIGINT blocked; each worker inherits the blocked mask and ignores the signal before unblocking it.

The test makes the race certain: every child of the pool sends itself SIGINT the moment it is
forked (``os.register_at_fork``), before the bootstrap code runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import os, signal, sys
from turncheck.sim.executor import LocalExecutor

os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGINT))
out = LocalExecutor(jobs=2, start_method="fork").map(abs, [-1, -2, -3, -4])
print(out)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="fork and SIGINT to a process: POSIX")
def test_a_sigint_in_a_worker_s_first_instant_prints_nothing_and_the_map_completes(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 0 and proc.stdout.strip() == "[1, 2, 3, 4]", proc.stdout + proc.stderr[-2000:]
