"""Shipped resources: icons, GPU catalogue, style sheets."""
