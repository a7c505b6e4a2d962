"""Firmware simulators: reader boards on pseudo-terminals, shuffler, panel and badges."""
