"""``python -m turncheck`` and the ``turncheck`` script: the command line, Ctrl-C included.

The command line's modules take a second or more to import on a loaded machine; a Ctrl-C in
that second must end like one during a run — ``turncheck: interrupted``, exit 130 — not with a
traceback of the import. So the script's entry point is :func:`run`, which imports the app
itself.
"""

import sys


def run() -> int:
    """Import the command line and run it; Ctrl-C during the import is an interrupted run."""
    try:
        from turncheck.cli.app import main
    except KeyboardInterrupt:
        print("turncheck: interrupted", file=sys.stderr, flush=True)
        return 130
    return main()


if __name__ == "__main__":
    sys.exit(run())
