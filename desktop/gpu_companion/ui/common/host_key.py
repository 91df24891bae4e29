"""The one host-key question of the app, asked the same way by the Hosts page ("Test
connection") and the wizard's first connection: a first contact shows the offered fingerprint to
compare with the provider's; a changed key says what was trusted before and what is offered now,
and replacing it asks twice. Plain text (it quotes the host), Cancel the default."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from gpu_companion.core.hosts.registry import Host

if TYPE_CHECKING:  # the ssh modules load on the first connection
    from gpu_companion.core.ssh.connection import ConnectionProblem

HOST_KEY_KINDS = ("host_key_unknown", "host_key_changed")
Answer = Literal["trust", "replace", "cancel"]


def _decision_box(
    parent: QWidget,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    name: str,
    answer: tuple[str, QMessageBox.ButtonRole, str],
) -> QMessageBox:
    """A plain-text question (it quotes the host) with one answer and Cancel, Cancel the default;
    `HostConnection.ask` returns the answer's object name."""
    box = QMessageBox(icon, title, text, parent=parent)
    box.setObjectName(name)
    box.setTextFormat(Qt.TextFormat.PlainText)
    label, role, answer_name = answer
    box.addButton(label, role).setObjectName(answer_name)
    box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))
    return box


def unknown_key_box(parent: QWidget, host: Host, problem: ConnectionProblem) -> QMessageBox:
    return _decision_box(
        parent,
        QMessageBox.Icon.Question,
        QCoreApplication.translate("HostConnection", "New host key"),
        QCoreApplication.translate(
            "HostConnection",
            "First connection to {alias} ({hostname}:{port}).\n\n"
            "Its host key fingerprint is:\n{fingerprint}\n\n"
            "Compare it with the one your provider shows for this instance (console or "
            "boot log). Trust it only if they match.",
        ).format(
            alias=host.alias,
            hostname=host.hostname,
            port=host.port,
            fingerprint=problem.fingerprint,
        ),
        "hostKeyUnknown",
        (
            QCoreApplication.translate("HostConnection", "Trust and connect"),
            QMessageBox.ButtonRole.AcceptRole,
            "trust",
        ),
    )


def changed_key_box(parent: QWidget, host: Host, problem: ConnectionProblem) -> QMessageBox:
    return _decision_box(
        parent,
        QMessageBox.Icon.Warning,
        QCoreApplication.translate("HostConnection", "Host key changed"),
        QCoreApplication.translate(
            "HostConnection",
            "{message}\n\nTrusted before: {known}\nOffered now: {offered}\n\n{hint}",
        ).format(
            message=problem.message,
            known=problem.known_fingerprint,
            offered=problem.fingerprint,
            hint=problem.hint,
        ),
        "hostKeyChanged",
        (
            QCoreApplication.translate("HostConnection", "This is a new instance…"),
            QMessageBox.ButtonRole.DestructiveRole,
            "newInstance",
        ),
    )


def confirm_replace_box(parent: QWidget, host: Host, problem: ConnectionProblem) -> QMessageBox:
    return _decision_box(
        parent,
        QMessageBox.Icon.Warning,
        QCoreApplication.translate("HostConnection", "Replace the trusted host key?"),
        QCoreApplication.translate(
            "HostConnection",
            "Forget the old key of {alias} and trust {fingerprint}?\n\n"
            "Only do this if you created, restarted or re-rented this instance just now.",
        ).format(alias=host.alias, fingerprint=problem.fingerprint),
        "confirmReplace",
        (
            QCoreApplication.translate("HostConnection", "Replace the key"),
            QMessageBox.ButtonRole.AcceptRole,
            "replace",
        ),
    )


def ask_box(box: QMessageBox) -> str:
    """Show a decision box modally; the clicked button's object name, "cancel" for Cancel or
    Escape. Read while the box is alive: its buttons go with it."""
    box.exec()
    clicked = box.clickedButton()
    name = clicked.objectName() if clicked is not None else ""
    box.deleteLater()
    return name or "cancel"


def decide_host_key(
    parent: QWidget,
    host: Host,
    problem: ConnectionProblem,
    ask: Callable[[QMessageBox], str] = ask_box,
) -> Answer:
    """"trust" (a first contact the user confirmed), "replace" (a changed key, confirmed twice)
    or "cancel"."""
    if problem.kind == "host_key_unknown":
        return "trust" if ask(unknown_key_box(parent, host, problem)) == "trust" else "cancel"
    if ask(changed_key_box(parent, host, problem)) != "newInstance":
        return "cancel"
    return "replace" if ask(confirm_replace_box(parent, host, problem)) == "replace" else "cancel"
