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
