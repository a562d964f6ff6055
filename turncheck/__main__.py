"""``python -m turncheck`` and the ``turncheck`` script: the command line, Ctrl-C included.

The command line's modules take a second or more to import on a loaded machine; a Ctrl-C in
that second must end like one during a run — ``turncheck: interrupted``, exit 130 — not with a
traceback of the import. So the script's entry point is :func:`run`, which imports the app
itself. The race command's result is final once printed: threads the user's test started and
left running (a connection a fault kept from being closed) do not keep the process alive.
"""

import os
import sys


def run() -> int:
    """Import the command line and run it; Ctrl-C during the import is an interrupted run."""
    try:
        from turncheck.cli.app import main
    except KeyboardInterrupt:
        print("turncheck: interrupted", file=sys.stderr, flush=True)
        return 130
    status = main()
    race = sys.modules.get("turncheck.cli.race")
    left = list(getattr(race, "LEFT_RUNNING", ()))
    if left:  # the user's test left threads running (a connection never closed after a fault)
        print(f"turncheck: {len(left)} thread{'s' if len(left) != 1 else ''} the test started still "
              f"ran after its last schedule ({', '.join(left[:3])}{', …' if len(left) > 3 else ''}); "
              "exiting without waiting for them", file=sys.stderr)  # fmt: skip
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


if __name__ == "__main__":
    sys.exit(run())
