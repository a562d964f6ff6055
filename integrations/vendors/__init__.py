"""The vendor-protocol catalogue: the compaction protocols of real systems, one model per module.

Each module of this folder reproduces one public report — an issue, a pull request, a vendor's
documented procedure — as a small protocol model with ``variant=buggy`` (what shipped, or what the
docs allow) and other variants, each declared with its kind and its source
(:class:`turncheck.models.catalog.Variant`): ``upstream`` where a merged pull request or a release
ships it, ``proposed`` for a design merged nowhere (ours, or an open pull request). It registers
itself with :func:`turncheck.models.catalog.register_model` and a one-line description. ``buggy``
fails with the shortest counterexample in the report's words; what the other variants give is
what the catalogue page shows — an upstream fix may still fail (Spring AI's ``turn-snapped``).

Each module of this folder is a home of the model registry (:data:`turncheck.models.catalog.MODELS`,
which finds them by listing the folder): a lookup of one model imports its module alone — never
by ``turncheck --help`` — and a listing imports every module in name order, so adding a model is
adding one file named after it. Modules whose name starts with an underscore hold what several
models share and register nothing. Importing this package imports none of them.
"""
