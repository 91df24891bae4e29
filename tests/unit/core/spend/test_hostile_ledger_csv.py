"""Fuzz: whatever a bill holds, the import refuses by line or imports; nothing else escapes, and
the time stays linear in the file's size."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.spend.ledger_csv import apply_import, parse_csv

HEADER = "type,platform,currency,started_at,ended_at,hours,rate,amount,gpu_count,ref\n"

numbers = st.one_of(
    st.sampled_from(
        ["", "0", "0.5", "0.50", "-1", "1e3", "1E+400", "NaN", "inf", "1,5", "9" * 400]
    ),
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
)
dates = st.one_of(
    st.sampled_from(["", "2025-01-02", "2025-01-02T10:00:00Z", "9999-12-31", "0001-01-01", "x"]),
    st.datetimes().map(lambda d: d.isoformat()),
)
cell = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
rows = st.lists(
    st.tuples(
        st.sampled_from(["rental", "", "storage", "credit", "traffic", "?"]),
        st.sampled_from(["vast.ai", "runpod", "=cmd", ""]) | cell,
        st.sampled_from(["USD", "JPY", "KWD", "US", ""]),
        dates,
        dates,
        numbers,
        numbers,
        numbers,
        st.sampled_from(["", "1", "8", "65", "-1", "x"]),
        st.sampled_from(["", "r1", "r2"]),
    ).map(lambda r: ",".join('"' + c.replace('"', '""') + '"' for c in r)),
    max_size=8,
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=rows)
def test_fuzz_import_refuses_by_line_and_never_raises(ledger, body):
    data = (HEADER + "\n".join(body) + "\n").encode()
    preview = parse_csv(ledger, data)
    for row in preview.bad:
        assert row.errors and all(isinstance(e, str) and e for e in row.errors)
    try:
        apply_import(ledger, preview)
    except UserError:
        assert preview.file_errors


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=600))
def test_fuzz_arbitrary_bytes_never_raise(ledger, data):
    preview = parse_csv(ledger, HEADER.encode() + data)
    try:
        apply_import(ledger, preview)
    except UserError:
        assert preview.file_errors


def test_time_is_linear_in_the_rows(ledger):
    def seconds(n: int) -> float:
        body = "".join(
            f"rental,vast.ai,USD,2025-01-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
            ",,2,1.5,,1,\n"
            for i in range(n)
        )
        start = time.process_time()
        preview = parse_csv(ledger, (HEADER + body).encode())
        assert len(preview.rows) == n
        return time.process_time() - start

    small, large = seconds(500), seconds(5000)
    assert large < max(small, 0.05) * 25  # 10x the rows: well under 100x the time
