"""The domain of turncheck, pure and deterministic.

Events and turns, cost models, the projector core (every strategy), workload generators,
concurrency protocols, invariants and the durable log store. Nothing here imports the rest of
turncheck, reads a wall clock, or draws an unseeded random number.
"""
