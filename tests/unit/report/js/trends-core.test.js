// trends-core.js under node's own test runner (`node --test`), run by test_trends_js.py,
// which writes the site data these tests read to the file TRENDS_TEST_DATA names.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");

const TEMPLATES = path.join(__dirname, "..", "..", "..", "..", "infersweep", "report", "templates");
const T = require(path.join(TEMPLATES, "trends-core.js"));
const X = require(path.join(TEMPLATES, "explorer-core.js"));
const SITE = process.env.TRENDS_TEST_DATA ? JSON.parse(fs.readFileSync(process.env.TRENDS_TEST_DATA, "utf8")) : null;

const close = (a, b, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), a + " != " + b);

// a seeded generator, so a failure can be replayed
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function monotoneData(r, n, rising) {
  const xs = [], ys = [];
  let x = 1 + r() * 10, y = rising ? r() * 5 : 500 + r() * 500;
  for (let k = 0; k < n; k++) {
    xs.push(x); ys.push(y);
    x += 0.1 + r() * 40 * (r() < 0.2 ? 10 : 1);           // uneven spacing
    const step = r() < 0.25 ? 0 : r() * 100 * (r() < 0.2 ? 20 : 1);  // flat runs, jumps
    y = rising ? y + step : Math.max(0, y - step);
  }
  return [xs, ys];
}

test("agrees with PCHIP's known values (scipy.interpolate.PchipInterpolator)", () => {
  // reference values computed once with scipy 1.17's PchipInterpolator on the same points
  const xs = [10, 20, 45, 60, 100], ys = [900, 800, 300, 250, 20];
  const known = [[10, 900], [12, 884.5298701298701], [15, 856.9805194805195], [20, 800],
    [30, 591.1256384065374], [44, 306.8176996935649], [50, 279.5594118611312],
    [59, 253.83525305643022], [75, 179.85092534528206], [99, 27.462070758527286], [100, 20]];
  for (const [t, y] of known) close(T.interpolate(xs, ys, t), y);
  const rising = [[1.5, 2.8627873563218396], [3, 4.517594686263426], [6, 15.805327868852459],
    [7.9, 38.58292597336066]];
  for (const [t, y] of rising) close(T.interpolate([1, 2, 4, 8], [1, 4, 5, 40], t), y);
});

test("values a hand can check: flat steps stay flat, two points are a line, knots are exact", () => {
  assert.equal(T.interpolate([1, 2, 3, 4], [0, 0, 1, 1], 1.5), 0);
  close(T.interpolate([1, 2, 3, 4], [0, 0, 1, 1], 2.5), 0.5);  // symmetric step
  assert.equal(T.interpolate([1, 2, 3, 4], [0, 0, 1, 1], 3.5), 1);
  close(T.interpolate([5, 15], [2, 4], 10), 3);
  close(T.interpolate([5, 15], [2, 4], 7.5), 2.5);
  assert.equal(T.interpolate([7], [3], 7), 3);
  const xs = [3, 8, 20, 21, 90], ys = [1000, 640, 70, 60, 2];
  xs.forEach((x, k) => close(T.interpolate(xs, ys, x), ys[k]));
});

test("monotone data gives a monotone curve that never overshoots a segment", () => {
  const r = rng(20261205);
  for (let trial = 0; trial < 300; trial++) {
    const rising = trial % 2 === 0, [xs, ys] = monotoneData(r, 2 + Math.floor(r() * 10), rising);
    let prev = null;
    for (let k = 0; k < xs.length - 1; k++) {
      const lo = Math.min(ys[k], ys[k + 1]), hi = Math.max(ys[k], ys[k + 1]);
      for (let j = 0; j <= 50; j++) {
        const t = xs[k] + (xs[k + 1] - xs[k]) * j / 50, y = T.interpolate(xs, ys, t);
        assert.ok(y >= lo - 1e-9 * hi && y <= hi + 1e-9 * hi, `trial ${trial}: ${y} outside [${lo}, ${hi}] at ${t}`);
        if (prev !== null) {
          assert.ok(rising ? y >= prev - 1e-9 * hi : y <= prev + 1e-9 * hi, `trial ${trial}: not monotone at ${t}`);
        }
        prev = y;
      }
    }
  }
});

