"""The library-backed stress stores, a home of the store registry
(:data:`turncheck.sim.stress.stores.STORES`, imported by name after :mod:`turncheck.sim.stress`):
importing it imports each module below, which registers its store, in this order."""

from turncheck.integrations.stores import agents_sqlite, langgraph_sqlite, adk_database  # noqa: F401, I001
