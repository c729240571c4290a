"""The wire: rlft-exp/1 frames (protocol), the dataset and online ROUTER servers, and the door (security)."""
