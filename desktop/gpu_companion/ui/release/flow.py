"""The release flow of the release page: re-check what went stale, confirm (saying what will be
asked of which provider), release or release anyway, all off the GUI thread; and the page's
questions, as methods tests can answer."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import QInputDialog, QMessageBox

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release import Override, ReleaseChecklist, ReleaseRecord, release_host
from gpu_companion.core.release.gate import InstanceAction, failing_items
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.release.dialogs import OverrideDialog

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from PySide6.QtWidgets import QLabel
    from PySide6.QtWidgets import QWidget as _Base

    from gpu_companion.core.release.context import ReleaseContext
    from gpu_companion.core.release.model import ItemUpdate
    from gpu_companion.core.release.wiring import ReleaseWiring
    from gpu_companion.services import Services
    from gpu_companion.ui.common.worker import Worker
else:
    _Base = object

BY_HAND = str(
    QT_TRANSLATE_NOOP(
        "ReleasePlan", "nothing is sent to a provider: release the instance in its console yourself"
    )
)
# the kind of a release in the words of the notice that it was done (the record keeps the key)
KIND_NAMES = {
    "release": str(QT_TRANSLATE_NOOP("ReleaseFlow", "release")),
    "override": str(QT_TRANSLATE_NOOP("ReleaseFlow", "override")),
}


@dataclass(frozen=True)
class ReleasePlan:
    """What a release will ask, in words, known without the keyring or the network:
    `provider` is "" when nothing is sent to a provider."""

    provider: str = ""
    instance_id: str = ""

    def steps(self) -> list[str]:
        if not self.provider:
            return [
                QCoreApplication.translate("ReleasePlan", BY_HAND),
                QCoreApplication.translate("ReleasePlan", "end the rental's meter"),
                QCoreApplication.translate("ReleasePlan", "record the evidence"),
                QCoreApplication.translate(
                    "ReleasePlan", "mark the host released and drop its ssh config block"
                ),
            ]
        named = SimpleNamespace(name=self.provider)  # the gate's own words for the action
        return [
            InstanceAction(named, self.instance_id).describe(),  # type: ignore[arg-type]
            QCoreApplication.translate(
                "ReleasePlan", "end the rental's meter only once {provider} confirms"
            ).format(provider=self.provider),
            QCoreApplication.translate("ReleasePlan", "record the evidence"),
            QCoreApplication.translate(
                "ReleasePlan", "mark the host released and drop its ssh config block"
            ),
        ]


def release_plan(wiring: ReleaseWiring, host: Host) -> ReleasePlan:
    """The plan `wiring.instance_action(host)` will carry out, from the platform's account or
    commands (a database read; the API key is read later, in the worker). Raises UserError where
    the release could not be sent: no instance id, or commands that no longer validate."""
    account = wiring.accounts.for_platform(host.platform_id)
    if account is not None:
        name = account.provider_name
    else:
        commands = wiring.settings.commands(host.platform_id)
        if not commands.release:
            return ReleasePlan()
        commands.validated()  # e.g. an old `vastai destroy` template: refused, with what to do
        platform = wiring.registry.platform(host.platform_id) if host.platform_id else None
        name = (
            platform.name if platform else QCoreApplication.translate("ReleasePlan", "the platform")
        )
    if not host.instance_id.strip():
        raise UserError(
            QCoreApplication.translate(
                "ReleasePlan",
                "{host} has no instance id, so {provider} cannot be asked to destroy it.",
            ).format(host=host.alias, provider=name),
            hint=QCoreApplication.translate(
                "ReleasePlan",
                "Edit the host and paste the instance id from the provider's console, or "
                "sync the provider account.",
            ),
        )
    return ReleasePlan(name, host.instance_id.strip())


def release_through(
    wiring: ReleaseWiring, checklist: ReleaseChecklist, override: Override | None
) -> ReleaseRecord:
    """The worker's part: the instance action (its API key read from the keyring here), then the
    gate."""
    action = wiring.instance_action(checklist.host)
    return release_host(checklist, wiring.services(), action, override)


class ReleaseFlow(_Base):
    """Mixed into the Release page, whose parts it uses (declared here for the type checker)."""

    if TYPE_CHECKING:
        ctx: Services
        wiring: ReleaseWiring
        status: QLabel
        worker: Worker | None
        override_dialog: OverrideDialog | None

        def host(self) -> Host | None: ...
        def checklist(self) -> ReleaseChecklist | None: ...
        def refresh(self) -> None: ...
        def _sync(self) -> None: ...
        def _on_finished(self, then: Callable[[], None] | None) -> None: ...
        def _on_error(self, exc: Exception) -> None: ...
        def _fill_history(self) -> None: ...
        def _start(
            self,
            what: str,
            steps: Callable[[ReleaseChecklist, ReleaseContext], Iterator[ItemUpdate]],
            then: Callable[[], None] | None = None,
        ) -> bool: ...

    # --- release -------------------------------------------------------------------------
    def release(self) -> None:
        """Re-check stale items first; release only if everything still passes."""
        self._start(
            QCoreApplication.translate("ReleaseFlow", "Re-checking what changed on {host} …"),
            lambda cl, ctx: cl.recheck_stale(ctx),
            then=self._release_after_recheck,
        )

    def _plan(self, host: Host) -> ReleasePlan | None:
        try:
            return release_plan(self.wiring, host)
        except UserError as exc:
            self.ctx.notifier.error(str(exc), source="release", key="release-error")
            return None

    def _confirm(self, host: Host, plan: ReleasePlan, override: bool) -> bool:
        if override:
            title = QCoreApplication.translate("ReleaseFlow", "Release anyway {host}?")
        else:
            title = QCoreApplication.translate("ReleaseFlow", "Release {host}?")
        text = QCoreApplication.translate("ReleaseFlow", "This will:")
        return self._ask(title.format(host=host.alias), text + "\n• " + "\n• ".join(plan.steps()))

    def _release_after_recheck(self) -> None:
        checklist, host = self.checklist(), self.host()
        if checklist is None or host is None:
            return
        if not checklist.ready():
            self.status.setText(
                QCoreApplication.translate(
                    "ReleaseFlow",
                    "Something changed on the host and no longer passes: see the items marked "
                    "failed.",
                )
            )
            return
        plan = self._plan(host)
        if plan is not None and self._confirm(host, plan, override=False):
            self._release(checklist, plan, None)

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
        plan = self._plan(host)
        if plan is not None and self._confirm(host, plan, override=True):
            self._release(checklist, plan, override)

    def _release(
        self, checklist: ReleaseChecklist, plan: ReleasePlan, override: Override | None
    ) -> None:
        if plan.provider:
            self.status.setText(
                QCoreApplication.translate(
                    "ReleaseFlow",
                    "Asking {provider} to destroy instance {instance} of {host}, then reading it "
                    "back …",
                ).format(
                    provider=plan.provider, instance=plan.instance_id, host=checklist.host.alias
                )
            )
        self.worker = run_in_thread(
            release_through,
            self.wiring,
            checklist,
            override,
            on_result=self._released,
            on_error=self._release_failed,
            on_finished=lambda: self._on_finished(None),
        )
        self._sync()

    def _released(self, record: ReleaseRecord) -> None:
        self.ctx.notifier.info(
            QCoreApplication.translate(
                "ReleaseFlow", "{host} released ({kind}); its history stays on this page."
            ).format(
                host=record.host_alias,
                kind=QCoreApplication.translate("ReleaseFlow", KIND_NAMES[record.kind])
                if record.kind in KIND_NAMES
                else record.kind,
            ),
            source="release",
        )
        self.refresh()

    def _release_failed(self, exc: Exception) -> None:
        """Refused or unconfirmed: the host stays active; the failed try is in its history."""
        self._on_error(exc)
        self._fill_history()

    # --- dialogs (methods so tests can answer them) --------------------------------------
    def _ask(self, title: str, text: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self)
        box.setTextFormat(Qt.TextFormat.PlainText)  # names a platform and an instance id
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes

    def _ask_text(self, title: str, label: str) -> str | None:
        text, ok = QInputDialog.getText(self, title, label)
        return text if ok else None

    def _ask_dismiss(self, paths: list[str]) -> tuple[str, str] | None:
        title = QCoreApplication.translate("ReleaseFlow", "Dismiss a file")
        path, ok = QInputDialog.getItem(
            self, title, QCoreApplication.translate("ReleaseFlow", "File:"), paths, 0, False
        )
        if not ok:
            return None
        reason = self._ask_text(
            title,
            QCoreApplication.translate("ReleaseFlow", "Why can {path} be left behind?").format(
                path=path
            ),
        )
        return (path, reason) if reason else None
