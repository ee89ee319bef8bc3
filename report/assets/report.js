/* lbo run report: builds every section of the page from window.LBO_DATA (report/README.md)
 * with Apache ECharts. Plain ES2017 without a build step, because lbo pastes this file into
 * the page as it is. Every field may be absent (older run directories, model-free policies),
 * so each figure checks what it needs and says in a note what it cannot show. */
(function () {
  'use strict';

  const DATA = window.LBO_DATA || {};
  const RUNS = Array.isArray(DATA.runs) ? DATA.runs.filter(Boolean) : [];
  const charts = [];   // every chart drawn: resized with the window, counted for the test
  const drawn = [];    // one promise per chart, settled when ECharts reports it finished

  const FONT = getComputedStyle(document.body).fontFamily;
  const STATUS_COLOR = {
    ok: '#2e9d4a', stopped: '#9bc9a5', paused: '#bcd6ee', failed: '#d62728', timeout: '#f28e2b', crashed: '#8e44ad',
    cancelled: '#9a9a9a', interrupted: '#8c564b', lbo_error: '#111111', running: '#1f77b4', queued: '#c7c7c7',
  };
  const STATUS_ORDER = ['ok', 'stopped', 'paused', 'failed', 'timeout', 'crashed', 'cancelled', 'interrupted', 'lbo_error',
    'running', 'queued'];
  const UNFINISHED = new Set(['running', 'queued']);
  // Ends that early stopping chose: neither a success nor a failure of the objective.
  const EARLY_ENDS = new Set(['stopped', 'paused']);
  const MODEL_SOURCES = new Set(['model', 'model-prior']);
  const DIVERGING = ['#2166ac', '#67a9cf', '#f7f7f7', '#ef8a62', '#b2182b'];
  const SEQUENTIAL = ['#f7fbff', '#9ecae1', '#3182bd', '#08306b'];
  // Low to high objective; reversed for minimization so that "better" always reads as red.
  const OBJECTIVE = ['#313695', '#4575b4', '#74add1', '#fdae61', '#f46d43', '#a50026'];
  const MISSING = '\u2014';  // the "—" position of inactive parameters
  const MANY = 2000;          // above this many points, use ECharts' large/sampled modes
  const OFF_RICH = { off: { fontSize: 14, fontWeight: 'bold', color: '#5f6b7a' } };  // "—" on parallel axes

  // ---------------------------------------------------------------- small helpers

  const isNum = v => typeof v === 'number' && isFinite(v);
  const range = n => Array.from({ length: n }, (_, i) => i);
  const pick = (v, dflt) => (v === undefined || v === null ? dflt : v);

  function el(tag, attrs) {
    const e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(k => {
      const v = attrs[k];
      if (v === undefined || v === null || v === false) return;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    });
    for (let i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function append(parent, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) child.forEach(c => append(parent, c));
    else parent.append(child instanceof Node ? child : String(child));
  }
  // Tooltips are HTML strings: task names and configurations come from the user's job file.
  const esc = s => String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

  function fmt(v) {
    if (!isNum(v)) return MISSING;
    const a = Math.abs(v);
    if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2);
    return String(+v.toPrecision(4));
  }
  // Axis labels: two significant digits, but no "2.6e+2" for 256.
  const fmt2 = v => (!isNum(v) ? MISSING : Math.abs(v) >= 10 ? String(Math.round(v)) : String(+v.toPrecision(2)));
  const iso = t => (isNum(t) ? new Date(t * 1000).toISOString().replace(/\.\d+Z$/, 'Z') : MISSING);
  function duration(s) {
    if (!isNum(s)) return MISSING;
    if (s < 120) return s.toFixed(0) + ' s';
    if (s < 7200) return (s / 60).toFixed(1) + ' min';
    return (s / 3600).toFixed(2) + ' h';
  }
  const pct = x => (isNum(x) ? (100 * x).toFixed(1) + '%' : MISSING);

  function sortedNumbers(values) { return values.filter(isNum).sort((a, b) => a - b); }
  function quantile(sorted, q) {
    if (!sorted.length) return NaN;
    const p = (sorted.length - 1) * q, i = Math.floor(p);
    return i + 1 < sorted.length ? sorted[i] + (p - i) * (sorted[i + 1] - sorted[i]) : sorted[i];
  }
  // Deterministic jitter so that a reload draws the same picture.
  const jitter = id => ((Math.sin(id * 12.9898 + 78.233) * 43758.5453) % 1 + 1) % 1 - 0.5;

  const note = (box, text) => box.appendChild(el('p', { class: 'note', text: text }));
  const caption = (box, text) => box.appendChild(el('p', { class: 'caption', text: text }));

  function table(headers, rows, numeric) {
    const num = new Set(numeric || []);
    return el('table', null,
      el('thead', null, el('tr', null, headers.map((h, i) => el('th', { class: num.has(i) ? 'num' : null, text: h })))),
      el('tbody', null, rows.map(r => el('tr', null, r.map((c, i) =>
        el('td', { class: num.has(i) ? 'num' : null }, c === undefined || c === null ? MISSING : c))))));
  }

  function select(label, options, value, onChange) {
    const s = el('select', { 'aria-label': label },
      options.map(o => el('option', { value: o[0], selected: String(o[0]) === String(value), text: o[1] })));
    s.addEventListener('change', () => onChange(s.value));
    return el('label', null, label + ' ', s);
  }

  // A row of mutually exclusive buttons; `disabled` lists values that cannot be chosen.
  function toggle(choices, value, onChange, disabled) {
    const off = new Set(disabled || []);
    const box = el('div', { class: 'buttons', role: 'group' });
    choices.forEach(c => {
      const b = el('button', { type: 'button', 'aria-pressed': String(c[0] === value), disabled: off.has(c[0]), text: c[1] });
      b.addEventListener('click', () => {
        box.querySelectorAll('button').forEach(x => x.setAttribute('aria-pressed', String(x === b)));
        onChange(c[0]);
      });
      box.append(b);
    });
    return box;
  }

  // A figure that fails must not take the others down, but the failure has to be seen: in the
  // page by a reader, and on the console by the browser test.
  function guard(what, box, fn) {
    try {
      fn();
    } catch (e) {
      box.appendChild(el('div', { class: 'error figure-error', text: 'Could not draw ' + what + ': ' + ((e && e.stack) || e) }));
      setTimeout(() => { throw e; });
    }
  }

  function withDefaults(option) {
    return Object.assign({
      animation: false,
      textStyle: { fontFamily: FONT },
      // No pure red: red marks random-fallback trials and failures.
      color: ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#ff9da7', '#17becf', '#bab0ac'],
    }, option);
  }

  // Creates one chart in its own <div class="chart" data-figure=...>; the returned function
  // replaces the chart's option (select boxes and toggles redraw through it).
  function chart(box, figure, run, height, option, extra) {
    const div = el('div', Object.assign({ class: 'chart', 'data-figure': figure, 'data-run': run ? run.label : null,
      style: 'height:' + Math.round(height) + 'px' }, extra || {}));
    box.appendChild(div);
    const c = echarts.init(div, null, { renderer: 'svg' });
    const finished = new Promise(resolve => c.on('finished', resolve));
    try {
      c.setOption(withDefaults(option));
    } catch (e) {
      c.dispose();
      div.remove();
      throw e;
    }
    charts.push(c);
    drawn.push(finished);
    return (next, where) => guard(where || figure, box, () => c.setOption(withDefaults(next), { notMerge: true }));
  }

  const legend = extra => Object.assign({ type: 'scroll', top: 0, left: 40, right: 40, textStyle: { fontSize: 12 } }, extra || {});
  const axisName = (name, extra) => Object.assign({ name: name, nameLocation: 'middle', nameTextStyle: { color: '#5f6b7a' } }, extra || {});

  // ---------------------------------------------------------------- the data, per run

  function runLabels(runs) {
    const seen = {};
    return runs.map((r, k) => {
      let label = String(r.name || r.dir || 'run ' + (k + 1));
      if (seen[label]) label += ' (' + (r.dir || k + 1) + ')';
      seen[label] = true;
      return label;
    });
  }

  // The space as declared by the job; older data without it gets one inferred from the
  // configurations (numbers make a numeric axis, anything else a categorical one).
  function spaceOf(job, trials) {
    const declared = Array.isArray(job.space) ? job.space.filter(p => p && p.name !== undefined) : [];
    const seen = new Map();
    trials.forEach(t => {
      const c = t.config || {};
      Object.keys(c).forEach(k => {
        let s = seen.get(k);
        if (!s) seen.set(k, s = { count: 0, numeric: true, values: new Set(), lo: Infinity, hi: -Infinity });
        s.count++;
        const v = c[k];
        if (isNum(v)) { s.lo = Math.min(s.lo, v); s.hi = Math.max(s.hi, v); } else s.numeric = false;
        if (s.values.size < 50) s.values.add(String(v));
      });
    });
    const space = declared.length ? declared.map(p => Object.assign({}, p)) : Array.from(seen.keys()).map(k => {
      const s = seen.get(k);
      return s.numeric ? { name: k, type: 'float', low: s.lo, high: s.hi } : { name: k, type: 'categorical', choices: Array.from(s.values).sort() };
    });
    space.forEach(p => {
      const s = seen.get(p.name);
      p.categorical = p.type === 'categorical' || (s && !s.numeric) || !!p.choices;
      if (p.categorical && !Array.isArray(p.choices)) p.choices = s ? Array.from(s.values).sort() : [];
      // A parameter absent from some configurations needs a place for "inactive".
      p.conditional = !!p.when || (s ? s.count < trials.length : false);
      if (!p.categorical) {
        p.low = isNum(p.low) ? p.low : s ? s.lo : 0;
        p.high = isNum(p.high) ? p.high : s ? s.hi : 1;
        p.log = !!p.log && p.low > 0;
      }
    });
    return space;
  }

  function prepare(run, label, index) {
    const job = run.job || {};
    const trials = (Array.isArray(run.trials) ? run.trials : []).filter(t => t && isNum(t.id)).sort((a, b) => a.id - b.id);
    const jobTasks = Array.isArray(job.tasks) ? job.tasks : [];
    const summaries = Array.isArray(run.tasks) ? run.tasks : [];
    let nTasks = Math.max(jobTasks.length, summaries.length);
    trials.forEach(t => { if (Number.isInteger(t.task) && t.task >= nTasks) nTasks = t.task + 1; });
    const names = range(nTasks).map(i => String((jobTasks[i] && jobTasks[i].name) || (summaries[i] && summaries[i].name) || 'task ' + (i + 1)));
    const byTask = names.map(() => []);
    trials.forEach(t => { if (Number.isInteger(t.task) && t.task >= 0) byTask[t.task].push(t); });
    const attempts = (Array.isArray(run.attempts) ? run.attempts : []).filter(a => a && isNum(a.start));
    const allocations = (Array.isArray(run.allocations) ? run.allocations : []).filter(a => a && isNum(a.started))
      .sort((a, b) => a.started - b.started);
    // Wall time counts from the run's start; older data may lack it, so fall back to the first
    // thing known to have happened.
    let t0 = run.started;
    if (!isNum(t0)) {
      t0 = Infinity;
      trials.forEach(t => { if (isNum(t.started)) t0 = Math.min(t0, t.started); else if (isNum(t.finished)) t0 = Math.min(t0, t.finished); });
      attempts.forEach(a => { t0 = Math.min(t0, a.start); });
      if (allocations.length) t0 = Math.min(t0, allocations[0].started);
      if (!isFinite(t0)) t0 = null;
    }
    let tEnd = run.last_activity;
    if (!isNum(tEnd)) {
      tEnd = -Infinity;
      attempts.forEach(a => { tEnd = Math.max(tEnd, pick(a.end, a.start)); });
      trials.forEach(t => { if (isNum(t.finished)) tEnd = Math.max(tEnd, t.finished); });
      if (!isFinite(tEnd)) tEnd = null;
    }
    return {
      run: run, label: label, index: index, job: job, trials: trials, names: names, byTask: byTask, summaries: summaries,
      attempts: attempts, allocations: allocations, t0: t0, tEnd: tEnd,
      sign: job.direction === 'minimize' ? -1 : 1, space: spaceOf(job, trials),
      hedge: (Array.isArray(run.hedge) ? run.hedge : []).filter(h => h && Array.isArray(h.options) && Array.isArray(h.probabilities)),
    };
  }

  const isOk = t => t.status === 'ok' && isNum(t.objective);
  // Several objectives ([objective] objectives): their names and directions; the first is the
  // primary one, which "best" and "objective" go by.
  const objectivesOf = P => (Array.isArray(P.job.objectives) ? P.job.objectives : []);
  const bestName = P => (objectivesOf(P).length > 1 ? 'best ' + objectivesOf(P)[0].name + ' so far' : 'best objective so far');
  // A best is a feasible ok result: an infeasible trial (outside a limit of [[constraints]]) is none.
  const canBeBest = t => isOk(t) && !t.infeasible;
  // A simulated run's times are those of its virtual clock: every time axis and caption says so.
  const wall = P => (P.run.virtual_clock ? 'virtual time' : 'wall time');
  const sinceStart = (P, text) => text + (P.run.virtual_clock ? ' (virtual)' : '');
  const objectiveColors = P => (P.sign > 0 ? OBJECTIVE : OBJECTIVE.slice().reverse());
  // Whose acquisition functions a GP-Hedge row weighs: a task, or a task's step ("name/step_2").
  const hedgeOwner = (P, h) => (h.task_name ? String(h.task_name) : Number.isInteger(h.task) && P.names[h.task] ? P.names[h.task] : MISSING);

  // ---------------------------------------------------------------- overview (plain HTML)

  function overview(P, box) {
    const r = P.run, j = P.job;
    const state = ['running', 'stopped', 'done'].indexOf(r.state) >= 0 ? r.state : null;
    const heading = box.querySelector('h3') || box.insertBefore(el('h3', { text: P.label }), box.firstChild);
    heading.append(el('span', { class: 'badge ' + (state || ''), text: r.state || 'state unknown' }));
    if (r.state_note) box.append(el('p', { class: 'state-note', text: r.state_note }));
    if (Array.isArray(r.notes) && r.notes.length) {
      box.append(el('div', { class: 'notes' }, el('strong', { text: 'Left out of this report:' }),
        el('ul', null, r.notes.map(n => el('li', { text: n })))));
    }
    const allocs = P.allocations.map(a => (a.slots || '?') + ' slots' + (a.lbo_version ? ' (lbo ' + a.lbo_version + ')' : ''));
    const facts = [
      ['directory', el('code', { text: r.dir || MISSING })], ['lbo version', r.lbo_version],
      ['started', iso(r.started)], ['last activity', iso(r.last_activity)],
      ['clock', r.virtual_clock ? 'virtual: a simulated run, whose times are those of its virtual clock' : 'real'],
      ['allocations', allocs.length ? allocs.length + ': ' + allocs.join(', ') : MISSING],
      ['trials', P.trials.length + ' (' + P.trials.filter(isOk).length + ' ok)'],
    ];
    // What early stopping saved: the steps of the trials that ended ok or stopped against each
    // run to max_step (computed by lbo: orchestrator/outputs/src/step_savings.cpp).
    const sv = r.savings;
    if (sv && isNum(sv.full) && sv.full > 0) {
      const saved = sv.full - sv.spent;
      facts.push(['early stopping', sv.spent + ' of ' + sv.full + ' ' + (sv.step_name || 'step') + ' steps (' + pct(saved / sv.full) +
        ' saved' + (isNum(sv.seconds_per_step) && saved > 0 ? ': about ' + duration(saved * sv.seconds_per_step) + ' of trial time' : '') +
        ') for ' + sv.trials + ' trials against each run to ' + (sv.step_name || 'step') + ' ' + sv.max_step]);
    }
    box.append(el('div', { class: 'facts' }, facts.map(f => el('div', null, el('span', { text: f[0] }), pick(f[1], MISSING)))));
    const jobRows = ['surrogate', 'acquisition', 'direction', 'initial_random', 'stepwise', 'early_stopping', 'slots', 'seed']
      .filter(k => j[k] !== undefined).map(k => [k, String(j[k])]);
    // Several objectives: their names and directions in place of the one direction (the primary's).
    if (objectivesOf(P).length > 1) {
      const at = jobRows.findIndex(r => r[0] === 'direction');
      const row = ['objectives', objectivesOf(P).map(o => o.name + ' (' + o.direction + ')').join(', ')];
      if (at >= 0) jobRows[at] = row; else jobRows.push(row);
    }
    const spaceRows = P.space.map(p => [el('code', { text: p.name }), p.categorical ? 'categorical' : p.type || 'float',
      p.categorical ? p.choices.join(', ') : fmt(p.low) + ' \u2026 ' + fmt(p.high), p.log ? 'yes' : '', p.when || '']);
    const taskRows = P.names.map((n, i) => {
      const jt = (Array.isArray(j.tasks) && j.tasks[i]) || {}, s = P.summaries[i] || {};
      // Older data may lack the summary: the best is then found among the trials.
      let best = s.best, bestTrial = s.best_trial;
      if (!isNum(best)) P.byTask[i].forEach(t => { if (canBeBest(t) && (!isNum(best) || P.sign * t.objective > P.sign * best)) { best = t.objective; bestTrial = t.id; } });
      const bestOf = P.trials.find(t => t.id === bestTrial);
      const reached = transferOf(P, n);
      return [i + 1, n, jt.origin, jt.budget, P.byTask[i].length, pick(s.ok, P.byTask[i].filter(isOk).length),
        fmt(best), bestTrial, bestOf ? el('span', { class: 'mono', text: configText(bestOf.config) }) : MISSING,
        reached ? pick(reached.trials_to_target, 'not reached') : MISSING];
    });
    box.append(el('div', { class: 'tables' },
      el('div', null, el('table', null, el('caption', { text: 'Job' })),
        jobRows.length ? table(['setting', 'value'], jobRows) : el('p', { class: 'note', text: 'no job settings recorded' })),
      el('div', null, el('table', null, el('caption', { text: 'Space' })),
        spaceRows.length ? table(['parameter', 'type', 'range or choices', 'log', 'when'], spaceRows) : el('p', { class: 'note', text: 'no space recorded' }))));
    box.append(el('div', { class: 'scroll' }, el('table', null, el('caption', { text: 'Tasks' })),
      table(['#', 'task', 'origin', 'budget', 'trials', 'ok', 'best', 'best trial', 'best configuration', 'trials to target'],
        taskRows, [0, 3, 4, 5, 6, 7, 9])));
    caption(box, 'Trials to target: the trials of the task this run needed until its best so far came within ' + targetShare() +
      ' of the best value any run of this report found, measured from the median result of the task (see Transfer across tasks).');
  }

  // "model=xgboost, lr=0.01": a configuration in one line (inactive parameters are absent).
  const configText = c => Object.keys(c || {}).map(k => k + '=' + (isNum(c[k]) ? fmt(c[k]) : String(c[k]))).join(', ') || MISSING;

  // The report's cross-run comparison of one task (DATA.transfer, built by lbo over every run of
  // the page) for run P, or null.
  function transferOf(P, name) {
    const tasks = DATA.transfer && Array.isArray(DATA.transfer.tasks) ? DATA.transfer.tasks : [];
    const t = tasks.find(x => x && x.name === name);
    return t && Array.isArray(t.runs) && t.runs[P.index] ? t.runs[P.index] : null;
  }
  const targetShare = () => (DATA.transfer && isNum(DATA.transfer.gap) ? pct(DATA.transfer.gap).replace('.0%', '%') : '5%') +
    ' of the gap from a typical result';

  // ---------------------------------------------------------------- best so far

  // One line per task: the best objective after each finished trial, either in trial-id order
  // (x = trial number within the task) or in finishing order (x = minutes since run start).
  function bestSoFarOption(P, mode) {
    const series = [], fallback = [], symbols = P.trials.length <= 300;
    P.byTask.forEach((list, ti) => {
      let done = list.filter(t => !UNFINISHED.has(t.status));
      if (mode === 'time') done = done.filter(t => isNum(t.finished)).sort((a, b) => a.finished - b.finished);
      if (!done.length) return;
      let best = null, takeover = null;
      const data = done.map((t, n) => {
        if (canBeBest(t) && (best === null || P.sign * t.objective > P.sign * best)) best = t.objective;
        const d = [mode === 'time' ? (t.finished - P.t0) / 60 : n + 1, best === null ? '-' : best, t.id,
          isOk(t) ? t.objective : null, t.proposed_by || '', t.status || '', P.names[ti]];
        if (!takeover && MODEL_SOURCES.has(t.proposed_by)) takeover = d;
        if (t.proposed_by === 'random-fallback' && best !== null) fallback.push(d);
        return d;
      });
      series.push({
        type: 'line', name: P.names[ti], data: data, step: 'end', encode: { x: 0, y: 1 },
        showSymbol: symbols, symbolSize: 4, connectNulls: false, lineStyle: { width: 1.6 }, emphasis: { focus: 'series' },
        sampling: data.length > MANY ? 'lttb' : undefined,
        markPoint: takeover && takeover[1] !== '-' ? { symbol: 'diamond', symbolSize: 13, label: { show: false }, silent: true,
          data: [{ name: 'model takes over', coord: [takeover[0], takeover[1]] }] } : undefined,
      });
    });
    if (fallback.length) {
      series.push({ type: 'scatter', name: 'random-fallback', data: fallback, encode: { x: 0, y: 1 },
        symbolSize: fallback.length > 100 ? 5 : 9, itemStyle: { color: '#d62728', borderColor: '#fff', borderWidth: fallback.length > 100 ? 0 : 1 }, z: 5, large: fallback.length > MANY });
    }
    return {
      legend: legend(), grid: { left: 70, right: 30, top: 40, bottom: 50 },
      tooltip: { trigger: 'axis', confine: true, formatter: bestTooltip },
      xAxis: Object.assign(axisName(mode === 'time' ? sinceStart(P, 'minutes since run start') : 'trial number in the task', { nameGap: 28 }),
        { type: 'value', min: mode === 'time' ? 0 : 1, minInterval: mode === 'time' ? 0 : 1 }),
      yAxis: Object.assign(axisName(bestName(P), { nameGap: 50 }), { type: 'value', scale: true }),
      series: series,
    };
  }

  function bestTooltip(params) {
    return (Array.isArray(params) ? params : [params]).filter(p => Array.isArray(p.data)).slice(0, 12).map(p => {
      const d = p.data, name = p.seriesName === 'random-fallback' ? d[6] : p.seriesName;
      return p.marker + esc(name) + ': trial ' + d[2] + ', objective ' + (d[3] === null ? esc(d[5] || MISSING) : fmt(d[3])) +
        ', best ' + fmt(d[1]) + (d[4] ? ' <i>(' + esc(d[4]) + ')</i>' : '');
    }).join('<br>');
  }

  function figBestSoFar(P, box) {
    if (!P.trials.some(t => !UNFINISHED.has(t.status))) return note(box, 'No finished trials yet.');
    const timed = isNum(P.t0) && P.trials.some(t => isNum(t.finished));
    const controls = el('div', { class: 'controls' });
    box.append(controls);
    const redraw = chart(box, 'best-so-far', P, 400, bestSoFarOption(P, 'trial'));
    controls.append(toggle([['trial', 'trial number'], ['time', wall(P)]], 'trial',
      mode => redraw(bestSoFarOption(P, mode)), timed ? [] : ['time']));
    if (!timed) controls.append(el('span', { class: 'caption', text: wall(P) + ' unavailable: the trials carry no finishing times (older run directory)' }));
    caption(box, '\u25C6 marks the first trial of each task proposed by the model (model or model-prior), where it took over from the ' +
      'initial design; red dots are random-fallback trials. Failed trials count as trials but do not improve the line. ' +
      'In ' + wall(P) + ', each task\u2019s trials are taken in the order they finished.');
  }

  // ---------------------------------------------------------------- transfer (all runs on one figure)

  // Per task (by name, over every run), one value per run: `value(P, name)`; `bars`: a bar per
  // run and task (counts), else a line per run.
  function perTaskOption(preps, names, value, yName, integer, tooltip, bars) {
    const n = names.length;
    return {
      legend: legend(), grid: { left: 70, right: 30, top: 40, bottom: n > 8 ? 95 : 55 },
      tooltip: { trigger: 'axis', confine: true, formatter: tooltip },
      xAxis: Object.assign(axisName('task', { nameGap: n > 8 ? 75 : 30 }), { type: 'category', data: names.map((s, i) => (i + 1) + '. ' + s),
        axisLabel: { rotate: n > 8 ? 40 : 0, hideOverlap: true, fontSize: 11 } }),
      yAxis: Object.assign(axisName(yName, { nameGap: 50 }), { type: 'value', scale: !integer && !bars, minInterval: integer ? 1 : 0, min: bars ? 0 : undefined }),
      series: preps.map(P => ({ type: bars ? 'bar' : 'line', name: P.label, connectNulls: false, symbolSize: 7, showAllSymbol: true,
        barMaxWidth: 28, label: bars ? { show: names.length * preps.length <= 40, position: 'top', fontSize: 10 } : undefined,
        data: names.map(name => { const v = value(P, name); return isNum(v) ? v : '-'; }) })),
    };
  }

  // Every task's name, in order of first appearance over the runs.
  function taskNames(preps) {
    const names = [];
    preps.forEach(P => P.names.forEach(n => { if (names.indexOf(n) < 0) names.push(n); }));
    return names;
  }

  // One task, every run: the best so far against the trial number within the task, and the
  // target every run is measured against.
  function overlayOption(preps, name) {
    const series = [];
    let target = null;
    preps.forEach(P => {
      const ti = P.names.indexOf(name);
      if (ti < 0) return;
      let best = null;
      const data = P.byTask[ti].filter(t => !UNFINISHED.has(t.status)).map((t, n) => {
        if (canBeBest(t) && (best === null || P.sign * t.objective > P.sign * best)) best = t.objective;
        return [n + 1, best === null ? '-' : best, t.id, isOk(t) ? t.objective : null, t.proposed_by || '', t.status || '', name];
      });
      series.push({ type: 'line', name: P.label, data: data, step: 'end', encode: { x: 0, y: 1 }, showSymbol: data.length <= 120,
        symbolSize: 4, lineStyle: { width: 1.8 }, emphasis: { focus: 'series' }, sampling: data.length > MANY ? 'lttb' : undefined });
    });
    const t = DATA.transfer && Array.isArray(DATA.transfer.tasks) ? DATA.transfer.tasks.find(x => x && x.name === name) : null;
    if (t && isNum(t.target) && series.length) {
      target = t.target;
      series[0].markLine = { symbol: 'none', silent: true, lineStyle: { color: '#333', type: 'dashed' },
        label: { formatter: 'target ' + fmt(target), position: 'insideEndTop', fontSize: 11 }, data: [{ yAxis: target }] };
    }
    return {
      legend: legend(), grid: { left: 70, right: 30, top: 40, bottom: 50 },
      tooltip: { trigger: 'axis', confine: true, formatter: bestTooltip },
      xAxis: Object.assign(axisName('trial number in the task', { nameGap: 28 }), { type: 'value', min: 1, minInterval: 1 }),
      yAxis: Object.assign(axisName(bestName(preps[0]), { nameGap: 50 }), { type: 'value', scale: true }),
      series: series,
    };
  }

  function figTransfer(preps, box) {
    if (!preps.length) return note(box, 'No runs.');
    const names = taskNames(preps);
    const withResults = names.filter(n => preps.some(P => { const i = P.names.indexOf(n); return i >= 0 && P.byTask[i].some(isOk); }));
    if (!withResults.length) return note(box, 'No successful trials yet.');
    box.append(el('h3', { text: 'Best so far per task' + (preps.length > 1 ? ', every run' : '') }));
    const controls = el('div', { class: 'controls' });
    box.append(controls);
    const first = withResults[withResults.length - 1];
    const redraw = chart(box, 'transfer-overlay', null, 360, overlayOption(preps, first));
    controls.append(select('task', withResults.map(n => [n, n]), first, v => redraw(overlayOption(preps, v), 'transfer-overlay')));
    caption(box, 'The chosen task\u2019s best objective so far after each of its finished trials (in trial-id order), one line per run on ' +
      'the same axes: a line that starts high has transferred what earlier tasks taught. The dashed line is the target of the figure below.');

    const transfer = DATA.transfer && Array.isArray(DATA.transfer.tasks) ? DATA.transfer : null;
    box.append(el('h3', { text: 'Reaching a common target' }));
    if (!transfer) return note(box, 'This page holds no cross-run comparison (built by an older lbo).');
    const entry = (P, name) => transferOf(P, name);
    const tip = ps => (Array.isArray(ps) ? ps : [ps]).map(p => {
      const P = preps[p.seriesIndex], name = names[p.dataIndex], e = P ? entry(P, name) : null;
      if (!e) return p.marker + esc(p.seriesName) + ': no trials of this task';
      return p.marker + esc(p.seriesName) + ': ' + (isNum(e.trials_to_target) ? e.trials_to_target + ' trial(s) to the target' :
        'target not reached in ' + e.finished + ' trial(s)') + ', mean regret ' + fmt(e.mean_regret) + ', first trial\u2019s regret ' + fmt(e.first_regret);
    }).join('<br>');
    const options = {
      trials: () => perTaskOption(preps, names, (P, name) => { const e = entry(P, name); return e ? e.trials_to_target : null; }, 'trials to the target', true, tip, true),
      regret: () => perTaskOption(preps, names, (P, name) => { const e = entry(P, name); return e ? e.mean_regret : null; }, 'mean normalized regret', false, tip, true),
    };
    const metricControls = el('div', { class: 'controls' });
    box.append(metricControls);
    const redrawMetric = chart(box, 'transfer', null, 360, options.trials());
    metricControls.append(toggle([['trials', 'trials to the target'], ['regret', 'mean normalized regret']], 'trials',
      m => redrawMetric(options[m](), 'transfer')));
    caption(box, 'Every run is measured per task against the same values: the best objective any run on this page found on the task, ' +
      'and a typical result, the median of all the task\u2019s successful results pooled over the runs. A run\u2019s normalized regret after ' +
      'k trials is (best \u2212 its best so far) / (best \u2212 typical), clipped to [0, 1] (1 before its first success). Trials to the target: ' +
      'the first k whose regret is at most ' + targetShare().replace(' of the gap from a typical result', '') + '; a missing bar is a target not ' +
      'reached. Mean normalized regret: over the first trials of the task, as many as the run with the fewest has (lower is better). Both credit a good start: a first trial at the best earlier tasks found scores 1 and ' +
      'a small mean.' + (transfer.notes && transfer.notes.length ? ' ' + transfer.notes.join('; ') + '.' : ''));
    if (preps.some(P => P.summaries.some(s => s && isNum(s.best)))) {
      box.append(el('h3', { text: 'Best per task' }));
      chart(box, 'best-per-task', null, 300, perTaskOption(preps, names, (P, name) => {
        const i = P.names.indexOf(name), s = i >= 0 ? P.summaries[i] : null;
        return s ? s.best : null;
      }, 'best objective', false));
    }
  }

  // ---------------------------------------------------------------- similarity and usage

  function heatmapOption(rows, cols, data, min, max, colors, labels) {
    const nr = rows.length, nc = cols.length, small = nr <= 16 && nc <= 16;
    return {
      tooltip: { confine: true, formatter: p => esc(rows[p.data[1]]) + ' \u00d7 ' + esc(cols[p.data[0]]) + ': ' + fmt(p.data[2]) },
      grid: { left: 100, right: 80, top: 10, bottom: nc > 6 ? 90 : 40 },
      xAxis: { type: 'category', data: cols, axisLabel: { rotate: nc > 6 ? 45 : 0, hideOverlap: true, fontSize: 11 }, splitArea: { show: false } },
      yAxis: { type: 'category', data: rows, inverse: true, axisLabel: { hideOverlap: true, fontSize: 11 } },
      visualMap: { min: min, max: max, calculable: true, orient: 'vertical', right: 5, top: 'middle', itemHeight: 140,
        inRange: { color: colors } },
      series: [{ type: 'heatmap', data: data, progressive: 0,
        label: { show: small && labels, fontSize: 10, formatter: p => (isNum(p.data[2]) ? p.data[2].toFixed(2) : '') } }],
    };
  }

  function noModelReason(P, what) {
    const s = P.job.surrogate;
    return 'No ' + what + ': ' + (!s ? 'not an lbo model, or no fit yet.' : s !== 'lbo' ? 'not an lbo model (surrogate ' + s + ').' : 'no fit of the lbo model yet.');
  }

  function figSimilarity(P, box) {
    const grid = el('div', { class: 'grid2' }), left = el('div'), right = el('div');
    grid.append(left, right);
    box.append(grid);
    const sims = P.summaries.map(s => (s && Array.isArray(s.similarity) ? s.similarity : null));
    const n = P.names.length, sizeFor = k => Math.min(900, Math.max(240, 60 + k * 18 + (k > 6 ? 90 : 40)));
    if (sims.some(Boolean)) {
      const data = [];
      sims.forEach((row, i) => (row || []).forEach((v, j) => { if (isNum(v) && j < n) data.push([j, i, v]); }));
      left.append(el('h4', { text: 'Task similarity' }));
      chart(left, 'similarity', P, sizeFor(n), heatmapOption(P.names, P.names, data, -1, 1, DIVERGING, true));
    } else note(left, noModelReason(P, 'task similarity'));
    const usage = P.summaries.map(s => (s && Array.isArray(s.usage) ? s.usage : null));
    if (usage.some(Boolean)) {
      const k = Math.max.apply(null, usage.map(u => (u ? u.length : 0)));
      const cols = range(k).map(i => 'network ' + (i + 1)), data = [];
      usage.forEach((row, i) => (row || []).forEach((v, j) => { if (isNum(v) && i < n) data.push([j, i, v]); }));
      right.append(el('h4', { text: 'Latent network usage' }));
      chart(right, 'usage', P, sizeFor(n), heatmapOption(P.names, cols, data, 0, 1, SEQUENTIAL, true));
    } else note(right, noModelReason(P, 'network usage'));
  }

  // ---------------------------------------------------------------- parallel coordinates

  // Per parameter: an axis and the function that puts a configuration's value on it.
  function parallelAxis(p, d) {
    if (p.categorical) {
      const cats = (p.conditional ? [MISSING] : []).concat(p.choices.map(String));
      const index = new Map(cats.map((c, i) => [c, i]));
      // Category axes take the category's index: numeric choices would otherwise be read as indices.
      return { axis: { dim: d, name: p.name, type: 'category', data: cats, axisLabel: { backgroundColor: 'rgba(255, 255, 255, 0.85)',
        padding: [1, 2], rich: OFF_RICH, formatter: v => (v === MISSING ? '{off|' + MISSING + '}' : v) } },
        put: v => (v === undefined || v === null ? (p.conditional ? 0 : null) : pick(index.get(String(v)), null)) };
    }
    const lo = p.low, hi = p.high > p.low ? p.high : p.low + 1;
    const label = v => fmt2(p.type === 'int' ? Math.round(v) : v);
    if (!p.conditional) {
      return { axis: { dim: d, name: p.name, type: p.log ? 'log' : 'value', min: lo, max: hi, minInterval: p.type === 'int' ? 1 : 0,
        axisLabel: { formatter: label } }, put: v => (isNum(v) ? v : null) };
    }
    // A log axis has no room below its range for "inactive": conditional numeric parameters go
    // on a value axis in the parameter's units (log10 units for log parameters) that reaches a
    // little below the range, and the bottom end is the "—" position.
    const f = p.log ? Math.log10 : x => x, span = f(hi) - f(lo), bottom = f(lo) - 0.15 * span;
    return { axis: { dim: d, name: p.name, type: 'value', min: bottom, max: f(hi), minInterval: p.log && span >= 2 ? 1 : 0,
      axisLabel: { formatter: u => (u <= bottom + 1e-9 * span ? '{off|' + MISSING + '}' : label(p.log ? Math.pow(10, u) : u)), rich: OFF_RICH } },
      put: v => (isNum(v) && (!p.log || v > 0) ? f(v) : bottom) };
  }

  function parallelOption(P, task) {
    const specs = P.space.map(parallelAxis);
    const rows = P.byTask[task].filter(isOk);
    const data = rows.map(t => {
      const c = t.config || {};
      const row = specs.map((s, d) => s.put(c[P.space[d].name]));
      row.push(t.objective, t.id);
      return row;
    });
    let lo = Infinity, hi = -Infinity;
    rows.forEach(t => { lo = Math.min(lo, t.objective); hi = Math.max(hi, t.objective); });
    if (!(hi > lo)) { lo -= 0.5; hi += 0.5; }
    const nObj = specs.length;
    return {
      tooltip: { trigger: 'item', confine: true, formatter: p => 'trial ' + p.data[nObj + 1] + ': objective ' + fmt(p.data[nObj]) },
      parallel: { left: 70, right: 120, top: 40, bottom: 30,
        parallelAxisDefault: { nameGap: 14, nameTextStyle: { fontSize: 12, color: '#1d2330' }, axisLabel: { fontSize: 10, hideOverlap: true } } },
      parallelAxis: specs.map(s => s.axis).concat([{ dim: nObj, name: 'objective', type: 'value', min: lo, max: hi,
        nameTextStyle: { fontWeight: 'bold' }, axisLabel: { formatter: fmt } }]),
      visualMap: { type: 'continuous', dimension: nObj, min: lo, max: hi, seriesIndex: 0, calculable: true, right: 10, top: 'middle',
        itemHeight: 160, precision: 3, inRange: { color: objectiveColors(P) } },
      series: [{ type: 'parallel', data: data, smooth: false, inactiveOpacity: 0.03, activeOpacity: 1,
        lineStyle: { width: 1, opacity: data.length > 1000 ? 0.25 : data.length > 200 ? 0.45 : 0.75 } }],
    };
  }

  function figParallel(P, box) {
    const tasks = range(P.names.length).filter(i => P.byTask[i].some(isOk));
    if (!tasks.length) return note(box, 'No successful trials yet.');
    if (!P.space.length) return note(box, 'No parameters recorded.');
    const task = tasks[tasks.length - 1], controls = el('div', { class: 'controls' });
    box.append(controls);
    const redraw = chart(box, 'parallel', P, 420, parallelOption(P, task));
    controls.append(select('task', tasks.map(i => [i, P.names[i] + ' (' + P.byTask[i].filter(isOk).length + ' ok)']), task,
      v => redraw(parallelOption(P, +v), 'parallel')));
    caption(box, 'One line per successful trial of the chosen task, coloured by its objective (red is better); failed trials have ' +
      'no objective and are left out. A parameter that is inactive for a trial (its condition does not hold) is drawn at ' +
      'the \u201c\u2014\u201d position at the bottom of its axis, so that lines do not pass through values they never had; for this, ' +
      'the axes of conditional numeric parameters reach a little below the parameter\u2019s range. ' +
      'Drag along an axis to select a range.');
  }

  // ---------------------------------------------------------------- objective by choice

  function byChoiceOption(P, p, trials) {
    const cats = p.choices.map(String), index = new Map(cats.map((c, i) => [c, i]));
    const groups = cats.map(() => []), points = [];
    trials.forEach(t => {
      const v = (t.config || {})[p.name], key = v === undefined || v === null ? MISSING + ' (inactive)' : String(v);
      // Inactive trials, and values the space does not list, get boxes of their own.
      if (!index.has(key)) { index.set(key, cats.length); cats.push(key); groups.push([]); }
      const i = index.get(key);
      groups[i].push(t.objective);
      points.push([i + 0.55 * jitter(t.id), t.objective, t.id, P.names[t.task] || '']);
    });
    const stats = groups.map(g => { const s = sortedNumbers(g); return s.length ? [s[0], quantile(s, 0.25), quantile(s, 0.5), quantile(s, 0.75), s[s.length - 1]] : []; });
    return {
      grid: { left: 65, right: 20, top: 30, bottom: 40 },
      tooltip: { trigger: 'item', confine: true },
      xAxis: [{ type: 'category', data: cats, axisLabel: { hideOverlap: true } },
        { type: 'value', min: -0.5, max: cats.length - 0.5, show: false }],
      // onZero off: the hidden jitter axis would otherwise pull the y axis line to the first box.
      yAxis: Object.assign(axisName('objective', { nameGap: 48 }), { type: 'value', scale: true, axisLine: { onZero: false } }),
      series: [
        { type: 'boxplot', name: p.name, data: stats, z: 3, itemStyle: { color: 'rgba(232, 238, 247, 0.55)', borderColor: '#2b5fad' },  // see-through: dots inside stay visible
          tooltip: { formatter: q => esc(cats[q.dataIndex]) + ' (' + groups[q.dataIndex].length + ' trials)<br>max ' + fmt(stats[q.dataIndex][4]) +
            '<br>Q3 ' + fmt(stats[q.dataIndex][3]) + '<br>median ' + fmt(stats[q.dataIndex][2]) + '<br>Q1 ' + fmt(stats[q.dataIndex][1]) + '<br>min ' + fmt(stats[q.dataIndex][0]) } },
        { type: 'scatter', xAxisIndex: 1, data: points, symbolSize: 4, large: points.length > MANY, largeThreshold: MANY,
          itemStyle: { color: 'rgba(242, 142, 43, 0.55)' },
          tooltip: { formatter: q => 'trial ' + q.data[2] + ' (' + esc(q.data[3]) + '): ' + fmt(q.data[1]) } },
      ],
    };
  }

  function figByChoice(P, box) {
    const params = P.space.filter(p => p.categorical);
    if (!params.length) return note(box, 'The space has no categorical parameter.');
    const ok = P.trials.filter(isOk);
    if (!ok.length) return note(box, 'No successful trials yet.');
    const controls = el('div', { class: 'controls' }), grid = el('div', { class: 'grid2' });
    box.append(controls, grid);
    // Every cell is in the grid before the first chart measures its width.
    const cells = params.map(p => grid.appendChild(el('div', null, el('h4', { text: p.name }))));
    const redraws = params.map((p, k) => chart(cells[k], 'by-choice', P, 300, byChoiceOption(P, p, ok), { 'data-param': p.name }));
    const tasks = range(P.names.length).filter(i => P.byTask[i].some(isOk));
    controls.append(select('trials of', [['all', 'all tasks']].concat(tasks.map(i => [i, P.names[i]])), 'all', v => {
      const chosen = v === 'all' ? ok : P.byTask[+v].filter(isOk);
      params.forEach((p, k) => redraws[k](byChoiceOption(P, p, chosen), 'by-choice ' + p.name));
    }));
    caption(box, 'The objective of successful trials per choice of each categorical parameter: a box (quartiles, whiskers to ' +
      'min and max) and every trial as a dot. By default over all tasks of the run, whose objectives then share one scale; ' +
      'choose a task to see it alone. Trials where a conditional parameter is inactive form the \u201c\u2014\u201d group.');
  }

  // ---------------------------------------------------------------- worker timeline

  function workerOf(a) {
    if (a.worker) return String(a.worker);
    if (!isNum(a.rank)) return '?';
    return (a.rank === 0 ? 'local' : 'rank' + a.rank) + ':' + pick(a.slot, '?');
  }

  // An allocation lasts from its start to its last record (lbo says where), so the time between
  // a stop and the next start is not in it; older data without that ends it at the next start.
  function allocationWindows(P) {
    const allocs = P.allocations.length ? P.allocations : [{ started: P.t0, slots: P.job.slots }];
    return allocs.map((a, i) => ({ start: a.started, slots: a.slots,
      end: isNum(a.ended) ? a.ended : i + 1 < allocs.length ? allocs[i + 1].started : Math.max(P.tEnd, a.started) }));
  }

  function figTimeline(P, box) {
    if (!P.attempts.length || !isNum(P.t0) || !isNum(P.tEnd)) {
      return note(box, P.trials.length ? 'No attempt times in this run directory (older lbo): the worker timeline is left out.' : 'No attempts yet.');
    }
    const workers = new Map();
    P.attempts.forEach(a => { const w = workerOf(a); if (!workers.has(w)) workers.set(w, [pick(a.rank, 1e9), pick(a.slot, 1e9)]); });
    const labels = Array.from(workers.keys()).sort((x, y) => {
      const a = workers.get(x), b = workers.get(y);
      return a[0] - b[0] || a[1] - b[1] || (x < y ? -1 : x > y ? 1 : 0);
    });
    const rowOf = new Map(labels.map((w, i) => [w, i]));
    const m = t => (t - P.t0) / 60, endMin = m(P.tEnd);
    const byStatus = new Map();
    P.attempts.forEach(a => {
      // A status this page does not know is drawn as its own name, never as another's.
      const status = a.status || 'unknown';
      if (!byStatus.has(status)) byStatus.set(status, []);
      const given = (a.cores ? 'cores ' + a.cores : '') + (a.cores && a.gpus ? ', ' : '') + (a.gpus ? 'GPUs ' + a.gpus : '');
      byStatus.get(status).push([rowOf.get(workerOf(a)), m(a.start), m(isNum(a.end) ? a.end : P.tEnd), a.trial, pick(a.attempt, 1), a.status, given]);
    });
    const windows = allocationWindows(P).filter(w => isNum(w.start));
    // A fixed style per status: api.style() costs more than the rest of the drawing together.
    const renderItem = fill => (params, api) => {
      const a = api.coord([api.value(1), api.value(0)]), b = api.coord([api.value(2), api.value(0)]);
      const h = api.size([0, 1])[1] * 0.64, cs = params.coordSys;
      const shape = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - h / 2, width: Math.max(b[0] - a[0], 1), height: h },
        { x: cs.x, y: cs.y, width: cs.width, height: cs.height });
      return shape && { type: 'rect', shape: shape, style: { fill: fill } };
    };
    const statuses = STATUS_ORDER.filter(s => byStatus.has(s)).concat(Array.from(byStatus.keys()).filter(s => !STATUS_COLOR[s]));
    const colorOf = s => STATUS_COLOR[s] || '#6b6b6b';
    const series = statuses.map(s => ({ type: 'custom', name: s, renderItem: renderItem(colorOf(s)), data: byStatus.get(s),
      itemStyle: { color: colorOf(s) }, encode: { x: [1, 2], y: 0 }, progressive: 0,
      tooltip: { formatter: q => esc(labels[q.data[0]]) + '<br>trial ' + q.data[3] + ', attempt ' + q.data[4] + ': ' + esc(q.data[5]) +
        '<br>' + fmt(q.data[1]) + ' \u2192 ' + fmt(q.data[2]) + ' min (' + duration((q.data[2] - q.data[1]) * 60) + ')' +
        (q.data[6] ? '<br>' + esc(q.data[6]) : '') } }));
    // Allocation starts as dashed lines; every other allocation is shaded so their extents read.
    series.push({ type: 'line', name: 'allocations', data: [], silent: true,
      markLine: { symbol: 'none', silent: true, lineStyle: { color: '#333', type: 'dashed' },
        label: { formatter: q => q.name, position: 'start', fontSize: 11, color: '#333' },  // the y axis is inverted: start is the top
        data: windows.map((w, i) => ({ name: 'allocation ' + (i + 1) + (w.slots ? ' \u00b7 ' + w.slots + ' slots' : ''), xAxis: m(w.start) })) },
      markArea: { silent: true, itemStyle: { color: 'rgba(43, 95, 173, 0.05)' },
        data: windows.filter((w, i) => i % 2 === 1).map(w => [{ xAxis: m(w.start) }, { xAxis: m(w.end) }]) } });
    const rowPx = labels.length > 40 ? 12 : 24;
    chart(box, 'timeline', P, 130 + labels.length * rowPx, {
      legend: legend({ data: statuses }), tooltip: { trigger: 'item', confine: true },
      grid: { left: 80, right: 30, top: 50, bottom: 75 },
      dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter' }, { type: 'slider', xAxisIndex: 0, filterMode: 'weakFilter', height: 18, bottom: 8 }],
      xAxis: Object.assign(axisName(sinceStart(P, 'minutes since run start'), { nameGap: 26 }), { type: 'value', min: 0, max: Math.max(endMin, 1e-3), axisLabel: { formatter: fmt } }),
      yAxis: { type: 'category', data: labels, inverse: true, axisLabel: { fontSize: 11, fontFamily: 'monospace' } },
      series: series,
    });
    const u = P.run.utilization;
    if (u && isNum(u.busy) && isNum(u.available)) {
      box.append(el('p', null, el('strong', { text: 'Utilization ' + pct(u.share) }),
        ': ' + duration(u.busy) + ' busy of ' + duration(u.available) + ' slot time, over ' + windows.length + ' allocation' +
        (windows.length === 1 ? '' : 's') + ' lasting ' + duration(u.wall) + ' in all.'));
      const rows = (Array.isArray(u.ranks) ? u.ranks : []).map(r => [r.rank, r.slots, duration(r.busy), duration(r.available),
        pct(r.available > 0 ? r.busy / r.available : NaN)]);
      box.append(el('div', { class: 'scroll' }, table(['rank', 'slots', 'busy', 'available', 'utilization'], rows, [1, 2, 3, 4])));
    } else note(box, 'No utilization in this report\u2019s data (built by an older lbo).');
    caption(box, (P.run.virtual_clock ? 'A simulated run: its slots are virtual and every time is on its virtual clock, which ' +
      'runs with real time while the master proposes and fits and jumps ahead while it waits. ' : '') +
      'One row per worker slot, one bar per attempt (running attempts reach the last activity). Utilization is busy ' +
      'slot time over slots \u00d7 wall time, the wall time summed over allocations, each from its start to the last record it ' +
      'wrote: the time between a stop and a resume is not counted, and a resume that found nothing to do adds none. Per rank, ' +
      'the available time counts the slots the rank was seen to use in each allocation. Scroll or drag the slider to zoom.');
  }

  // ---------------------------------------------------------------- failures

  function figFailures(P, box) {
    const failing = s => s && s !== 'ok' && !UNFINISHED.has(s) && !EARLY_ENDS.has(s);
    const finalCounts = new Map(), attemptCounts = new Map(), reasons = new Map();
    P.trials.forEach(t => {
      if (!failing(t.status)) return;
      finalCounts.set(t.status, (finalCounts.get(t.status) || 0) + 1);
      const r = t.reason || '(no reason recorded)';
      if (!reasons.has(r)) reasons.set(r, []);
      reasons.get(r).push(t.id);
    });
    P.attempts.forEach(a => { if (failing(a.status)) attemptCounts.set(a.status, (attemptCounts.get(a.status) || 0) + 1); });
    // A promoted trial's attempts end paused and go on from there: only an attempt that failed
    // or was cancelled makes a later success a retry or a rerun.
    const rerun = new Set(P.attempts.filter(a => failing(a.status)).map(a => a.trial));
    const retried = P.trials.filter(t => t.status === 'ok' && t.attempts > 1 && rerun.has(t.id)).map(t => t.id);
    if (retried.length) box.append(el('div', null, retried.length + ' trial' + (retried.length > 1 ? 's' : '') + ' succeeded after a retry or a rerun: ', idList(retried, 20)));
    if (!finalCounts.size && !attemptCounts.size) return note(box, 'No failures: every finished trial and attempt succeeded.');
    const statuses = STATUS_ORDER.filter(s => finalCounts.has(s) || attemptCounts.has(s))
      .concat(Array.from(new Set(Array.from(finalCounts.keys()).concat(Array.from(attemptCounts.keys())))).filter(s => STATUS_ORDER.indexOf(s) < 0));
    const bars = (counts, opacity) => statuses.map(s => ({ value: counts.get(s) || 0, itemStyle: { color: STATUS_COLOR[s] || '#d62728', opacity: opacity } }));
    const label = { show: true, position: 'top', formatter: q => (q.value ? String(q.value) : '') };
    const names = ['trials (final status)', 'attempts (also retried or cancelled ones)'];
    const series = [{ type: 'bar', name: names[0], data: bars(finalCounts, 1), barMaxWidth: 36, label: label }];
    if (P.attempts.length) series.push({ type: 'bar', name: names[1], data: bars(attemptCounts, 0.45), barMaxWidth: 36, label: label });
    chart(box, 'failures', P, 260, {
      tooltip: { trigger: 'axis', confine: true }, legend: legend({ data: [{ name: names[0], itemStyle: { color: '#5f6b7a' } }, { name: names[1], itemStyle: { color: '#c3c8d0' } }] }),
      grid: { left: 50, right: 20, top: 40, bottom: 30 },
      xAxis: { type: 'category', data: statuses }, yAxis: { type: 'value', minInterval: 1 }, series: series,
    });
    caption(box, P.attempts.length ? 'Solid bars: trials that ended with this status; pale bars: attempts with this status, ' +
      'including attempts that were retried and those cancelled by a stop.' : 'Trials that ended with this status (no attempt records in this run directory).');
    const rows = Array.from(reasons.entries()).sort((a, b) => b[1].length - a[1].length)
      .map(e => [el('span', { class: 'mono', text: e[0] }), e[1].length, idList(e[1], 12)]);
    if (rows.length) box.append(el('div', { class: 'scroll' }, table(['reason', 'trials', 'trial ids'], rows, [1])));
  }

  // A long list of trial ids folds away behind its first few.
  function idList(ids, shown) {
    if (ids.length <= shown) return ids.join(', ');
    return el('details', null, el('summary', { text: ids.slice(0, shown).join(', ') + ', \u2026 (' + ids.length + ' in all)' }), ids.join(', '));
  }

  // ---------------------------------------------------------------- hedge

  function probabilityOption(rows, xName, asPoints) {
    const options = [], data = new Map();
    rows.slice().sort((a, b) => a.trial - b.trial).forEach(h => h.options.forEach((o, k) => {
      const name = String(o);
      if (!data.has(name)) { data.set(name, []); options.push(name); }
      if (isNum(h.probabilities[k])) data.get(name).push([h.trial, h.probabilities[k], String(pick(h.options[h.chosen], MISSING))]);
    }));
    return {
      legend: legend(), grid: { left: 60, right: 30, top: 40, bottom: 50 },
      tooltip: { trigger: asPoints ? 'item' : 'axis', confine: true, formatter: ps => {
        const list = Array.isArray(ps) ? ps : [ps];
        return list.length ? 'trial ' + list[0].data[0] + ' (chosen: ' + esc(list[0].data[2]) + ')<br>' +
          list.slice(0, 15).map(p => p.marker + esc(p.seriesName) + ' ' + p.data[1].toFixed(3)).join('<br>') : '';
      } },
      xAxis: Object.assign(axisName(xName, { nameGap: 28 }), { type: 'value', scale: true, minInterval: 1 }),
      yAxis: Object.assign(axisName('probability', { nameGap: 40 }), { type: 'value', min: 0, max: 1 }),
      series: options.map(o => ({ type: asPoints ? 'scatter' : 'line', name: o, data: data.get(o), symbolSize: asPoints ? 5 : 4,
        showSymbol: data.get(o).length <= 60, sampling: data.get(o).length > MANY ? 'lttb' : undefined, large: data.get(o).length > MANY })),
    };
  }

  function figHedge(P, box) {
    const acq = P.hedge.filter(h => h.over === 'acquisition' && isNum(h.trial));
    const across = P.hedge.filter(h => (h.over === 'tasks' || h.over === 'steps') && isNum(h.trial));
    if (!acq.length && !across.length) {
      return note(box, P.run.hedge === undefined ? 'No Hedge records in this run directory (no hedge.csv).'
        : 'No Hedge draws: the job\u2019s acquisition is not hedge' + (P.job.acquisition ? ' (' + P.job.acquisition + ')' : '') + ' and one task was open at a time.');
    }
    if (acq.length) {
      const count = new Map();  // owners in order of their first draw, with their number of draws
      acq.forEach(h => { const o = hedgeOwner(P, h); count.set(o, (count.get(o) || 0) + 1); });
      const owners = Array.from(count.keys());
      const busiest = owners.reduce((a, b) => (count.get(b) > count.get(a) ? b : a), owners[0]);
      const rowsFor = v => (v === '' ? acq : acq.filter(h => hedgeOwner(P, h) === v));
      const controls = el('div', { class: 'controls' });
      box.append(el('h4', { text: 'GP-Hedge: acquisition functions' }), controls);
      const redraw = chart(box, 'hedge', P, 300, probabilityOption(rowsFor(busiest), 'trial', false));
      controls.append(select('task', [['', 'all tasks (points)']].concat(owners.map(o => [o, o + ' (' + count.get(o) + ' draws)'])), busiest,
        v => redraw(probabilityOption(rowsFor(v), 'trial', v === ''), 'hedge')));
      caption(box, 'The probability GP-Hedge gave each acquisition function of a task when the model proposed a trial (the tooltip names the one drawn).');
    } else note(box, 'No GP-Hedge draws over acquisition functions: the job\u2019s acquisition is ' + (P.job.acquisition || 'not hedge') + '.');
    if (across.length) {
      const over = across.some(h => h.over === 'tasks') ? 'open tasks' : 'steps';
      box.append(el('h4', { text: 'Hedge across ' + over }));
      chart(box, 'hedge-tasks', P, 280, probabilityOption(across, 'trial', false));
      caption(box, 'When several tasks (or steps) were open, the probability of proposing the next trial for each.');
    } else note(box, 'One task was open at a time: no Hedge across tasks.');
  }

  // ---------------------------------------------------------------- metrics

  function figMetrics(P, box) {
    const values = new Map();
    P.trials.forEach(t => {
      const ms = t.metrics;
      if (!ms || typeof ms !== 'object') return;
      Object.keys(ms).forEach(k => { if (isNum(ms[k])) { if (!values.has(k)) values.set(k, []); values.get(k).push(ms[k]); } });
    });
    if (!values.size) return note(box, 'The trials carry no metrics.');
    const names = Array.from(values.keys()).sort();
    box.append(el('div', { class: 'scroll' }, table(['metric', 'trials', 'min', 'median', 'max'], names.map(k => {
      const s = sortedNumbers(values.get(k));
      return [el('code', { text: k }), s.length, fmt(s[0]), fmt(quantile(s, 0.5)), fmt(s[s.length - 1])];
    }), [1, 2, 3, 4])));
    const option = k => {
      const series = [];
      P.byTask.forEach((list, ti) => {
        const data = list.filter(t => isOk(t) && t.metrics && isNum(t.metrics[k])).map(t => [t.metrics[k], t.objective, t.id]);
        if (data.length) series.push({ type: 'scatter', name: P.names[ti], data: data, symbolSize: 5, large: data.length > MANY });
      });
      // Stopped trials: the metric of their last report that had one, against the value they were stopped at
      // (none when the reports give another objective than the one on this axis: [early_stopping] objective).
      const stopped = P.trials.filter(t => t.status === 'stopped' && !P.job.reports_objective && isNum(t.stopped_value) && t.metrics && isNum(t.metrics[k]))
        .map(t => [t.metrics[k], t.stopped_value, t.id, P.names[t.task], t.metrics_step]);
      if (stopped.length) {
        series.push({ type: 'scatter', name: 'stopped', data: stopped, symbol: 'emptyCircle', symbolSize: 6,
          itemStyle: { color: STATUS_COLOR.stopped }, large: stopped.length > MANY });
      }
      return {
        legend: legend(), grid: { left: 70, right: 30, top: 40, bottom: 50 },
        tooltip: { trigger: 'item', confine: true, formatter: q => q.seriesName === 'stopped'
          ? esc(q.data[3]) + ', trial ' + q.data[2] + ' (stopped)<br>' + esc(k) + ' ' + fmt(q.data[0]) + ', objective ' + fmt(q.data[1]) +
            (isNum(q.data[4]) ? ' at step ' + q.data[4] : '')
          : esc(q.seriesName) + ', trial ' + q.data[2] + '<br>' + esc(k) + ' ' + fmt(q.data[0]) + ', objective ' + fmt(q.data[1]) },
        xAxis: Object.assign(axisName(k, { nameGap: 28 }), { type: 'value', scale: true, axisLabel: { formatter: fmt } }),
        yAxis: Object.assign(axisName('objective', { nameGap: 50 }), { type: 'value', scale: true }),
        series: series,
      };
    };
    const controls = el('div', { class: 'controls' });
    box.append(controls);
    const redraw = chart(box, 'metrics', P, 320, option(names[0]));
    controls.append(select('metric', names.map(k => [k, k]), names[0], v => redraw(option(v), 'metrics')));
    caption(box, 'A metric the objective reported next to its result, against the objective of successful trials; one colour per task. Stopped trials (hollow) show the metric of their last report that had one, against the value they were stopped at.');
  }

  // Intermediate reports: each trial's curve by step, the stops, and the resource over time.
  const hasCurve = t => Array.isArray(t.curve) && t.curve.length > 0;
  const CURVES_SHOWN = 400;  // lines per task; more make the chart slow to draw
  function curvesOption(P, ti) {
    const trials = P.byTask[ti].filter(hasCurve).slice(-CURVES_SHOWN);
    const series = trials.map(t => {
      const stopped = t.status === 'stopped';
      const data = t.curve.filter(c => Array.isArray(c) && isNum(c[0]) && isNum(c[1]) && (!stopped || !isNum(t.last_step) || c[0] <= t.last_step))
        .map(c => [c[0], c[1], t.id]);
      const name = stopped ? 'stopped early' : t.status === 'ok' ? 'ran to its end' : 'running or failed';
      return { type: 'line', name: name, data: data, showSymbol: false, silent: false,
        color: stopped ? '#9e9e9e' : t.status === 'ok' ? '#1f77b4' : '#ff7f0e', lineStyle: { width: 1, opacity: stopped ? 0.6 : 0.9 } };
    });
    const stops = trials.filter(t => t.status === 'stopped' && isNum(t.last_step) && isNum(t.stopped_value)).map(t => [t.last_step, t.stopped_value, t.id]);
    if (stops.length) series.push({ type: 'scatter', name: 'where it was stopped', data: stops, symbol: 'diamond', symbolSize: 7, color: '#d62728' });
    const pauses = [];
    trials.forEach(t => (Array.isArray(t.paused) ? t.paused : []).forEach(p => {
      if (Array.isArray(p) && isNum(p[0]) && isNum(p[1])) pauses.push([p[0], p[1], t.id]);
    }));
    if (pauses.length) series.push({ type: 'scatter', name: 'paused there, then promoted', data: pauses, symbol: 'triangle', symbolSize: 7, color: '#2ca02c' });
    return {
      legend: legend(), grid: { left: 70, right: 30, top: 40, bottom: 50 },
      tooltip: { trigger: 'item', confine: true, formatter: q => 'trial ' + q.data[2] + ' (' + esc(q.seriesName) + ')<br>step ' + q.data[0] + ': ' + fmt(q.data[1]) },
      xAxis: Object.assign(axisName('step', { nameGap: 28 }), { type: 'value', min: 0 }),
      yAxis: Object.assign(axisName(P.job.reports_objective ? 'reported ' + P.job.reports_objective : 'reported value', { nameGap: 50 }), { type: 'value', scale: true }),
      series: series,
    };
  }
  function resourceOption(P) {
    const events = [];
    P.trials.filter(hasCurve).forEach(t => {
      if (!isNum(t.started)) return;
      let last = 0;
      t.curve.forEach(c => {
        if (!Array.isArray(c) || !isNum(c[0]) || !isNum(c[2]) || c[0] <= last) return;
        const at = isNum(c[3]) ? c[3] : t.started + c[2];  // the report's time, or its attempt's start plus its seconds
        events.push([(at - P.t0) / 60, c[0] - last, t.status === 'stopped']);
        last = c[0];
      });
    });
    events.sort((a, b) => a[0] - b[0]);
    let all = 0;
    const data = events.map(e => [e[0], all += e[1]]);
    return {
      grid: { left: 70, right: 30, top: 30, bottom: 50 },
      tooltip: { trigger: 'axis', confine: true, formatter: q => fmt(q[0].data[0]) + ' min: ' + q[0].data[1] + ' steps' },
      xAxis: Object.assign(axisName(sinceStart(P, 'minutes since the run started'), { nameGap: 28 }), { type: 'value', min: 0 }),
      yAxis: Object.assign(axisName('steps reported, all trials', { nameGap: 50 }), { type: 'value' }),
      series: [{ type: 'line', data: data, showSymbol: false, step: 'end', color: '#1f77b4' }],
    };
  }
  function figCurves(P, box) {
    const names = P.names.filter((n, i) => P.byTask[i] && P.byTask[i].some(hasCurve));
    if (!names.length) return note(box, 'The trials made no intermediate reports (lbo:report lines; see the README, Objective protocol).');
    const stopped = P.trials.filter(t => t.status === 'stopped').length;
    const controls = el('div', { class: 'controls' });
    box.append(controls);
    const redraw = chart(box, 'curves', P, 380, curvesOption(P, P.names.indexOf(names[0])));
    controls.append(select('task', names.map(n => [n, n]), names[0], v => redraw(curvesOption(P, P.names.indexOf(v)), 'curves')));
    const promoted = P.trials.filter(t => Array.isArray(t.paused) && t.paused.length > 0).length;
    caption(box, 'Each trial\'s intermediate reports by step (its newest attempt, and the attempts it resumed from; at most ' + CURVES_SHOWN + ' trials per task, the newest): ' +
      'blue ran to its end, grey was stopped early by the job\'s [early_stopping] rule (' + stopped + ' in this run), a red diamond where it was stopped' +
      (promoted ? ', a green triangle where a trial was paused at a rung and later promoted (' + promoted + ' trials)' : '') + '.');
    if (isNum(P.t0)) {
      chart(box, 'resource', P, 260, resourceOption(P));
      caption(box, 'The resource the run spent: steps reported by all trials, against the time they were reported.');
    }
  }

  // ---------------------------------------------------------------- Pareto sets (several objectives)


  const hasValues = t => isOk(t) && Array.isArray(t.values) && t.values.every(isNum);

  // One task's results in the plane of objectives `ax` and `ay`: its Pareto set (solid, joined in
  // the order of the first axis when there are only two objectives), the feasible results it
  // dominates (faded) and the infeasible ones (hollow red: outside a limit of [[constraints]]).
  function paretoOption(P, ti, ax, ay) {
    const objectives = objectivesOf(P), trials = P.byTask[ti].filter(hasValues);
    const point = t => [t.values[ax], t.values[ay], t.id];
    const members = trials.filter(t => t.pareto && !t.infeasible).map(point);
    const dominated = trials.filter(t => !t.pareto && !t.infeasible).map(point);
    const infeasible = trials.filter(t => t.infeasible).map(point);
    const series = [
      { type: 'scatter', name: 'Pareto set', data: members, symbolSize: 8, itemStyle: { color: '#2b5fad' }, z: 4 },
      { type: 'scatter', name: 'dominated', data: dominated, symbolSize: 6, itemStyle: { color: '#2b5fad', opacity: 0.25 } },
      { type: 'scatter', name: 'infeasible', data: infeasible, symbol: 'emptyTriangle', symbolSize: 8, itemStyle: { color: '#d62728' } },
    ];
    if (objectives.length === 2 && members.length > 1) {
      series.push({ type: 'line', name: 'Pareto set', data: members.slice().sort((a, b) => a[0] - b[0]), showSymbol: false,
        lineStyle: { color: '#2b5fad', width: 1, type: 'dashed' }, silent: true, tooltip: { show: false }, z: 3 });
    }
    const label = i => objectives[i].name + ' (' + objectives[i].direction + ')';
    return {
      legend: legend({ data: ['Pareto set', 'dominated', 'infeasible'] }), grid: { left: 70, right: 30, top: 40, bottom: 50 },
      tooltip: { trigger: 'item', confine: true, formatter: q => 'trial ' + q.data[2] + ' (' + esc(q.seriesName) + ')<br>' +
        esc(objectives[ax].name) + ' ' + fmt(q.data[0]) + ', ' + esc(objectives[ay].name) + ' ' + fmt(q.data[1]) },
      xAxis: Object.assign(axisName(label(ax), { nameGap: 28 }), { type: 'value', scale: true, axisLabel: { formatter: fmt } }),
      yAxis: Object.assign(axisName(label(ay), { nameGap: 50 }), { type: 'value', scale: true, axisLabel: { formatter: fmt } }),
      series: series,
    };
  }

  // The hypervolume the task's feasible results dominate after each finished trial, from the
  // reference tasks.csv gives (run_data.cpp: pareto_json).
  function hypervolumeOption(P, ti) {
    const p = (P.summaries[ti] || {}).pareto || {}, curve = Array.isArray(p.curve) ? p.curve : [];
    return {
      grid: { left: 70, right: 30, top: 20, bottom: 50 },
      tooltip: { trigger: 'axis', valueFormatter: fmt },
      xAxis: Object.assign(axisName('trials finished', { nameGap: 28 }), { type: 'category', data: curve.map((_, i) => i + 1) }),
      yAxis: Object.assign(axisName('hypervolume', { nameGap: 50 }), { type: 'value', scale: true, axisLabel: { formatter: fmt } }),
      series: [{ type: 'line', name: 'hypervolume', data: curve, showSymbol: false, step: 'end', lineStyle: { width: 2 } }],
    };
  }

  function referenceText(P, ti) {
    const p = (P.summaries[ti] || {}).pareto || {}, objectives = objectivesOf(P);
    if (!Array.isArray(p.reference) || !p.reference.length) return 'no feasible result yet';
    return p.reference.map((r, i) => objectives[i].name + ' ' + fmt(r) + ' (' + ((p.reference_from || [])[i] || '?') + ')').join(', ');
  }

  function figPareto(P, box) {
    const objectives = objectivesOf(P);
    if (objectives.length < 2) return note(box, 'The job has one objective: [objective] objectives names several.');
    const tasks = range(P.names.length).filter(i => P.byTask[i].some(hasValues));
    if (!tasks.length) return note(box, 'No successful trials yet.');
    let task = tasks[tasks.length - 1], ax = 0, ay = 1;
    const controls = el('div', { class: 'controls' });
    box.append(controls);
    const front = chart(box, 'pareto', P, 400, paretoOption(P, task, ax, ay));
    const said = caption(box, '');
    const volume = chart(box, 'hypervolume', P, 240, hypervolumeOption(P, task));
    const redraw = () => {
      front(paretoOption(P, task, ax, ay), 'pareto');
      volume(hypervolumeOption(P, task), 'hypervolume');
      said.textContent = 'The ' + P.byTask[task].filter(hasValues).length + ' successful trials of task ' + P.names[task] + ': ' +
        'its Pareto set (' + P.byTask[task].filter(t => hasValues(t) && t.pareto && !t.infeasible).length + ' trials, no other feasible ' +
        'result of the task is at least as good in every objective and better in one) in solid blue, the feasible results it ' +
        'dominates faded, those outside a limit of [[constraints]] as red triangles (never members). Below, the hypervolume its ' +
        'feasible results dominate after each finished trial, from the reference ' + referenceText(P, task) + ' (tasks.csv: the job\'s ' +
        'reference where it gives one, else derived from the task\'s results).';
    };
    const names = objectives.map((o, i) => [i, o.name]);
    controls.append(select('task', tasks.map(i => [i, P.names[i]]), task, v => { task = +v; redraw(); }));
    if (objectives.length > 2) {
      controls.append(select('x', names, ax, v => { ax = +v; redraw(); }), select('y', names, ay, v => { ay = +v; redraw(); }));
    }
    redraw();
  }

  // ---------------------------------------------------------------- the page

  const SECTIONS = [
    { id: 'overview', title: 'Runs', lead: 'What ran, how it was set up, and what this report leaves out.', build: overview },
    { id: 'best-so-far', title: 'Best so far', lead: 'How fast each task improved.', build: figBestSoFar },
    { id: 'pareto', title: 'Pareto sets', lead: 'With several objectives: each task\'s trade-off, and how its hypervolume grew.', build: figPareto, when: P => objectivesOf(P).length > 1 },
    { id: 'transfer', title: 'Transfer across tasks', lead: 'Did transfer help: every run on the same axes per task, and measured against one target per task.', all: figTransfer },
    { id: 'similarity', title: 'Similarity and network usage', lead: 'What the lbo model learned about the tasks: how alike they are, and which latent networks each one uses.', build: figSimilarity },
    { id: 'parallel', title: 'Parallel coordinates', lead: 'Where the search went in the space, and where the good configurations lie.', build: figParallel },
    { id: 'by-choice', title: 'Objective by choice', lead: 'Which choices of each categorical parameter do well.', build: figByChoice },
    { id: 'timeline', title: 'Workers', lead: 'What every worker slot did and when, and how busy the slots were.', build: figTimeline },
    { id: 'failures', title: 'Failures', lead: 'Trials and attempts that did not succeed, and why.', build: figFailures },
    { id: 'hedge', title: 'Hedge', lead: 'How GP-Hedge weighed acquisition functions and open tasks.', build: figHedge },
    { id: 'metrics', title: 'Metrics', lead: 'Extra numbers the objective reported.', build: figMetrics },
    { id: 'curves', title: 'Learning curves', lead: 'What trials reported as they ran, which were stopped early, and the resource spent.', build: figCurves },
  ];

  function main() {
    const root = document.getElementById('main'), nav = document.getElementById('nav');
    const gen = document.getElementById('generated');
    if (gen) gen.textContent = 'generated ' + iso(DATA.generated) + (DATA.generator ? ' by lbo ' + DATA.generator : '') +
      (DATA.chart_library ? ', charts drawn with ' + DATA.chart_library : '');
    const labels = runLabels(RUNS);
    if (RUNS.length) document.title = 'lbo report: ' + labels.join(', ');
    const preps = [];
    RUNS.forEach((r, k) => guard('run ' + labels[k], root, () => preps.push(prepare(r, labels[k], k))));
    if (!preps.length) root.append(el('section', { class: 'card' }, el('p', { class: 'note', text: 'This report holds no runs.' })));
    SECTIONS.forEach(s => {
      if (!preps.length) return;
      if (s.when && !preps.some(s.when)) return;  // a section for runs of a kind none of these is
      const card = el('section', { class: 'card', id: 'sec-' + s.id }, el('h2', { text: s.title }), el('p', { class: 'lead', text: s.lead }));
      root.append(card);
      nav.append(el('a', { href: '#sec-' + s.id, text: s.title }));
      if (s.all) return guard(s.id, card, () => s.all(preps, card));
      preps.forEach(P => {
        const block = el('div', { class: 'run-block', 'data-run': P.label });
        if (preps.length > 1 || s.id === 'overview') block.append(el('h3', { text: P.label }));
        card.append(block);
        guard(s.id + ' of ' + P.label, block, () => s.build(P, block));
      });
    });
    // Resizing redraws, which is slow with many trials: only charts whose box changed.
    const fit = () => charts.forEach(c => {
      const d = c.getDom();
      if (d.clientWidth !== c.getWidth() || d.clientHeight !== c.getHeight()) c.resize();
    });
    fit();
    let pendingResize = 0;
    window.addEventListener('resize', () => {
      cancelAnimationFrame(pendingResize);
      pendingResize = requestAnimationFrame(fit);
    });
    // Ready once every chart has drawn (progressive series finish over several frames), or
    // after a while in any case so that a test never waits forever.
    const timeout = new Promise(resolve => setTimeout(resolve, 8000));
    Promise.race([Promise.all(drawn), timeout]).then(() => {
      document.body.dataset.figures = String(charts.length);
      document.body.dataset.ready = '1';
    });
  }

  if (typeof echarts === 'undefined') {
    document.getElementById('main').append(el('div', { class: 'error figure-error', text: 'The chart library is missing from this page.' }));
    setTimeout(() => { throw new Error('lbo report: echarts is not defined'); });
    document.body.dataset.figures = '0';
    document.body.dataset.ready = '1';
  } else {
    main();
  }
})();
