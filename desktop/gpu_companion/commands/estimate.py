"""`gpu-companion estimate`: the first-rental wizard's VRAM and speed estimate in a terminal, as a
table with the formulas filled in or as JSON for scripts."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any, TextIO

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _, ngettext
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
from gpu_companion.core.planning.memory import (
    ENGINE_NOTES,
    GIB,
    KV_CACHE_TYPES,
    Attention,
    Engine,
)
from gpu_companion.core.planning.model_shapes import (
    MODEL_PRESETS,
    ModelArch,
    format_in_name,
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
        help=_("estimate VRAM, speed and fit of a model on a GPU"),
        description=_(
            "Estimate the VRAM a job needs, line by line with formulas, and (with "
            "--gpu) its decode, prefill or training speed on that card."
        ),
    )
    parser.add_argument("--task", choices=[t.value for t in Task], default=Task.INFERENCE.value)
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--model",
        metavar="NAME",
        help=_(
            "a preset or Hugging Face id as you copy it (Qwen/Qwen2.5-7B-Instruct), or a "
            "local model folder; --list-models shows the presets"
        ),
    )
    source.add_argument(
        "--config-json",
        metavar="PATH",
        type=Path,
        help=_("a model's config.json, its folder, or its Hugging Face cache folder"),
    )
    source.add_argument("--list-models", action="store_true",
                        help=_("print the presets and exit"))  # fmt: skip
    parser.add_argument(
        "--precision",
        choices=[p.value for p in Precision],
        help=_("how the weights are stored (default: the task's usual one)"),
    )
    parser.add_argument(
        "--context",
        type=int,
        metavar="TOKENS",
        help=_(
            "tokens per sequence, prompt plus output (default: 4,096 to serve, 1,024 to "
            "train); with only --context the whole of it is sized as the prompt"
        ),
    )
    parser.add_argument(
        "--prompt-tokens", type=int, metavar="N", help=_("prompt length: prefilled in one pass")
    )
    parser.add_argument(
        "--engine",
        choices=[e.value for e in Engine],
        default=Engine.TRANSFORMERS.value,
        help=_("inference engine modelled (default transformers)"),
    )
    parser.add_argument(
        "--attention",
        choices=[a.value for a in Attention],
        default=Attention.SDPA.value,
        help=_("eager materialises the score matrix; sdpa and flash do not"),
    )
    parser.add_argument(
        "--kv-cache-type", choices=list(KV_CACHE_TYPES), default="f16", help=_("llama.cpp only")
    )
    parser.add_argument(
        "--prompt-logits",
        action="store_true",
        help=_("transformers before 4.45: fp32 logits of every prompt token are kept"),
    )
    parser.add_argument(
        "--batched-tokens",
        type=int,
        metavar="N",
        help=_("vLLM max_num_batched_tokens (8,192) or llama.cpp n_ubatch (512)"),
    )
    parser.add_argument(
        "--batch", type=int, default=1, metavar="N",
        help=_("sequences per step, or users at once"),
    )  # fmt: skip
    parser.add_argument("--lora-rank", type=int, default=16, metavar="R")
    parser.add_argument(
        "--lora-targets", choices=[t.value for t in LoraTargets], default="all-linear"
    )
    parser.add_argument(
        "--grad-checkpointing",
        action=argparse.BooleanOptionalAction,
        help=_("default: on for training, as PEFT and LLaMA-Factory do"),
    )
    parser.add_argument(
        "--group-size", type=int, default=128, metavar="G", help=_("int2/3/4 quantisation group")
    )
    parser.add_argument("--gpus", type=int, default=1, metavar="N",
                        help=_("GPUs sharing the job"))  # fmt: skip
    parser.add_argument(
        "--strategy",
        choices=[s.value for s in Strategy],
        help=_("how N GPUs share it (default: tp to serve, ddp to train)"),
    )
    parser.add_argument(
        "--serve", action="store_true",
        help=_("serving concurrency: users that fit and tokens/s"),
    )  # fmt: skip
    parser.add_argument("--users", type=int, default=1, metavar="N", help=_("concurrent users"))
    parser.add_argument(
        "--target-tokens-s", type=float, metavar="X", help=_("total tokens/s the users need")
    )
    parser.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=GPU_MEMORY_UTILIZATION,
        metavar="F",
        help=_("vLLM's share of each GPU's memory (0.9)"),
    )
    parser.add_argument("--gpu", metavar="CARD",
                        help=_("a catalogue id or name, e.g. rtx-4090"))  # fmt: skip
    parser.add_argument("--target-seconds", type=float, metavar="S",
                        help=_("time for one answer"))  # fmt: skip
    parser.add_argument(
        "--output-tokens",
        type=int,
        metavar="N",
        help=_("tokens generated per answer: their KV cache counts, and the answer time"),
    )
    parser.add_argument("--json", action="store_true", help=_("print JSON instead of a table"))
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Print the estimate; 2 with a message on stderr when the input cannot be estimated."""
    if args.json:  # for scripts: every text in it English, whatever the language
        from gpu_companion.commands.opening import english

        with english():
            return _run(args, out or sys.stdout, err or sys.stderr)
    return _run(args, out or sys.stdout, err or sys.stderr)


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.list_models:
        return _list_models(args, out)
    try:
        if args.model is None and args.config_json is None:
            raise UserError(_("Name a model: --model NAME, --config-json PATH or --list-models."))
        result = _compute(args)
        fitting = [] if result.throughput else _fitting(result)
        # vLLM on a named card: its pool is the answer (longest context, sequences that fit)
        serve = bool(args.serve) or bool(
            args.engine == Engine.VLLM.value and args.gpu and Task(args.task) is Task.INFERENCE
        )
        if serve and not args.serve:
            args.users = max(args.users, args.batch)
        serving = _serving(args, result) if serve else []
    except UserError as exc:
        if args.json:
            error = {"code": _code(exc), "message": str(exc)}
            out.write(json.dumps({"error": error}, indent=2, ensure_ascii=False) + "\n")
        else:
            print(_("gpu-companion estimate: {problem}").format(problem=exc), file=err)
        return 2
    if args.json:
        data = to_json(result, fitting)
        if serve:
            data["serving"] = [_serving_json(s) for s in serving]
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(format_table(result, fitting, serving if serve else None))
    return 0


