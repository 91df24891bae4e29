"""`gpu-companion estimate`: the first-rental wizard's VRAM and speed estimate in a terminal, as a
table with the formulas filled in or as JSON for scripts."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any, TextIO

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.planning.catalogue import GpuSpec, load_catalogue
from gpu_companion.core.planning.estimate import (
    ASSUMPTIONS,
    Estimate,
    EstimateRequest,
    LoraTargets,
    Precision,
    Strategy,
    Task,
    estimate,
)
from gpu_companion.core.planning.model_shapes import (
    MODEL_PRESETS,
    ModelArch,
    get_model,
    model_from_config,
)
from gpu_companion.core.planning.serving import (
    GPU_MEMORY_UTILIZATION,
    SERVING_NOTES,
    ServingEstimate,
    estimate_serving,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `estimate` subcommand; its handler is stored as `handler` in the namespace."""
    parser = subparsers.add_parser(
        "estimate",
        help="estimate VRAM, speed and fit of a model on a GPU",
        description="Estimate the VRAM a job needs, line by line with formulas, and (with --gpu) "
        "its decode, prefill or training speed on that card.",
    )
    parser.add_argument("--task", choices=[t.value for t in Task], default=Task.INFERENCE.value)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", metavar="PRESET", help=f"one of {', '.join(MODEL_PRESETS)}")
    source.add_argument(
        "--config-json", metavar="FILE", type=Path, help="a model's Hugging Face config.json"
    )
    parser.add_argument(
        "--precision",
        choices=[p.value for p in Precision],
        help="how the weights are stored (default: the task's usual one)",
    )
    parser.add_argument(
        "--context", type=int, metavar="TOKENS", help="default: 4,096 to serve, 1,024 to train"
    )
    parser.add_argument(
        "--batch", type=int, default=1, metavar="N", help="sequences per step, or users at once"
    )
    parser.add_argument("--lora-rank", type=int, default=16, metavar="R")
    parser.add_argument(
        "--lora-targets", choices=[t.value for t in LoraTargets], default="all-linear"
    )
    parser.add_argument(
        "--grad-checkpointing",
        action=argparse.BooleanOptionalAction,
        help="default: on for training, as PEFT and LLaMA-Factory do",
    )
    parser.add_argument(
        "--group-size", type=int, default=128, metavar="G", help="int2/3/4 quantisation group"
    )
    parser.add_argument("--gpus", type=int, default=1, metavar="N", help="GPUs sharing the job")
    parser.add_argument(
        "--strategy",
        choices=[s.value for s in Strategy],
        help="how N GPUs share it (default: tp to serve, ddp to train)",
    )
    parser.add_argument(
        "--serve", action="store_true", help="serving concurrency: users that fit and tokens/s"
    )
    parser.add_argument("--users", type=int, default=1, metavar="N", help="concurrent users")
    parser.add_argument(
        "--target-tokens-s", type=float, metavar="X", help="total tokens/s the users need"
    )
    parser.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=GPU_MEMORY_UTILIZATION,
        metavar="F",
        help="vLLM's share of each GPU's memory (0.9)",
    )
    parser.add_argument("--gpu", metavar="CARD", help="a catalogue id or name, e.g. rtx-4090")
    parser.add_argument("--target-seconds", type=float, metavar="S", help="time for one answer")
    parser.add_argument("--output-tokens", type=int, metavar="N", help="length of one answer")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Print the estimate; 2 with a message on stderr when the input cannot be estimated."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        result = _compute(args)
        fitting = [] if result.throughput else _fitting(result)
        serving = _serving(args, result) if args.serve else []
    except UserError as exc:
        print(f"gpu-companion estimate: {exc}", file=err)
        return 2
    if args.json:
        data = to_json(result, fitting)
        if args.serve:
            data["serving"] = [_serving_json(s) for s in serving]
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(format_table(result, fitting, serving if args.serve else None))
    return 0


def _serving(args: argparse.Namespace, result: Estimate) -> list[ServingEstimate]:
    """The card asked for, or every card the users fit on, cheapest first."""
    req = result.memory.request
    if req.task is not Task.INFERENCE:
        raise UserError("--serve sizes inference; leave out --task or use --task inference.")
    cards = [result.throughput.gpu] if result.throughput else list(load_catalogue().cards)
    found = [
        estimate_serving(
            req,
            card,
            args.users,
            target_tokens_s=args.target_tokens_s,
            utilization=args.gpu_memory_utilization,
        )
        for card in cards
    ]
    if result.throughput is None:
        found = [s for s in found if s.fits]
    return sorted(found, key=lambda s: (s.gpu.price.low + s.gpu.price.high, s.gpu.id))


