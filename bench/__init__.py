"""Benchmarks: one module per topic, each with ``run(scale) -> Iterable[str]``.

``turncheck bench TOPIC`` discovers the modules here; a new topic is one new file. Benchmarks
print figures and ratios measured in one run; nothing here is a timed test.
"""