def _code(exc: UserError) -> str:
    """A stable code for a refusal: `unknown_model`, `invalid_<field>` or `refused`."""
    if isinstance(exc, ValidationError):
        if exc.field == "model" and exc.message.startswith("Unknown model"):
            return "unknown_model"
        return f"invalid_{exc.field}"
    return "refused"


def _list_models(args: argparse.Namespace, out: TextIO) -> int:
    rows = [
        {"key": key, "name": arch.name, "params": arch.params, "layers": arch.layers}
        for key, arch in MODEL_PRESETS.items()
    ]
    if args.json:
        out.write(json.dumps({"models": rows}, indent=2) + "\n")
    else:
        for key, arch in MODEL_PRESETS.items():
            out.write(f"{key:<16} {arch.name:<18} {arch.params / 1e9:>7.2f} B\n")
        out.write(
            _(
                "Hugging Face ids (Qwen/Qwen2.5-7B-Instruct) and -Instruct/-Chat/-Base names "
                "resolve to these; any other model: --config-json PATH."
            )
            + "\n"
        )
    return 0


def _config_path(path: Path) -> Path:
    """config.json itself, a model folder holding it, or a Hugging Face cache folder
    (models--org--name, whose snapshots/<commit>/ hold it)."""
    if not path.is_dir():
        return path  # a file, or a path that is not there: reading it says which
    if (path / "config.json").is_file():
        return path / "config.json"
    snapshots = sorted((path / "snapshots").glob("*/config.json"), key=lambda p: p.stat().st_mtime)
    if snapshots:
        return snapshots[-1]
    raise UserError(
        _("No config.json in {path}.").format(path=path),
        hint=_("Give a model's config.json, its folder, or its Hugging Face cache folder."),
    )


def _serving(args: argparse.Namespace, result: Estimate) -> list[ServingEstimate]:
    """The card asked for, or every card the users fit on, cheapest first."""
    req = result.memory.request
    if req.task is not Task.INFERENCE:
        raise UserError(_("--serve sizes inference; leave out --task or use --task inference."))
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
        "max_concurrency": round(s.max_concurrency, 2),
        "longest_context_tokens": s.longest_context,
        "per_user_tokens_per_s": s.per_user_tokens_s,
        "total_tokens_per_s": s.total_tokens_s,
        "meets_target": target[0] if target else None,
        "pool_formula": s.pool_formula,
        "step_formula": s.step_formula,
        "verdicts": [{"ok": v.ok, "text": v.text} for v in s.verdicts],
    }


