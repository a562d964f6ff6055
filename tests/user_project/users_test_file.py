# A user's test file (saved by them as test_my_trim.py); tests/test_testing.py runs it with pytest.
from turncheck import fit_start, window_from_start


def keep_what_fits(history, budget, cost):
    """Keeps the newest events that fit the budget, cutting wherever that lands."""
    return window_from_start(history, budget, cost, fit_start(history, budget, cost))


def test_my_trimmer_never_orphans_a_result(check_projector):
    check_projector(keep_what_fits, checks=["orphanRes"])
