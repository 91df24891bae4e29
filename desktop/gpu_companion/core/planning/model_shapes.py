"""Model shapes for the estimator: preset architectures of well-known open models and the exact
shape read from a Hugging Face `config.json`, with parameter counts split the way memory needs them.

Mixture-of-experts models keep every expert in memory but run only `experts_per_token` of them per
token, so the shape counts total and active parameters apart.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import _


@dataclass(frozen=True)
class ModelArch:
    """A decoder-only transformer's shape: enough to count parameters, KV cache and activations.

    MoE: `experts` routed experts of size `moe_intermediate` (0: `intermediate`) in each layer
    after the first `dense_layers`, plus an always-on shared MLP of `shared_intermediate`.
    MLA (DeepSeek): `kv_lora_rank` > 0 caches one compressed latent per token instead of K and V.
    """

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
    experts: int = 0
    experts_per_token: int = 0
    moe_intermediate: int = 0
    shared_intermediate: int = 0
    dense_layers: int = 0
    expert_bias: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    rope_dim: int = 0
    v_head_dim: int = 0
    sliding_window: int = 0  # tokens a sliding-window layer attends to (and caches)
    sliding_layers: int = 0  # how many layers use it (gpt-oss: every other one)
    shipped_as: str = ""  # the weight format the checkpoint ships in, when not 16-bit ("mxfp4")

    def __post_init__(self) -> None:
        sizes = (self.layers, self.hidden, self.heads, self.kv_heads, self.vocab, self.intermediate)
        if min(sizes) < 1 or self.head_dim < 0 or self.heads % self.kv_heads:
            raise ValidationError(
                "model",
                _("{model}: layers, sizes and heads must be positive, and the attention heads "
                  "({heads}) a multiple of the KV heads ({kv_heads}).").format(
                    model=self.name, heads=self.heads, kv_heads=self.kv_heads),
            )  # fmt: skip
        if self.experts and not 1 <= self.experts_per_token <= self.experts:
            raise ValidationError(
                "model",
                _(
                    "{model}: {experts} experts need 1 to {experts} experts per token, not {given}."
                ).format(model=self.name, experts=self.experts, given=self.experts_per_token),
            )
        if not 0 <= self.dense_layers <= self.layers:
            raise ValidationError(
                "model", _("{model}: more dense layers than layers.").format(model=self.name)
            )
        if not 0 <= self.sliding_layers <= self.layers or (
            self.sliding_layers and self.sliding_window < 1
        ):
            raise ValidationError(
                "model",
                _("{model}: sliding-window layers need a window and at most all layers.").format(
                    model=self.name
                ),
            )

    @property
    def dim(self) -> int:
        """Size of one attention head (the key/query head with MLA)."""
        return self.head_dim or self.hidden // self.heads

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return self.experts > 1

    @property
    def is_mla(self) -> bool:
        """True for multi-head latent attention (DeepSeek-V2/V3)."""
        return self.kv_lora_rank > 0

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a set of experts."""
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def expert_width(self) -> int:
        """Intermediate size of one expert."""
        return self.moe_intermediate or self.intermediate

    def attention_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each attention projection in one block."""
        h = self.hidden
        if self.is_mla:
            qk, v = self.heads * (self.dim + self.rope_dim), self.heads * self.v_head_dim
            kv_b = (self.kv_lora_rank, self.heads * self.dim + v)
            kv = {"kv_a": (h, self.kv_lora_rank + self.rope_dim), "kv_b": kv_b, "o": (v, h)}
            if self.q_lora_rank:
                return {"q_a": (h, self.q_lora_rank), "q_b": (self.q_lora_rank, qk), **kv}
            return {"q": (h, qk), **kv}
        q, kv_w = self.heads * self.dim, self.kv_heads * self.dim
        return {"q": (h, q), "k": (h, kv_w), "v": (h, kv_w), "o": (q, h)}

    def mlp_shapes(self, width: int) -> dict[str, tuple[int, int]]:
        """(in, out) of the MLP matrices for one MLP (or one expert) of this width."""
        h = self.hidden
        mlp = {"gate": (h, width), "up": (h, width)} if self.gated_mlp else {"up": (h, width)}
        return {**mlp, "down": (width, h)}

    def shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each linear layer of one dense block (the LoRA targets' names)."""
        return {**self.attention_shapes(), **self.mlp_shapes(self.intermediate)}

    @property
    def attention_widths(self) -> tuple[int, int, int]:
        """Values per token of q, k and v entering attention (activations and FLOPs)."""
        if self.is_mla:
            qk = self.heads * (self.dim + self.rope_dim)
            return qk, qk, self.heads * self.v_head_dim
        return self.heads * self.dim, self.kv_heads * self.dim, self.kv_heads * self.dim

    @property
    def kv_values_per_token(self) -> int:
        """Values the KV cache keeps per token and layer: K and V, or MLA's latent plus RoPE key."""
        if self.is_mla:
            return self.kv_lora_rank + self.rope_dim
        return 2 * self.kv_heads * self.dim

    @property
    def active_intermediate(self) -> int:
        """MLP width one token runs through in an MoE layer (routed experts plus shared)."""
        if not self.is_moe:
            return self.intermediate
        return self.experts_per_token * self.expert_width + self.shared_intermediate

    @staticmethod
    def _count(shapes: Mapping[str, tuple[int, int]]) -> int:
        return sum(a * b for a, b in shapes.values())

    @property
    def expert_params(self) -> int:
        """Parameters of one routed expert, biases included."""
        bias = (len(self.mlp_shapes(1)) - 1) * self.expert_width + self.hidden
        return self._count(self.mlp_shapes(self.expert_width)) + (bias if self.expert_bias else 0)

    @property
    def all_expert_params(self) -> int:
        """Every routed expert of every MoE layer: what memory holds but a token mostly skips."""
        return self.moe_layers * self.experts * self.expert_params

    @property
    def linear_params(self) -> int:
        """Weights of the blocks' linear layers (experts included): what quantisation shrinks."""
        dense_mlp = self._count(self.mlp_shapes(self.intermediate))
        shared_width = self.shared_intermediate
        shared = self._count(self.mlp_shapes(shared_width)) if shared_width else 0
        return (
            self.layers * self._count(self.attention_shapes())
            + (self.layers - self.moe_layers) * dense_mlp
            + self.moe_layers * shared
            + self.all_expert_params
        )

    @property
    def embedding_params(self) -> int:
        """Input embedding plus the output head, unless the two are tied."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    @property
    def other_params(self) -> int:
        """Norm weights, q/k/v biases and MoE routers: small, kept in 16-bit."""
        q, k, v = self.attention_widths
        bias = q + k + v if self.qkv_bias else 0
        latent = self.q_lora_rank + self.kv_lora_rank if self.is_mla else 0
        # gpt-oss routers have a bias, DeepSeek-V3 a score-correction bias; Mixtral and Qwen none.
        router_bias = self.expert_bias or self.is_mla
        router = self.experts * (self.hidden + router_bias) if self.is_moe else 0
        return (
            self.layers * (2 * self.hidden + bias + latent) + self.moe_layers * router + self.hidden
        )

    @property
    def params(self) -> int:
        """Total parameter count: what the weights line stores."""
        return self.linear_params + self.embedding_params + self.other_params

    @property
    def largest_layer_params(self) -> int:
        """Parameters of the biggest block (an MoE block when there is one): what ZeRO-3 and FSDP
        gather at once."""
        q, k, v = self.attention_widths
        bias = q + k + v if self.qkv_bias else 0
        latent = self.q_lora_rank + self.kv_lora_rank if self.is_mla else 0
        common = self._count(self.attention_shapes()) + 2 * self.hidden + bias + latent
        if not self.is_moe:
            return common + self._count(self.mlp_shapes(self.intermediate))
        shared = self.shared_intermediate
        router = self.experts * (self.hidden + (self.expert_bias or self.is_mla))
        return (
            common
            + router
            + self.experts * self.expert_params
            + (self._count(self.mlp_shapes(shared)) if shared else 0)
        )

    @property
    def active_params(self) -> int:
        """Parameters one token runs through: all but the routed experts it is not sent to."""
        idle = self.moe_layers * (self.experts - self.experts_per_token) * self.expert_params
        return self.params - idle if self.is_moe else self.params


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
    # Mixture of experts: config.json keys num_local_experts / num_experts / n_routed_experts,
    # num_experts_per_tok, moe_intermediate_size, n_shared_experts, first_k_dense_replace.
    "mixtral-8x7b": ModelArch(
        "Mixtral 8x7B", 32, 4096, 32, 8, 32000, 14336, experts=8, experts_per_token=2
    ),
    "qwen3-30b-a3b": ModelArch(
        "Qwen3 30B-A3B",
        48,
        2048,
        32,
        4,
        151936,
        6144,
        head_dim=128,
        experts=128,
        experts_per_token=8,
        moe_intermediate=768,
    ),
    "gpt-oss-20b": ModelArch(
        "gpt-oss-20b",
        24,
        2880,
        64,
        8,
        201088,
        2880,
        head_dim=64,
        qkv_bias=True,
        experts=32,
        experts_per_token=4,
        expert_bias=True,
        sliding_window=128,
        sliding_layers=12,
        shipped_as="mxfp4",
    ),
    "gpt-oss-120b": ModelArch(
        "gpt-oss-120b",
        36,
        2880,
        64,
        8,
        201088,
        2880,
        head_dim=64,
        qkv_bias=True,
        experts=128,
        experts_per_token=4,
        expert_bias=True,
        sliding_window=128,
        sliding_layers=18,
        shipped_as="mxfp4",
    ),
    "deepseek-v3": ModelArch(
        "DeepSeek-V3",
        61,
        7168,
        128,
        128,
        129280,
        18432,
        head_dim=128,
        experts=256,
        experts_per_token=8,
        moe_intermediate=2048,
        shared_intermediate=2048,
        dense_layers=3,
        q_lora_rank=1536,
        kv_lora_rank=512,
        rope_dim=64,
        v_head_dim=128,
        shipped_as="fp8",
    ),
}
_UNGATED = frozenset({"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "phi", "starcoder2"})


# Suffixes renters copy along with a Hugging Face id; none changes the shape.
_SUFFIXES = re.compile(
    r"(-(instruct|chat|base|it|hf|gguf|awq|gptq(-int[48])?|fp8|bnb-4bit|\d{4}))+$"
)


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", text.lower())


def model_key(name: str) -> str:
    """A preset key for a name as people copy it ("Qwen/Qwen2.5-7B-Instruct", "Llama 3.1 8B",
    "meta-llama/Llama-3.1-8B-Instruct"), or "" when none matches."""
    bare = name.strip().rsplit("/", 1)[-1].lower().replace("meta-llama-", "llama-")
    bare = _SUFFIXES.sub("", bare.replace("_", "-"))
    wanted = _norm(bare)
    for key, arch in MODEL_PRESETS.items():
        if wanted in (_norm(key), _norm(arch.name), _norm(arch.name.replace(" v0.1", ""))):
            return key
    return ""


def format_in_name(name: str) -> str:
    """The weight format a Hugging Face id names ("...-AWQ", "...-GPTQ-Int4", "...-FP8"), as a
    precision value, or ""."""
    lowered = name.strip().lower()
    for suffix, value in (
        ("-awq", "awq"),
        ("-gptq-int4", "gptq-int4"),
        ("-gptq-int8", "gptq-int8"),
        ("-fp8", "fp8"),
    ):
        if lowered.endswith(suffix):
            return value
    return ""


def closest_models(name: str, n: int = 3) -> list[str]:
    """Preset keys nearest to `name`, best first."""
    import difflib

    bare = _SUFFIXES.sub("", name.strip().rsplit("/", 1)[-1].lower())
    return difflib.get_close_matches(bare, list(MODEL_PRESETS), n=n, cutoff=0.3)


def get_model(key: str) -> ModelArch:
    """A preset by key ("qwen2.5-7b"), name ("Qwen2.5 7B") or Hugging Face id
    ("Qwen/Qwen2.5-7B-Instruct"); an unknown name is refused with the closest presets."""
    found = model_key(key)
    if found:
        return MODEL_PRESETS[found]
    near = closest_models(key)
    hint = _(" Closest: {names}.").format(names=", ".join(near)) if near else ""
    raise ValidationError(
        "model",
        _("Unknown model {key}.{hint} Give a config.json (--config-json) for any other model; "
          "--list-models shows the presets.").format(key=repr(key), hint=hint),
    )  # fmt: skip


def model_from_config(config: Mapping[str, Any], name: str = "") -> ModelArch:
    """The exact shape from a Hugging Face `config.json` (Llama, Qwen, Mistral, GPT-2, Mixtral,
    Qwen-MoE, gpt-oss and DeepSeek-V3 keys)."""
    text = config.get("text_config")
    cfg: Mapping[str, Any] = text if isinstance(text, Mapping) else config

    def pick(*keys: str, default: int | None = None) -> int:
        for key in keys:
            value = cfg.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValidationError(
                    "config",
                    _("config.json: {key} = {value} is not a count.").format(
                        key=key, value=repr(value)
                    ),
                )
            return value
        if default is None:
            raise ValidationError(
                "config", _("config.json has no {key}: is it an LLM?").format(key=repr(keys[0]))
            )
        return default

    hidden, heads = pick("hidden_size", "n_embd", "d_model"), pick("num_attention_heads", "n_head")
    model_type = str(cfg.get("model_type", ""))
    experts = pick("num_local_experts", "num_experts", "n_routed_experts", default=0)
    per_token = pick("num_experts_per_tok", "experts_per_token", "moe_topk", default=0)
    if experts > 1 and per_token == 0:
        raise ValidationError(
            "config",
            _(
                "config.json names {n} experts but not how many run per token "
                "(num_experts_per_tok): the speed estimate needs it."
            ).format(n=experts),
        )
    moe_width = pick("moe_intermediate_size", default=0)
    shared = pick("shared_expert_intermediate_size", default=0)
    shared = shared or pick("n_shared_experts", default=0) * (moe_width or 0)
    kv_lora = pick("kv_lora_rank", default=0)
    layers = pick("num_hidden_layers", "n_layer", "num_layers")
    types = cfg.get("layer_types")
    sliding = sum(1 for t in types if t == "sliding_attention") if isinstance(types, list) else 0
    window = pick("sliding_window", default=0) if sliding else 0
    quant = config.get("quantization_config")
    method = str(quant.get("quant_method", "")) if isinstance(quant, Mapping) else ""
    bits = quant.get("bits") if isinstance(quant, Mapping) else None
    if method == "gptq" and bits in (4, 8):
        method = f"gptq-int{bits}"
    elif method == "awq" and bits == 4:
        method = "awq"
    return ModelArch(
        name=name or str(config.get("_name_or_path") or model_type or "custom model"),
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads if kv_lora else pick("num_key_value_heads", "num_kv_heads", default=heads),
        vocab=pick("vocab_size"),
        intermediate=pick("intermediate_size", "n_inner", "ffn_dim", default=4 * hidden),
        head_dim=pick("qk_nope_head_dim", default=0) if kv_lora else pick("head_dim", default=0),
        tied_embeddings=bool(config.get("tie_word_embeddings", model_type in ("gpt2", "gemma"))),
        qkv_bias=bool(cfg.get("attention_bias", model_type in ("qwen2", "gpt2"))),
        gated_mlp=model_type not in _UNGATED,
        experts=experts if experts > 1 else 0,
        experts_per_token=per_token if experts > 1 else 0,
        moe_intermediate=moe_width,
        shared_intermediate=shared,
        dense_layers=min(pick("first_k_dense_replace", default=0), layers) if experts > 1 else 0,
        expert_bias=model_type == "gpt_oss",
        q_lora_rank=pick("q_lora_rank", default=0) if kv_lora else 0,
        kv_lora_rank=kv_lora,
        rope_dim=pick("qk_rope_head_dim", default=0) if kv_lora else 0,
        v_head_dim=pick("v_head_dim", default=0) if kv_lora else 0,
        sliding_window=window,
        sliding_layers=sliding if window else 0,
        shipped_as=method if method in ("mxfp4", "fp8", "gptq-int4", "gptq-int8", "awq") else "",
    )
