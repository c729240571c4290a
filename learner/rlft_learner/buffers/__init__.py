"""Replay buffers and the episode relabelers that fill them (hindsight goals, mirror symmetry)."""
