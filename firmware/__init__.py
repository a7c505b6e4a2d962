"""Reader board firmware (MicroPython): protocol, PN5180 driver, antenna scan, main loop."""
