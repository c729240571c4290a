"""CLI subcommands of `python -m rlft_learner` (the table is __main__.py): serve and bench-update, the training commands, fixtures, benches and plots."""
