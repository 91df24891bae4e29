"""Errors a user can meet: each carries a message written for that user."""

from __future__ import annotations

# a sentence that ends in full-width punctuation (Chinese) takes no space before the next one
_FULL_WIDTH_END = ("。", "！", "？", "：", "；", "）", "”")


class UserError(Exception):
    """An error whose message says what happened and what to do; shown as is in the UI."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        sep = "" if self.message.endswith(_FULL_WIDTH_END) else " "
        return f"{self.message}{sep}{self.hint}".strip()


class ValidationError(UserError):
    """A value a user typed is not acceptable; `field` names the input it belongs to."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
