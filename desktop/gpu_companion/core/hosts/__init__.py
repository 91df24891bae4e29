"""Platforms (provider accounts) and hosts (rented machines): the registry and the import from the
user's ~/.ssh/config.
"""
