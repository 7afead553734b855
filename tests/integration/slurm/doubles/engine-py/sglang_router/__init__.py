"""TEST DOUBLE: stands in for the `sglang_router` package (the SGLang router) in a container."""

__version__ = "0.0.0+infersweep.test.double"
