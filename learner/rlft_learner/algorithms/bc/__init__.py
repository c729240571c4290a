"""Diffusion Policy by behaviour cloning (train-bc) and the DDIM sampler every diffusion package runs."""
