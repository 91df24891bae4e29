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


def test_chinese_troubleshooting_page_matches_the_app_messages():
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "make_troubleshooting.py"),
            "--check",
            "--lang",
            "zh_CN",
        ],
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
        "docs/zh_CN/user-guide.md",
        "docs/zh_CN/troubleshooting.md",
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
               "schema_migrations", "storage", "common", "python3", "vastai", "runpodctl",
               "_", "ngettext"}


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


# --- the Chinese guide (docs/zh_CN/) ---------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation (full-width too) dropped, spaces
    to hyphens; CJK characters stay."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(doc) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", doc.read_text(), re.M)}


def test_chinese_guide_shows_the_same_pictures_in_chinese():
    english = (REPO / "docs" / "user-guide.md").read_text()
    chinese = (REPO / "docs" / "zh_CN" / "user-guide.md").read_text()
    wanted = set(re.findall(r"!\[[^\]]*\]\(screenshots/([\w-]+\.png)\)", english))
    shown = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", chinese)
    assert {p.removeprefix("../screenshots/zh_CN/") for p in shown} == wanted
    assert all(p.startswith("../screenshots/zh_CN/") for p in shown), shown
    folder = REPO / "docs" / "screenshots" / "zh_CN"
    if folder.is_dir():  # once scripts/screenshots.py --lang zh_CN has made them
        missing = {p for p in wanted if not (folder / p).exists()}
        assert missing == set(), f"docs/screenshots/zh_CN/ lacks {sorted(missing)}"


def test_chinese_guide_keeps_every_command_of_the_english_one():
    def commands(text: str) -> set[str]:  # indented code lines, without their comment
        return {
            line.split("  #")[0].strip()
            for line in text.splitlines()
            if line.startswith("    ") and not line.startswith("     ")
        }

    english = (REPO / "docs" / "user-guide.md").read_text()
    chinese = (REPO / "docs" / "zh_CN" / "user-guide.md").read_text()
    assert commands(english) - commands(chinese) == set()
    def inline(text: str) -> set[str]:  # `code` in the prose, a line break read as a space
        return {re.sub(r"\s+", " ", c) for c in re.findall(r"`([^`]+)`", text)}

    assert inline(english) - inline(chinese) == set()


def test_chinese_docs_links_and_anchors_resolve():
    folder = REPO / "docs" / "zh_CN"
    for doc in (folder / "user-guide.md", folder / "troubleshooting.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
            if target.startswith(("http://", "https://")) or target.endswith(".png"):
                continue
            path, _sep, anchor = target.partition("#")
            linked = (doc.parent / path).resolve() if path else doc
            assert linked.exists(), f"{doc.name}: {target}"
            if anchor:
                assert anchor in _anchors(linked), f"{doc.name}: {target}"
