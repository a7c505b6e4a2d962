"""Dealing procedures, one module per procedure, named for its TDA 2019 rule.

Each keeps its own state (stage, floor call, the hold of rule 39), sees the table only
through `controller.engine.ports`, and returns what it needs done as effects
(`base.Effect`); the hand's dealing flow (`controller.engine.dealing`) carries them out.
"""
