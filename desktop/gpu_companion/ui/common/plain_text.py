"""Host text shown by Qt as text, never as markup: Qt renders a tooltip (and an auto-format label)
as rich text when it merely looks like HTML, so a process name `<img width=400>` or an rsync
error quoting `<h1>` would render. Every model and widget that shows a host's words in a tooltip
passes them through `tooltip_text`."""

from __future__ import annotations

from gpu_companion.core.common.plain import plain


def tooltip_text(text: str | None) -> str:
    """`text` as a tooltip that shows exactly these characters (escape sequences dropped); the
    escaped form keeps its line breaks. Empty stays empty (no tooltip)."""
    if not text:
        return ""
    text = plain(text)
    if "<" not in text and "&" not in text:
        return text  # cannot be taken for markup
    from html import escape  # here: the window's first frame imports this module

    return f"<p style='white-space:pre-wrap'>{escape(text, quote=False)}</p>"
