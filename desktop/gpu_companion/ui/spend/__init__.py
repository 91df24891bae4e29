"""The Spend page: rentals, charges, budgets, charts and CSV."""
