"""The Qt binding does not lose references when a signal carries a list of bools.

PySide6 6.12.0 on Python 3.11 drops a reference to True/False on every such emit; pyqtgraph emits
one on every range change, so the monitor's plots crashed the app ("bool_dealloc") within minutes.
pyproject.toml excludes that version; this test catches a binding with the same defect.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    changed = Signal(object, object, object)


def test_emitting_bools_in_a_list_keeps_their_reference_counts(qapp):
    emitter = _Emitter()
    got = []
    emitter.changed.connect(lambda *args: got.append(args[2]))
    before = sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(200):
        emitter.changed.emit(emitter, [[0, 1], [0, 1]], [True, False])
    got.clear()
    assert (sys.getrefcount(True), sys.getrefcount(False)) == before