test("clamped at zero, and nothing beyond the data's range", () => {
  // a curve through a (for a metric impossible) negative value reads zero there, never below
  assert.equal(T.interpolate([1, 2, 3], [5, -1, 3], 2), 0);
  for (let t = 1; t <= 3; t += 0.05) assert.ok(T.interpolate([1, 2, 3], [5, -1, 3], t) >= 0);
  // falling steeply to zero: no dip below it
  for (let t = 1; t <= 4; t += 0.01) assert.ok(T.interpolate([1, 2, 3, 4], [900, 880, 1, 0], t) >= 0);
  for (const t of [0.999, 4.001, -1, NaN, Infinity]) assert.equal(T.interpolate([1, 2, 3, 4], [4, 3, 2, 1], t), null);
  assert.equal(T.interpolate([], [], 1), null);
  assert.equal(T.interpolate([7], [3], 7.5), null);
  assert.throws(() => T.interpolate([1, 1, 2], [1, 2, 3], 1.5), /strictly increasing/);
  assert.throws(() => T.interpolate([1, 2], [1], 1.5), /differ in length/);
});

test("a frontier group read at a target says when it is out of range", () => {
  const e = (x, y) => ({ x: x, y: y, p: { s: { config: "c", image: "i", fingerprint: "f", job: "j" } } });
  const g = { name: "g", frontier: [e(10, 900), e(20, 800), e(45, 300)] };
  const inside = T.atTarget(g, 30), outside = T.atTarget(g, 50);
  assert.equal(inside.status, "ok");
  assert.ok(inside.value < 800 && inside.value > 300);
  assert.deepEqual([outside.status, outside.value, outside.lo, outside.hi], ["out of range", null, 10, 45]);
  assert.deepEqual(T.ratio([inside, { name: "h", value: 200 }], "g", "h").value, inside.value / 200);
  assert.equal(T.ratio([outside, { name: "h", value: 200 }], "g", "h").why, "out of range");
  assert.equal(T.ratio([inside], "", "g").why, "pick two configs");
});

test("trends: one value per run and config group, each read off that run's own frontier", { skip: !SITE }, () => {
  const d = X.decode(SITE.explorer), st = T.defaultState(SITE.explorer, d);
  st.target = SITE.target;
  const series = T.trends(d, st, SITE.explorer.costs);
  assert.ok(series.length >= 1);
  for (const s of series) {
    assert.deepEqual(s.rows.map((r) => r.run), Array.from(new Set(s.rows.map((r) => r.run))).sort((a, b) => a - b));
    for (const r of s.rows) {
      // the frontier is the run's own points' frontier, and the value lies between its
      // neighbouring frontier points
      assert.ok(r.frontier.every((f) => f.p.s.run === r.run));
      const f = r.frontier, k = f.findIndex((e) => e.x >= st.target);
      assert.equal(r.status, "ok");
      const lo = Math.min(f[k - 1].y, f[k].y), hi = Math.max(f[k - 1].y, f[k].y);
      assert.ok(r.value >= lo && r.value <= hi);
    }
  }
  // a target no frontier reaches: every value out of range, none invented
  const far = T.trends(d, Object.assign({}, st, { target: 1e6 }), SITE.explorer.costs);
  assert.ok(far.every((s) => s.rows.every((r) => r.value === null && r.status === "out of range")));
  const csv = T.trendsCsv(series, st, d.runs).trim().split("\n");
  assert.match(csv[0], /^group,run_id,attempt,run_date,run_url,y_tput,target_intvty,status,/);
  assert.equal(csv.length, 1 + series.reduce((n, s) => n + s.rows.length, 0));
});

