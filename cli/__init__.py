"""The ``turncheck`` command line: a thin typer layer over scenarios, engines and reports.

Each module registers its commands on the one app in :mod:`turncheck.cli.app`; that module also
owns the rule that no traceback reaches a user (usage, input and I/O errors: one line, exit 2).
"""
