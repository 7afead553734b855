"""srt-slurm recipes: templates own the server, matrix rows own the workload.

``render`` fills a template under ``benchmarks/multi_node/srt-slurm/`` from one matrix row and
generates its benchmark section; ``check`` validates templates and rendered recipes against
their schemas; ``diff`` compares two recipes by meaning rather than by text.
"""
