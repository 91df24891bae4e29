#!/usr/bin/env python3
"""Screenshots of a host's everyday doors, against a real host: the Tunnels panel, the Open menu,
the fleet row's and the tray's menus, and xterm running `ssh ALIAS` at the host's shell prompt.

    python scripts/access_screenshots.py [--out docs/screenshots] [--lang zh_CN]

The host is the test harness's sshd on 127.0.0.1 (with the nvidia-smi stand-in) serving a real
`python -m http.server`; the key lives in an in-memory keyring and, for the terminal, in a private
ssh-agent. Needs Xvfb, ImageMagick's `import`, xterm (Debian: xterm), sshd and ssh-agent.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "scripts"), str(REPO / "desktop")]

GEOMETRY = "1180x720+50+40"


class DemoKeyring:
    """This process's memory only, as scripts/screenshots.py does."""

    def __init__(self) -> None:
        self.secrets: dict[tuple[str, str], str] = {}

    def get_password(self, s: str, u: str) -> str | None:
        return self.secrets.get((s, u))

    def set_password(self, s: str, u: str, p: str) -> None:
        self.secrets[(s, u)] = p

    def delete_password(self, s: str, u: str) -> None:
        self.secrets.pop((s, u), None)


def capture(out: Path, name: str, geometry: str = GEOMETRY) -> None:
    subprocess.run(
        ["import", "-window", "root", "-crop", geometry, str(out / f"{name}.png")], check=True
    )
    print(out / f"{name}.png")


def run(out: Path, tmp: Path) -> int:
    from tests.harness.sshd import SshServer
    from tests.harness.standin import NvidiaSmiStandIn
    from tests.harness.util import free_port, port_open, wait_for

    home = tmp / "home"
    (home / ".ssh").mkdir(parents=True, mode=0o700)
    os.environ.update(HOME=str(home), GPU_COMPANION_HOME=str(tmp / "app"))
    (tmp / "xterm.ad").write_text(
        "XTerm*faceName: DejaVu Sans Mono\nXTerm*faceSize: 12\nXTerm*geometry: 90x24+80+80\n"
        "XTerm*background: #1e1e1e\nXTerm*foreground: #e0e0e0\n"
    )
    os.environ["XENVIRONMENT"] = str(tmp / "xterm.ad")
    # OpenSSH reads ~/.ssh/config from the passwd entry's home, not $HOME: in this temporary
    # home, `ssh` on the PATH adds -F for the file the app wrote (the real ~/.ssh stays untouched)
    shim = tmp / "bin"
    shim.mkdir()
    (shim / "ssh").write_text(
        f'#!/bin/sh\nexec {shutil.which("ssh")} -F "$HOME/.ssh/config" "$@"\n'
    )
    (shim / "ssh").chmod(0o755)
    os.environ["PATH"] = f"{shim}{os.pathsep}{os.environ['PATH']}"
    sock = tmp / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    os.environ["SSH_AUTH_SOCK"] = str(sock)
    standin = NvidiaSmiStandIn(tmp / "standin")
    standin.configure(gpu_count=2)
    sshd = SshServer(tmp / "sshd", path_prefix=[standin.bin_dir], env=standin.env).start()
    web_root = tmp / "served"
    web_root.mkdir()
    (web_root / "index.html").write_text("<h1>Gradio demo (stand-in)</h1>\n")
    web_port = free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(web_port), "--bind", "127.0.0.1"],
        cwd=web_root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    terminal: subprocess.Popen[bytes] | None = None
    try:
        wait_for(lambda: port_open(web_port), 15, "http.server")
        wait_for(sock.exists, 5, "ssh-agent")
        terminal = shoot(out, sshd, web_port)
        return 0
    finally:
        if terminal is not None and terminal.poll() is None:
            terminal.terminate()
            terminal.wait(5)
        web.terminate()
        web.wait(5)
        sshd.stop()
        agent.terminate()
        agent.wait(5)


