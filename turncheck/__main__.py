"""``python -m turncheck``: the same command line as the ``turncheck`` script."""

import sys

from turncheck.cli.app import main

if __name__ == "__main__":
    sys.exit(main())
