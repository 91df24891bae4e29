"""The self-check's probe: sent whole to the rented host on stdin (`python3 - ARGS`), it prints one
JSON object per line as each measurement finishes, so the app shows progress over one round trip.

Only the standard library (plus torch when the host has it), and Python 3.6 syntax: it runs under
whatever python3 the image ships. It measures and reports raw facts; judging them is done locally
by `selfcheck.py`, where it can be tested.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import warnings
from typing import Any, Dict, List

QUERY_FIELDS = "index,uuid,name,memory.used,memory.total,driver_version"
APP_FIELDS = "gpu_uuid,pid,process_name,used_gpu_memory"


def emit(step: str, **data: Any) -> None:
    data["step"] = step
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def run(argv: List[str], timeout: float = 60) -> Dict[str, Any]:
    try:
        proc = subprocess.run(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            timeout=timeout,
        )
    except FileNotFoundError:
        return {"rc": 127, "out": "", "err": f"{argv[0]}: command not found"}
    except subprocess.TimeoutExpired:
        return {"rc": 124, "out": "", "err": f"{argv[0]} did not answer in {timeout} s"}
    return {"rc": proc.returncode, "out": proc.stdout[-20000:], "err": proc.stderr[-4000:]}


def probe_python() -> None:
    pip = run([sys.executable, "-m", "pip", "--version"])
    emit(
        "python",
        version=platform.python_version(),
        executable=sys.executable,
        pip_rc=pip["rc"],
        pip=(pip["out"] or pip["err"]).strip()[:300],
    )


def query_fields() -> str:
    """R610 marks driver_version deprecated in favour of kmd_version: ask for kmd_version where
    `--help-query-gpu` lists it, driver_version elsewhere."""
    helped = run(["nvidia-smi", "--help-query-gpu"], timeout=30)
    if '"kmd_version"' in helped["out"]:
        return QUERY_FIELDS.replace("driver_version", "kmd_version")
    return QUERY_FIELDS


def probe_nvidia_smi() -> None:
    fields = query_fields()
    emit(
        "nvidia_smi",
        fields=fields.split(","),
        table=run(["nvidia-smi"]),
        query=run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader,nounits"]),
        apps=run(
            ["nvidia-smi", "--query-compute-apps=" + APP_FIELDS, "--format=csv,noheader,nounits"]
        ),
    )


def probe_torch(args: argparse.Namespace) -> None:
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising anything
        emit("torch", imported=False, error=f"{type(exc).__name__}: {exc}")
        emit("matmul", skipped="torch is not installed")
        emit("bf16", skipped="torch is not installed")
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            available = bool(torch.cuda.is_available())
            count = torch.cuda.device_count() if available else 0
            error = ""
        except Exception as exc:
            available, count, error = False, 0, f"{type(exc).__name__}: {exc}"
    names = [torch.cuda.get_device_name(i) for i in range(count)]
    emit(
        "torch",
        imported=True,
        version=torch.__version__,
        cuda=torch.version.cuda,
        available=available,
        device_count=count,
        devices=names,
        error=error,
        warnings=[str(w.message)[:500] for w in caught],
    )
    if not available:
        emit("matmul", skipped="no CUDA device")
        emit("bf16", skipped="no CUDA device")
        return
    probe_matmul(torch)
    probe_bf16(torch, args.matmul_n, args.bench_seconds)


def probe_matmul(torch: Any) -> None:
    """Small integers keep every product exact in fp32, so GPU and CPU results must be equal."""
    try:
        n = 256
        a = (torch.arange(n * n, dtype=torch.float32).reshape(n, n) % 7) - 3
        b = (torch.arange(n * n, dtype=torch.float32).reshape(n, n).t() % 5) - 2
        want = a @ b
        on_gpu = a.cuda() @ b.cuda()
        got = on_gpu.cpu()
        device = "{} ({})".format(on_gpu.device, torch.cuda.get_device_name(on_gpu.device))
        emit("matmul", n=n, max_error=float((got - want).abs().max()), device=device)
    except Exception as exc:
        emit("matmul", error=f"{type(exc).__name__}: {exc}")


def probe_bf16(torch: Any, n: int, seconds: float) -> None:
    try:
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            a @ b
        torch.cuda.synchronize()
        iters, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(10):
                a @ b
            iters += 10
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        emit("bf16", n=n, iters=iters, seconds=elapsed, tflops=2 * n**3 * iters / elapsed / 1e12)
    except Exception as exc:
        emit("bf16", error=f"{type(exc).__name__}: {exc}")


def probe_disk(path: str, size_mb: int) -> None:
    path = os.path.expanduser(path or "~")
    result: Dict[str, Any] = {"path": path}
    try:
        usage = shutil.disk_usage(path)
        result.update(free_bytes=usage.free, total_bytes=usage.total)
        name = os.path.join(path, f".gpu-companion-selfcheck-{os.getpid()}")
        block = os.urandom(1 << 20)
        try:
            start = time.perf_counter()
            with open(name, "wb") as f:
                for _ in range(size_mb):
                    f.write(block)
                f.flush()
                os.fsync(f.fileno())
                if hasattr(os, "posix_fadvise"):  # drop it from the page cache: read the disk
                    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            result["write_mb_s"] = size_mb / (time.perf_counter() - start)
            start = time.perf_counter()
            with open(name, "rb", buffering=0) as f:
                while f.read(1 << 20):
                    pass
            result["read_mb_s"] = size_mb / (time.perf_counter() - start)
            result["size_mb"] = size_mb
        finally:
            if os.path.exists(name):
                os.unlink(name)
    except OSError as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
    emit("disk", **result)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="gpu-companion-selfcheck")
    parser.add_argument("--data-dir", default="")
    parser.add_argument("--disk-mb", type=int, default=256)
    parser.add_argument("--matmul-n", type=int, default=8192)
    parser.add_argument("--bench-seconds", type=float, default=1.0)
    args = parser.parse_args(argv)
    probe_python()
    probe_nvidia_smi()
    probe_torch(args)
    probe_disk(args.data_dir, args.disk_mb)
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
