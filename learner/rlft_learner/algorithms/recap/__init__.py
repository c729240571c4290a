"""RECAP: value function, advantage indicators and the indicator-conditioned fine-tune."""
