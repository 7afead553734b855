"""The static report: charts and tables of staged runs, built from ``list[StagedRun]``.

``build(runs, out)`` writes a site that works offline (plotly.js is written once beside the
pages, from the installed plotly package): an index, a page per config and a page per staged
run at ``runs/<run id>-<attempt>.html`` (:func:`run_page_path`).
"""

from infersweep.report.site import BuildSummary, ChartInfo, build, config_page_path, run_page_path

__all__ = ["BuildSummary", "ChartInfo", "build", "config_page_path", "run_page_path"]
