"""Security rules checked on the source tree: no host key auto-trust, no shell strings."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Spelled in pieces so this file does not match itself.
FORBIDDEN = ["AutoAdd" + "Policy", "Warning" + "Policy", "shell" + "=True", "shell" + " = True"]
ROOTS = ["desktop", "tests", "scripts", "benchmarks", "packaging", "resources"]


def offending_lines(text: str) -> list[str]:
    pattern = re.compile("|".join(re.escape(f) for f in FORBIDDEN))
    return [line.strip() for line in text.splitlines() if pattern.search(line)]


def test_the_check_finds_what_it_looks_for():
    sample = "client.set_missing_host_key_policy(paramiko." + FORBIDDEN[0] + "())\n"
    sample += "subprocess.run(cmd, " + FORBIDDEN[2] + ")\n"
    assert len(offending_lines(sample)) == 2


def test_no_auto_trusting_policies_or_shell_true_anywhere():
    hits = []
    for root in ROOTS:
        base = REPO / root
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            if path.suffix in (".py", ".sh", ".spec", ".toml", ".cfg") or path.name == "test":
                if path.is_file() and "__pycache__" not in path.parts:
                    text = path.read_text(encoding="utf-8", errors="replace")
                    hits += [f"{path.relative_to(REPO)}: {line}" for line in offending_lines(text)]
    assert hits == []
