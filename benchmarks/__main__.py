"""``python -m benchmarks TOPIC …`` from the repository root: ``turncheck bench TOPIC …``."""

import sys

from turncheck.cli.app import main

sys.exit(main(["bench", *sys.argv[1:]]))
