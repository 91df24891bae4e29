"""The docs stay true to the app: generated troubleshooting page, guide pictures, README link."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO


def test_troubleshooting_page_matches_the_app_messages():
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_troubleshooting.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr


def test_user_guide_pictures_exist_and_every_page_has_one():
    guide = (REPO / "docs" / "user-guide.md").read_text()
    pictures = re.findall(r"!\[[^\]]*\]\((screenshots/[\w-]+\.png)\)", guide)
    for pic in pictures:
        assert (REPO / "docs" / pic).exists(), pic
    from gpu_companion.ui.shell.build import PAGES

    shown = {p.split("/")[1].removesuffix(".png") for p in pictures}
    assert {cls.key for cls in PAGES} | {"welcome"} <= shown


def test_readme_links_the_guide_and_docs():
    readme = (REPO / "README.md").read_text()
    for doc in (
        "docs/user-guide.md",
        "docs/troubleshooting.md",
        "docs/architecture.md",
        "docs/packaging.md",
    ):
        assert f"]({doc})" in readme
        assert (REPO / doc).exists()


def _core_bullets() -> dict[str, str]:
    """docs/architecture.md's bullet per core package: '- **`name/`**: ...' up to the next."""
    text = (REPO / "docs" / "architecture.md").read_text()
    part = text.split("## The core packages", 1)[1].split("\n## ", 1)[0]
    return {
        m.group(1): m.group(2)
        for m in re.finditer(r"^- \*\*`(\w+)/`\*\*(.*?)(?=^- \*\*|\Z)", part, re.M | re.S)
    }


# words in backticks that name something other than a module of the package (a function, an
# attribute, a class's member, a CLI verb): the rest must be the package's modules
NOT_MODULES = {"check_id", "instances", "read", "request", "on_hosts_changed", "on_job_changed",
               "schema_migrations", "storage", "common", "python3", "vastai", "runpodctl"}


def test_the_architecture_names_every_core_package_and_module_and_only_real_ones():
    core = REPO / "desktop" / "gpu_companion" / "core"
    packages = {p.name for p in core.iterdir() if (p / "__init__.py").exists()}
    bullets = _core_bullets()
    assert packages - set(bullets) == set(), "core packages missing from docs/architecture.md"
    assert set(bullets) - packages == set(), "docs/architecture.md names core packages gone"
    for name, bullet in bullets.items():
        modules = {
            p.stem if p.suffix == ".py" else p.name
            for p in [*(core / name).iterdir(), *(core / name).glob("*/*.py")]
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
        }
        named = set(re.findall(r"`([a-z_][a-z0-9_]*)`", bullet)) - NOT_MODULES
        assert named - modules == set(), f"core/{name}: named in the docs but gone"
        assert modules - named == set(), f"core/{name}: modules the docs do not name"
