"""The Release page: the backup checklist, its dialogs and the release flow."""
