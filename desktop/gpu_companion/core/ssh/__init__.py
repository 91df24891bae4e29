"""Everything SSH: key parsing, the key vault over the OS keyring, verified paramiko sessions, the
generated ssh config and the managed Host blocks, and reading a provider's `ssh ...` line.
"""
