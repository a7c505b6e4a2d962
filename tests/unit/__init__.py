"""Unit tests: one module or a few, in process, no broker, pcscd, pty or daemon process."""
