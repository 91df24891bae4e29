"""Qt-free domain and I/O: store, keyring, ssh, rsync, nvidia-smi. Never imports Qt."""

from gpu_companion.core._fast_imports import import_sqlite_utils_without_numpy

import_sqlite_utils_without_numpy()
