"""Run an ``exec:`` command so that nothing it starts outlives the turncheck that started it.

The command's parent-death signal (:mod:`turncheck.models.parent_death`) ends the command when
turncheck is killed, but not what the command started: a grandchild that called ``setsid()``
left the process group and, once the command was gone, belonged to init (issue 57: it outlived
a ``kill -9`` of the run). So on Linux the command runs under this small guard, started with
``python -I exec_guard.py STATUS_FD ARGV...``: the guard makes itself the *child subreaper* of
everything below it (``prctl(PR_SET_CHILD_SUBREAPER)``: orphans below it are reparented to it,
not to init), arms its own parent-death signal (SIGTERM), forks the command and waits. When the
command ends, or turncheck ends however it ends, the guard kills every process left below it
and exits with the command's status (re-raising the signal that killed it), so the caller sees
the command's own exit.

``STATUS_FD`` tells the caller whether the program started: the guard writes the ``errno`` of a
failed ``execvp`` there (as decimal text) and closes it; nothing written means it started.

Standard library only, no turncheck import: it starts before every command, in a fresh
interpreter.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOPS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(option, value, 0, 0, 0)


def descendants(root: int) -> list[int]:
    """The pids below ``root`` in the process tree, read from ``/proc`` (none where there is
    no ``/proc``): children, their children, and so on."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _kill_below() -> None:
    """Kill every process below the guard (orphans are its children: it is their subreaper)."""
    for _ in range(50):
        pids = descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def _stopped(signum: int, _frame: object) -> None:
    _kill_below()
    os._exit(128 + signum)


def main(argv: list[str]) -> None:
    status_fd, command = int(argv[0]), argv[1:]
    parent = os.getppid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    for sig in STOPS:
        signal.signal(sig, _stopped)
    if os.getppid() != parent:  # turncheck died before the signal was armed
        os._exit(1)
    os.set_inheritable(status_fd, False)
    pid = os.fork()
    if pid == 0:
        for sig in STOPS:
            signal.signal(sig, signal.SIG_DFL)
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))  # the guard killed: the command too
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(status_fd, str(exc.errno or 0).encode())
        os._exit(127)
    os.close(status_fd)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the pipes are the command's: the guard holds no end of them
    os.dup2(null, 1)
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        if done == pid:
            break
    _kill_below()
    if os.WIFSIGNALED(status):
        if os.WTERMSIG(status) in STOPS:
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
