"""``python -m turncheck`` and the ``turncheck`` script: the command line, Ctrl-C included.

The command line's modules take a second or more to import on a loaded machine; a Ctrl-C in
that second must end like one during a run — ``turncheck: interrupted``, exit 130 — not with a
traceback of the import. So the script's entry point is :func:`run`, which imports the app
itself.
"""

import sys


def run() -> int:
    """Import the command line and run it; Ctrl-C during the import is an interrupted run.

    While the modules import, SIGINT only marks the run as interrupted: a ``KeyboardInterrupt``
    raised inside an import can be swallowed there (a weakref callback, a ``__del__``, a bare
    ``except`` of some library's optional import), and the command then ran to its end — a
    SIGINT-ed ``demo --scale full`` went on for minutes on a loaded machine. The mark is read as
    soon as the import is done.
    """
    import signal

    pressed: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    marking = previous is signal.default_int_handler  # an ignored SIGINT stays ignored
    if marking:
        signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        from turncheck.cli.app import main
    except KeyboardInterrupt:
        pressed.append(signal.SIGINT)
    finally:
        if marking:
            signal.signal(signal.SIGINT, previous)
    if pressed:
        print("turncheck: interrupted", file=sys.stderr, flush=True)
        return 130
    return main()


if __name__ == "__main__":
    sys.exit(run())
