"""Serving concurrency worked by hand: users that fit in vLLM's KV cache pool and the tokens/s each
gets. [VLLM] vLLM engine arguments: `--gpu-memory-utilization` "the fraction of GPU memory to be
used for the model executor ... default 0.9"; the KV cache takes what the weights and the profiled
activations leave (https://docs.vllm.ai/en/latest/configuration/engine_args.html)."""

from __future__ import annotations

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.catalogue import load_catalogue
from gpu_companion.core.planning.estimate import GIB, EstimateRequest, Task
from gpu_companion.core.planning.model_shapes import get_model
from gpu_companion.core.planning.serving import cards_meeting, estimate_serving

H100 = load_catalogue().get("h100-sxm")


def test_users_that_fit_and_tokens_per_user_on_one_card() -> None:
    # Llama 3.1 8B bf16, 4,096 tokens per user, H100 SXM (80 GB):
    # pool = 0.9 x 80 GiB - 16,060,522,496 weights - 453,497,856 activation peak (the 4,096-token
    # prompt in one chunk: 4,096 x (3 x 14,336 + 3 x 4,096) x 2 + 128,256 x 4) - 0.5 GiB
    #      = 77,309,411,328 - 16,060,522,496 - 453,497,856 - 536,870,912 = 60,258,520,064 bytes;
    # one user's KV: 2 x 32 x 8 x 128 x 4,096 x 2 = 536,870,912 -> 112 users.
    # 50 users: step = (16,060,522,496 + 50 x 536,870,912) / 3,350e9 = 12.81 ms (memory-bound;
    # compute 2 x 8.03e9 x 50 / (989.5e12 x 0.5) = 1.6 ms) -> 78.1 tokens/s each, 3,904 in total.
    s = estimate_serving(EstimateRequest(get_model("llama-3.1-8b")), H100, 50)
    assert s.pool_bytes == int(0.9 * 80 * GIB) - 16_060_522_496 - 453_497_856 - 536_870_912
    assert s.pool_bytes == 60_258_520_064
    assert s.kv_per_user_bytes == 536_870_912
    assert s.users_fit == 112 and s.fits
    step = (16_060_522_496 + 50 * 536_870_912) / 3350e9
    assert s.step_seconds == pytest.approx(step)
    assert s.per_user_tokens_s == pytest.approx(1 / step) == pytest.approx(78.1, abs=0.05)
    assert s.total_tokens_s == pytest.approx(50 / step)
    assert "= 112 users" in s.pool_formula and "(memory-bound)" in s.step_formula
    assert s.verdicts[0].ok and "room for 112" in s.verdicts[0].text


def test_the_hundred_tokens_fifty_users_question() -> None:
    # "100 tokens/s for 50 users" read as a total: which cards hold 50 users at 4,096 tokens of
    # Llama 3.1 8B and reach the total; the cheapest come first.
    req = EstimateRequest(get_model("llama-3.1-8b"))
    found = cards_meeting(req, load_catalogue().cards, 50, 1000)
    ids = [s.gpu.id for s in found]
    # 24 GB: (0.9 x 24 GiB - 16.06 GB - 0.45 GB - 0.5 GiB) / 0.5 GiB = 11 users, not 50
    assert ids and "rtx-4090" not in ids
    assert all(s.users_fit >= 50 and s.total_tokens_s >= 1000 for s in found)
    prices = [s.gpu.price.low + s.gpu.price.high for s in found]
    assert prices == sorted(prices)
    small = estimate_serving(req, load_catalogue().get("rtx-4090"), 50, target_tokens_s=1000)
    assert small.users_fit == 11 and not small.fits
    assert not small.verdicts[0].ok and "do not fit" in small.verdicts[0].text
    assert not small.verdicts[-1].ok and small.verdicts[-1].text.startswith("Misses")


def test_moe_serving_reads_the_experts_the_batch_touches() -> None:
    # Qwen3 30B-A3B: 50 tokens reach 122.9 of 128 experts per layer, so a batch reads nearly the
    # whole model while one user reads only 8 experts' worth.
    req = EstimateRequest(get_model("qwen3-30b-a3b"))
    one, fifty = estimate_serving(req, H100, 1), estimate_serving(req, H100, 50)
    assert "122.9 of 128 experts" in fifty.step_formula
    assert "8.0 of 128 experts" in one.step_formula
    assert one.per_user_tokens_s > 4 * fifty.per_user_tokens_s


def test_tensor_parallel_serving_pools_every_gpu() -> None:
    # Llama 3.1 70B on 4 x H100: weights and KV heads split 4 ways; one GPU cannot hold it.
    model = get_model("llama-3.1-70b")
    assert estimate_serving(EstimateRequest(model), H100, 1).users_fit == 0
    four = estimate_serving(EstimateRequest(model, gpus=4), H100, 50)
    assert four.fits and four.users_fit > 100
    assert "fit in 4 × H100 SXM's KV cache" in four.verdicts[0].text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"users": 0}, "number of users"),
        ({"utilization": 1.5}, "utilization must be"),
        ({"target_tokens_s": 0}, "above 0"),
    ],
)
def test_bad_serving_input(kwargs: dict[str, float], message: str) -> None:
    args: dict[str, float] = {"users": 10, **kwargs}
    users = int(args.pop("users"))
    with pytest.raises(ValidationError, match=message):
        estimate_serving(EstimateRequest(get_model("llama-3.1-8b")), H100, users, **args)
    with pytest.raises(ValidationError, match="inference only"):
        estimate_serving(EstimateRequest(get_model("llama-3.1-8b"), task=Task.LORA), H100, 1)
