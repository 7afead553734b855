"""Plotly figures for the agentic page: throughput per GPU against interactivity, and the
cache hit rates (the engine's GPU and CPU tiers against the traces' theoretical rate) per
concurrency. Series names are HTML-escaped as on every chart; a local run's series says so
in its name and is drawn with open markers and a dotted line."""

from __future__ import annotations

from infersweep.report.agenticview import AgenticConfig, AgenticSeries
from infersweep.report.charts import COLOURS, HEIGHT, SYMBOLS, _text

HIT_RATES = (("server_gpu_cache_hit_rate", "server GPU hit rate", "solid"),
             ("server_cpu_cache_hit_rate", "server CPU hit rate", "dash"),
             ("theoretical_cache_hit_rate", "theoretical hit rate", "dot"))


def _num(v, fmt: str, scale: float = 1.0) -> str:
    return "–" if v is None else format(v * scale, fmt)


def _hover(s: AgenticSeries, v: dict) -> str:
    tag = "<br>local, not publishable" if not v["publishable"] else ""
    return (f"{_text(s.run.label)} · KV offload {_text(s.mode)}<br>conc {v['conc']}<br>"
            f"{_num(v['tput_per_gpu'], ',.1f')} tok/s/GPU<br>"
            f"{_num(v['median_intvty'], ',.2f')} tok/s/user (p50)<br>"
            f"TTFT p50 {_num(v['median_ttft'], ',.0f', 1000)} ms{tag}")


def _marker(s: AgenticSeries, symbol: str) -> dict:
    colour = COLOURS[s.run_index % len(COLOURS)]
    return {"color": colour, "symbol": f"{symbol}-open" if s.local else symbol, "size": 9}


def throughput(cfg: AgenticConfig) -> tuple[dict, int]:
    """Throughput per GPU against interactivity: a trace per run and KV-offload mode."""
    data, n, symbols = [], 0, {}
    for s in cfg.series:
        pts = [p.values for p in s.points
               if p.values["tput_per_gpu"] is not None and p.values["median_intvty"] is not None]
        n += len(pts)
        symbol = symbols.setdefault(s.mode, SYMBOLS[len(symbols) % len(SYMBOLS)])
        data.append({"type": "scatter", "mode": "lines+markers", "name": _text(s.name),
                     "x": [v["median_intvty"] for v in pts],
                     "y": [v["tput_per_gpu"] for v in pts],
                     "text": [_hover(s, v) for v in pts],
                     "hovertemplate": "%{text}<extra></extra>",
                     "marker": _marker(s, symbol),
                     "line": {"color": COLOURS[s.run_index % len(COLOURS)],
                              "dash": "dot" if s.local else "solid", "width": 1.5}})
    layout = {"title": {"text": _text(f"{cfg.key}: throughput per GPU against interactivity")},
              "height": HEIGHT, "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
              "xaxis": {"title": {"text": "Interactivity (tok/s/user, p50)"},
                        "rangemode": "tozero"},
              "yaxis": {"title": {"text": "Throughput per GPU (tok/s/GPU)"},
                        "rangemode": "tozero"},
              "legend": {"orientation": "h", "y": -0.18}, "hovermode": "closest"}
    return {"data": data, "layout": layout}, n


def cache_hits(cfg: AgenticConfig) -> tuple[dict, int]:
    """Hit rates (%) per concurrency: per run and mode, the server's GPU and CPU tiers and
    the theoretical rate the traces allow."""
    data, n = [], 0
    for s in cfg.series:
        for column, label, dash in HIT_RATES:
            pts = [p.values for p in s.points if p.values[column] is not None]
            n += len(pts)
            data.append({"type": "scatter", "mode": "lines+markers",
                         "name": _text(f"{s.name} · {label}"),
                         "x": [v["conc"] for v in pts],
                         "y": [v[column] * 100 for v in pts],
                         "hovertemplate": _text(f"{s.run.label} · {s.mode} · {label}")
                         + "<br>conc %{x}: %{y:.1f}%<extra></extra>",
                         "marker": _marker(s, "circle"),
                         "line": {"color": COLOURS[s.run_index % len(COLOURS)], "dash": dash,
                                  "width": 1.5}})
    layout = {"title": {"text": _text(f"{cfg.key}: cache hit rates per concurrency")},
              "height": HEIGHT, "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
              "xaxis": {"title": {"text": "Concurrency (live sessions)"}, "type": "log"},
              "yaxis": {"title": {"text": "Hit rate (%)"}, "range": [0, 100]},
              "legend": {"orientation": "h", "y": -0.18}, "hovermode": "closest"}
    return {"data": data, "layout": layout}, n
