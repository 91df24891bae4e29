"""Model shapes for the estimator: preset architectures of well-known open models and the exact
shape read from a Hugging Face `config.json`, with parameter counts split the way memory needs them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_companion.core.common.errors import ValidationError


@dataclass(frozen=True)
class ModelArch:
    """A decoder-only transformer's shape: enough to count parameters, KV cache and activations."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    vocab: int
    intermediate: int
    head_dim: int = 0  # 0: hidden // heads
    tied_embeddings: bool = False
    qkv_bias: bool = False
    gated_mlp: bool = True  # SwiGLU/GeGLU: gate, up and down matrices

    def __post_init__(self) -> None:
        sizes = (self.layers, self.hidden, self.heads, self.kv_heads, self.vocab, self.intermediate)
        if min(sizes) < 1 or self.head_dim < 0 or self.heads % self.kv_heads:
            raise ValidationError(
                "model",
                f"{self.name}: layers, sizes and heads must be positive, and the attention heads "
                f"({self.heads}) a multiple of the KV heads ({self.kv_heads}).",
            )

    @property
    def dim(self) -> int:
        """Size of one attention head."""
        return self.head_dim or self.hidden // self.heads

    def shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each linear layer in one block."""
        h, i = self.hidden, self.intermediate
        q, kv = self.heads * self.dim, self.kv_heads * self.dim
        mlp = {"gate": (h, i), "up": (h, i)} if self.gated_mlp else {"up": (h, i)}
        return {"q": (h, q), "k": (h, kv), "v": (h, kv), "o": (q, h), **mlp, "down": (i, h)}

    @property
    def linear_params(self) -> int:
        """Weights of the blocks' linear layers: what int8/int4 quantisation shrinks."""
        return self.layers * sum(a * b for a, b in self.shapes().values())

    @property
    def embedding_params(self) -> int:
        """Input embedding plus the output head, unless the two are tied."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    @property
    def other_params(self) -> int:
        """Norm weights and q/k/v biases: small, kept in 16-bit."""
        bias = self.heads * self.dim + 2 * self.kv_heads * self.dim if self.qkv_bias else 0
        return self.layers * (2 * self.hidden + bias) + self.hidden

    @property
    def params(self) -> int:
        """Total parameter count."""
        return self.linear_params + self.embedding_params + self.other_params


def _preset(name: str, *shape: int, tied: bool = False, bias: bool = False) -> ModelArch:
    layers, hidden, heads, kv_heads, vocab, intermediate = shape
    return ModelArch(name, layers, hidden, heads, kv_heads, vocab, intermediate, 0, tied, bias)


# Shapes from each model's config.json on the Hugging Face Hub.
MODEL_PRESETS: dict[str, ModelArch] = {
    "qwen2.5-0.5b": _preset("Qwen2.5 0.5B", 24, 896, 14, 2, 151936, 4864, tied=True, bias=True),
    "qwen2.5-1.5b": _preset("Qwen2.5 1.5B", 28, 1536, 12, 2, 151936, 8960, tied=True, bias=True),
    "qwen2.5-3b": _preset("Qwen2.5 3B", 36, 2048, 16, 2, 151936, 11008, tied=True, bias=True),
    "qwen2.5-7b": _preset("Qwen2.5 7B", 28, 3584, 28, 4, 152064, 18944, bias=True),
    "qwen2.5-14b": _preset("Qwen2.5 14B", 48, 5120, 40, 8, 152064, 13824, bias=True),
    "qwen2.5-32b": _preset("Qwen2.5 32B", 64, 5120, 40, 8, 152064, 27648, bias=True),
    "qwen2.5-72b": _preset("Qwen2.5 72B", 80, 8192, 64, 8, 152064, 29568, bias=True),
    "llama-3.1-8b": _preset("Llama 3.1 8B", 32, 4096, 32, 8, 128256, 14336),
    "llama-3.1-70b": _preset("Llama 3.1 70B", 80, 8192, 64, 8, 128256, 28672),
    "mistral-7b": _preset("Mistral 7B v0.1", 32, 4096, 32, 8, 32000, 14336),
    "llama-2-7b": _preset("Llama 2 7B", 32, 4096, 32, 32, 32000, 11008),
    "llama-65b": _preset("LLaMA 65B", 80, 8192, 64, 64, 32000, 22016),
}
_UNGATED = frozenset({"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "phi", "starcoder2"})


def get_model(key: str) -> ModelArch:
    """A preset by key ("qwen2.5-7b") or name ("Qwen2.5 7B")."""
    wanted = re.sub(r"[^a-z0-9.]", "", key.lower())
    for preset_key, arch in MODEL_PRESETS.items():
        if wanted in (preset_key.replace("-", ""), re.sub(r"[^a-z0-9.]", "", arch.name.lower())):
            return arch
    raise ValidationError("model", f"Unknown model {key!r}. Presets: {', '.join(MODEL_PRESETS)}.")


def model_from_config(config: Mapping[str, Any], name: str = "") -> ModelArch:
    """The exact shape from a Hugging Face `config.json` (Llama, Qwen, Mistral, GPT-2 keys)."""
    text = config.get("text_config")
    cfg: Mapping[str, Any] = text if isinstance(text, Mapping) else config
    for key in ("num_experts", "num_local_experts", "n_routed_experts"):
        if isinstance(cfg.get(key), int) and cfg[key] > 1:
            raise ValidationError(
                "config", "Mixture-of-experts models are not supported yet: every expert counts."
            )

    def pick(*keys: str, default: int | None = None) -> int:
        for key in keys:
            value = cfg.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValidationError("config", f"config.json: {key} = {value!r} is not a count.")
            return value
        if default is None:
            raise ValidationError("config", f"config.json has no {keys[0]!r}: is it an LLM?")
        return default

    hidden, heads = pick("hidden_size", "n_embd", "d_model"), pick("num_attention_heads", "n_head")
    model_type = str(cfg.get("model_type", ""))
    return ModelArch(
        name=name or str(config.get("_name_or_path") or model_type or "custom model"),
        layers=pick("num_hidden_layers", "n_layer", "num_layers"),
        hidden=hidden,
        heads=heads,
        kv_heads=pick("num_key_value_heads", "num_kv_heads", default=heads),
        vocab=pick("vocab_size"),
        intermediate=pick("intermediate_size", "n_inner", "ffn_dim", default=4 * hidden),
        head_dim=pick("head_dim", default=0),
        tied_embeddings=bool(config.get("tie_word_embeddings", model_type in ("gpt2", "gemma"))),
        qkv_bias=bool(cfg.get("attention_bias", model_type in ("qwen2", "gpt2"))),
        gated_mlp=model_type not in _UNGATED,
    )
