"""Qt-free domain and I/O: store, keyring, ssh, rsync, nvidia-smi. Never imports Qt."""
