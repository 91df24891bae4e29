#!/usr/bin/env python3
"""On a computer with a real NVIDIA GPU: the app's collector and self-check against the real
nvidia-smi and torch, and the inference memory PyTorch really allocates at long prompts (for
the estimator's tests). Standard library plus whatever torch/transformers the machine has.

    python3 scripts/gpu_device_check.py --out DIR [--seconds 5]

Prints a report and writes the raw outputs (nvidia-smi's table, --help-query-gpu, the
collector's samples, the probe's records, the memory table as JSON) into DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "desktop"))


def _resources_from_source() -> None:
    """`gpu_companion.resources` is the repo's resources/ folder (a package-dir mapping that
    only an install makes): from a plain checkout it is put in place here."""
    import importlib.util

    import gpu_companion

    spec = importlib.util.spec_from_file_location(
        "gpu_companion.resources", REPO / "resources" / "__init__.py",
        submodule_search_locations=[str(REPO / "resources")],
    )  # fmt: skip
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_companion.resources"] = module
    spec.loader.exec_module(module)
    gpu_companion.resources = module  # type: ignore[attr-defined]


_resources_from_source()


def save(out: Path, name: str, text: str) -> None:
    (out / name).write_text(text)


def raw_outputs(out: Path) -> None:
    for name, argv in {
        "nvidia-smi.txt": ["nvidia-smi"],
        "help-query-gpu.txt": ["nvidia-smi", "--help-query-gpu"],
        "nvidia-smi-q.txt": ["nvidia-smi", "-q"],
    }.items():
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            save(out, name, proc.stdout + proc.stderr)
        except Exception as exc:  # noqa: BLE001 - a report, not a program
            save(out, name, f"failed: {exc}")
    table = (out / "nvidia-smi.txt").read_text()
    print("== nvidia-smi header")
    print("\n".join(table.splitlines()[:4]))


def collector(out: Path, seconds: float) -> None:
    """The app's own HostCollector on this computer's nvidia-smi, as the Monitor runs it."""
    from gpu_companion.core.hosts.registry import LOCAL_HOST
    from gpu_companion.core.monitor.collector import (
        CollectorConfig,
        HostCollector,
        SamplesEvent,
        StatusEvent,
    )

    events: list[Any] = []
    lock = threading.Lock()

    def listen(event: Any) -> None:
        with lock:
            events.append(event)

    col = HostCollector(LOCAL_HOST, None, listen, CollectorConfig(interval_ms=500))
    col.start()
    time.sleep(seconds)
    col.stop()
    with lock:
        ticks = [e for e in events if isinstance(e, SamplesEvent)]
        states = [e.status.state.value for e in events if isinstance(e, StatusEvent)]
    print(f"== collector: {len(ticks)} ticks in {seconds:g} s; states {states}")
    print(f"   fields asked: {', '.join(col.fields)}")
    rows = []
    for tick in ticks[-2:]:
        for ts in tick.samples:
            s = ts.sample
            row = {k: (str(v) if v is not None else None) for k, v in vars(s).items()}
            rows.append(row)
    if rows:
        last = rows[-1]
        empty = sorted(k for k, v in last.items() if v is None)
        print(f"   GPU {last.get('index')} {last.get('name')}: util {last.get('utilization_gpu')} %"
              f", {last.get('memory_used_mib')}/{last.get('memory_total_mib')} MiB, "
              f"{last.get('power_draw_w')}/{last.get('power_limit_w')} W")
        print(f"   fields without a value: {empty}")
    save(out, "collector.json", json.dumps({"states": states, "rows": rows}, indent=1))


def selfcheck(out: Path) -> None:
    """The probe as the app sends it (python3 - ARGS), judged by the app's rules."""
    from gpu_companion.core.selfcheck.rules import Findings, judge

    probe = REPO / "desktop" / "gpu_companion" / "core" / "selfcheck" / "probe.py"
    proc = subprocess.run(
        [sys.executable, "-", "--data-dir", str(out), "--bench-seconds", "1"],
        input=probe.read_text(), capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    save(out, "probe.jsonl", proc.stdout)
    save(out, "probe.stderr", proc.stderr)
    findings = Findings(1)
    print("== self-check (the app's probe and rules)")
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        for step in judge(json.loads(line), findings):
            print(f"   [{step.status.value}] {step.title}: {step.evidence}"[:220])


def memory(out: Path) -> None:
    """What PyTorch allocates for a forward pass over the whole prompt plus a short generation,
    random weights in bf16 (transformers' own Qwen2 architecture), SDPA attention."""
    try:
        import torch
        from transformers import Qwen2Config, Qwen2ForCausalLM
    except Exception as exc:  # noqa: BLE001
        print(f"== memory: skipped ({exc})")
        return
    import transformers

    shapes = {  # Qwen2.5's published configs
        "Qwen2.5-0.5B": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                             num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                             tie_word_embeddings=True),
        "Qwen2.5-1.5B": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                             num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
                             tie_word_embeddings=True),
        "Qwen2.5-7B": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                           num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
                           tie_word_embeddings=False),
    }  # fmt: skip
    table = []
    print(f"== memory: torch {torch.__version__}, transformers {transformers.__version__}")
    for name, shape in shapes.items():
        cfg = Qwen2Config(**shape, max_position_embeddings=65536, torch_dtype="bfloat16")
        with torch.device("cuda"):
            model = Qwen2ForCausalLM(cfg).to(torch.bfloat16)
        model.config._attn_implementation = "sdpa"
        model.eval()
        weights = torch.cuda.memory_allocated()
        for prompt in (1, 6144, 14336, 30720):
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            ids = torch.randint(0, cfg.vocab_size, (1, prompt), device="cuda")
            with torch.no_grad():
                model.generate(ids, max_new_tokens=32, min_new_tokens=32, do_sample=False,
                               pad_token_id=0)  # fmt: skip
            peak = torch.cuda.max_memory_allocated()
            row = {"model": name, "prompt": prompt, "new_tokens": 32,
                   "weights_gib": weights / 2**30, "peak_gib": peak / 2**30}  # fmt: skip
            table.append(row)
            print(f"   {name:14s} prompt {prompt:6d}: weights {row['weights_gib']:.2f} GiB, "
                  f"peak {row['peak_gib']:.2f} GiB")
        del model
        torch.cuda.empty_cache()
    info = {"torch": torch.__version__, "transformers": transformers.__version__,
            "gpu": torch.cuda.get_device_name(0), "attention": "sdpa", "rows": table}  # fmt: skip
    save(out, "memory.json", json.dumps(info, indent=1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if shutil.which("nvidia-smi") is None:
        print("nvidia-smi is not on PATH: run this on a computer with an NVIDIA GPU")
        return 2
    for part in (raw_outputs, lambda o: collector(o, args.seconds), selfcheck,
                 *(() if args.skip_memory else (memory,))):  # fmt: skip
        try:
            part(args.out)
        except Exception as exc:  # noqa: BLE001 - the report goes on
            import traceback

            print(f"!! {getattr(part, '__name__', 'part')} failed: {exc}")
            traceback.print_exc()
    print(f"python {sys.version.split()[0]}; outputs in {args.out} ({os.listdir(args.out)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
