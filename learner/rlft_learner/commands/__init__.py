"""CLI subcommands of `python -m rlft_learner` that are not one algorithm's training entry point."""
