"""The one SQLite file: opening, WAL, the versioned schema and its migrations."""
