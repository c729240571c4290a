"""Policy packages: ONNX graphs, policy.json and their provenance (docs/policy-package.md)."""
