"""One package per learning algorithm: its config, agent or training loop, and networks."""
