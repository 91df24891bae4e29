"""The auto-release countdown in the window: the ladder's message (key `autorelease:ALIAS`) becomes
a banner with the time left and the user's three answers, which run off the GUI thread through the
AutoReleaseService (the ladder stays Qt-free; its open case per alias is the registry)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, QTimer, Signal

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.ui.common.widgets import Banner, BannerArea
from gpu_companion.ui.common.worker import Worker, run_in_thread

if TYPE_CHECKING:
    from gpu_companion.core.autorelease.ladder import Answer
    from gpu_companion.core.autorelease.service import AutoReleaseService
    from gpu_companion.services import Services

PREFIX = "autorelease:"
# the three answers (English keys; each button shows its translation)
KEEP = str(QT_TRANSLATE_NOOP("CountdownBanners", "Keep running"))
RELEASE = str(QT_TRANSLATE_NOOP("CountdownBanners", "Release now"))
SNOOZE = str(QT_TRANSLATE_NOOP("CountdownBanners", "Snooze 30 min"))


def clock_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class CountdownBanners(QObject):
    """`handle(message)` takes the auto-release messages (True) and leaves the others; the same
    answers are offered wherever the rental is shown (`answers(alias)`: the tray's menu)."""

    changed = Signal()  # a countdown opened, was answered or closed: menus offering it refresh
    _hosts_changed = Signal()  # from any thread: the registry changed (a host was released)

    def __init__(
        self,
        ctx: Services,
        banners: BannerArea,
        balloon: Callable[[Message], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx, self.area, self.balloon = ctx, banners, balloon
        self.texts: dict[str, str] = {}  # the ladder's last words per alias
        self.workers: dict[str, Worker] = {}
        self.timer = QTimer(self)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self.tick)
        self._hosts_changed.connect(self._drop_gone_hosts)
        unsubscribe = ctx.registry.on_hosts_changed.subscribe(lambda _: self._hosts_changed.emit())
        self.destroyed.connect(lambda *_: unsubscribe())

    @property
    def service(self) -> AutoReleaseService:
        return self.ctx.autorelease

    def banner(self, alias: str) -> Banner | None:
        return self.area.with_key(PREFIX + alias)

    def handle(self, message: Message) -> bool:
        if not message.key.startswith(PREFIX):
            return False
        alias = message.key[len(PREFIX) :]
        self.texts[alias] = message.text
        banner = self.area.show_message(message)
        if self.balloon is not None and message.level is not Level.INFO:
            self.balloon(message)  # the tray too, where one exists: the window may be hidden
        self.render(alias, banner)
        return True

    def render(self, alias: str, banner: Banner | None = None) -> None:
        banner = banner or self.banner(alias)
        if banner is None:
            return
        open_case = self._open(alias)
        if open_case and alias not in self.workers:
            banner.set_actions(self.answers(alias))
        elif not open_case:
            banner.set_actions([])
        self.show_time(alias, banner)
        if open_case and not self.timer.isActive():
            self.timer.start()
        self.changed.emit()

    def _open(self, alias: str) -> bool:
        case = self.service.case(alias) if alias in self.texts else None
        return case is not None and case.stage.value in ("notified", "blocked", "checking")

    def answers(self, alias: str) -> list[tuple[str, Callable[[], object]]]:
        """Keep running / Release now / Snooze 30 min while the countdown waits for an answer;
        while the unattended checklist runs, Keep running and Snooze still stop it."""
        if not self._open(alias) or alias in self.workers:
            return []
        case = self.service.case(alias)
        offered = (KEEP, SNOOZE) if case and case.stage.value == "checking" else (KEEP, RELEASE,
                                                                                   SNOOZE)
        return [
            (QCoreApplication.translate("CountdownBanners", what), self._answer_with(alias, what))
            for what in offered
        ]

    def _answer_with(self, alias: str, what: str) -> Callable[[], None]:
        return lambda: self.answer(alias, what)  # no arguments: Qt passes none to it

    def show_time(self, alias: str, banner: Banner) -> None:
        text = self.texts.get(alias, banner.message.text)
        case = self.service.case(alias)
        left = self.service.countdown(alias)
        if alias in self.workers:
            text += "\n" + self.tr("Working on your answer …")
        elif case is not None and case.stage.value == "checking":
            text += "\n" + self.tr(
                "The backup checklist is running now; Keep running still stops it."
            )
        elif case is not None and case.stage.value == "releasing":
            text += "\n" + self.tr("The provider was asked; reading the instance back …")
        elif left is not None:
            text += "\n" + self.tr(
                "{time} left, then the backup checklist runs unattended."
            ).format(time=clock_text(left))
        elif case is not None and case.stage.value == "blocked":
            wait = case.deadline - self.service.wall()
            text += "\n" + self.tr("Next check in {time}.").format(time=clock_text(wait))
        banner.label.setText(text)

    def tick(self) -> None:
        """Once a second while a countdown is on show."""
        shown = False
        for alias in list(self.texts):
            banner = self.banner(alias)
            if banner is None:
                continue
            self.show_time(alias, banner)
            shown = shown or bool(banner.buttons)
        if not shown:
            self.timer.stop()

    def _drop_gone_hosts(self) -> None:
        """A host released or stopped (by hand, or elsewhere) takes its countdown banner with
        it: "kept running" must not stay on show for an instance that is gone. Auto-release's
        own "was released" words stay: they are the news."""
        for alias in list(self.texts):
            host = self.ctx.registry.host(alias)
            if host is not None and host.state == "active":
                continue
            case = self.service.case(alias)
            if case is not None and case.stage.value in ("releasing", "done"):
                continue
            banner = self.banner(alias)
            if banner is not None:
                banner.dismiss()
            self.texts.pop(alias, None)
            self.changed.emit()

    def answer(self, alias: str, what: str) -> None:
        """From the banner or the tray (whose answer works with the banner closed too)."""
        if alias in self.workers:
            return
        banner = self.banner(alias)
        for b in banner.buttons if banner is not None else []:
            b.setEnabled(False)
        fn = {
            KEEP: self.service.keep_running,
            RELEASE: self.service.release_now,
            SNOOZE: self.service.snooze,
        }[what]
        self.workers[alias] = run_in_thread(
            fn,
            alias,
            on_result=lambda answer: self._said(alias, answer),
            on_error=lambda exc: self.ctx.notifier.error(str(exc), source="autorelease"),
            on_finished=lambda: self._answered(alias),
        )
        if banner is not None:
            self.show_time(alias, banner)
        self.changed.emit()  # answered from one place: the others stop offering it

    def _said(self, alias: str, answer: Answer) -> None:
        """What came of the answer, as the ladder says it: kept, snoozed, or too late (the
        release was already sent), never a guess."""
        banner = self.banner(alias)
        if banner is None or not answer.text:
            return
        if answer.applied or answer.too_late:
            self.texts[alias] = answer.text
            level = Level.WARNING if answer.too_late else Level.INFO
            banner.update_message(Message(level, answer.text, "autorelease", PREFIX + alias))

    def _answered(self, alias: str) -> None:
        self.workers.pop(alias, None)
        banner = self.banner(alias)
        if banner is None:
            self.changed.emit()
            return
        self.render(alias, banner)