test("calculator: a bar per config group for the newest runs, metrics recomputed", { skip: !SITE }, () => {
  const D = SITE.explorer, d = X.decode(D), st = T.defaultState(D, d);
  st.target = SITE.target;
  const bars = T.calculator(d, st, D.costs);
  const newest = Math.max(...d.series.map((s) => s.run));
  assert.ok(bars.every((b) => b.frontier.every((f) => f.p.s.run === newest)));
  // a cost is read off the cost frontier (lower is better), so it rises with interactivity
  const cost = T.calculator(d, Object.assign({}, st, { y: "cost_rental" }), D.costs);
  for (const b of cost) {
    assert.ok(b.value > 0);
    assert.ok(b.frontier.every((f, k) => k === 0 || f.y >= b.frontier[k - 1].y));
  }
  const r = T.ratio(bars, bars[0].name, bars[bars.length - 1].name);
  close(r.value, bars[0].value / bars[bars.length - 1].value);
  const own = T.calculator(d, Object.assign({}, st, { y: "cost_custom", usd: { [d.series[0].cost_hw]: 10 } }), D.costs);
  assert.ok(own[0].value > cost[0].value);  // $10/GPU-hr costs more than any tier's price
  assert.match(T.calculatorCsv(bars, st, d.runs).split("\n")[1], /,ok,/);
});

test("the view round-trips through the fragment; the explorer's part stays readable by it", { skip: !SITE }, () => {
  const D = SITE.explorer, d = X.decode(D);
  const st = Object.assign(T.defaultState(D, d), { view: "calculator", target: 42.5, y: "cost_rental",
    precision: "fp8", a: "A · x", b: "B & y", usd: { mi355x: 2.5 } });
  const h = T.stateHash(st, D, d);
  assert.equal(h, "#y=cost_rental&precision=fp8&usd.mi355x=2.5&view=calculator&target=42.5&a=A+%C2%B7+x&b=B+%26+y");
  const back = T.parseState(h, D, d);
  for (const k of ["view", "target", "y", "precision", "a", "b"]) assert.equal(back[k], st[k]);
  assert.deepEqual(back.usd, { mi355x: 2.5 });
  assert.equal(X.parseState(h, D).y, "cost_rental");  // the explorer reads its own keys
  assert.equal(T.stateHash(T.defaultState(D, d), D, d), "");
  const junk = T.parseState("#view=nope&target=-3&y=bogus", D, d);
  assert.deepEqual([junk.view, junk.target, junk.y], ["trends", T.defaultTarget(d, D), "tput"]);
});

test("evals: the newest of each config, filtered like the points, judged, in the CSV", { skip: !SITE }, () => {
  const D = SITE.explorer, d = X.decode(D), st = T.defaultState(D, d);
  const rows = T.evalRows(SITE.evals, d, st);
  const newest = Math.max(...d.series.map((s) => s.run));
  assert.ok(rows.length >= 2 && rows.every((r) => r.run === newest));
  assert.deepEqual(rows.map(T.evalResult).sort(), ["fail", "pass"]);
  const every = T.evalRows(SITE.evals, d, Object.assign({}, st, { run: "all" }));
  assert.equal(every.length, SITE.evals.rows.length);
  const fp8 = T.evalRows(SITE.evals, d, Object.assign({}, st, { run: "all", precision: "fp8" }));
  assert.ok(fp8.length > 0 && fp8.every((r) => r.attrs.precision === "fp8"));
  assert.equal(T.evalRows(SITE.evals, d, Object.assign({}, st, { task: "nope" })).length, 0);
  const csv = T.evalsCsv(rows, d.runs).trim().split("\n");
  assert.match(csv[0], /^config,task,n,em_strict,em_strict_se,em_strict_se_from,/);
  assert.ok(csv.slice(1).some((l) => /,fail,/.test(l)) && csv.every((l) => l.includes(",")));
});
