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
    Task,
    estimate,
)
from gpu_companion.core.planning.model_shapes import (
    MODEL_PRESETS,
    ModelArch,
    get_model,
    model_from_config,
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
    parser.add_argument("--context", type=int, default=4096, metavar="TOKENS")
    parser.add_argument(
        "--batch", type=int, default=1, metavar="N", help="sequences per step, or users at once"
    )
    parser.add_argument("--lora-rank", type=int, default=16, metavar="R")
    parser.add_argument(
        "--lora-targets", choices=[t.value for t in LoraTargets], default="all-linear"
    )
    parser.add_argument("--grad-checkpointing", action="store_true")
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
    except UserError as exc:
        print(f"gpu-companion estimate: {exc}", file=err)
        return 2
    if args.json:
        out.write(json.dumps(to_json(result, fitting), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(format_table(result, fitting))
    return 0


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
    )
    gpu: GpuSpec | None = load_catalogue().get(args.gpu) if args.gpu else None
    return estimate(
        request, gpu, output_tokens=args.output_tokens, target_seconds=args.target_seconds
    )


def _fitting(result: Estimate) -> list[GpuSpec]:
    return load_catalogue().cards_that_fit(result.memory.total_gib)


def format_table(result: Estimate, fitting: list[GpuSpec]) -> str:
    """The breakdown as aligned text: item, GiB and the formula with its numbers."""
    mem, req = result.memory, result.memory.request
    seqs = f"{req.batch} sequence{'s' if req.batch > 1 else ''}"
    rows = [
        f"{req.model.name}: {req.task.value}, {mem.precision.value} weights, "
        f"{req.context_tokens:,}-token context × {seqs}",
        f"{mem.params:,} parameters"
        + (f", {mem.trainable_params:,} trainable" if mem.trainable_params else ""),
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
        rows += [""] + [f"{'OK ' if v.ok else 'NO '} {v.text}" for v in result.verdicts]
    else:
        names = ", ".join(f"{card.name} ({card.vram_gb} GB)" for card in fitting)
        rows += ["", f"Cards with enough memory: {names or 'none in the catalogue'}."]
    rows += ["", "Assumptions:"]
    for text in ASSUMPTIONS:
        rows += textwrap.wrap(text, 98, initial_indent="- ", subsequent_indent="  ")
    return "\n".join(rows) + "\n"


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
        },
        "task": req.task.value,
        "precision": mem.precision.value,
        "context_tokens": req.context_tokens,
        "batch": req.batch,
        "lora_rank": req.lora_rank if req.task.uses_lora else None,
        "lora_targets": req.lora_targets.value if req.task.uses_lora else None,
        "gradient_checkpointing": req.gradient_checkpointing,
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
        }
    return data
