"""One host's checklist: builds the items from its config, runs them, tracks staleness and says
whether the host may be released."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release.archive import ArtefactsArchived
from gpu_companion.core.release.config import ChecklistConfig
from gpu_companion.core.release.context import ReleaseContext
from gpu_companion.core.release.items import (
    CheckpointsSynced,
    CustomCommandItem,
    ManualConfirmation,
)
from gpu_companion.core.release.leftovers import NothingLeftBehind
from gpu_companion.core.release.model import ChecklistItem, Evidence, ItemState, ItemUpdate
from gpu_companion.core.release.processes import NoWorkRunning

log = logging.getLogger(__name__)

BUILTINS: tuple[type[ChecklistItem], ...] = (
    CheckpointsSynced,
    ArtefactsArchived,
    NothingLeftBehind,
    NoWorkRunning,
)


class ReleaseChecklist:
    def __init__(self, host: Host, items: list[ChecklistItem]) -> None:
        self.host = host
        self.items = items

    @classmethod
    def build(
        cls, host: Host, config: ChecklistConfig, confirmed: Mapping[str, str] | None = None
    ) -> ReleaseChecklist:
        """`confirmed`: the manual items the user already confirmed (label -> note), as the
        store keeps them for the running rental."""
        items: list[ChecklistItem] = [k() for k in BUILTINS if k.key not in config.disabled]
        for i, label in enumerate(config.manual):
            manual = ManualConfirmation(label, i)
            if confirmed is not None and label in confirmed:
                manual.tick(confirmed[label])
            items.append(manual)
        items += [CustomCommandItem(c.label, c.command, i) for i, c in enumerate(config.custom)]
        return cls(host, items)

    def item(self, key: str) -> ChecklistItem:
        for it in self.items:
            if it.key == key:
                return it
        raise KeyError(key)

    # --- running -------------------------------------------------------------------------
    def run_item(self, key: str, ctx: ReleaseContext) -> Iterator[ItemUpdate]:
        item = self.item(key)
        item.state = ItemState.RUNNING
        yield ItemUpdate(key, item.state, item.evidence)
        try:
            evidence = item.run(ctx)
        except UserError as exc:
            evidence = Evidence(key, False, str(exc), item.title, ctx.clock())
        except Exception as exc:  # a bug must not leave the item "running" forever
            log.exception("check %s failed", key)
            evidence = Evidence(
                key,
                False,
                _("The check could not run: {error}").format(error=exc),
                item.title,
                ctx.clock(),
            )
        item.evidence = evidence
        item.state = ItemState.PASSED if evidence.passed else ItemState.FAILED
        yield ItemUpdate(key, item.state, evidence)

    def run_all(self, ctx: ReleaseContext) -> Iterator[ItemUpdate]:
        """Every item; stale ones first (they are the ones most likely to have changed)."""
        order = sorted(self.items, key=lambda it: it.state is not ItemState.STALE)
        for item in order:
            yield from self.run_item(item.key, ctx)

    def fix(self, key: str, ctx: ReleaseContext) -> Iterator[ItemUpdate]:
        """The item's own fix, then its check again."""
        item = self.item(key)
        item.state = ItemState.RUNNING
        try:
            for line in item.fix(ctx):
                yield ItemUpdate(key, ItemState.RUNNING, item.evidence, message=line)
        except UserError as exc:
            item.state = ItemState.FAILED
            item.evidence = Evidence(key, False, str(exc), item.title, ctx.clock())
            yield ItemUpdate(key, item.state, item.evidence, message=str(exc))
            return
        yield from self.run_item(key, ctx)

    # --- staleness -----------------------------------------------------------------------
    def check_staleness(self, ctx: ReleaseContext) -> Iterator[ItemUpdate]:
        """Probe every passed item; one whose host changed since its check becomes stale."""
        for item in self.items:
            if item.state is not ItemState.PASSED or item.evidence is None:
                continue
            try:
                why = item.changed_since(ctx, item.evidence)
            except UserError as exc:
                why = str(exc)
            if why:
                item.state = ItemState.STALE
                yield ItemUpdate(item.key, item.state, item.evidence, message=why)

    def recheck_stale(self, ctx: ReleaseContext) -> Iterator[ItemUpdate]:
        """What Release does first: find stale items, then run exactly those again."""
        yield from self.check_staleness(ctx)
        for item in [it for it in self.items if it.state is ItemState.STALE]:
            yield from self.run_item(item.key, ctx)

    # --- the verdict ---------------------------------------------------------------------
    def blockers(self) -> list[ChecklistItem]:
        return [it for it in self.items if it.state is not ItemState.PASSED]

    def ready(self) -> bool:
        return bool(self.items) and not self.blockers()

    def evidence(self) -> list[Evidence]:
        return [it.evidence for it in self.items if it.evidence is not None]
