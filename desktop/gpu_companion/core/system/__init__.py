"""This computer: the environment check (keyring, ssh, rsync) and start at login."""
