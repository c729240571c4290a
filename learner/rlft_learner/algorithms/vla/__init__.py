"""A tiny language-conditioned VLA (pi0-style flow matching): model, tokenizer, dataset, training, export."""