def _model(args: argparse.Namespace) -> ModelArch:
    if args.model is not None and not Path(args.model).is_dir():
        return get_model(args.model)
    given = Path(args.model) if args.model is not None else args.config_json
    path = _config_path(given)
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(
            _("Could not read {path}: {problem}").format(path=path, problem=exc),
            hint=_("Give a model's config.json."),
        ) from None
    if not isinstance(config, dict):
        raise UserError(_("{path} is not a config.json object.").format(path=path))
    name = given.name if given.is_dir() else path.parent.name
    if name.startswith("models--"):
        name = name.removeprefix("models--").replace("--", "/")
    return model_from_config(config, name=name)


def _compute(args: argparse.Namespace) -> Estimate:
    request = EstimateRequest(
        model=_model(args),
        task=Task(args.task),
        precision=_precision(args),
        context_tokens=args.context,
        prompt_tokens=args.prompt_tokens,
        output_tokens=args.output_tokens,
        engine=Engine(args.engine),
        attention=Attention(args.attention),
        kv_cache_type=args.kv_cache_type,
        batched_tokens=args.batched_tokens,
        prompt_logits=args.prompt_logits,
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


def _precision(args: argparse.Namespace) -> Precision | None:
    """--precision, else the format a Hugging Face id names (Qwen2.5-7B-Instruct-AWQ)."""
    if args.precision:
        return Precision(args.precision)
    named = format_in_name(args.model or "")
    return Precision(named) if named and Task(args.task) is Task.INFERENCE else None


def _fitting(result: Estimate) -> list[GpuSpec]:
    return load_catalogue().cards_that_fit(result.memory.total_gib)


def format_table(
    result: Estimate, fitting: list[GpuSpec], serving: list[ServingEstimate] | None = None
) -> str:
    """The breakdown as aligned text: item, GiB and the formula with its numbers."""
    mem, req = result.memory, result.memory.request
    seqs = ngettext("{n} sequence", "{n} sequences", req.batch).format(n=req.batch)
    m = req.model
    gpus = (
        _(", {n} GPUs ({split}), memory per GPU").format(n=req.gpus, split=req.split.value)
        if req.gpus > 1
        else ""
    )
    ckpt = _(", gradient checkpointing") if req.checkpointing else ""
    rows = [
        _(
            "{model}: {task}, {precision} weights, {context}-token context × {seqs}{ckpt}{gpus}"
        ).format(
            model=m.name,
            task=req.task.value,
            precision=mem.precision.value,
            context=f"{req.context:,}",
            seqs=seqs,
            ckpt=ckpt,
            gpus=gpus,
        ),  # fmt: skip
        *(
            [_("Engine: {note}").format(note=_(ENGINE_NOTES[req.engine]))]
            if req.task is Task.INFERENCE
            else []
        ),
        *(
            [
                _("All {n} GPUs together: {gib} GiB").format(
                    n=req.gpus, gib=f"{mem.all_gpus_bytes / GIB:,.2f}"
                )
            ]
            if req.gpus > 1
            else []
        ),
        _("{n} parameters").format(n=f"{mem.params:,}")
        + (
            _(", {n} trainable").format(n=f"{mem.trainable_params:,}")
            if mem.trainable_params
            else ""
        )
        + (
            _(
                "; mixture of experts: {experts} experts, {per_token} per token, {active} active"
            ).format(
                experts=m.experts, per_token=m.experts_per_token, active=f"{mem.flop_params:,}"
            )  # fmt: skip
            if m.is_moe
            else ""
        ),
        "",
        _columns((_("item"), -46), ("GiB", 8), (_("formula"), 0)),
    ]
    rows += [f"{_pad(line.label, -46)} {line.gib:>8.2f}  {line.formula}" for line in mem.lines]
    rows.append(_pad(_("total"), -46) + f" {mem.total_gib:>8.2f}")
    tp = result.throughput
    if tp is not None:
        card = tp.gpu
        rows += [
            "",
            _("On the {card}: {vram} GB, {bandwidth} GB/s, {tflops}, {link}").format(
                card=card.name,
                vram=card.vram_gb,
                bandwidth=f"{card.bandwidth_gb_s:,g}",
                tflops=tp.tflops_label,
                link=card.interconnect,
            ),
        ]
        if tp.decode_tokens_per_s is not None:
            rows.append(_("  decode (upper bound)  {formula}").format(formula=tp.decode_formula))
            rows.append(_("  prefill               {formula}").format(formula=tp.prefill_formula))
        if tp.train_tokens_per_s is not None:
            rows.append(_("  training              {formula}").format(formula=tp.train_formula))
        if tp.comm_formula:
            rows.append(_("  communication         {formula}").format(formula=tp.comm_formula))
        rows += [""] + [f"{_mark(v.ok)} {v.text}" for v in result.verdicts]
    else:
        names = ", ".join(f"{card.name} ({_size(card)})" for card in fitting)
        rows += [
            "",
            _("Cards with enough memory: {names}.").format(
                names=names or _("none in the catalogue")
            ),
        ]
        rows += [_("TIP {text}").format(text=v.text) for v in result.verdicts]
    if serving is not None:
        rows += ["", *_serving_rows(serving)]
    rows += ["", _("Assumptions:")]
    for text in ASSUMPTIONS + (SERVING_NOTES if serving is not None else ()):
        rows += textwrap.wrap(_(text), 98, initial_indent="- ", subsequent_indent="  ")
    return "\n".join(rows) + "\n"


def _serving_rows(serving: list[ServingEstimate]) -> list[str]:
    if not serving:
        return [_("Serving: no card in the catalogue holds that many users at this context.")]
    if len(serving) == 1:
        s = serving[0]
        rows = [
            _("Serving on {n} × {card}:").format(n=s.gpus, card=s.gpu.name)
            if s.gpus > 1
            else _("Serving on the {card}:").format(card=s.gpu.name)
        ]
        rows += [_("  KV cache pool  {formula}").format(formula=s.pool_formula),
                 _("  decode step    {formula}").format(formula=s.step_formula)]  # fmt: skip
        return rows + [f"{_mark(v.ok)} {v.text}" for v in s.verdicts]
    first = serving[0]
    rows = [
        _("Serving {n} users: cards that hold them, cheapest first").format(n=f"{first.users:,}"),
        "  "
        + _columns(
            (_("card"), -16), (_("users fit"), 9), (_("tok/s per user"), 14),
            (_("tok/s total"), 11), (_("target"), 0),
        ),
    ]  # fmt: skip
    for s in serving:
        target = [v.ok for v in s.verdicts[2:]]
        mark = (_("meets") if target[0] else _("misses")) if target else ""
        name = s.gpu.name + ("" if s.gpu.runs_nvidia_smi else "*")
        rows.append(
            f"  {name:<16} {s.users_fit:>9,} {s.per_user_tokens_s:>14,.1f} "
            f"{s.total_tokens_s:>11,.0f}  {mark}"
        )
    if any(not s.gpu.runs_nvidia_smi for s in serving):
        rows.append(
            _("  * not NVIDIA: no nvidia-smi or CUDA; the monitor and self-check do not apply")
        )
    return rows


def _mark(ok: bool) -> str:
    """The verdict's mark in front of its sentence."""
    return _("OK ") if ok else _("NO ")


def _columns(*cells: tuple[str, int]) -> str:
    """A header line: each (text, width), negative width left-aligned, 0 unpadded; two spaces
    before an unpadded last column, one between the others (the rows' own spacing)."""
    out = ""
    for i, (text, width) in enumerate(cells):
        sep = "" if i == 0 else ("  " if width == 0 else " ")
        out += sep + _pad(text, width)
    return out


def _pad(text: str, width: int) -> str:
    """`text` padded to `width` terminal columns (negative: left-aligned), a wide (CJK)
    character counting two, as a terminal shows it."""
    import unicodedata

    shown = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    fill = " " * max(abs(width) - shown, 0)
    return text + fill if width < 0 else fill + text


def _size(card: GpuSpec) -> str:
    vendor = (
        "" if card.runs_nvidia_smi else _(", {vendor}: no nvidia-smi").format(vendor=card.vendor)
    )
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
        "prompt_tokens": req.prompt,
        "output_tokens": req.output_tokens,
        "engine": {
            "name": req.engine.value,
            "attention": req.attention.value,
            "prefill_tokens": req.prefill_tokens,
            "kv_cache_type": req.kv_cache_type,
            "assumes": ENGINE_NOTES[req.engine],
        },
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
                    "all_gpus_bytes": mem.line_total(line),
                    "formula": line.formula,
                }
                for line in mem.lines
            ],
            "per_gpu": "bytes and total_bytes are per GPU (the busiest); all_gpus_* add every GPU",
            "total_bytes": mem.total_bytes,
            "total_gib": round(mem.total_gib, 3),
            "all_gpus_total_bytes": mem.all_gpus_bytes,
            "all_gpus_total_gib": round(mem.all_gpus_bytes / GIB, 3),
            "pytorch_allocated_bytes": mem.allocated_bytes,
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
