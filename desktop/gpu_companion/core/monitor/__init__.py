"""Live GPU watching: nvidia-smi parsing, the transport to a host, the streaming collector, the
slow poll and host counters, bounded history, hints and the one-shot snapshot.
"""
