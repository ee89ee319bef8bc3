// lbo compare: one chart per task, every method's mean best so far on the same axes with a band
// of ± one standard error over seeds, and a table of the figures with the first method's paired
// advantage (window.LBO_COMPARE: report/include/lbo/report/comparison.hpp).
(function () {
  "use strict";
  const data = window.LBO_COMPARE;
  const palette = ["#2b5fad", "#d9822b", "#3a9a5b", "#b43c6f", "#7a5cc0", "#8c8c2a", "#2a8c8c", "#5f6b7a"];
  const first = data.methods[0];
  const fmt = (x) => (x === null || x === undefined ? "–" : Number(x).toPrecision(4));
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    Object.assign(e, attrs || {});
    if (text !== undefined) e.textContent = text;
    return e;
  };
  // With several objectives ([objective] objectives) the figure is each task's hypervolume so far.
  const hv = data.measure === "hypervolume";
  const figure = hv ? "hypervolume so far" : "best so far";
  const what = hv
    ? "objectives " + data.objectives.map((o) => o.name + " (" + o.direction + ")").join(", ") +
      ". Lines: the mean over seeds of the hypervolume the feasible results dominate after each number of trials, " +
      "from one reference point per task for every run (under each chart); bands: ± one standard error. "
    : "objective to " + data.direction + ". Lines: the mean over seeds of the best result after each number of trials; " +
      "bands: ± one standard error. ";
  document.getElementById("sub").textContent =
    data.methods.join(", ") + "; " + data.seeds + " seed(s) each; " + what +
    "In the tables, " + first + "'s paired advantage over each other method (> 0: " + first + " better), " +
    "seed by seed, with how many seeds it was better and worse. Made by lbo " + data.generator + " with " +
    data.chart_library + ".";
  const main = document.getElementById("main");
  // The verdict over every task and seed (comparison.cpp: verdict_of) and what each method spent.
  if (data.verdict && Object.keys(data.verdict).length) {
    const section = el("section");
    section.appendChild(el("h2", {}, "Verdict"));
    section.appendChild(el("p", { className: "caption" },
      "The mean over every task and seed of " + first + "'s " + figure + " less each other method's (> 0: " + first +
      " better), ± its standard error over those task runs; distinguishable when more than two standard errors."));
    Object.keys(data.verdict).forEach((method) => {
      const list = el("ul");
      data.verdict[method].forEach((row) => {
        const li = el("li", {}, row.sentence);
        if (row.mean !== null && row.se !== null && Math.abs(row.mean) > 2 * row.se) li.className = row.mean > 0 ? "better" : "worse";
        list.appendChild(li);
      });
      section.appendChild(list);
    });
    if (data.spent) {
      const table = el("table");
      const head = el("tr");
      ["method", "trials per run", "steps per run", "trial time per run (s)"].forEach((h) => head.appendChild(el("th", {}, h)));
      table.appendChild(head);
      data.methods.forEach((method) => {
        const s = data.spent[method] || {};
        const row = el("tr");
        [method, fmt(s.trials), s.steps > 0 ? fmt(s.steps) : "–", fmt(s.seconds)].forEach((v) => row.appendChild(el("td", {}, v)));
        table.appendChild(row);
      });
      section.appendChild(table);
    }
    main.appendChild(section);
  }
  data.tasks.forEach((task) => {
    const section = el("section");
    section.appendChild(el("h2", {}, "Task " + task.name));
    section.appendChild(el("p", { className: "caption" },
      (hv ? "Hypervolume so far" : "Best so far") + " against trials, " + task.trials + " trials per run: every method on the same axes." +
      (hv && task.reference ? " Reference point: " + task.reference.map((r, i) => data.objectives[i].name + " " + fmt(r) +
        " (" + task.reference_from[i] + ")").join(", ") + "." : "")));
    const chart = el("div", { className: "chart" });
    chart.dataset.figure = "best-" + task.name;
    section.appendChild(chart);
    main.appendChild(section);
    const x = Array.from({ length: task.trials }, (_, i) => i + 1);
    const series = [];
    data.methods.forEach((method, m) => {
      const s = task.series[method];
      const color = palette[m % palette.length];
      const lower = s.mean.map((v, i) => (v === null ? null : v - (s.se[i] || 0)));
      const width = s.mean.map((v, i) => (v === null ? null : 2 * (s.se[i] || 0)));
      series.push({ name: method + " band", type: "line", data: lower, stack: method, stackStrategy: "all",
        symbol: "none", lineStyle: { opacity: 0 }, silent: true, tooltip: { show: false } });
      series.push({ name: method + " band ", type: "line", data: width, stack: method, stackStrategy: "all",
        symbol: "none", lineStyle: { opacity: 0 }, areaStyle: { color: color, opacity: 0.15 }, silent: true,
        tooltip: { show: false } });
      series.push({ name: method, type: "line", data: s.mean, symbol: "none", lineStyle: { width: 2, color: color },
        itemStyle: { color: color } });
    });
    const plot = echarts.init(chart, null, { renderer: "svg" });
    plot.setOption({
      animation: false,
      grid: { left: 70, right: 20, top: 30, bottom: 40 },
      legend: { data: data.methods, top: 0 },
      tooltip: { trigger: "axis", valueFormatter: fmt },
      xAxis: { type: "category", data: x, name: "trials", nameLocation: "middle", nameGap: 26 },
      yAxis: { type: "value", scale: true, name: figure, axisLabel: { formatter: fmt } },
      series: series,
    });
    window.addEventListener("resize", () => plot.resize());
    // The table at a few numbers of trials.
    const ks = [1, 5, 10, 25, 50, 100].filter((k) => k < task.trials).concat(task.trials > 0 ? [task.trials] : []);
    const table = el("table");
    const head = el("tr");
    head.appendChild(el("th", {}, "method"));
    ks.forEach((k) => head.appendChild(el("th", {}, k + " trials")));
    table.appendChild(head);
    data.methods.forEach((method) => {
      const row = el("tr");
      row.appendChild(el("td", {}, method));
      ks.forEach((k) => {
        const s = task.series[method];
        let text = fmt(s.mean[k - 1]) + (s.se[k - 1] === null ? "" : " ± " + fmt(s.se[k - 1]));
        const td = el("td");
        if (method !== first) {
          const p = task.paired[method];
          const a = p.mean[k - 1];
          if (a !== null) {
            text += "  (" + first + " " + (a >= 0 ? "+" : "") + fmt(a) + (p.se[k - 1] === null ? "" : " ± " + fmt(p.se[k - 1])) +
              "; " + p.better[k - 1] + "↑ " + p.worse[k - 1] + "↓)";
            td.className = a > 0 ? "better" : a < 0 ? "worse" : "";
          }
        }
        td.textContent = text;
        row.appendChild(td);
      });
      table.appendChild(row);
    });
    // Wide tables scroll rather than spill past the page (a last column was cut at 1,400 px).
    const scroll = el("div", { className: "scroll" });
    scroll.appendChild(table);
    section.appendChild(scroll);
  });
  // For tests/report/browser.sh: how many figures, and that the script finished.
  document.body.dataset.figures = String(data.tasks.length);
  document.body.dataset.ready = "1";
})();
