"""Exception hierarchy: every error the project raises derives from TableError."""

from __future__ import annotations


class TableError(Exception):
    """Root of every error raised by the table controller."""


class ConfigError(TableError):
    """The table configuration is invalid; the message names the file and key."""


class TraceError(TableError):
    """An input trace line (hardware event or room command) is malformed."""


class RegistryError(TableError):
    """A deck or chip registry file is invalid, or a registration was refused."""


class ProtocolError(TableError):
    """A reader board sent something the protocol does not allow."""


class DeviceError(TableError):
    """A device could not be opened or stopped answering."""


class JournalError(TableError):
    """The journal could not be read or written."""


class RetentionError(JournalError):
    """Old journal segments could not be deleted (the journal itself is fine)."""


class CheckpointError(JournalError):
    """An engine checkpoint cannot be taken now, or a journal's checkpoint cannot be restored."""
