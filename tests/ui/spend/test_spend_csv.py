"""CSV import from the Spend page: the preview says which rows are refused and why; export."""

from datetime import timezone

from PySide6.QtCore import Qt

from gpu_companion.core.hosts.registry import Platform

RESULT = 6  # Line, Type, Platform, What, Rate, Amount, Result


def test_import_preview_marks_bad_rows_and_imports_the_rest(
    window, ctx, manual_clock, qtbot, qtmodeltester, tmp_path
):
    ctx.ledger.clock, ctx.ledger.tz = manual_clock, timezone.utc
    ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    page = window.navigate("spend")
    bills = tmp_path / "bills.csv"
    bills.write_bytes(
        b"type,platform,currency,started_at,hours,rate,amount\n"
        b"rental,vast.ai,USD,2025-01-02T10:00:00Z,3,1.5,\n"
        b"rental,vast.ai,USD,not-a-date,3,1.5,\n"
        b"storage,RunPod,EUR,2025-01-04,,,3.10\n"
    )
    dialog = page.run_import(bills)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=10000)
    qtmodeltester.check(dialog.model)
    result = [
        dialog.model.data(dialog.model.index(i, RESULT), Qt.ItemDataRole.DisplayRole)
        for i in range(3)
    ]
    assert result[0] == "will be imported" and result[2] == "will be imported"
    assert result[1].startswith("refused: started_at 'not-a-date' is not a date")
    assert dialog.summary.text() == (
        "2 rows will be imported, 1 refused (they are not imported). New platforms: RunPod."
    )
    dialog.ok.click()
    qtbot.waitUntil(lambda: dialog.result_value is not None, timeout=10000)
    assert (dialog.result_value.rentals, dialog.result_value.charges) == (1, 1)
    assert len(ctx.ledger.history()) == 1
    qtbot.waitUntil(lambda: "Imported 1 rentals" in window.statusBar().currentMessage())

    out = tmp_path / "out.csv"
    page.run_export(out)
    qtbot.waitUntil(out.exists, timeout=10000)
    assert out.read_text().count("\n") == 3
    assert not list(tmp_path.glob(".out.csv.part"))


def test_a_file_that_is_not_a_ledger_cannot_be_imported(window, ctx, qtbot, tmp_path):
    ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    page = window.navigate("spend")
    bad = tmp_path / "notes.csv"
    bad.write_bytes(b"date,what\n2025-01-01,lunch\n")
    dialog = page.run_import(bad)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=10000)
    assert dialog.summary.text().startswith("Missing columns: platform, currency")
    assert not dialog.ok.isEnabled()
    missing = page.run_import(tmp_path / "gone.csv")
    qtbot.addWidget(missing)
    qtbot.waitUntil(lambda: "Could not read" in missing.summary.text(), timeout=10000)
    assert "No such file" in missing.summary.text()


def test_a_providers_bill_is_previewed_as_understood_and_imported_with_its_platform(
    window, ctx, manual_clock, qtbot, tmp_path
):
    ctx.ledger.clock, ctx.ledger.tz = manual_clock, timezone.utc
    ctx.registry.save_platform(Platform("lambda", "", "second", "USD"))
    page = window.navigate("spend")
    bill = tmp_path / "lambda-2025-03.csv"
    bill.write_bytes(
        b"Start;End;GPU;GPUs;Price/h;Cost\n"
        b"2025-03-01 08:00;2025-03-01 10:00;H100 SXM;8;21,20;42,40\n"
    )
    dialog = page.run_import(bill)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=10000)
    assert dialog.summary.text().startswith("Missing columns: platform, currency")
    assert not dialog.ok.isEnabled()
    dialog.default_platform.setCurrentText("lambda")
    dialog.default_currency.setCurrentText("USD")
    qtbot.waitUntil(lambda: dialog.ok.isEnabled(), timeout=10000)
    assert dialog.understood.text() == (
        "Columns separated by semicolons; decimal comma (0,39 is read as 0.39); read as the "
        "ledger's: Start → started_at, End → ended_at, GPU → gpu_model, GPUs → gpu_count, "
        "Price/h → rate, Cost → amount."
    )
    assert dialog.summary.text() == "1 rows will be imported, 0 refused (they are not imported)."
    dialog.ok.click()
    qtbot.waitUntil(lambda: dialog.result_value is not None, timeout=10000)
    [rental] = ctx.ledger.history()
    assert (rental.platform_name, rental.cost_minor, rental.gpu_count) == ("lambda", 4240, 8)


