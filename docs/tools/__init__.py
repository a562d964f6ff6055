"""The documentation's tooling, kept in the repository and out of the wheel.

Generated figure blocks (:mod:`docs.tools.doc_figures`), the scan for figures typed by hand
(:mod:`docs.tools.hand_figures`), the log's byte layout (:mod:`docs.tools.log_format_doc`) and
the CLI reference (:mod:`docs.tools.reference`). Run from the repository root
(``python -m docs.tools.doc_figures …``); tests import them from there.
"""
