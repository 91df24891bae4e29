"""The Settings page."""
