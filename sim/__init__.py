"""Simulated dealing: the demo dealer, its plans and mistakes, the script player, sim tables."""
