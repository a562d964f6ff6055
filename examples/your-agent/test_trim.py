from trim import keep_recent, keep_recent_whole_exchanges

from turncheck import message_trimmer


def test_keep_recent_never_orphans_a_result(check_projector):
    check_projector(message_trimmer(keep_recent), checks=["orphanRes"])


def test_the_fix_never_orphans_a_result(check_projector):
    check_projector(message_trimmer(keep_recent_whole_exchanges), checks=["orphanRes"])
