"""The Monitor page: the fleet table, per-GPU plots and hints, fed by the core monitor."""
