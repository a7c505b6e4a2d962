"""The engine's inputs, one module per kind: commands, buttons, badges, devices, tags."""
