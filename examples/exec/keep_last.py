"""keep_last.mjs's rule in Python, as a ``messages:`` trimmer: keep the newest ``budget`` messages."""


def fn(messages, budget):
    return messages[-budget:] if budget > 0 else []
