"""The release flow of the release page: re-check what went stale, confirm (showing the release
command), release or release anyway, all off the GUI thread; and the page's questions, as methods
tests can answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QInputDialog, QMessageBox

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release import Override, ReleaseChecklist, ReleaseRecord, release_host
from gpu_companion.core.release.gate import failing_items, release_argv
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.release.dialogs import OverrideDialog

if TYPE_CHECKING:
    from gpu_companion.ui.release.page import ReleasePage

    _Base = ReleasePage
else:
    _Base = object


class ReleaseFlow(_Base):
    # --- release -------------------------------------------------------------------------
    def release(self) -> None:
        """Re-check stale items first; release only if everything still passes."""
        self._start(
            "Re-checking what changed",
            lambda cl, ctx: cl.recheck_stale(ctx),
            then=self._release_after_recheck,
        )

    def _release_argv(self, host: Host) -> list[str] | None:
        template = self.wiring.settings.release_command(host.platform_id)
        try:
            return release_argv(template, host) if template else []
        except UserError as exc:
            self.ctx.notifier.error(str(exc), source="release")
            return None

    def _confirm(self, host: Host, argv: list[str], override: bool) -> bool:
        steps = [
            "end the rental's meter",
            "record the evidence",
            "mark the host released and drop its ssh config block",
        ]
        if argv:
            steps.insert(0, "run: " + " ".join(argv))
        head = "Release anyway" if override else "Release"
        return self._ask(f"{head} {host.alias}?", "This will:\n• " + "\n• ".join(steps))

    def _release_after_recheck(self) -> None:
        checklist, host = self.checklist(), self.host()
        if checklist is None or host is None:
            return
        if not checklist.ready():
            self.status.setText(
                "Something changed on the host and no longer passes: see the items marked failed."
            )
            return
        argv = self._release_argv(host)
        if argv is not None and self._confirm(host, argv, override=False):
            self._release(checklist, argv, None)

    def open_override(self) -> None:
        checklist, host = self.checklist(), self.host()
        if checklist is None or host is None:
            return
        self.override_dialog = OverrideDialog(host, failing_items(checklist), self)
        self.override_dialog.accepted.connect(self._override_accepted)
        self.override_dialog.open()

    def _override_accepted(self) -> None:
        dialog, checklist, host = self.override_dialog, self.checklist(), self.host()
        if dialog is None or checklist is None or host is None:
            return
        override = Override(dialog.alias.text(), dialog.reason.toPlainText())
        argv = self._release_argv(host)
        if argv is not None and self._confirm(host, argv, override=True):
            self._release(checklist, argv, override)

    def _release(
        self, checklist: ReleaseChecklist, argv: list[str], override: Override | None
    ) -> None:
        self.worker = run_in_thread(
            release_host,
            checklist,
            self.wiring.services(),
            argv,
            override,
            on_result=self._released,
            on_error=self._on_error,
            on_finished=lambda: self._on_finished(None),
        )
        self._sync()

    def _released(self, record: ReleaseRecord) -> None:
        self.ctx.notifier.info(
            f"{record.host_alias} released ({record.kind}); its history stays on this page.",
            source="release",
        )
        self.refresh()

    # --- dialogs (methods so tests can answer them) --------------------------------------
    def _ask(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes

    def _ask_text(self, title: str, label: str) -> str | None:
        text, ok = QInputDialog.getText(self, title, label)
        return text if ok else None

    def _ask_dismiss(self, paths: list[str]) -> tuple[str, str] | None:
        path, ok = QInputDialog.getItem(self, "Dismiss a file", "File:", paths, 0, False)
        if not ok:
            return None
        reason = self._ask_text("Dismiss a file", f"Why can {path} be left behind?")
        return (path, reason) if reason else None
