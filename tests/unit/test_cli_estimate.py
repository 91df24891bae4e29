"""`gpu-companion estimate` through its own `register`, on a parser built here (cli.py wires it)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from gpu_companion.commands.estimate import register


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="gpu-companion")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["estimate", *argv])
    code = args.handler(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_table_shows_each_line_with_its_formula(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["--model", "llama-3.1-8b", "--context", "8192"], capsys)
    assert code == 0 and err == ""
    assert "Llama 3.1 8B: inference, bf16 weights, 8,192-token context × 1 sequence" in out
    assert "8,030,261,248 params × 2 bytes = 14.96 GiB" in out
    assert "2 × 32 layers × 8 KV heads × 128 head dim × 8,192 tokens × 1 seq × 2 bytes" in out
    assert "Cards with enough memory: RTX 4000 Ada (20 GB), RTX 3090 (24 GB)" in out
    assert "Assumptions:" in out


def test_gpu_and_target_give_speed_and_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "llama-3.1-8b", "--context", "8192", "--gpu", "L4"]
    code, out, _ = _run([*argv, "--output-tokens", "3000", "--target-seconds", "10"], capsys)
    assert code == 0
    assert "On the L4: 24 GB, 300 GB/s, 121 BF16 TFLOPS (dense)" in out
    assert "decode (upper bound)  300 GB/s ÷ (16.06 GB weights + 1.07 GB KV cache" in out
    assert "OK  Needs 17.8 GiB; the L4 has 24 GB: fits" in out
    assert "NO  A 3,000-token answer at 17.5 tokens/s takes 171 s" in out


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "qwen2.5-7b", "--task", "qlora-4bit", "--lora-rank", "64", "--json"]
    code, out, _ = _run(
        [*argv, "--grad-checkpointing", "--gpu", "rtx-4090", "--context", "2048"], capsys
    )
    assert code == 0
    data = json.loads(out)
    assert data["task"] == "qlora-4bit" and data["precision"] == "int4"
    assert data["gradient_checkpointing"] is True and data["lora_rank"] == 64
    keys = [line["key"] for line in data["memory"]["lines"]]
    assert keys == [
        "weights",
        "activations",
        "trainable",
        "gradients",
        "optimizer",
        "cuda_context",
        "allocator_reserve",
    ]
    assert data["memory"]["total_bytes"] == sum(line["bytes"] for line in data["memory"]["lines"])
    assert data["memory"]["all_gpus_total_bytes"] == data["memory"]["total_bytes"]
    assert data["gpu"]["id"] == "rtx-4090"
    assert data["throughput"]["train_tokens_per_s"] > 0
    assert data["throughput"]["decode_tokens_per_s"] is None
    assert data["verdicts"][0]["ok"] is True


def test_config_json_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model_dir = tmp_path / "Mistral-7B-v0.1"
    model_dir.mkdir()
    config = {
        "model_type": "mistral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "vocab_size": 32000,
        "tie_word_embeddings": False,
    }
    (model_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    argv = ["--config-json", str(model_dir / "config.json"), "--precision", "int4", "--json"]
    code, out, _ = _run([*argv, "--prompt-tokens", "3072", "--output-tokens", "1024"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["model"]["name"] == "Mistral-7B-v0.1"
    assert data["model"]["params"] == 7_241_732_096
    assert data["memory"]["total_bytes"] == 5_901_659_802  # see test_estimate: 5-6 GB rule
    assert data["context_tokens"] == 4096 and data["prompt_tokens"] == 3072
    # the folder and a Hugging Face cache folder work as well as the file
    cache = tmp_path / "models--mistralai--Mistral-7B-v0.1"
    (cache / "snapshots" / "abc123").mkdir(parents=True)
    (cache / "snapshots" / "abc123" / "config.json").write_text(json.dumps(config), "utf-8")
    for folder in (model_dir, cache):
        code, out, _ = _run(["--config-json", str(folder), "--json"], capsys)
        assert code == 0 and json.loads(out)["model"]["params"] == 7_241_732_096
    code, out, _ = _run(["--model", str(cache), "--json"], capsys)
    assert json.loads(out)["model"]["name"] == "mistralai/Mistral-7B-v0.1"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "gpt-5"], "Unknown model 'gpt-5'"),
        (["--model", "mistral-7b", "--gpu", "voodoo2"], "Unknown GPU 'voodoo2'"),
        (["--model", "mistral-7b", "--task", "lora", "--precision", "int4"], "not int4"),
        (["--model", "mistral-7b", "--context", "0"], "context length must be between"),
        (["--model", "mistral-7b", "--gpu", "l4", "--target-seconds", "5"], "answer length"),
        (["--model", "mistral-7b", "--config-json", "x"], None),  # argparse: not both
        (["--config-json", "/nonexistent/config.json"], "Could not read"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    argv: list[str], message: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    if message is None:
        with pytest.raises(SystemExit) as info:
            _run(argv, capsys)
        assert info.value.code == 2
        assert "not allowed with argument" in capsys.readouterr().err
        return
    code, out, err = _run(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith("gpu-companion estimate: ") and message in err


def test_a_config_that_is_not_an_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text("[1, 2]", encoding="utf-8")
    code, _, err = _run(["--config-json", str(path)], capsys)
    assert code == 2 and "is not a config.json object" in err


def test_argparse_rejects_unknown_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        _run(["--model", "mistral-7b", "--task", "pretrain"], capsys)
    assert info.value.code == 2
    assert "invalid choice: 'pretrain'" in capsys.readouterr().err


def test_serve_reports_users_that_fit_and_tokens_per_user(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--model", "llama-3.1-8b", "--serve", "--users", "50", "--gpu", "h100-sxm"]
    code, out, err = _run([*argv, "--target-tokens-s", "1000"], capsys)
    assert code == 0 and err == ""
    assert "Serving on the H100 SXM:" in out
    assert "= 112 users" in out  # see test_serving for the sums
    assert "OK  50 users at 4,096 tokens each fit in the H100 SXM's KV cache (room for 112)." in out
    assert "OK  At 50 users each gets 78.1 tokens/s, 3,904 tokens/s in total" in out
    assert "OK  Meets your 1,000 tokens/s target" in out
    assert "gpu-memory-utilization (0.9)" in out


def test_serve_without_a_card_lists_the_cards_that_hold_the_users(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--model", "llama-3.1-8b", "--serve", "--users", "50", "--target-tokens-s", "1000"]
    code, out, _ = _run([*argv, "--json"], capsys)
    assert code == 0
    rows = json.loads(out)["serving"]
    assert rows and all(row["users_fit"] >= 50 for row in rows)
    assert "rtx-4090" not in {row["gpu"] for row in rows}
    meets = {row["gpu"]: row["meets_target"] for row in rows}
    assert meets["h100-sxm"] is True and meets["a40"] is False
    code, table, _ = _run(argv, capsys)
    assert "Serving 50 users: cards that hold them, cheapest first" in table
    assert "MI300X*" in table and "* not NVIDIA" in table


def test_moe_preset_and_several_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "deepseek-v3", "--gpus", "8", "--gpu", "h200-sxm", "--json", "--engine"]
    argv.append("vllm")
    code, out, _ = _run(argv, capsys)
    assert code == 0
    data = json.loads(out)
    assert data["precision"] == "fp8" and data["gpus"] == 8 and data["strategy"] == "tp"
    assert data["model"]["experts"] == 256 and data["model"]["experts_per_token"] == 8
    assert data["model"]["active_params"] < data["model"]["params"] / 15
    assert data["verdicts"][0]["ok"] is True  # 671B in FP8 over 8 x 141 GB
    argv = ["--model", "qwen2.5-7b", "--task", "full-mixed", "--gpus", "8", "--strategy", "zero3"]
    code, out, _ = _run([*argv, "--gpu", "rtx-4090", "--no-grad-checkpointing"], capsys)
    assert code == 0
    assert "8 GPUs (zero3), memory per GPU" in out
    assert "÷ 8 GPUs (ZeRO-3)" in out
    assert "communication         (8 - 1) ÷ 8 × (2 × 15.23 GB weights gathered" in out
    assert "NO  Communication-bound" in out


def test_moe_config_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Mixtral-8x7B-v0.1" / "config.json"
    path.parent.mkdir()
    config = {
        "model_type": "mixtral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    code, out, _ = _run(["--config-json", str(path), "--precision", "gguf-q4_k"], capsys)
    assert code == 0
    assert "mixture of experts: 8 experts, 2 per token, 12,879,925,248 active" in out
    assert "GGUF Q4_K: 144 bytes per 256 weights" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "mistral-7b", "--task", "lora", "--serve"], "--serve sizes inference"),
        (["--model", "mistral-7b", "--gpus", "2", "--strategy", "zero3"], "use tensor parallel"),
        (["--model", "mistral-7b", "--serve", "--users", "0"], "number of users"),
        (["--model", "mistral-7b", "--precision", "int4", "--group-size", "1"], "group size"),
    ],
)
def test_bad_serving_and_split_input_exits_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(argv, capsys)
    assert code == 2 and out == ""
    assert message in err


def test_long_prompts_names_and_layer_split(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "Qwen/Qwen2.5-72B-Instruct", "--prompt-tokens", "30720"]
    code, out, err = _run([*argv, "--output-tokens", "2048", "--gpus", "3", "--json"], capsys)
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["strategy"] == "layers" and data["context_tokens"] == 32768
    assert data["engine"]["name"] == "transformers" and data["engine"]["prefill_tokens"] == 30720
    lines = {line["key"]: line for line in data["memory"]["lines"]}
    assert "prefill activation peak" == lines["activations"]["label"]
    assert "30,720 tokens (1 × 30,720-token prompt in one pass)" in lines["activations"]["formula"]
    assert {"cuda_context", "allocator_reserve"} <= set(lines)
    assert data["memory"]["all_gpus_total_bytes"] > 2 * data["memory"]["total_bytes"]
    assert lines["cuda_context"]["all_gpus_bytes"] == 3 * lines["cuda_context"]["bytes"]
    code, out, err = _run([*argv, "--gpus", "3", "--strategy", "tp"], capsys)
    assert code == 2 and "layer split (--strategy layers)" in err


@pytest.mark.parametrize(
    ("argv", "code_name"),
    [
        (["--model", "Qwen2.5-8B-Instruct"], "unknown_model"),
        (["--model", "qwen2.5-72b", "--gpus", "3", "--strategy", "tp"], "invalid_gpus"),
        (["--model", "mistral-7b", "--gpu", "voodoo2"], "invalid_gpu"),
        (["--model", "mistral-7b", "--kv-cache-type", "q8_0"], "invalid_kv_cache_type"),
        ([], "refused"),
    ],
)
def test_json_refusals_are_json(
    argv: list[str], code_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run([*argv, "--json"], capsys)
    assert code == 2 and err == ""
    error = json.loads(out)["error"]
    assert error["code"] == code_name and error["message"]


def test_list_models(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--list-models"], capsys)
    assert code == 0 and "qwen2.5-72b" in out and "Qwen/Qwen2.5-7B-Instruct" in out
    code, out, _ = _run(["--list-models", "--json"], capsys)
    keys = [row["key"] for row in json.loads(out)["models"]]
    assert "llama-3.1-8b" in keys and "deepseek-v3" in keys


def test_vllm_serving_reports_the_longest_context(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--engine", "vllm", "--serve"]
    code, out, _ = _run([*argv, "--context", "8192", "--gpu", "rtx-3090", "--json"], capsys)
    assert code == 0
    row = json.loads(out)["serving"][0]
    assert row["longest_context_tokens"] > 8192 and row["max_concurrency"] > 1
    assert "batched tokens" in row["pool_formula"]


def test_llama_cpp_kv_cache_type_and_prompt_logits(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "llama-3.1-8b", "--engine", "llama.cpp", "--precision", "gguf-q4_k"]
    code, out, _ = _run([*argv, "--context", "131072", "--kv-cache-type", "q8_0"], capsys)
    assert code == 0 and "KV cache (q8_0)" in out and "34 bytes per 32 values (q8_0)" in out
    code, out, _ = _run(
        ["--model", "qwen2.5-0.5b", "--prompt-tokens", "6144", "--prompt-logits"], capsys
    )
    assert code == 0 and "(prompt logits, fp32)" in out


def test_a_quantised_hugging_face_id_sizes_its_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--model", "Qwen/Qwen2.5-72B-Instruct-AWQ", "--json"], capsys)
    assert code == 0 and json.loads(out)["precision"] == "awq"
    code, out, _ = _run(["--model", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "--json"], capsys)
    assert code == 0 and json.loads(out)["precision"] == "gptq-int8"
