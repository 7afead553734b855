"""TEST DOUBLE: stands in for the `sglang` package inside an engine container (no GPU here).
`python3 -m sglang.launch_server ...` starts the project's simulator (see engine_double.py)."""

__version__ = "0.0.0+infersweep.test.double"
