"""System tests: real mosquitto, pcscd, ptys, the daemon started or run as a process."""
