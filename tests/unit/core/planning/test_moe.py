"""Mixture-of-experts shapes, memory and speed, worked by hand from each model's config.json.

Sources:
- [MIXTRAL] Jiang et al. 2024, "Mixtral of Experts", arXiv:2401.04088: 47B parameters, 13B active
  per token; config.json: 32 layers, hidden 4096, 32 heads, 8 KV heads, intermediate 14336,
  num_local_experts 8, num_experts_per_tok 2, vocab 32000.
- [QWEN3] Qwen3-30B-A3B model card on the Hugging Face Hub: "30.5B in total and 3.3B activated";
  config.json: 48 layers, hidden 2048, 32 heads, 4 KV heads, head_dim 128, num_experts 128,
  num_experts_per_tok 8, moe_intermediate_size 768, vocab 151936.
- [GPT-OSS] OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card" (2025), Table 1: total 116.83B / 20.91B,
  active 5.13B / 3.61B (active excludes the input embedding); MXFP4 checkpoints of 60.8 GiB and
  12.8 GiB.
- [DSV3] DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", arXiv:2412.19437: 671B total, 37B
  activated per token (plus a 14B multi-token-prediction module not counted here).
"""

from __future__ import annotations

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.catalogue import load_catalogue
from gpu_companion.core.planning.estimate import (
    EstimateRequest,
    Precision,
    Task,
    decode_read_bytes,
    estimate_memory,
    estimate_throughput,
    experts_touched,
)
from gpu_companion.core.planning.model_shapes import get_model, model_from_config

MIXTRAL_CONFIG = {
    "architectures": ["MixtralForCausalLM"],
    "model_type": "mixtral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
}
DEEPSEEK_V3_CONFIG = {
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "moe_intermediate_size": 2048,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_experts_per_tok": 8,
    "first_k_dense_replace": 3,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "vocab_size": 129280,
    "tie_word_embeddings": False,
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}


def test_mixtral_counts_worked_by_hand() -> None:
    # Per layer: attention q,o 2 x 4096 x 4096 + k,v 2 x 4096 x 1024 = 41,943,040;
    # one expert 3 x 4096 x 14336 = 176,160,768, x 8 = 1,409,286,144; router 8 x 4096 = 32,768;
    # norms 8,192 -> 1,451,270,144 x 32 = 46,440,644,608; + embeddings 2 x 32000 x 4096 =
    # 262,144,000 + final norm 4,096 = 46,702,792,704 ([MIXTRAL]: 47B).
    # Active: minus 32 layers x 6 idle experts x 176,160,768 = 12,879,925,248 ([MIXTRAL]: 13B).
    m = get_model("mixtral-8x7b")
    assert m.is_moe and m.expert_params == 176_160_768
    assert m.params == 46_702_792_704
    assert m.active_params == 12_879_925_248
    assert model_from_config(MIXTRAL_CONFIG).params == m.params


def test_qwen3_30b_a3b_counts_worked_by_hand() -> None:
    # Per layer: attention 2048 x 4096 x 2 + 2048 x 512 x 2 = 18,874,368; one expert
    # 3 x 2048 x 768 = 4,718,592, x 128 = 603,979,776; router 262,144; norms 4,096
    # -> 623,120,384 x 48 = 29,909,778,432; + 2 x 151,936 x 2048 = 622,329,856 + 2,048
    # = 30,532,110,336 ([QWEN3]: 30.5B). Active: minus 48 x 120 x 4,718,592 = 3,353,020,416 (3.3B).
    m = get_model("qwen3-30b-a3b")
    assert m.params == 30_532_110_336
    assert m.active_params == 3_353_020_416


@pytest.mark.parametrize(
    ("key", "total", "active_without_input_embedding"),
    [("gpt-oss-120b", 116.83e9, 5.13e9), ("gpt-oss-20b", 20.91e9, 3.61e9)],
)
def test_gpt_oss_counts_match_the_model_card(
    key: str, total: float, active_without_input_embedding: float
) -> None:
    m = get_model(key)
    assert m.params == pytest.approx(total, rel=0.001)
    assert m.active_params - m.vocab * m.hidden == pytest.approx(
        active_without_input_embedding, rel=0.002
    )


