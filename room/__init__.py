"""The room server: every table's messages stored once, hand histories, statistics, an HTTP API."""
