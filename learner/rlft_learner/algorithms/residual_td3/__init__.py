"""Ours: a residual TD3 actor over the frozen BC base, a REDQ critic ensemble, the chunk critic."""
