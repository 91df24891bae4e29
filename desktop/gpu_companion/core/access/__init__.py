"""Everyday access to a rented host: a terminal, VS Code, and port tunnels over the app's own
verified connection (owns the saved tunnels and the launch preferences; no Qt)."""
