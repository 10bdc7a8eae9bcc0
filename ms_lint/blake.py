"""``blake2b``, without importing ``hashlib``: that module also loads OpenSSL's bindings (``_hashlib``), about 4 ms
of a warm run, for digests ``hashlib`` itself takes from ``_blake2``."""
try:
    from _blake2 import blake2b
except ImportError:  # a Python built without it: hashlib's fallback
    from hashlib import blake2b

__all__ = ["blake2b"]
