from gpu_companion.core.autorelease.away import Reachability, SleepDetector


def test_a_wall_clock_jump_without_monotonic_time_is_a_sleep():
    wall, mono = [1000.0], [50.0]
    det = SleepDetector(lambda: wall[0], lambda: mono[0], threshold_s=120)
    assert det.check() is None
    wall[0] += 30
    mono[0] += 30
    assert det.check() is None
    wall[0] += 5 * 3600
    mono[0] += 2
    assert det.check() == (1030.0, 1030.0 + 5 * 3600)


def test_unreachable_is_told_once_per_outage_and_only_while_billed():
    r = Reachability(after_s=120)
    r.on_status("a", False, 0)
    r.on_status("b", False, 0)
    assert r.due(119, {"a", "b"}) == []
    assert r.due(120, {"a"}) == [("a", 0)]
    assert r.due(500, {"a"}) == []
    r.on_status("a", True, 600)
    r.on_status("a", False, 700)
    assert r.due(820, {"a"}) == [("a", 700)]
