"""srt-slurm recipes: templates (or srt-slurm's own recipes) own the server, matrix rows own
the workload.

``render`` renders a row's recipe from its template under ``benchmarks/multi_node/srt-slurm/``
or, failing that, from the recipe of an srt-slurm checkout (``lookup``, ``overrides``,
``srtrecipe``), and generates its benchmark section; ``check`` validates templates and
rendered recipes against their schemas; ``diff`` compares two recipes by meaning rather than
by text; ``coverage`` renders every row of a catalog and has the real srtctl dry-run the
results (``srtctl``).
"""
