"""The HIL-SERL / RLPD baseline: SAC from scratch with demonstrations."""
