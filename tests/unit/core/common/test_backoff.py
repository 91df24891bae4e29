from gpu_companion.core.common.backoff import Backoff
from gpu_companion.core.transfers.engine import RetryPolicy


def test_doubles_from_the_first_wait_and_stops_at_the_cap():
    b = Backoff(initial_s=1.5, max_s=10)
    assert [b.delay(n) for n in range(1, 7)] == [1.5, 3.0, 6.0, 10.0, 10.0, 10.0]
    assert b.delay(0) == 1.5  # before the first attempt: the first wait


def test_transfer_retries_use_the_same_backoff():
    policy = RetryPolicy(attempts=4, base_delay_s=2, max_delay_s=5)
    assert [policy.delay(n) for n in (1, 2, 3)] == [2.0, 4.0, 5.0]
