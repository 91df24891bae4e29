"""Off-desk notifications: the notifier's alerts, filtered per channel, queued in the store and
delivered by a thread of their own.

`attach(notifier)` subscribes `enqueue` (on the poster's thread: one read of the channels and, if
any wants the alert, one transaction of inserts; it never raises into the poster). `start()` runs
the delivery thread; `stop()` ends it. `send_test(id)` sends a labelled test message directly,
not through the outbox, and says in plain words what happened (call it off the GUI thread).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import tzinfo

from gpu_companion.core.common.clock import Clock, SystemClock
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.notifier import Message, Notifier
from gpu_companion.core.notify.channels import ChannelStore
from gpu_companion.core.notify.formats import alert_of, probe_alert
from gpu_companion.core.notify.kinds import alert_kind, is_money_critical
from gpu_companion.core.notify.model import Channel, ChannelStatus, Secrets, SendResult
from gpu_companion.core.notify.outbox import Outbox
from gpu_companion.core.notify.senders import DEFAULT_TIMEOUT_S, Sender
from gpu_companion.core.notify.worker import DeliveryWorker
from gpu_companion.core.storage.store import Store

log = logging.getLogger(__name__)


class NotifyCenter:
    """`tz`: the zone quiet hours are read in (None: this computer's local time)."""

    def __init__(
        self,
        store: Store,
        secrets: Secrets,
        clock: Clock | None = None,
        *,
        tz: tzinfo | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        outbox: Outbox | None = None,
    ) -> None:
        self.store = store
        self.clock = clock or SystemClock()
        self.tz = tz
        self.channels = ChannelStore(store, secrets, self.clock)
        self.outbox = outbox or Outbox(store)
        self.sender = Sender(secrets, timeout_s)
        self.worker = DeliveryWorker(self.outbox, self.channels.get, self.sender.send, self.clock)
        # a process that shows its own desktop notifications (the window's tray balloons) queues
        # nothing for the desktop channel: the same alert would pop up twice
        self.shows_desktop_itself = False

    # --- in: the notifier's listener --------------------------------------------------------------

    def attach(self, notifier: Notifier) -> Callable[[], None]:
        """Queue every alert `notifier` posts for the channels that want it; the unsubscribe."""
        return notifier.subscribe(self._on_message)

    def _on_message(self, message: Message) -> None:
        try:
            self.enqueue(message)
        except Exception:  # the poster (a rule, the GUI) must never see our failure
            log.warning("queueing an alert for the notification channels failed", exc_info=True)

    def wanted_by(self, message: Message, channels: list[Channel] | None = None) -> list[Channel]:
        """The enabled channels that take `message` now: its kind, and quiet hours, which only
        money-critical alerts pass."""
        kind = alert_kind(message)
        critical = is_money_critical(message, kind)
        now = self.clock.now()
        return [
            c
            for c in (self.channels.enabled() if channels is None else channels)
            if c.enabled
            and kind in c.kinds
            and not (c.type == "desktop" and self.shows_desktop_itself)
            and (critical or c.quiet is None or not c.quiet.contains(now, self.tz))
        ]

    def enqueue(self, message: Message) -> list[int]:
        """Queue `message` for every channel that wants it and has not had it (see `Outbox`);
        the outbox ids, and the delivery thread is woken."""
        wanted = self.wanted_by(message)
        if not wanted:
            return []
        now = self.clock.now()
        queued = self.outbox.enqueue(wanted, alert_of(message, message.at or now), now)
        if queued:
            self.worker.wake()
        return queued

    # --- out: the delivery thread -----------------------------------------------------------------

    def start(self) -> None:
        self.worker.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        self.worker.stop(timeout_s)

    def wake(self) -> None:
        self.worker.wake()

    def deliver_due(self) -> int:
        """One delivery pass on the caller's thread (a command that sends and exits; tests)."""
        return self.worker.deliver_due()

    # --- status and test -------------------------------------------------------------------------

    def statuses(self) -> dict[int, ChannelStatus]:
        return self.outbox.statuses()

    def status(self, channel_id: int) -> ChannelStatus:
        channel = self.channels.require(channel_id)
        return self.outbox.statuses()[channel.id]

    def send_test(self, channel_id: int | str) -> SendResult:
        """Send a test message through the channel now (synchronous: not on the GUI thread)."""
        channel = self.channels.require(channel_id)
        now = self.clock.now()
        try:
            self.sender.send(channel, probe_alert(channel.label(), now), now)
        except UserError as exc:
            return SendResult(channel.id, False, str(exc))
        except Exception as exc:  # a bug: said, and logged with its traceback
            log.exception("test message through channel %s failed", channel.id)
            text = _("Unexpected error: {kind}: {error}").format(kind=type(exc).__name__, error=exc)
            return SendResult(channel.id, False, text)
        return SendResult(
            channel.id, True, _("Delivered to {target}.").format(target=channel.target())
        )
