"""Benchmarks: one module per topic, each registering ``run(scale) -> Iterable[str]``.

``turncheck bench TOPIC`` reads the topics from :data:`turncheck.bench.benchmark.BENCHMARKS`;
this is the one place the built-in topic modules are imported (so they register). A new topic is
one new file plus its line here (or, outside turncheck, a module registering with
``turncheck.register_bench``). Benchmarks print figures and ratios measured in one run; nothing
here is a timed test.
"""

from turncheck.bench import check, peers, projector, store, stress, testbench, trigger  # noqa: F401
