"""GPU Companion: the desktop companion for renting cloud GPUs."""

__version__ = "0.1.0"