@pytest.mark.parametrize(("key", "gib"), [("gpt-oss-120b", 60.8), ("gpt-oss-20b", 12.8)])
def test_gpt_oss_serves_in_mxfp4_by_default_at_the_checkpoint_size(key: str, gib: float) -> None:
    # [GPT-OSS]: experts in MXFP4 (4.25 bits), attention, router and embeddings in bf16.
    mem = estimate_memory(EstimateRequest(get_model(key)))
    assert mem.precision is Precision.MXFP4
    assert mem.line("weights").gib == pytest.approx(gib, rel=0.005)
    assert "expert params × 4.25 bits" in mem.line("weights").formula


def test_deepseek_v3_from_config_matches_the_preset_and_the_report() -> None:
    m = model_from_config(DEEPSEEK_V3_CONFIG)
    preset = get_model("deepseek-v3")
    assert m == preset.__class__(**{**preset.__dict__, "name": m.name})
    assert m.params == pytest.approx(671e9, rel=0.002)  # [DSV3] 671B
    assert m.active_params == pytest.approx(37e9, rel=0.02)  # [DSV3] 37B
    assert m.is_mla and m.shipped_as == "fp8"
    # MLA caches the 512-value latent plus the 64-value RoPE key per layer and token:
    # 61 x 576 x 2 bytes = 70,272 bytes per token, against 2 x 61 x 128 x 128 x 2 = 3,997,696
    # for plain multi-head attention of the same shape.
    mem = estimate_memory(EstimateRequest(m, context_tokens=1000))
    assert mem.line("kv_cache").bytes == 61 * 576 * 2 * 1000
    assert mem.precision is Precision.FP8


def test_mixtral_memory_holds_every_expert() -> None:
    # bf16: 46,702,792,704 x 2 = 93,405,585,408 bytes (86.99 GiB), not the 13B a token uses.
    # int4: 46,439,333,888 linear x 4.25 / 8 = 24,670,896,128 + 263,458,816 x 2 = 526,917,632
    # -> 25,197,813,760 bytes (23.47 GiB).
    m = get_model("mixtral-8x7b")
    bf16 = estimate_memory(EstimateRequest(m))
    assert bf16.line("weights").bytes == 93_405_585_408
    int4 = estimate_memory(EstimateRequest(m, precision=Precision.INT4))
    assert int4.line("weights").bytes == 25_197_813_760
    assert int4.line("weights").gib == pytest.approx(23.47, abs=0.01)


def test_mixtral_decode_speed_follows_the_active_parameters() -> None:
    # H100 SXM, bf16, 4,096 tokens, 1 sequence: a step reads 2 of 8 experts per layer:
    # 93,405,585,408 - 32 x 6 x 176,160,768 x 2 = 25,759,850,496 bytes (= 2 x active) + KV
    # 2 x 32 x 8 x 128 x 4096 x 2 = 536,870,912 -> 3,350e9 / 26,296,721,408 = 127.4 tokens/s,
    # where a dense model of the same 46.7B would manage 3,350e9 / 93.94e9 = 35.7.
    card = load_catalogue().get("h100-sxm")
    mem = estimate_memory(EstimateRequest(get_model("mixtral-8x7b")))
    read, text = decode_read_bytes(mem, 1)
    assert read == 25_759_850_496 == 2 * mem.flop_params
    assert "2.0 of 8 experts per layer" in text
    tp = estimate_throughput(mem, card)
    assert tp.decode_tokens_per_s == pytest.approx(3350e9 / 26_296_721_408)
    assert tp.decode_tokens_per_s == pytest.approx(127.4, abs=0.05)