def shoot(out: Path, sshd, web_port: int) -> subprocess.Popen[bytes] | None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from PySide6.QtCore import QPoint, QTimer
    from PySide6.QtWidgets import QApplication

    from gpu_companion.core.access.specs import TunnelSpec
    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.hosts.registry import Host, Platform
    from gpu_companion.core.ssh.connection import ConnectionProblem
    from gpu_companion.core.ssh.managed import entries_from_registry
    from gpu_companion.services import build_services
    from gpu_companion.ui.common.i18n import install_translators
    from gpu_companion.ui.shell.build import build_window

    app = QApplication([])
    app.setStyle("Fusion")
    install_translators(app, os.environ.get("SCREENSHOT_LANG", "en"))
    ctx = build_services(AppPaths.default())
    ctx.vault.backend = DemoKeyring()
    ctx.store.set_setting("ui.welcome_shown", "1")
    vast = ctx.registry.save_platform(Platform("vast.ai", "https://cloud.vast.ai", "second"))
    host = ctx.registry.save_host(
        Host("vast-4090", "127.0.0.1", sshd.port, sshd.user, vast.id, "RTX 4090", 2, "LoRA runs")
    )
    sshd.authorize(ctx.vault.generate("vast.ai").public_line)
    try:
        ctx.sessions.connect(host).close()
    except ConnectionProblem as first:  # the fingerprint the user compared and trusted
        ctx.sessions.trust_host_key(host, first.key)
    ctx.ssh_config.write(entries_from_registry(ctx.registry, ctx.vault))
    ctx.vault.load_into_agent("vast.ai", lifetime_s=600)
    ctx.launcher.prefs.terminal = "xterm"
    ctx.ledger.start_rental(
        vast.id,
        "0.78",
        host_id=host.id,
        gpu_model="RTX 4090",
        gpu_count=2,
        started_at=ctx.ledger.now() - timedelta(hours=2, minutes=14),
    )
    ctx.tunnels.book.save(host.id, TunnelSpec("Gradio demo", web_port))
    ctx.tunnels.start(host, TunnelSpec("Gradio demo", web_port))
    # nothing runs on 8888 there yet; the local port differs because the demo host is this
    # machine (a local 8888 would forward to itself)
    ctx.tunnels.start(host, TunnelSpec("Jupyter", 8888, 18888))
    win = build_window(ctx)
    win.resize(1180, 720)
    win.move(50, 40)
    win.show()
    hosts = win.navigate("hosts")
    held: list[subprocess.Popen[bytes]] = []
    failures: list[str] = []
    steps = []

    def step(fn):  # type: ignore[no-untyped-def]
        steps.append(fn)
        return fn

    @step
    def tunnels() -> None:
        hosts.show_tunnels(host)
        hosts.tunnels.select("Gradio demo")

    @step
    def open_menu() -> None:
        capture(out, "access-tunnels")
        button, menu = hosts.open_button, hosts.open_menu
        menu.aboutToShow.emit()  # filled now, so its width is known before it is placed
        x = button.width() - menu.sizeHint().width()
        menu.popup(button.mapToGlobal(QPoint(x, button.height())))

    @step
    def open_menu_shot() -> None:
        capture(out, "access-open-menu")
        hosts.open_menu.close()
        win.navigate("monitor")

    @step
    def fleet_menu() -> None:
        page = win.pages["monitor"]
        row = page.fleet_model.aliases().index("vast-4090")
        view = page.fleet_view
        cell = view.visualRect(page.fleet_model.index(row, 0))
        view.customContextMenuRequested.emit(cell.center() + QPoint(cell.width() // 2, 0))

    @step
    def fleet_menu_shot() -> None:
        capture(out, "access-fleet-menu")
        win.pages["monitor"].fleet_view.last_menu.close()
        win.navigate("hosts")

    @step
    def tray_menu() -> None:
        assert win.tray is not None
        menu = win.tray.menu
        menu.popup(QPoint(640, 120))
        rental = next(a for a in menu.actions() if a.menu() is not None)
        menu.setActiveAction(rental)
        sub = rental.menu()
        sub.popup(QPoint(menu.geometry().right() + 2, menu.actionGeometry(rental).y() + 120))

    @step
    def tray_menu_shot() -> None:
        capture(out, "access-tray-menu")
        win.tray.menu.close()

    @step
    def terminal() -> None:
        plan = ctx.launcher.plan_terminal(host.alias)  # what “Open terminal” runs
        held.append(ctx.launcher.launch(plan))

    @step
    def terminal_shot() -> None:
        capture(out, "access-terminal", "1280x800+0+0")
        if held[0].poll() is not None:
            failures.append("the terminal closed: `ssh vast-4090` did not connect")

    def next_step() -> None:
        if not steps:
            win.close()
            ctx.close()
            app.quit()
            return
        steps.pop(0)()
        QTimer.singleShot(4000 if steps and steps[0] is terminal_shot else 1200, next_step)

    QTimer.singleShot(2500, next_step)  # the tunnels' first probes, the monitor's first samples
    app.exec()
    for failure in failures:
        print(failure, file=sys.stderr)
    return held[0] if held else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--lang", default="en", help="the app's language (en, zh_CN)")
    args = parser.parse_args()
    os.environ["SCREENSHOT_LANG"] = args.lang
    for tool in ("import", "xterm", "ssh-agent"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed")
    from screenshots import start_xvfb

    args.out.mkdir(parents=True, exist_ok=True)
    xvfb, display = start_xvfb()
    os.environ.update(DISPLAY=display, QT_QPA_PLATFORM="xcb")
    os.environ.pop("WAYLAND_DISPLAY", None)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return run(args.out.resolve(), Path(tmp))
    finally:
        if xvfb:
            xvfb.terminate()
            xvfb.wait(5)


if __name__ == "__main__":
    sys.exit(main())