def _cells(dialog, row: int) -> dict[str, str]:
    model = dialog.model
    heads = [
        model.headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
        for c in range(model.columnCount())
    ]
    return {
        h: model.data(model.index(row, c), Qt.ItemDataRole.DisplayRole) for c, h in enumerate(heads)
    }


def test_a_tab_separated_bill_is_previewed_with_its_amounts(window, ctx, qtbot, tmp_path):
    ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    page = window.navigate("spend")
    bill = tmp_path / "vast-2025-01.tsv"
    bill.write_bytes(
        b"type\tplatform\tcurrency\tstarted_at\thours\trate\tamount\n"
        b"rental\tvast.ai\tUSD\t2025-01-02T10:00:00Z\t3\t1.5\t\n"
        b"rental\tvast.ai\tUSD\t2025-01-03T10:00:00Z\t2\t0.3945\t0.79\n"
        b"storage\tvast.ai\tUSD\t2025-01-04\t\t\t1234.5\n"
    )
    dialog = page.run_import(bill)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=10000)
    assert dialog.understood.text().startswith("Columns separated by tabs")
    rows = [_cells(dialog, i) for i in range(3)]
    assert (rows[0]["Rate"], rows[0]["Amount"]) == ("$1.50/h", "$4.50")  # 3 h at $1.50
    assert (rows[1]["Rate"], rows[1]["Amount"]) == ("$0.3945/h", "$0.79")  # as billed
    assert (rows[2]["Rate"], rows[2]["Amount"]) == ("", "$1,234.50")  # format_money
    assert all(r["Result"] == "will be imported" for r in rows)


def test_the_import_file_picker_offers_tsv_and_all_files(window, ctx, qtbot, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    page = window.navigate("spend")
    asked: list[str] = []

    def pick(parent, title, start, filters):  # type: ignore[no-untyped-def]
        asked.append(filters)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(pick))
    page.import_csv()
    [filters] = asked
    assert "*.tsv" in filters.split(";;")[0] and "*.csv" in filters.split(";;")[0]
    assert "All files (*)" in filters.split(";;")


def test_a_big_file_is_previewed_by_its_first_rows_and_imported_whole(
    window, ctx, manual_clock, qtbot, tmp_path, monkeypatch
):
    """The preview checks and holds only its first rows (the rest are counted); the import
    reads the file again, streamed: every row lands, not only the previewed ones."""
    from gpu_companion.ui.spend import dialogs

    monkeypatch.setattr(dialogs.CsvImportDialog, "preview_rows", 5)
    ctx.ledger.clock, ctx.ledger.tz = manual_clock, timezone.utc
    page = window.navigate("spend")
    bill = tmp_path / "big.csv"
    rows = [f"rental,r{n},vast.ai,USD,2025-01-{1 + n:02d}T10:00:00Z,2,1.5" for n in range(12)]
    rows[8] = "rental,r8,vast.ai,USD,not-a-date,2,1.5"  # past the preview: refused on import
    bill.write_text("type,ref,platform,currency,started_at,hours,rate\n" + "\n".join(rows))
    dialog = page.run_import(bill)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=10000)
    assert dialog.model.rowCount() == 5 and dialog.total == 12
    assert dialog.summary.text().startswith(
        "The first 5 of 12 rows: 5 rows will be imported, 0 refused"
    )
    dialog.ok.click()
    qtbot.waitUntil(lambda: dialog.result_value is not None, timeout=10000)
    assert (dialog.result_value.rentals, dialog.result_value.refused) == (11, 1)
    assert len(ctx.ledger.history()) == 11


