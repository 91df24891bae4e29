"""Desktop integration files and the Linux bundle.

The bundle build takes about a minute and a few hundred MB: it runs only with
GPU_COMPANION_TEST_BUNDLE=1 (packaging/build-linux.sh is the same command a release uses).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, missing_component
from tests.harness.bills import write_bill

DESKTOP = REPO / "packaging" / "gpu-companion.desktop"


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        missing_component("desktop-file-validate is not installed (Debian: desktop-file-utils)")
    return subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)


def test_desktop_entry_validates_without_hints():
    result = validate(DESKTOP)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


def test_desktop_entry_matches_the_app_id():
    text = DESKTOP.read_text()
    assert "Icon=gpu-companion\n" in text  # the hicolor name make_icons.py writes
    assert "StartupWMClass=gpu-companion\n" in text  # the bundle's executable name


def test_install_script_points_the_menu_entry_at_the_bundle(tmp_path):
    """The script run from an unpacked bundle in an awkward folder yields a valid entry."""
    bundle = tmp_path / "My Apps $x" / "gpu-companion-0.1.0"
    (bundle / "share" / "applications").mkdir(parents=True)
    shutil.copy(DESKTOP, bundle / "share" / "applications")
    subprocess.run(
        [sys.executable, str(REPO / "packaging" / "make_icons.py"), "--out", str(tmp_path / "i")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    shutil.copytree(tmp_path / "i" / "hicolor", bundle / "share" / "icons-hicolor")
    shutil.copy(REPO / "packaging" / "install-desktop-entry.sh", bundle)
    exe = bundle / "gpu-companion"
    exe.write_text("#!/bin/sh\necho started\n")
    exe.chmod(0o755)
    data = tmp_path / "data"
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    subprocess.run(
        ["bash", str(bundle / "install-desktop-entry.sh")],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    entry = data / "applications" / "gpu-companion.desktop"
    result = validate(entry)
    assert result.returncode == 0 and result.stdout == "", result.stdout
    text = entry.read_text()
    assert f"TryExec={exe}\n" in text
    assert 'Exec="' + str(exe).replace("$", "\\\\$") + '"\n' in text
    assert (data / "icons" / "hicolor" / "48x48" / "apps" / "gpu-companion.png").exists()
    subprocess.run(
        ["bash", str(bundle / "install-desktop-entry.sh"), "--remove"],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert not entry.exists()
    assert not list((data / "icons").rglob("gpu-companion.*"))


@pytest.mark.skipif(
    os.environ.get("GPU_COMPANION_TEST_BUNDLE") != "1",
    reason="builds the PyInstaller bundle (about a minute): set GPU_COMPANION_TEST_BUNDLE=1",
)
def test_linux_bundle_builds_starts_and_finds_the_keyring(keyring_session, tmp_path):
    out = subprocess.run(
        [str(REPO / "packaging" / "build-linux.sh")],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "smoke test: 8 pages rendered" in out.stdout
    assert "desktop-file-validate: ok" in out.stdout
    bundles = sorted((REPO / "dist").glob("gpu-companion-*-linux-*/gpu-companion"))
    folder = bundles[-1].parent
    assert (folder.parent / f"{folder.name}.tar.gz").exists()
    bundled = folder / "_internal" / "gpu_companion" / "resources"
    for f in (REPO / "resources").rglob("*"):
        if f.is_file() and f.suffix not in (".py", ".pyc"):
            assert (bundled / f.relative_to(REPO / "resources")).exists(), f
    plugins = folder / "_internal" / "PySide6" / "Qt" / "plugins"
    assert (plugins / "platforms" / "libqxcb.so").exists()
    assert (plugins / "iconengines" / "libqsvgicon.so").exists()
    assert not (plugins / "platformthemes" / "libqgtk3.so").exists()
    assert not list((folder / "_internal").rglob("libQt6Qml*"))
    assert not (plugins / "sqldrivers").exists()
    env = {**os.environ, **keyring_session.env, "GPU_COMPANION_HOME": str(tmp_path)}
    doctor = subprocess.run(
        [str(bundles[-1]), "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # keyring finds its backends by entry point: this fails if the bundle lost their metadata
    assert "[ok ] keyring: usable: SecretService" in doctor.stdout, doctor.stdout
    # a big bill is parsed by a second process: the bundle starts it as that, not as the app
    bill = write_bill(tmp_path / "bill.csv", 100_000)
    imported = subprocess.run(
        [str(bundles[-1]), "ledger", "import", str(bill)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Imported 100000 rentals" in imported.stdout, imported.stdout + imported.stderr


def test_the_wheel_carries_every_compiled_catalog(tmp_path):
    """The zh_CN .qm (Qt) and .mo (gettext) files are package data: an installed app speaks
    Chinese without the source tree."""
    import zipfile

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(REPO)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    wheel = next(tmp_path.glob("gpu_companion-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    catalogs = sorted((REPO / "resources" / "i18n" / "zh_CN").glob("*.[qm][mo]"))
    assert catalogs and all(p.suffix in (".qm", ".mo") for p in catalogs)
    missing = [p.name for p in catalogs
               if f"gpu_companion/resources/i18n/zh_CN/{p.name}" not in names]  # fmt: skip
    assert missing == []
