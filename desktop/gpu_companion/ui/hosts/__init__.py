"""The Hosts page: platforms and hosts, connection tests and host-key dialogs."""
