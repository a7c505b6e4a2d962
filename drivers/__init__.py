"""Hardware drivers: reader boards over serial, GPIO buttons and lamps, badge reader."""
