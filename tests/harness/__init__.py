"""The test harness: real OpenSSH, a real Secret Service keyring, an nvidia-smi stand-in.

Each piece is a plain class with start()/stop() so benchmarks and scripts can use it outside pytest;
tests/conftest.py wraps them in fixtures.
"""