def test_a_bill_of_100000_rows_is_imported_from_the_page_by_a_second_process(
    window, ctx, qtbot, tmp_path, monkeypatch
):
    """A file of 16 MiB is parsed by a process of its own (`ledger_import._parsed_elsewhere`),
    started from the import's worker thread in the window's process; the page's import lands
    every row once. (The entry points' main modules: tests/integration/test_ledger_cli.py.)"""
    import multiprocessing
    from multiprocessing.context import SpawnProcess

    from gpu_companion.core.spend import ledger_import
    from gpu_companion.core.spend.ledger_import import ELSEWHERE_BYTES
    from tests.harness.bills import write_bill

    monkeypatch.setattr(ledger_import, "_cores", lambda: 2)  # as here; a 1-core runner: in-process

    started: list[str] = []
    start = SpawnProcess.start

    def spy(self):  # type: ignore[no-untyped-def]
        started.append(self.name)
        start(self)

    monkeypatch.setattr(SpawnProcess, "start", spy)
    page = window.navigate("spend")
    bill = write_bill(tmp_path / "year.csv", 100_000)
    assert bill.stat().st_size >= ELSEWHERE_BYTES
    dialog = page.run_import(bill)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=30000)
    assert dialog.total == 100_000
    moved: list[tuple[int, int, int]] = []
    closed_while_saving: list[tuple[bool, str]] = []

    def on_moved(line: int, lines: int) -> None:  # after the dialog's own slot
        moved.append((line, lines, dialog.bar.value()))
        if line >= lines:  # closing it while it saves (which cannot stop) waits for the save
            dialog.reject()
            closed_while_saving.append((dialog.isVisible(), dialog.summary.text()))

    dialog._progress.moved.connect(on_moved)
    dialog.ok.click()
    assert dialog.bar.isVisible() and not dialog.ok.isEnabled()
    qtbot.waitUntil(lambda: dialog.result_value is not None, timeout=60000)
    assert closed_while_saving == [(True, "Saving the imported rows…")]
    assert (dialog.result_value.rentals, dialog.result_value.refused) == (100_000, 0)
    # the bar moved with each batch of 5,000 rows, then said it saves
    assert len(moved) == 21 and moved[-1][0] == moved[-1][1] == 100_002
    assert [bar for *_p, bar in moved[:20]] == sorted(bar for *_p, bar in moved[:20])
    assert ctx.ledger.store.db.execute("SELECT COUNT(*) FROM rentals").fetchone()[0] == 100_000
    assert started == ["ledger-import-reader"]  # the preview's rows are read here, once
    assert not multiprocessing.active_children()


def test_cancel_while_a_big_bill_imports_stops_it_and_stores_nothing(window, ctx, qtbot, tmp_path):
    import multiprocessing

    from PySide6.QtWidgets import QDialogButtonBox

    from tests.harness.bills import write_bill

    page = window.navigate("spend")
    bill = write_bill(tmp_path / "year.csv", 100_000)
    dialog = page.run_import(bill)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=30000)
    dialog.ok.click()
    qtbot.waitUntil(lambda: dialog.bar.value() > 0, timeout=30000)  # a batch is stored
    assert dialog.summary.text().startswith("Importing: line ")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    assert dialog.isVisible()  # it stays open until the import has stopped
    qtbot.waitUntil(lambda: not dialog.importing, timeout=30000)
    assert dialog.summary.text() == "The import was cancelled: nothing was stored."
    assert dialog.result_value is None and dialog.isVisible() and dialog.ok.isEnabled()
    assert ctx.ledger.store.db.execute("SELECT COUNT(*) FROM rentals").fetchone()[0] == 0
    assert not multiprocessing.active_children()
    dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()  # now it closes
    assert not dialog.isVisible()


def test_the_file_is_read_again_only_when_a_default_changes(window, ctx, qtbot, tmp_path):
    """The platform's field says "editing finished" on every focus change: a bill of a million
    rows was read again each time (and, during an import, its preview overwrote the import's
    word)."""
    page = window.navigate("spend")
    bill = tmp_path / "bill.csv"
    bill.write_text("type,currency,started_at,hours,rate\nrental,USD,2025-01-02T10:00:00Z,2,1.5\n")
    dialog = page.run_import(bill)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.preview is not None, timeout=10000)
    typed = dialog.default_platform.lineEdit()
    assert typed is not None and dialog._reads == 1
    typed.editingFinished.emit()  # focus left, nothing changed
    assert dialog._reads == 1
    typed.setText("Lambda")
    typed.editingFinished.emit()
    assert dialog._reads == 2
    qtbot.waitUntil(lambda: dialog.ok.isEnabled(), timeout=10000)  # read with the platform
