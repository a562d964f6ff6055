"""The user's real async code under a controlled scheduler (``turncheck race``).

:mod:`.loop` is the event loop that asks who runs next (tasks, thread jobs, and whether time
passes while a job is in flight), :mod:`.schedule` the tokens and strategies, :mod:`.explore`
the search, the shrinking and the interleaving in words, :mod:`.guard` what keeps a test that
exits from passing, :mod:`.where` where a task waits, in words.
"""
