"""Simulated hardware: reader boards on pseudo-terminals, PN5180s, field board and badges."""
