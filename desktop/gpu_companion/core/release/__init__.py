"""The release gate: a per-host backup checklist with evidence that must pass before release."""

from gpu_companion.core.release.checklist import ReleaseChecklist
from gpu_companion.core.release.config import ChecklistConfig, CustomCommand
from gpu_companion.core.release.context import (
    CheckpointSync,
    ReleaseContext,
    ReleaseRecord,
    RentalLedger,
    SshConfigBlocks,
    VerifiedSync,
)
from gpu_companion.core.release.gate import Override, ReleaseServices, release_host
from gpu_companion.core.release.model import ChecklistItem, Evidence, ItemState, ItemUpdate

__all__ = [
    "ChecklistConfig",
    "ChecklistItem",
    "CheckpointSync",
    "CustomCommand",
    "Evidence",
    "ItemState",
    "ItemUpdate",
    "Override",
    "ReleaseChecklist",
    "ReleaseContext",
    "ReleaseRecord",
    "ReleaseServices",
    "RentalLedger",
    "SshConfigBlocks",
    "VerifiedSync",
    "release_host",
]
