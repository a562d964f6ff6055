"""A throw-away PostgreSQL server for tests, the ``real-locking`` scenario and the benchmark.

``initdb`` + ``pg_ctl`` from the Debian ``postgresql`` package, run as the ``postgres`` user
(``runuser``) when we are root, on a Unix socket in a fresh temporary folder and no TCP port at
all (``listen_addresses=''``), with ``fsync=off`` (the data is thrown away). :func:`throwaway_server`
yields its DSN and always stops the server and removes the folder. :func:`unavailable_reason`
says in one line why a server cannot be started here (no binaries, no ``postgres`` user), so a
test can skip visibly; ``.ci/setup-debian.sh`` installs the package.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from turncheck.models.errors import TurncheckError
from turncheck.models.extras import install_hint


class PostgresUnavailable(TurncheckError):
    """No PostgreSQL server could be started here (the reason is the message)."""


def _bin_dir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).parent
    return None


def unavailable_reason() -> str | None:
    """None when a throw-away server can be started and used, else why not."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return f"the PostgreSQL driver is not installed: {install_hint('stores')}"
    if _bin_dir() is None:
        return "PostgreSQL binaries (initdb, pg_ctl) not found; apt-get install postgresql (CI: .ci/setup-debian.sh)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing"
    return None


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def throwaway_server(port: int | None = None) -> Iterator[str]:
    """Start a fresh server; yield its DSN; stop it and delete its files on exit. With ``port``
    it also listens on ``127.0.0.1:port`` (for a client without Unix sockets, e.g. JDBC), and
    the DSN names the port."""
    reason = unavailable_reason()
    if reason is not None:
        raise PostgresUnavailable(reason)
    bin_dir = _bin_dir()
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="turncheck-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        for path in (root, sock):
            os.chown(path, user.pw_uid, user.pw_gid)
    started = False

    def pg(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = _as_server_user([str(bin_dir / tool), "-D", str(data), *args])
        return subprocess.run(command, capture_output=True, text=True, check=False)

    try:
        run = pg("initdb", *"-A trust -U postgres --no-sync -E UTF8 --locale=C".split())
        if run.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {run.stderr.strip().splitlines()[-1:]}")
        listen = "''" if port is None else f"127.0.0.1 -p {port}"
        options = f"-k {sock} -c listen_addresses={listen} -c fsync=off -c synchronous_commit=off -c max_connections=60"
        run = pg("pg_ctl", "-o", options, "-l", str(root / "log"), "-w", "-t", "30", "start")
        if run.returncode != 0:
            log = (root / "log").read_text(errors="replace") if (root / "log").exists() else run.stderr
            raise PostgresUnavailable(f"pg_ctl start failed: {log.strip().splitlines()[-1:]}")
        started = True
        yield f"host={sock} dbname=postgres user=postgres" + ("" if port is None else f" port={port}")
    finally:
        if started:
            pg("pg_ctl", "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def restart(dsn: str) -> None:
    """Restart the server behind a throw-away DSN (``stress`` fault: connection loss)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        raise PostgresUnavailable("PostgreSQL binaries (initdb, pg_ctl) not found")
    sock = dsn.split("host=", 1)[1].split()[0]
    data = Path(sock).parent / "data"
    log = Path(sock).parent / "log"
    subprocess.run(  # the new postmaster keeps whatever it inherits open: no pipes, a log file
        _as_server_user(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-m", "fast", "-w", "restart"]
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
