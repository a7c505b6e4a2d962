"""Pure poker rules: hand evaluation, pots, chip-push interpretation, betting rounds."""

from __future__ import annotations

from kernel.errors import TableError

__all__ = ["RuleError"]


class RuleError(TableError):
    """An action or input breaks a poker rule; ``rule`` names the TDA 2019 rule when known."""

    def __init__(self, message: str, rule: str | None = None) -> None:
        super().__init__(message if rule is None else f"{message} (rule {rule})")
        self.rule = rule
