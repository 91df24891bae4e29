"""Off-desk notifications: the notifier's alerts delivered where the renter is (ntfy, a webhook,
e-mail, the desktop), each channel with its alert kinds, quiet hours and de-duplication, through
an outbox in the app's store that survives a restart. Uses only `storage` and `common`."""
