"""infersweep: LLM-inference benchmark sweeps on GPU clusters, driven from GitHub Actions."""

__version__ = "0.1.0"