def _serving_json(s: ServingEstimate) -> dict[str, Any]:
    target = [v.ok for v in s.verdicts[2:]]
    return {
        "gpu": s.gpu.id,
        "gpus": s.gpus,
        "users": s.users,
        "users_fit": s.users_fit,
        "kv_cache_pool_bytes": s.pool_bytes,
        "kv_bytes_per_user": s.kv_per_user_bytes,
        "per_user_tokens_per_s": s.per_user_tokens_s,
        "total_tokens_per_s": s.total_tokens_s,
        "meets_target": target[0] if target else None,
        "pool_formula": s.pool_formula,
        "step_formula": s.step_formula,
        "verdicts": [{"ok": v.ok, "text": v.text} for v in s.verdicts],
    }


def _model(args: argparse.Namespace) -> ModelArch:
    if args.model is not None:
        return get_model(args.model)
    path: Path = args.config_json
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(
            f"Could not read {path}: {exc}", hint="Give a model's config.json."
        ) from None
    if not isinstance(config, dict):
        raise UserError(f"{path} is not a config.json object.")
    return model_from_config(config, name=path.parent.name if path.parent.name else "")


def _compute(args: argparse.Namespace) -> Estimate:
    request = EstimateRequest(
        model=_model(args),
        task=Task(args.task),
        precision=Precision(args.precision) if args.precision else None,
        context_tokens=args.context,
        batch=args.batch,
        lora_rank=args.lora_rank,
        lora_targets=LoraTargets(args.lora_targets),
        gradient_checkpointing=args.grad_checkpointing,
        group_size=args.group_size,
        gpus=args.gpus,
        strategy=Strategy(args.strategy) if args.strategy else None,
    )
    gpu: GpuSpec | None = load_catalogue().get(args.gpu) if args.gpu else None
    return estimate(
        request, gpu, output_tokens=args.output_tokens, target_seconds=args.target_seconds
    )


def _fitting(result: Estimate) -> list[GpuSpec]:
    return load_catalogue().cards_that_fit(result.memory.total_gib)


def format_table(
    result: Estimate, fitting: list[GpuSpec], serving: list[ServingEstimate] | None = None
) -> str:
    """The breakdown as aligned text: item, GiB and the formula with its numbers."""
    mem, req = result.memory, result.memory.request
    seqs = f"{req.batch} sequence{'s' if req.batch > 1 else ''}"
    m = req.model
    gpus = f", {req.gpus} GPUs ({req.split.value}), memory per GPU" if req.gpus > 1 else ""
    ckpt = ", gradient checkpointing" if req.checkpointing else ""
    rows = [
        f"{m.name}: {req.task.value}, {mem.precision.value} weights, "
        f"{req.context:,}-token context × {seqs}{ckpt}{gpus}",
        f"{mem.params:,} parameters"
        + (f", {mem.trainable_params:,} trainable" if mem.trainable_params else "")
        + (
            f"; mixture of experts: {m.experts} experts, {m.experts_per_token} per token, "
            f"{mem.flop_params:,} active"
            if m.is_moe
            else ""
        ),
        "",
        f"{'item':<46} {'GiB':>8}  formula",
    ]
    rows += [f"{line.label:<46} {line.gib:>8.2f}  {line.formula}" for line in mem.lines]
    rows.append(f"{'total':<46} {mem.total_gib:>8.2f}")
    tp = result.throughput
    if tp is not None:
        card = tp.gpu
        rows += [
            "",
            f"On the {card.name}: {card.vram_gb} GB, {card.bandwidth_gb_s:,g} GB/s, "
            f"{tp.tflops_label}, {card.interconnect}",
        ]
        if tp.decode_tokens_per_s is not None:
            rows.append(f"  decode (upper bound)  {tp.decode_formula}")
            rows.append(f"  prefill               {tp.prefill_formula}")
        if tp.train_tokens_per_s is not None:
            rows.append(f"  training              {tp.train_formula}")
        if tp.comm_formula:
            rows.append(f"  communication         {tp.comm_formula}")
        rows += [""] + [f"{'OK ' if v.ok else 'NO '} {v.text}" for v in result.verdicts]
    else:
        names = ", ".join(f"{card.name} ({_size(card)})" for card in fitting)
        rows += ["", f"Cards with enough memory: {names or 'none in the catalogue'}."]
        rows += [f"TIP {v.text}" for v in result.verdicts]
    if serving is not None:
        rows += ["", *_serving_rows(serving)]
    rows += ["", "Assumptions:"]
    for text in ASSUMPTIONS + (SERVING_NOTES if serving is not None else ()):
        rows += textwrap.wrap(text, 98, initial_indent="- ", subsequent_indent="  ")
    return "\n".join(rows) + "\n"


