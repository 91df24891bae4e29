"""Errors a user can meet: each carries a message written for that user."""

from __future__ import annotations


class UserError(Exception):
    """An error whose message says what happened and what to do; shown as is in the UI."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip()


class ValidationError(UserError):
    """A value a user typed is not acceptable; `field` names the input it belongs to."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
