"""The 5-minute self-check of a rented host: the probe sent to the host, the rules that judge its
report, and the PyTorch build advice.
"""
