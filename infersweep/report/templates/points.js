// A run's page or a config's page: its charts and its points' table, drawn from the
// explorer's data (explorer-data.js) with points-core.js. The page's element #points-page
// says which: data-run="<run id>-<attempt>" or data-config="<config key>".
(function () {
  "use strict";
  const X = window.InfersweepExplorer, P = window.InfersweepPoints;
  const data = window.INFERSWEEP_EXPLORER_DATA;
  const page = document.getElementById("points-page");
  const rootPath = page.dataset.root || "";
  const HEIGHT = 520;
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  const decoded = X.decode(data), runs = decoded.runs;
  let nChart = 0;

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function link(href, text) {
    const a = el("a", text);
    a.href = rootPath + href;
    return a;
  }

  function drawChart(box, c) {
    const section = el("section", undefined, "chart");
    section.appendChild(el("h3", c.title));
    section.appendChild(el("p", c.points + " point" + (c.points === 1 ? "" : "s") +
      "; dashed lines: each run's Pareto frontier across topologies.", "note"));
    const div = el("div", undefined, "plotly-graph-div");
    div.id = "chart-" + nChart++;
    div.style.height = HEIGHT + "px";
    section.appendChild(div);
    box.appendChild(section);
    const layout = {
      title: { text: P.escapeText(c.title) }, height: HEIGHT,
      margin: { l: 70, r: 20, t: 50, b: 60 }, hovermode: "closest",
      xaxis: { title: { text: "Interactivity (tok/s/user, median)" }, rangemode: "tozero" },
      yaxis: { title: { text: "Throughput per GPU (tok/s/GPU)" }, rangemode: "tozero" },
      legend: { orientation: "h", y: -0.18 },
    };
    return window.Plotly.newPlot(div, P.traces(c, runs), layout, PLOT_CONFIG)
      .then(() => { div.dataset.rendered = "yes"; });
  }

  function drawCharts(box, list) {
    const cs = P.charts(list);
    if (!cs.length) box.appendChild(el("p", "No complete points to plot.", "note"));
    return cs.map((c) => drawChart(box, c));
  }

  function table(box, list, showRun) {
    const wrap = el("div", undefined, "scroll"), t = el("table", undefined, "points");
    const head = el("tr");
    if (showRun) head.appendChild(el("th", "staged run"));
    for (const c of P.COLUMNS) head.appendChild(el("th", c.head));
    t.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    for (const r of list) {
      const tr = el("tr");
      if (!r.successful) tr.className = "failed";
      if (showRun) tr.appendChild(el("td")).appendChild(link(runs.page[r.run], runs.label[r.run]));
      for (const c of P.COLUMNS) tr.appendChild(el("td", c.cell(r, runs), c.num ? "num" : undefined));
      body.appendChild(tr);
    }
    t.appendChild(body);
    wrap.appendChild(t);
    box.appendChild(wrap);
  }

  function runPage() {
    const run = P.runIndex(decoded, page.dataset.run);
    const list = run < 0 ? [] : P.rows(decoded, data, { run: run });
    const byConfig = new Map();
    for (const r of list) {
      if (!byConfig.has(r.config)) byConfig.set(r.config, []);
      byConfig.get(r.config).push(r);
    }
    // configs of the run with evals and no points (their pages given by the page)
    const pages = Object.assign({}, data.config_pages);
    for (const [key, href] of JSON.parse(page.dataset.evalConfigs || "[]")) {
      pages[key] = href;
      if (!byConfig.has(key)) byConfig.set(key, []);
    }
    const drawn = [];
    for (const key of Array.from(byConfig.keys()).sort()) {
      const rowsOf = byConfig.get(key);
      page.appendChild(el("h2", key));
      page.appendChild(el("p")).appendChild(link(pages[key], "All staged runs of " + key));
      drawn.push(...drawCharts(page, rowsOf));
      if (rowsOf.length) table(page, rowsOf, false);
    }
    return drawn;
  }

  function configPage() {
    const key = page.dataset.config;
    const withPoints = P.configRuns(decoded, data, key), all = new Set(withPoints);
    for (const k of JSON.parse(page.dataset.evalRuns || "[]")) {
      const i = P.runIndex(decoded, k);
      if (i >= 0) all.add(i);
    }
    const runList = document.getElementById("config-runs");
    Array.from(all).sort((a, b) => b - a).forEach((i, n) => {
      if (n) runList.appendChild(document.createTextNode(", "));
      runList.appendChild(link(runs.page[i], runs.label[i]));
    });
    const charts = document.getElementById("config-charts");
    const points = document.getElementById("config-points");
    const choice = document.getElementById("all-runs");
    const NEWEST = Number(page.dataset.newest);  // runs shown until asked for all
    function draw() {
      delete page.dataset.drawn;
      const every = withPoints.length <= NEWEST || choice.checked;
      const shown = every ? null : new Set(withPoints.slice(-NEWEST));
      for (const c of charts.querySelectorAll(".plotly-graph-div")) window.Plotly.purge(c);
      charts.replaceChildren();
      points.replaceChildren();
      nChart = 0;
      const list = P.rows(decoded, data, { config: key, runs: shown });
      const drawn = drawCharts(charts, list);
      table(points, list, true);
      return drawn;
    }
    if (withPoints.length > NEWEST) {
      choice.closest("p").hidden = false;
      choice.nextSibling.textContent = " every staged run (" + withPoints.length + "), not only the newest " + NEWEST;
      choice.addEventListener("change", () => Promise.all(draw()).then(marked));
    }
    return draw();
  }

  function marked() {
    page.dataset.drawn = "yes";
    if (window.performance && performance.mark) performance.mark("points-drawn");
  }

  Promise.all(page.dataset.config !== undefined ? configPage() : runPage()).then(marked);
})();
