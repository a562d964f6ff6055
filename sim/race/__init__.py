"""The user's real async code under a controlled scheduler (``turncheck race``).

:mod:`.loop` is the event loop that asks who runs next, :mod:`.schedule` the tokens and
strategies, :mod:`.explore` the search, the shrinking and the interleaving in words.
"""
