"""TV production: the `tablectl tv` service (secure delay, equities, OBS overlay pages, feed)."""