def test_qwen3_moe_decode_and_training_speed() -> None:
    # H100 SXM, bf16, batch 1: 61,064,220,672 - 48 x 120 x 4,718,592 x 2 = 6,706,040,832 bytes
    # (2 x 3,353,020,416 active) + KV 2 x 48 x 4 x 128 x 4096 x 2 = 402,653,184
    # -> 3,350e9 / 7,108,694,016 = 471.3 tokens/s.
    card = load_catalogue().get("h100-sxm")
    m = get_model("qwen3-30b-a3b")
    mem = estimate_memory(EstimateRequest(m))
    assert estimate_throughput(mem, card).decode_tokens_per_s == pytest.approx(
        3350e9 / 7_108_694_016
    )
    # Training FLOPs use the active parameters: 989.5e12 x 0.4 / (8 x 3,353,020,416) with
    # checkpointing on by default (6N + 2N), LoRA 4N + 2N.
    full = estimate_memory(EstimateRequest(m, task=Task.FULL_BF16))
    assert estimate_throughput(full, card).train_tokens_per_s == pytest.approx(
        989.5e12 * 0.4 / (8 * 3_353_020_416)
    )


def test_experts_touched_by_a_batch() -> None:
    # 128 experts, 8 per token: E x (1 - (1 - k/E)^B); 1 token reads 8, 50 tokens 122.9.
    m = get_model("qwen3-30b-a3b")
    assert experts_touched(m, 1) == pytest.approx(8)
    assert experts_touched(m, 50) == pytest.approx(128 * (1 - (1 - 8 / 128) ** 50))
    assert experts_touched(m, 50) == pytest.approx(122.9, abs=0.05)
    assert experts_touched(get_model("llama-3.1-8b"), 50) == 1.0


def test_lora_on_all_linear_layers_adapts_every_expert() -> None:
    # Mixtral r=16: attention per layer 8192 + 5120 + 5120 + 8192 = 26,624; experts
    # 8 x 3 x (4096 + 14336) = 442,368 -> 468,992 x 32 layers x 16 = 240,123,904.
    mem = estimate_memory(EstimateRequest(get_model("mixtral-8x7b"), task=Task.LORA))
    assert mem.trainable_params == 240_123_904
    attention = EstimateRequest(get_model("mixtral-8x7b"), task=Task.LORA)
    assert "8 experts" in estimate_memory(attention).line("trainable").formula


def test_a_config_with_experts_but_no_routing_is_refused() -> None:
    with pytest.raises(ValidationError, match="num_experts_per_tok"):
        model_from_config({**MIXTRAL_CONFIG, "num_experts_per_tok": None})
    with pytest.raises(ValidationError, match="experts per token"):
        model_from_config({**MIXTRAL_CONFIG, "num_experts_per_tok": 9})


def test_gpt_oss_caches_only_the_window_in_its_sliding_layers() -> None:
    # [GPT-OSS]: attention alternates full context and a 128-token banded window. 120b at 4,096
    # tokens: per layer and token 2 x 8 KV heads x 64 x 2 bytes = 2,048 bytes;
    # 18 full layers x 2,048 x 4,096 = 150,994,944 + 18 window layers x 2,048 x 128 = 4,718,592.
    mem = estimate_memory(EstimateRequest(get_model("gpt-oss-120b")))
    assert mem.line("kv_cache").bytes == 150_994_944 + 4_718_592
    assert "18 sliding-window layers × 8 KV heads × 64 head dim × 128 tokens" in (
        mem.line("kv_cache").formula
    )
    config = {
        "model_type": "gpt_oss",
        "hidden_size": 2880,
        "intermediate_size": 2880,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "num_hidden_layers": 24,
        "num_local_experts": 32,
        "num_experts_per_tok": 4,
        "vocab_size": 201088,
        "attention_bias": True,
        "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 12,
        "quantization_config": {"quant_method": "mxfp4"},
    }
    m = model_from_config(config, name="gpt-oss-20b")
    assert m == get_model("gpt-oss-20b")
