"""Money and the spend ledger: minor-unit money, metering from timestamps, rentals and charges,
CSV, budgets, alerts and reports.
"""
