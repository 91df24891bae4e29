"""Estimator formulas, each checked on a hand-worked example and against published figures.

Sources cited below:
- [HF-L31] Hugging Face blog "Llama 3.1 - 405B, 70B & 8B with multilinguality and long context",
  section "Inference Memory Requirements", https://huggingface.co/blog/llama31 (KV cache table).
- [NV-INF] NVIDIA technical blog "Mastering LLM Techniques: Inference Optimization",
  https://developer.nvidia.com/blog/mastering-llm-techniques-inference-optimization/ (KV cache of
  Llama 2 7B: 1 x 4096 x 2 x 32 x 4096 x 2 bytes, "about 2 GB").
- [QLORA] Dettmers et al. 2023, "QLoRA: Efficient Finetuning of Quantized LLMs", arXiv:2305.14314:
  "finetune a 65B parameter model on a single 48GB GPU"; setup: LoRA r=64 on all linear layers,
  gradient checkpointing, paged AdamW; its qlora.py casts the LoRA modules to bf16.
- [ZERO] Rajbhandari et al. 2020, "ZeRO", arXiv:1910.02054: mixed-precision Adam holds 16 bytes per
  parameter (2 fp16 weights + 2 fp16 gradients + 12 fp32 master, momentum, variance).
- [LLAMA] Touvron et al. 2023, "LLaMA", arXiv:2302.13971, Table 2: the 65B model has 65.2B params.
- Hub model pages (safetensors parameter counts) for the presets; PEFT's print_trainable_parameters
  output as widely posted for Llama 3 8B (r=16, all linear: 41,943,040) and Llama 2 7B (r=8, q/v:
  4,194,304).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.catalogue import load_catalogue
from gpu_companion.core.planning.estimate import (
    GIB,
    EstimateRequest,
    LoraTargets,
    Precision,
    Task,
    checkpointing_suggestion,
    estimate,
    estimate_memory,
    estimate_throughput,
    fit_verdict,
    job_hours,
    latency_verdict,
)
from gpu_companion.core.planning.model_shapes import MODEL_PRESETS, get_model, model_from_config

GB = 10**9


def test_parameter_counts_match_the_published_exact_counts() -> None:
    # Llama 3.1 8B, per layer: q,o 2 x 4096 x 4096 + k,v 2 x 4096 x 1024 = 41,943,040;
    # MLP 3 x 4096 x 14336 = 176,160,768; norms 2 x 4096 -> 218,112,000 x 32 = 6,979,584,000;
    # embeddings + lm_head 2 x 128,256 x 4096 = 1,050,673,152; final norm 4096 -> 8,030,261,248.
    assert get_model("llama-3.1-8b").params == 8_030_261_248
    assert get_model("Llama 2 7B").params == 6_738_415_616
    assert get_model("mistral-7b").params == 7_241_732_096
    assert get_model("qwen2.5-7b").params == 7_615_616_512  # Hub: 7.61B
    assert get_model("qwen2.5-0.5b").params == 494_032_768  # tied embeddings; Hub: 494M


@pytest.mark.parametrize(
    ("key", "published_billions"),
    [
        ("qwen2.5-1.5b", 1.54),
        ("qwen2.5-3b", 3.09),
        ("qwen2.5-14b", 14.8),
        ("qwen2.5-32b", 32.8),
        ("qwen2.5-72b", 72.7),
        ("llama-3.1-70b", 70.6),
        ("llama-65b", 65.2),  # [LLAMA] Table 2
    ],
)
def test_preset_sizes_match_the_model_pages(key: str, published_billions: float) -> None:
    assert MODEL_PRESETS[key].params / 1e9 == pytest.approx(published_billions, rel=0.01)


def test_seven_b_at_fp16_is_about_14_gb_of_weights() -> None:
    # Rule of thumb "7B in fp16 needs ~14 GB": 2 bytes per parameter.
    # Mistral 7B: 7,241,732,096 x 2 = 14,483,464,192 bytes = 14.5 GB.
    # Llama 2 7B: 6,738,415,616 x 2 = 13,476,831,232 bytes = 13.5 GB.
    for key in ("mistral-7b", "llama-2-7b"):
        req = EstimateRequest(get_model(key), precision=Precision.FP16)
        weights = estimate_memory(req).line("weights")
        assert weights.bytes == get_model(key).params * 2
        assert 13 * GB <= weights.bytes <= 15 * GB
        assert "params × 2 bytes" in weights.formula


def test_seven_b_int4_inference_needs_5_to_6_gb_in_total() -> None:
    # Rule of thumb "a 4-bit 7B model runs in 5-6 GB". Mistral 7B, transformers, a 3,072-token
    # prompt and a 1,024-token answer (4,096 tokens), 1 user:
    # weights: 6,979,321,856 linear x 4.25 bits / 8 = 3,707,764,736
    #          + (262,144,000 embeddings + 266,240 norms) x 2 bytes = 524,820,480 -> 4,232,585,216
    # KV cache: 2 x 32 layers x 8 KV heads x 128 x 4,096 tokens x 2 bytes = 536,870,912
    # prefill peak: 3,072 x (3 x 14,336 + 3 x 4,096) x 2 + 32,000 x 4 = 339,866,624
    # CUDA context 536,870,912; allocator reserve ceil(5% x 5,109,322,752) = 255,466,138
    # total: 5,901,659,802 bytes = 5.90 GB (5.50 GiB)
    req = EstimateRequest(
        get_model("mistral-7b"), precision=Precision.INT4, prompt_tokens=3072, output_tokens=1024
    )
    mem = estimate_memory(req)
    assert req.context == 4096
    assert mem.line("weights").bytes == 4_232_585_216
    assert mem.line("kv_cache").bytes == 536_870_912
    assert mem.line("activations").bytes == 339_866_624
    assert mem.line("cuda_context").bytes == 536_870_912
    assert mem.line("allocator_reserve").bytes == 255_466_138
    assert mem.total_bytes == 5_901_659_802
    assert 5 * GB <= mem.total_bytes <= 6 * GB
    # --context alone is the total, and all of it is sized as the prompt (the worst case).
    whole = estimate_memory(
        replace(req, prompt_tokens=None, output_tokens=None, context_tokens=4096)
    )
    assert whole.line("kv_cache") == mem.line("kv_cache")
    assert whole.line("activations").bytes == 4096 * 55_296 * 2 + 128_000


def test_kv_cache_of_llama31_8b_at_8k_in_bf16_is_one_gib() -> None:
    # 2 x 32 layers x 8 KV heads x 128 head dim x 8,192 tokens x 2 bytes = 1,073,741,824 = 1 GiB.
    mem = estimate_memory(EstimateRequest(get_model("llama-3.1-8b"), context_tokens=8192))
    kv = mem.line("kv_cache")
    assert kv.bytes == GIB
    assert kv.formula == (
        "2 × 32 layers × 8 KV heads × 128 head dim × 8,192 tokens × 1 seq × 2 bytes = 1.00 GiB"
    )


@pytest.mark.parametrize(
    ("key", "tokens", "published_gib"),
    [
        # [HF-L31] table, fp16 KV cache, "GB" there is GiB of 1,000-token "k":
        ("llama-3.1-8b", 16_000, 1.95),  # 16,000 x 131,072 bytes = 1.953 GiB
        ("llama-3.1-8b", 128_000, 15.62),  # 128,000 x 131,072 bytes = 15.625 GiB
        ("llama-3.1-70b", 128_000, 39.06),  # 2 x 80 x 8 x 128 x 2 = 327,680 bytes per token
    ],
)
def test_kv_cache_matches_the_hugging_face_llama31_table(
    key: str, tokens: int, published_gib: float
) -> None:
    mem = estimate_memory(EstimateRequest(get_model(key), context_tokens=tokens))
    assert mem.line("kv_cache").gib == pytest.approx(published_gib, abs=0.01)


def test_kv_cache_of_llama2_7b_matches_nvidias_example() -> None:
    # [NV-INF]: 1 x 4096 x 2 x 32 x 4096 x 2 bytes "~2 GB" (multi-head: 32 KV heads x 128 = 4096).
    mem = estimate_memory(EstimateRequest(get_model("llama-2-7b"), context_tokens=4096))
    assert mem.line("kv_cache").bytes == 1 * 4096 * 2 * 32 * 4096 * 2 == 2 * GIB


def test_kv_cache_grows_with_concurrent_users() -> None:
    one = estimate_memory(EstimateRequest(get_model("qwen2.5-7b"), context_tokens=4096))
    eight = estimate_memory(EstimateRequest(get_model("qwen2.5-7b"), context_tokens=4096, batch=8))
    assert eight.line("kv_cache").bytes == 8 * one.line("kv_cache").bytes
    assert eight.line("weights") == one.line("weights")


def test_qlora_65b_fits_a_48_gb_card_as_in_the_paper() -> None:
    # [QLORA] setup: LLaMA 65B, NF4 base, LoRA r=64 on all linear layers in bf16, checkpointing,
    # batch 1 x 512 tokens.
    # adapters: per layer 64 x (4 x (8192 + 8192) + 3 x (8192 + 22016)) = 64 x 156,160 = 9,994,240
    #           x 80 layers = 799,539,200 params; x 2 bytes = 1.49 GiB, gradients the same,
    #           Adam m and v in fp32: x 8 bytes = 5.96 GiB
    # base: 64,760,053,760 linear x 4.25 / 8 + 525,606,912 x 2 = 33.02 GiB
    req = EstimateRequest(
        get_model("llama-65b"),
        task=Task.QLORA_4BIT,
        context_tokens=512,
        lora_rank=64,
        gradient_checkpointing=True,
        adapter_precision=Precision.BF16,
    )
    mem = estimate_memory(req)
    assert mem.trainable_params == 799_539_200
    assert mem.line("optimizer").bytes == 799_539_200 * 8
    assert mem.line("weights").gib == pytest.approx(33.02, abs=0.01)
    a6000 = load_catalogue().get("rtx-a6000")
    assert mem.fits(a6000)
    assert 40 < mem.total_gib < 48
    assert fit_verdict(mem, a6000).ok


def test_lora_adapter_counts_match_peft() -> None:
    # Llama 3 8B, r=16 on q,k,v,o,gate,up,down: in+out per layer = 8192 + 5120 + 5120 + 8192
    # + 3 x 18,432 = 81,920; x 16 x 32 layers = 41,943,040 (PEFT: "trainable params: 41,943,040").
    mem = estimate_memory(
        EstimateRequest(get_model("llama-3.1-8b"), task=Task.LORA, context_tokens=512)
    )
    assert mem.trainable_params == 41_943_040
    # fp32 adapters (PEFT default): weights 4 + gradients 4 + Adam m, v 8 bytes.
    assert mem.line("trainable").bytes == 41_943_040 * 4
    assert mem.line("gradients").bytes == 41_943_040 * 4
    assert mem.line("optimizer").bytes == 41_943_040 * 8
    # Llama 2 7B, r=8 on q and v (the LoRA paper's choice): 32 x 8 x (8192 + 8192) = 4,194,304.
    qv = EstimateRequest(
        get_model("llama-2-7b"), task=Task.LORA, lora_rank=8, lora_targets=LoraTargets.QV
    )
    assert estimate_memory(qv).trainable_params == 4_194_304


def test_full_fine_tune_in_mixed_precision_holds_16_bytes_per_parameter() -> None:
    # [ZERO]: 2 (bf16 weights) + 2 (gradients) + 12 (fp32 master, m, v) = 16 bytes per parameter.
    n = get_model("qwen2.5-0.5b").params  # 494,032,768
    mixed = estimate_memory(EstimateRequest(get_model("qwen2.5-0.5b"), task=Task.FULL_MIXED))
    keys = ("weights", "trainable", "gradients", "optimizer")
    assert sum(mixed.line(k).bytes for k in keys) == 16 * n == 7_904_524_288
    # Pure bf16 Adam: 2 + 2 + (2 + 2) = 8 bytes per parameter.
    pure = estimate_memory(EstimateRequest(get_model("qwen2.5-0.5b"), task=Task.FULL_BF16))
    assert sum(pure.line(k).bytes for k in keys) == 8 * n


def test_training_activations_follow_the_stated_formula() -> None:
    # Qwen2.5 0.5B, 512 tokens: h = 896, q = 14 x 64 = 896, kv = 2 x 64 = 128, i = 4,864;
    # 4h + 2q + 2kv + 4i per layer and token (see ASSUMPTIONS):
    # per layer and token: 3,584 + 1,792 + 256 + 19,456 = 25,088 values of 2 bytes
    # no checkpointing: 24 layers x 512 x 25,088 x 2 = 616,562,688
    # logits: 512 x 151,936 x (2 + 4) = 466,747,392 -> 1,083,310,080
    m = get_model("qwen2.5-0.5b")
    req = EstimateRequest(m, task=Task.LORA, context_tokens=512, gradient_checkpointing=False)
    assert estimate_memory(req).line("activations").bytes == 1_083_310_080
    # checkpointing: 24 x 512 x 896 x 2 = 22,020,096 + one layer 512 x 25,088 x 2 = 25,690,112
    # + logits 466,747,392 = 514,457,600
    ckpt = EstimateRequest(m, task=Task.LORA, context_tokens=512, gradient_checkpointing=True)
    assert estimate_memory(ckpt).line("activations").bytes == 514_457_600


def test_every_line_shows_its_arithmetic_with_the_result() -> None:
    for task in Task:
        req = EstimateRequest(get_model("qwen2.5-1.5b"), task=task, context_tokens=1024)
        mem = estimate_memory(req)
        for line in mem.lines:
            assert "×" in line.formula or "params" in line.formula, line
            if line.bytes:
                assert line.formula.endswith(f"= {line.bytes / GIB:,.2f} GiB"), line.formula
        keys = {line.key for line in mem.lines}
        assert keys >= {"weights", "activations", "cuda_context", "allocator_reserve"}
        assert ("kv_cache" in {line.key for line in mem.lines}) == (task is Task.INFERENCE)


def test_decode_bound_and_prefill_time_on_a_card() -> None:
    # Decode: 1,008 GB/s / (4,232,585,216 + 536,870,912 bytes read per token) = 211.3 tokens/s.
    # Prefill of 3,584 tokens: 2 x 7,241,732,096 x 3,584 / (165.2e12 x 0.5) = 0.628 s.
    card = load_catalogue().get("rtx-4090")
    mem = estimate_memory(
        EstimateRequest(get_model("mistral-7b"), precision=Precision.INT4, context_tokens=4096)
    )
    tp = estimate_throughput(mem, card, prompt_tokens=3584)
    assert tp.decode_tokens_per_s == pytest.approx(1008e9 / 4_769_456_128)
    assert tp.decode_tokens_per_s == pytest.approx(211.3, abs=0.05)
    assert tp.prefill_seconds == pytest.approx(2 * 7_241_732_096 * 3584 / (165.2e12 * 0.5))
    assert "1,008 GB/s ÷ (4.23 GB weights + 0.54 GB KV cache" in tp.decode_formula
    assert tp.prefill_formula.endswith("(165.2 TFLOPS × 50%) = 0.63 s")


def test_training_speed_uses_6n_or_4n_flops_per_token() -> None:
    # Full fine-tune of Qwen2.5 0.5B on an H100 SXM: 989.5e12 x 0.4 / (6 x 494,032,768) = 133,529/s.
    card = load_catalogue().get("h100-sxm")
    full = estimate_memory(
        EstimateRequest(
            get_model("qwen2.5-0.5b"), task=Task.FULL_MIXED, gradient_checkpointing=False
        )
    )
    assert estimate_throughput(full, card).train_tokens_per_s == pytest.approx(
        989.5e12 * 0.4 / (6 * 494_032_768)
    )
    lora = estimate_memory(
        EstimateRequest(get_model("qwen2.5-0.5b"), task=Task.LORA, gradient_checkpointing=True)
    )
    assert "(6 × 494,032,768 FLOPs per token)" in estimate_throughput(lora, card).train_formula


def test_cards_without_bf16_run_fp16() -> None:
    mem = estimate_memory(EstimateRequest(get_model("qwen2.5-1.5b")))
    tp = estimate_throughput(mem, load_catalogue().get("t4"))
    assert "65 FP16 TFLOPS" in tp.tflops_label and "no BF16" in tp.tflops_label


def test_latency_verdict_reads_like_the_issue_example() -> None:
    # 3,000 tokens / 50 tokens/s = 60 s > 10 s.
    verdict = latency_verdict(3000, 50.0, 10)
    assert not verdict.ok
    assert verdict.text == "A 3,000-token answer at 50 tokens/s takes 60 s — over your 10 s target."
    fast = latency_verdict(200, 100.0, 10, prefill_seconds=0.4, prompt_tokens=3000)
    assert fast.ok
    assert "2.0 s, plus 0.4 s to read the 3,000-token prompt — within your 10 s target" in fast.text


def test_estimate_combines_fit_and_latency_verdicts() -> None:
    # Llama 3.1 8B bf16 on an L4: 300 GB/s / 17.13 GB per token = 17.5 tokens/s, so 3,000 tokens
    # take 171 s; the 18.1 GiB it needs (the 5,192-token prompt prefilled at once) fits in 24 GB.
    req = EstimateRequest(get_model("llama-3.1-8b"), context_tokens=8192)
    result = estimate(req, load_catalogue().get("l4"), output_tokens=3000, target_seconds=10)
    fit, speed = result.verdicts
    assert fit.ok and "fits with 5.9 GiB to spare" in fit.text
    assert not speed.ok and "takes 171 s" in speed.text and "5,192-token prompt" in speed.text


def test_fit_verdict_says_what_to_change() -> None:
    req = EstimateRequest(
        get_model("llama-3.1-8b"),
        task=Task.LORA,
        context_tokens=2048,
        gradient_checkpointing=False,
    )
    verdict = fit_verdict(estimate_memory(req), load_catalogue().get("rtx-4090"))
    assert not verdict.ok
    assert "does not fit" in verdict.text
    assert "gradient checkpointing" in verdict.text and "QLoRA 4-bit" in verdict.text


def test_job_hours_for_ranking_cards_by_cost() -> None:
    catalogue = load_catalogue()
    mem = estimate_memory(
        EstimateRequest(
            get_model("qwen2.5-7b"),
            task=Task.QLORA_4BIT,
            context_tokens=4096,
            gradient_checkpointing=False,
        )
    )
    assert job_hours(mem, catalogue.get("t4"), 10**6) is None  # does not fit in 16 GB
    ranked = catalogue.rank_by_job_cost(lambda card: job_hours(mem, card, 50_000_000))
    assert ranked and all(job.card.vram_gb >= mem.total_gib for job in ranked)
    assert [job.low + job.high for job in ranked] == sorted(job.low + job.high for job in ranked)


def test_config_json_gives_the_same_shape_as_the_preset() -> None:
    llama = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    arch = model_from_config(llama, name="my-llama")
    assert arch.name == "my-llama"
    assert arch.params == get_model("llama-3.1-8b").params
    qwen = {
        "model_type": "qwen2",
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_attention_heads": 14,
        "num_hidden_layers": 24,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
    }
    assert model_from_config(qwen).params == 494_032_768  # qkv bias from the model type


def test_gpt2_config_aliases() -> None:
    # GPT-2 small is 124,439,808 params; we leave out learned positions (786,432) and the biases
    # outside q/k/v (74,496), so 123,578,880: within 1%.
    gpt2 = {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257}
    arch = model_from_config(gpt2)
    assert not arch.gated_mlp and arch.tied_embeddings and arch.intermediate == 3072
    assert arch.params == 123_578_880
    assert arch.params == pytest.approx(124_439_808, rel=0.01)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10}, "num_hidden_layers"),
        (
            {"num_local_experts": 8, "hidden_size": 64, "num_attention_heads": 4},
            "num_experts_per_tok",
        ),
        (
            {"num_hidden_layers": "32", "hidden_size": 64, "num_attention_heads": 4},
            "is not a count",
        ),
        (
            {
                "num_hidden_layers": 2,
                "hidden_size": 64,
                "num_attention_heads": 6,
                "num_key_value_heads": 4,
                "vocab_size": 10,
            },
            "multiple of the KV heads",
        ),
    ],
)
def test_bad_configs_are_refused_with_a_reason(config: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        model_from_config(config)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"task": Task.LORA, "precision": Precision.INT4}, "precision"),
        ({"task": Task.QLORA_4BIT, "precision": Precision.INT8}, "precision"),
        ({"task": Task.FULL_BF16, "precision": Precision.FP32}, "precision"),
        ({"context_tokens": 0}, "context_tokens"),
        ({"batch": 10_000}, "batch"),
        ({"task": Task.LORA, "lora_rank": 0}, "lora_rank"),
        ({"task": Task.LORA, "adapter_precision": Precision.INT8}, "adapter_precision"),
    ],
)
def test_bad_requests_name_the_field(kwargs: dict[str, object], field: str) -> None:
    req = EstimateRequest(get_model("qwen2.5-0.5b"), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValidationError) as info:
        estimate_memory(req)
    assert info.value.field == field


def test_time_targets_need_inference_a_card_and_an_answer_length() -> None:
    card = load_catalogue().get("l4")
    infer = EstimateRequest(get_model("qwen2.5-0.5b"), context_tokens=1024)
    with pytest.raises(ValidationError, match="needs a GPU"):
        estimate(infer, None, output_tokens=100, target_seconds=5)
    with pytest.raises(ValidationError, match="needs a GPU and an answer length"):
        estimate(infer, card, target_seconds=5)
    with pytest.raises(ValidationError, match="answer length must be between"):
        estimate(infer, card, output_tokens=1024, target_seconds=5)
    train = EstimateRequest(get_model("qwen2.5-0.5b"), task=Task.LORA)
    with pytest.raises(ValidationError, match="inference only"):
        estimate(train, card, output_tokens=10, target_seconds=5)


def test_unknown_preset_names_the_closest_ones() -> None:
    with pytest.raises(ValidationError, match=r"Closest: qwen2\.5-7b.*--list-models"):
        get_model("Qwen/Qwen2.5-8B-Instruct")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "qwen2.5-72b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("mistralai/Mistral-7B-v0.1", "mistral-7b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("Qwen/Qwen3-30B-A3B-Base", "qwen3-30b-a3b"),
        ("openai/gpt-oss-20b", "gpt-oss-20b"),
        ("Qwen2.5 7B", "qwen2.5-7b"),
    ],
)
def test_names_as_renters_copy_them_resolve(name: str, key: str) -> None:
    assert get_model(name) is MODEL_PRESETS[key]


def test_training_defaults_follow_the_tools() -> None:
    # PEFT's prepare_model_for_kbit_training and LLaMA-Factory turn checkpointing on; the
    # context defaults to 1,024 tokens to train and 4,096 to serve.
    train = estimate_memory(EstimateRequest(get_model("llama-2-7b"), task=Task.QLORA_4BIT))
    assert train.request.checkpointing and train.request.context == 1024
    serve = estimate_memory(EstimateRequest(get_model("llama-2-7b")))
    assert not serve.request.checkpointing and serve.request.context == 4096


def test_checkpointing_suggestion_only_when_it_changes_the_verdict() -> None:
    # Llama 3.1 8B LoRA, 4,096 tokens, no checkpointing: 41.5 GiB, too much for a 24 GB card;
    # with checkpointing 21.7 GiB, which fits. On an 80 GB card it fits either way: no tip.
    catalogue = load_catalogue()
    req = EstimateRequest(
        get_model("llama-3.1-8b"),
        task=Task.LORA,
        context_tokens=4096,
        gradient_checkpointing=False,
    )
    mem = estimate_memory(req)
    tip = checkpointing_suggestion(mem, catalogue.get("rtx-4090"))
    assert tip is not None and tip.ok
    assert tip.text.startswith("Gradient checkpointing would cut this to 21.7 GiB (19.8 GiB less")
    assert tip.text.endswith("then it fits the RTX 4090 (24 GB).")
    assert checkpointing_suggestion(mem, catalogue.get("h100-sxm")) is None
    assert checkpointing_suggestion(mem, catalogue.get("t4")) is None  # 16 GB: still too small
    assert checkpointing_suggestion(mem) is not None  # no card: it saves more than a tenth
    on = estimate_memory(EstimateRequest(get_model("llama-3.1-8b"), task=Task.LORA))
    assert checkpointing_suggestion(on, catalogue.get("rtx-4090")) is None
    verdicts = estimate(req, catalogue.get("rtx-4090")).verdicts
    assert not verdicts[0].ok and verdicts[1] == tip


def test_non_nvidia_cards_say_that_the_monitor_does_not_apply() -> None:
    result = estimate(EstimateRequest(get_model("llama-3.1-8b")), load_catalogue().get("mi300x"))
    assert any("AMD card: nvidia-smi and CUDA do not apply" in v.text for v in result.verdicts)
