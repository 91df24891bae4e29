"""A desktop notification through the session's freedesktop notification server, over D-Bus with
jeepney (already installed as keyring's dependency): what `gpu-companion watch` shows without a
window or tray. No session bus, or nobody owning `org.freedesktop.Notifications`, is a delivery
failure said in words, never an exception into the caller's loop."""

from __future__ import annotations

import html
import os
from typing import Any

from gpu_companion.core.common.i18n import _
from gpu_companion.core.notify.model import APP, Alert, DeliveryError

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
URGENCY = {"info": 1, "warning": 1, "error": 2}  # low 0, normal 1, critical 2


def notify_args(alert: Alert) -> tuple[Any, ...]:
    """`Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout)`.
    The body may be read as markup by the server: the alert's text is escaped (a host's name is
    data, never markup)."""
    hints = {"urgency": ("y", URGENCY.get(alert.level, 1)), "category": ("s", "im.received")}
    body = html.escape(alert.text, quote=False)
    return (APP, 0, "gpu-companion", alert.title, body, [], hints, -1)


def send_desktop(alert: Alert, *, timeout_s: float) -> int:
    """Show `alert`; the server's notification id. DeliveryError when nothing can show it."""
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
    if not address:
        raise DeliveryError(
            _(
                "No desktop session bus here (DBUS_SESSION_BUS_ADDRESS is not set): desktop "
                "notifications need a logged-in desktop session. Use ntfy, a webhook or e-mail to "
                "reach you from a server."
            )
        )
    try:
        from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
        from jeepney.io.blocking import open_dbus_connection
    except ImportError as exc:  # pragma: no cover - jeepney comes with keyring on Linux
        raise DeliveryError(
            _("Desktop notifications need the jeepney package ({error}).").format(error=exc)
        ) from exc
    target = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=BUS_NAME)
    message = new_method_call(target, "Notify", "susssasa{sv}i", notify_args(alert))
    try:
        with open_dbus_connection(bus="SESSION", auth_timeout=timeout_s) as conn:
            reply = conn.send_and_get_reply(message, timeout=timeout_s)
    except Exception as exc:  # OSError, TimeoutError, jeepney's AuthenticationError, a bad address
        raise DeliveryError(
            _(
                "The desktop session bus cannot be reached ({kind}: {error}): is the desktop "
                "session still running?"
            ).format(kind=type(exc).__name__, error=exc)
        ) from exc
    if reply.header.message_type == MessageType.error:
        name = str(reply.header.fields.get(HeaderFields.error_name, ""))
        said = " ".join(str(b) for b in reply.body) if reply.body else ""
        if name.endswith((".ServiceUnknown", ".NameHasNoOwner", ".Spawn.ServiceNotFound")):
            raise DeliveryError(
                _(
                    "No notification server answers on the desktop session bus (nothing owns "
                    "{bus}): this desktop shows no notifications. Use ntfy, a webhook or "
                    "e-mail instead."
                ).format(bus=BUS_NAME)
            )
        raise DeliveryError(
            _("The notification server refused the notification ({name}: {said}).").format(
                name=name, said=said
            )
        )
    return int(reply.body[0]) if reply.body else 0
