"""RFID reader boards over serial: wire protocol (framing, messages) and the host driver."""