def _serving_rows(serving: list[ServingEstimate]) -> list[str]:
    if not serving:
        return ["Serving: no card in the catalogue holds that many users at this context."]
    if len(serving) == 1:
        s = serving[0]
        rows = [
            f"Serving on {s.gpus} × {s.gpu.name}:"
            if s.gpus > 1
            else f"Serving on the {s.gpu.name}:"
        ]
        rows += [f"  KV cache pool  {s.pool_formula}", f"  decode step    {s.step_formula}"]
        return rows + [f"{'OK ' if v.ok else 'NO '} {v.text}" for v in s.verdicts]
    first = serving[0]
    rows = [
        f"Serving {first.users:,} users: cards that hold them, cheapest first",
        f"  {'card':<16} {'users fit':>9} {'tok/s per user':>14} {'tok/s total':>11}  target",
    ]
    for s in serving:
        target = [v.ok for v in s.verdicts[2:]]
        mark = ("meets" if target[0] else "misses") if target else ""
        name = s.gpu.name + ("" if s.gpu.runs_nvidia_smi else "*")
        rows.append(
            f"  {name:<16} {s.users_fit:>9,} {s.per_user_tokens_s:>14,.1f} "
            f"{s.total_tokens_s:>11,.0f}  {mark}"
        )
    if any(not s.gpu.runs_nvidia_smi for s in serving):
        rows.append(
            "  * not NVIDIA: no nvidia-smi or CUDA; the monitor and self-check do not apply"
        )
    return rows


def _size(card: GpuSpec) -> str:
    vendor = "" if card.runs_nvidia_smi else f", {card.vendor}: no nvidia-smi"
    return f"{card.vram_gb} GB{vendor}"


def to_json(result: Estimate, fitting: list[GpuSpec]) -> dict[str, Any]:
    """The estimate as plain JSON types, bytes exact and GiB rounded to 3 places."""
    mem, req = result.memory, result.memory.request
    m = req.model
    data: dict[str, Any] = {
        "model": {
            "name": m.name,
            "layers": m.layers,
            "hidden": m.hidden,
            "heads": m.heads,
            "kv_heads": m.kv_heads,
            "head_dim": m.dim,
            "vocab": m.vocab,
            "intermediate": m.intermediate,
            "params": mem.params,
            "active_params": mem.flop_params,
            "experts": m.experts,
            "experts_per_token": m.experts_per_token,
        },
        "task": req.task.value,
        "precision": mem.precision.value,
        "context_tokens": req.context,
        "batch": req.batch,
        "gpus": req.gpus,
        "strategy": req.split.value,
        "lora_rank": req.lora_rank if req.task.uses_lora else None,
        "lora_targets": req.lora_targets.value if req.task.uses_lora else None,
        "gradient_checkpointing": req.checkpointing,
        "trainable_params": mem.trainable_params,
        "memory": {
            "lines": [
                {
                    "key": line.key,
                    "label": line.label,
                    "bytes": line.bytes,
                    "gib": round(line.gib, 3),
                    "formula": line.formula,
                }
                for line in mem.lines
            ],
            "total_bytes": mem.total_bytes,
            "total_gib": round(mem.total_gib, 3),
        },
        "gpu": None,
        "throughput": None,
        "verdicts": [{"ok": v.ok, "text": v.text} for v in result.verdicts],
        "cards_that_fit": [card.id for card in fitting],
        "assumptions": list(ASSUMPTIONS),
    }
    tp = result.throughput
    if tp is not None:
        data["gpu"] = {"id": tp.gpu.id, "name": tp.gpu.name, "vram_gb": tp.gpu.vram_gb}
        data["throughput"] = {
            "tflops": tp.tflops_label,
            "decode_tokens_per_s": tp.decode_tokens_per_s,
            "decode_formula": tp.decode_formula or None,
            "prefill_tokens": tp.prefill_tokens or None,
            "prefill_seconds": tp.prefill_seconds,
            "prefill_formula": tp.prefill_formula or None,
            "train_tokens_per_s": tp.train_tokens_per_s,
            "train_formula": tp.train_formula or None,
            "communication_formula": tp.comm_formula or None,
        }
    return data
