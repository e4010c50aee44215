// The evalctl report page: reads the JSON data embedded in the page and draws the summary cards,
// the per-candidate panels and histograms, the comparison and scatter, the errors panel and the
// paginated, sortable, filterable table of every result. Every string from the data is set with
// textContent (never as markup), and charts are SVG elements built one by one: nothing here
// fetches, and the page's Content-Security-Policy forbids it anyway. A name from the data (a
// split or category, an error kind, a key) is never a property name of a plain object: lookups
// keyed by such names use Map and Set, and objects of the data are read through own(), so a name
// such as `__proto__` or `hasOwnProperty` is just a name.
(function () {
  'use strict';
  var started = performance.now();
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var col = Object.create(null);
  data.columns.forEach(function (name, index) { col[name] = index; });
  var rows = data.rows;
  var series = data.series;
  var sources = data.sources;
  var SVG = 'http://www.w3.org/2000/svg';

  // ---- small helpers ----------------------------------------------------------------------

  // Text shown, not obeyed, as the text reports show it: a control character (other than line
  // feed and tab) and a bidirectional embedding, override or isolate appear as their escapes
  // (`\u{202e}`), so that an id cannot read in another order or look like another id.
  var OBEYED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
  function visible(text) {
    return String(text).replace(OBEYED, function (c) {
      return '\\u{' + c.charCodeAt(0).toString(16) + '}';
    });
  }

  function el(tag, props, children) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        // What the data says is shown with its control characters escaped, in a tooltip too.
        if (key === 'text') node.textContent = visible(props[key]);
        else if (key === 'title') node.title = visible(props[key]);
        else if (key === 'data') Object.assign(node.dataset, props[key]);
        else node[key] = props[key];
      });
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === 'string' ? document.createTextNode(visible(child)) : child);
    });
    return node;
  }

  function svgEl(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, String(attrs[key])); });
    if (text !== undefined) node.textContent = visible(text);
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function fmt(value, digits) {
    if (value === null || value === undefined || Number.isNaN(value)) return '—';
    return Number(value).toFixed(digits === undefined ? 4 : digits);
  }

  function fmtMs(ms) {
    if (ms === null || ms === undefined) return '—';
    if (ms < 1000) return Math.round(ms) + ' ms';
    var seconds = ms / 1000;
    if (seconds < 120) return seconds.toFixed(2) + ' s';
    return Math.floor(seconds / 60) + ' min ' + Math.round(seconds % 60) + ' s';
  }

  function plural(count, word) {
    return count + ' ' + word + (count === 1 ? '' : 's');
  }

  function seriesLabel(index) {
    var item = series[index];
    return sources.length > 1 ? sources[item.source].name + ' · ' + item.candidate : item.candidate;
  }

  // The own member `key` of a data object, or undefined (never an inherited one).
  function own(object, key) {
    return object && Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
  }

  function errorKind(row) { return row[col.error_kind]; }
  function scoreOf(row) { return row[col.score] === null ? 0 : row[col.score]; }

  // ---- aggregates -------------------------------------------------------------------------

  // Per series: its rows' scores per split ({n, sum, min, max, errors, scores}).
  var splitOrder = [];
  var stats = series.map(function () { return { splits: new Map(), all: newAggregate() }; });
  function newAggregate() { return { n: 0, sum: 0, min: Infinity, max: -Infinity, errors: 0, scores: [] }; }
  function addTo(aggregate, score, failed) {
    aggregate.n += 1;
    aggregate.sum += score;
    aggregate.min = Math.min(aggregate.min, score);
    aggregate.max = Math.max(aggregate.max, score);
    if (failed) aggregate.errors += 1;
    aggregate.scores.push(score);
  }
  rows.forEach(function (row) {
    var split = row[col.split];
    if (splitOrder.indexOf(split) < 0) splitOrder.push(split);
    var entry = stats[row[col.series]];
    if (!entry.splits.has(split)) entry.splits.set(split, newAggregate());
    var failed = errorKind(row) !== null;
    addTo(entry.splits.get(split), scoreOf(row), failed);
    addTo(entry.all, scoreOf(row), failed);
  });

  // The run summary's line for a series, when its source has a summary.
  function summaryOf(index) {
    var item = series[index];
    var summary = sources[item.source].summary;
    if (!summary || !summary.candidates) return null;
    for (var i = 0; i < summary.candidates.length; i++) {
      if (summary.candidates[i].id === item.candidate) return summary.candidates[i];
    }
    return null;
  }

  // {n, mean, min, max, errors, ci95} of a series over one split: the run summary's numbers
  // when there is one, else computed from the rows.
  function aggregateOf(index, split) {
    var fromSummary = summaryOf(index);
    var summarised = own(fromSummary, split);
    if (summarised && typeof summarised === 'object') return summarised;
    var computed = stats[index].splits.get(split);
    if (!computed) return null;
    return { n: computed.n, mean: computed.sum / computed.n, min: computed.min, max: computed.max,
      errors: computed.errors, ci95: null };
  }

  // A series' headline score and its interval: the summary's score, else the val mean, else the
  // train mean, else the mean over every row.
  function headline(index) {
    var fromSummary = summaryOf(index);
    var preferred = ['val', 'train', 'single'];
    var aggregate = null;
    for (var i = 0; i < preferred.length && !aggregate; i++) aggregate = aggregateOf(index, preferred[i]);
    var ci = aggregate && aggregate.ci95 ? aggregate.ci95 : (fromSummary && fromSummary.ci95) || null;
    if (fromSummary) return { score: fromSummary.score, ci95: ci };
    if (aggregate) return { score: aggregate.mean, ci95: ci };
    var all = stats[index].all;
    return { score: all.n ? all.sum / all.n : null, ci95: null };
  }

  // ---- summary ----------------------------------------------------------------------------

  function card(field, label, value, detail, bad) {
    return el('div', { className: 'card' + (bad ? ' bad' : ''), data: { field: field } }, [
      el('div', { className: 'label', text: label }),
      el('div', { className: 'value', text: value }),
      detail ? el('div', { className: 'detail', text: detail }) : null,
    ]);
  }

  function drawSummary() {
    document.getElementById('generator').textContent = 'Made by ' + data.generator + ' from ' +
      sources.map(function (source) { return source.name; }).join(', ');
    var cards = document.getElementById('summary-cards');
    sources.forEach(function (source, sourceIndex) {
      var own = rows.filter(function (row) { return series[row[col.series]].source === sourceIndex; });
      var errors = own.filter(function (row) { return errorKind(row) !== null; }).length;
      var callTime = own.reduce(function (sum, row) { return sum + (row[col.latency_ms] || 0); }, 0);
      var prefix = sources.length > 1 ? source.name + ': ' : '';
      var calls = source.summary ? source.summary.calls : null;
      var total = calls ? calls.total : own.length;
      var failed = calls ? calls.errors : errors;
      var cached = own.filter(function (row) { return row[col.cached]; }).length;
      var evaluator = source.evaluator;
      var verdicts = source.summary ? source.summary.gates.verdicts : null;
      var group = el('div', { className: 'cards', data: { source: String(sourceIndex) } }, [
        card('evaluator', prefix + 'evaluator', evaluator ? evaluator.kind : source.kind + ' results',
          evaluator ? evaluator.target : 'read from ' + source.name),
        card('calls', prefix + (source.kind === 'run' ? 'calls' : 'results'), String(total),
          (total - failed) + ' ok' + (cached ? ', ' + cached + ' from the cache' : '')),
        card('errors', prefix + 'errors', String(failed),
          total ? (100 * failed / total).toFixed(1) + '% of ' + total : null, failed > 0),
        card('elapsed', prefix + 'elapsed', source.elapsed_ms === null ? '—' : fmtMs(source.elapsed_ms),
          callTime ? 'call time ' + fmtMs(callTime) : (source.elapsed_ms === null ? 'not recorded in results files' : null)),
        verdicts ? card('verdicts', prefix + 'passed', (verdicts.runs - verdicts.failed) + ' of ' + verdicts.runs,
          verdicts.failed + ' did not pass their scorecard', verdicts.failed > 0) : null,
        source.summary && source.summary.partial ? card('partial', prefix + 'partial',
          source.summary.partial.missing_calls + ' calls missing', source.summary.partial.description, true) : null,
      ]);
      group.querySelector('[data-field=calls]').dataset.value = String(total);
      group.querySelector('[data-field=errors]').dataset.value = String(failed);
      cards.appendChild(group);
    });
    drawRanking();
  }

  function drawRanking() {
    var ranked = series.map(function (_, index) { return { index: index, head: headline(index) }; });
    ranked.sort(function (a, b) {
      return (b.head.score === null ? -Infinity : b.head.score) - (a.head.score === null ? -Infinity : a.head.score);
    });
    var scores = ranked.map(function (item) { return item.head.score || 0; });
    var lows = ranked.map(function (item) { return item.head.ci95 ? item.head.ci95[0] : Infinity; });
    var highs = ranked.map(function (item) { return item.head.ci95 ? item.head.ci95[1] : -Infinity; });
    var low = Math.min(0, Math.min.apply(null, scores.concat(lows)));
    var high = Math.max(1, Math.max.apply(null, scores.concat(highs)));
    var table = el('table', { className: 'ranking' }, [
      el('thead', null, [el('tr', null, [
        el('th', { text: 'rank' }), el('th', { text: 'candidate' }),
        el('th', { className: 'num', text: 'score' }), el('th', { text: '95% interval' }),
        el('th', { text: '' }),
      ])]),
    ]);
    var body = el('tbody');
    ranked.forEach(function (item, rank) {
      var width = 240;
      var x = function (value) { return 4 + (width - 8) * (value - low) / ((high - low) || 1); };
      var chart = svgEl('svg', { width: width, height: 16, role: 'img' });
      chart.appendChild(svgEl('rect', { class: 'bar-track', x: 4, y: 4, width: width - 8, height: 8 }));
      if (item.head.score !== null) {
        chart.appendChild(svgEl('rect', { class: 'bar', x: x(Math.min(0, item.head.score)), y: 4,
          width: Math.max(1, Math.abs(x(item.head.score) - x(0))), height: 8 }));
      }
      var ci = item.head.ci95;
      if (ci) {
        chart.appendChild(svgEl('line', { class: 'interval', x1: x(ci[0]), x2: x(ci[1]), y1: 8, y2: 8 }));
        chart.appendChild(svgEl('line', { class: 'interval', x1: x(ci[0]), x2: x(ci[0]), y1: 3, y2: 13 }));
        chart.appendChild(svgEl('line', { class: 'interval', x1: x(ci[1]), x2: x(ci[1]), y1: 3, y2: 13 }));
      }
      body.appendChild(el('tr', { data: { series: String(item.index), score: String(item.head.score) } }, [
        el('td', { className: 'num', text: String(rank + 1) }),
        el('td', { className: 'cand', text: seriesLabel(item.index) }),
        el('td', { className: 'num score', text: fmt(item.head.score) }),
        el('td', { text: ci ? '[' + fmt(ci[0]) + ', ' + fmt(ci[1]) + ']' : '—' }),
        el('td', null, [chart]),
      ]));
    });
    table.appendChild(body);
    var wrap = document.getElementById('ranking');
    wrap.appendChild(el('h3', { text: 'Candidates ranked by score' }));
    // As the text summary leaves out its `best:` line: a partial run's rows cover different calls.
    if (sources.some(function (source) { return source.summary && source.summary.partial; })) {
      wrap.appendChild(el('p', { id: 'ranking-partial', className: 'muted',
        text: 'Partial results: the candidates\' scores cover different calls, so this order may not ' +
          'hold once every call is in.' }));
    }
    wrap.appendChild(el('div', { className: 'table-wrap' }, [table]));
  }

  // ---- candidates -------------------------------------------------------------------------

  function scoreDomain() {
    var all = rows.map(scoreOf);
    var low = Math.min.apply(null, all.length ? all : [0]);
    var high = Math.max.apply(null, all.length ? all : [1]);
    if (low >= 0 && high <= 1) return [0, 1];
    return low === high ? [low - 0.5, high + 0.5] : [low, high];
  }

  function histogram(scores, failedScores, domain) {
    var bins = 10;
    var counts = new Array(bins).fill(0);
    var failed = new Array(bins).fill(0);
    var bin = function (score) {
      return Math.min(bins - 1, Math.max(0, Math.floor((score - domain[0]) / (domain[1] - domain[0]) * bins)));
    };
    scores.forEach(function (score) { counts[bin(score)] += 1; });
    failedScores.forEach(function (score) { failed[bin(score)] += 1; });
    var width = 300, height = 110, bottom = 18, top = 12;
    var most = Math.max.apply(null, counts.concat([1]));
    var chart = svgEl('svg', { class: 'histogram', width: width, height: height, role: 'img', viewBox: '0 0 ' + width + ' ' + height });
    chart.appendChild(svgEl('title', {}, 'Score histogram: ' + scores.length + ' results'));
    var step = width / bins;
    counts.forEach(function (count, i) {
      var h = (height - bottom - top) * count / most;
      var hf = (height - bottom - top) * failed[i] / most;
      chart.appendChild(svgEl('rect', { class: 'bar', x: i * step + 1, y: height - bottom - h, width: step - 2, height: h, 'data-count': count }));
      if (hf > 0) chart.appendChild(svgEl('rect', { class: 'bar failed', x: i * step + 1, y: height - bottom - hf, width: step - 2, height: hf }));
      if (count > 0) chart.appendChild(svgEl('text', { x: i * step + step / 2, y: height - bottom - h - 2, 'text-anchor': 'middle' }, String(count)));
    });
    chart.appendChild(svgEl('line', { class: 'axis', x1: 0, x2: width, y1: height - bottom, y2: height - bottom }));
    chart.appendChild(svgEl('text', { x: 0, y: height - 4 }, fmt(domain[0], 2)));
    chart.appendChild(svgEl('text', { x: width, y: height - 4, 'text-anchor': 'end' }, fmt(domain[1], 2)));
    return chart;
  }

  function aggregateTable(index) {
    var splits = splitOrder.filter(function (split) { return stats[index].splits.has(split); });
    var head = el('tr', null, ['split', 'n', 'mean', 'min', 'max', 'errors', '95% interval'].map(function (name, i) {
      return el('th', { className: i > 0 && i < 6 ? 'num' : '', text: name });
    }));
    var body = el('tbody', null, splits.map(function (split) {
      var a = aggregateOf(index, split);
      return el('tr', { data: { split: split } }, [
        el('td', { text: split }), el('td', { className: 'num', text: String(a.n) }),
        el('td', { className: 'num mean', text: fmt(a.mean) }), el('td', { className: 'num', text: fmt(a.min) }),
        el('td', { className: 'num', text: fmt(a.max) }), el('td', { className: 'num', text: String(a.errors) }),
        el('td', { text: a.ci95 ? '[' + fmt(a.ci95[0]) + ', ' + fmt(a.ci95[1]) + ']' : '—' }),
      ]);
    }));
    return el('table', null, [el('thead', null, [head]), body]);
  }

  function drawCandidates() {
    var panels = document.getElementById('candidate-panels');
    var domain = scoreDomain();
    series.forEach(function (item, index) {
      var own = rows.filter(function (row) { return row[col.series] === index; });
      var failed = own.filter(function (row) { return errorKind(row) !== null; }).map(scoreOf);
      panels.appendChild(el('div', { className: 'panel', data: { series: String(index) } }, [
        el('h3', { text: seriesLabel(index) }),
        el('div', { className: 'table-wrap' }, [aggregateTable(index)]),
        histogram(own.map(scoreOf), failed, domain),
        el('div', { className: 'muted', text: 'Score histogram (failed results in red, scored 0)' }),
      ]));
    });
    fitPanels(panels);
  }

  // Make every panel at least as wide as the widest panel's content (its table at its natural
  // width, or its histogram), so the grid puts fewer panels in a row rather than cut a table.
  function fitPanels(panels) {
    var widest = 0;
    var edges = function (node) {
      var style = getComputedStyle(node);
      return ['paddingLeft', 'paddingRight', 'borderLeftWidth', 'borderRightWidth']
        .reduce(function (sum, key) { return sum + parseFloat(style[key]); }, 0);
    };
    panels.classList.add('measuring');
    panels.querySelectorAll('.panel').forEach(function (panel) {
      var wrap = panel.querySelector('.table-wrap');
      var content = Math.max(wrap.firstChild.getBoundingClientRect().width + edges(wrap),
        panel.querySelector('svg').getBoundingClientRect().width);
      widest = Math.max(widest, content + edges(panel));
    });
    panels.classList.remove('measuring');
    panels.style.setProperty('--panel-min', Math.ceil(widest) + 'px');
  }

  // ---- comparison -------------------------------------------------------------------------

  // Which example a row's call scores, as `compare` pairs examples: its task or run id; else its
  // split and its example (by id where it has one, so that a record inserted into the dataset
  // still pairs each example with itself; the k-th example of an id another example shares is
  // its k-th). The repeats of an example are one pair, their scores averaged.
  function pairKey(row, occurrence) {
    if (row[col.label] !== null) return 'label:' + row[col.label];
    var example = row[col.example_id] === null ? 'index:' + row[col.example_index]
      : 'id:' + row[col.example_id] + '~' + occurrence(row);
    return row[col.split] + '#' + example;
  }

  // occurrence(row): among the examples of the row's series and split with its id, how many come
  // before its example.
  function occurrences(of) {
    var indexes = new Map();
    var name = function (row) { return row[col.series] + '#' + row[col.split] + '#' + row[col.example_id]; };
    rows.forEach(function (row) {
      if (!of(row) || row[col.example_id] === null) return;
      if (!indexes.has(name(row))) indexes.set(name(row), []);
      var seen = indexes.get(name(row));
      if (seen.indexOf(row[col.example_index]) < 0) seen.push(row[col.example_index]);
    });
    indexes.forEach(function (seen) { seen.sort(function (a, b) { return a - b; }); });
    return function (row) { return indexes.get(name(row)).indexOf(row[col.example_index]); };
  }

  // Whether `a` is higher than `b` by more than float rounding: `compare`'s rule for a win,
  // under which 0.3 and 0.30000000000000004 tie.
  function higher(a, b) {
    var difference = a - b;
    var size = Math.abs(difference);
    return difference - (isFinite(size) ? Math.max(1e-9, 1e-12 * size) : 1e-9) > 0;
  }

  function drawComparison() {
    if (series.length < 2) return;
    document.getElementById('comparison').hidden = false;
    var splits = splitOrder;
    var head = el('tr', null, [el('th', { text: 'candidate' }), el('th', { className: 'num', text: 'score' })]
      .concat(splits.map(function (split) { return el('th', { className: 'num', text: split + ' mean' }); }))
      .concat([el('th', { className: 'num', text: 'results' }), el('th', { className: 'num', text: 'errors' })]));
    var body = el('tbody', null, series.map(function (_, index) {
      var all = stats[index].all;
      return el('tr', null, [el('td', { className: 'cand', text: seriesLabel(index) }),
        el('td', { className: 'num', text: fmt(headline(index).score) })]
        .concat(splits.map(function (split) {
          var a = aggregateOf(index, split);
          return el('td', { className: 'num', text: a ? fmt(a.mean) : '—' });
        }))
        .concat([el('td', { className: 'num', text: String(all.n) }), el('td', { className: 'num', text: String(all.errors) })]));
    }));
    document.getElementById('comparison-table').appendChild(
      el('div', { className: 'table-wrap' }, [el('table', null, [el('thead', null, [head]), body])]));

    var controls = document.getElementById('scatter-controls');
    var pair = scatterDefault();
    var pick = function (id, label, chosen) {
      var select = el('select', { id: id }, series.map(function (_, index) {
        return el('option', { value: String(index), text: seriesLabel(index), selected: index === chosen });
      }));
      select.addEventListener('change', drawScatter);
      controls.appendChild(el('label', null, [label, select]));
      return select;
    };
    pick('scatter-x', 'x axis', pair[0]);
    pick('scatter-y', 'y axis', pair[1]);
    drawScatter();
  }

  // The two series the scatter starts with: with several files, the first candidate that two
  // files share, in the first file against the next file (the same candidate before and after);
  // else the first two series.
  function scatterDefault() {
    for (var x = 0; x < series.length; x++) {
      for (var y = x + 1; y < series.length; y++) {
        if (series[y].source !== series[x].source && series[y].candidate === series[x].candidate) return [x, y];
      }
    }
    return [0, 1];
  }

  // The scatter of two series' per-example scores. Pairs at the same scores are one marker, sized
  // and numbered by how many they are; a pair with a failed call is a red cross in the lane of
  // the axis whose call failed (in the corner when both did), not at the 0 it scores.
  function drawScatter() {
    var xs = Number(document.getElementById('scatter-x').value);
    var ys = Number(document.getElementById('scatter-y').value);
    var byKey = new Map();
    var chosen = function (row) { return row[col.series] === xs || row[col.series] === ys; };
    var occurrence = occurrences(chosen);
    rows.forEach(function (row) {
      if (!chosen(row)) return;
      var s = row[col.series];
      var key = pairKey(row, occurrence);
      if (!byKey.has(key)) {
        byKey.set(key, { split: row[col.label] !== null ? null : row[col.split],
          calls: { x: { scores: [], failed: 0 }, y: { scores: [], failed: 0 } } });
      }
      var point = byKey.get(key);
      var failed = errorKind(row) !== null ? 1 : 0;
      if (s === xs) { point.calls.x.scores.push(scoreOf(row)); point.calls.x.failed += failed; }
      if (s === ys) { point.calls.y.scores.push(scoreOf(row)); point.calls.y.failed += failed; }
    });
    // Each side's calls of the example: the mean of their scores (added in ascending order, as
    // `compare` adds them), failed when every one did (drawn in the failed lane), and whether one
    // did (counted).
    var points = Array.from(byKey.values())
      .filter(function (p) { return p.calls.x.scores.length && p.calls.y.scores.length; });
    points.forEach(function (p) {
      ['x', 'y'].forEach(function (axis) {
        var calls = p.calls[axis];
        var sorted = calls.scores.slice().sort(function (a, b) { return a - b; });
        p[axis] = sorted.reduce(function (sum, score) { return sum + score; }, 0) / sorted.length;
        p[axis + 'Failed'] = calls.failed === sorted.length;
        p[axis + 'AnyFailed'] = calls.failed > 0;
      });
    });
    var groups = new Map();
    points.forEach(function (p) {
      var x = p.xFailed ? 'failed' : String(p.x);
      var y = p.yFailed ? 'failed' : String(p.y);
      var key = x + '|' + y;
      if (!groups.has(key)) groups.set(key, { x: x, y: y, count: 0 });
      groups.get(key).count += 1;
    });
    var markers = Array.from(groups.values());
    var most = Math.max.apply(null, markers.map(function (m) { return m.count; }).concat([1]));
    var radius = function (count) {
      return count === 1 ? 3.5 : 3.5 + 9.5 * Math.sqrt((count - 1) / Math.max(1, most - 1));
    };

    var domain = scoreDomain();
    // The plot's frame, the inset of its scores from the frame (room for the biggest marker) and
    // the centres of the two failed lanes, left of and below the frame.
    var size = 380, left = 84, right = size - 10, top = 10, bottom = size - 84, inset = 16;
    var laneX = 30, laneY = bottom + 44, lane = 26;
    var unit = function (v) { return (v - domain[0]) / (domain[1] - domain[0]); };
    var sx = function (v) { return left + inset + (right - left - 2 * inset) * unit(v); };
    var sy = function (v) { return bottom - inset - (bottom - top - 2 * inset) * unit(v); };
    var chart = svgEl('svg', { width: size, height: size, role: 'img', viewBox: '0 0 ' + size + ' ' + size });
    chart.appendChild(svgEl('title', {}, 'Per-example scores: ' + points.length + ' pairs'));
    chart.appendChild(svgEl('rect', { class: 'bar-track', x: left, y: top, width: right - left, height: bottom - top }));
    chart.appendChild(svgEl('rect', { class: 'failed-lane', x: laneX - lane / 2, y: top, width: lane, height: laneY + lane / 2 - top }));
    chart.appendChild(svgEl('rect', { class: 'failed-lane', x: laneX - lane / 2, y: laneY - lane / 2, width: right - laneX + lane / 2, height: lane }));
    chart.appendChild(svgEl('line', { class: 'diagonal', x1: sx(domain[0]), y1: sy(domain[0]), x2: sx(domain[1]), y2: sy(domain[1]) }));
    [domain[0], (domain[0] + domain[1]) / 2, domain[1]].forEach(function (v) {
      chart.appendChild(svgEl('text', { x: sx(v), y: bottom + 16, 'text-anchor': 'middle' }, fmt(v, 2)));
      chart.appendChild(svgEl('text', { x: left - 6, y: sy(v) + 4, 'text-anchor': 'end' }, fmt(v, 2)));
    });
    chart.appendChild(svgEl('text', { class: 'failed-tick', x: laneX, y: bottom + 16, 'text-anchor': 'middle' }, 'failed'));
    chart.appendChild(svgEl('text', { class: 'failed-tick', x: left - 6, y: laneY + 4, 'text-anchor': 'end' }, 'failed'));
    markers.slice(0, 20000).forEach(function (m) {
      var cx = m.x === 'failed' ? laneX : sx(Number(m.x));
      var cy = m.y === 'failed' ? laneY : sy(Number(m.y));
      var r = radius(m.count);
      var failed = m.x === 'failed' ? (m.y === 'failed' ? 'both' : 'x') : (m.y === 'failed' ? 'y' : '');
      var attrs = { 'data-x': m.x, 'data-y': m.y, 'data-count': m.count, 'data-failed': failed };
      var marker = failed
        ? svgEl('path', Object.assign({ class: 'dot failed', d: 'M' + (cx - r) + ' ' + (cy - r) + 'L' + (cx + r) + ' ' + (cy + r) +
            'M' + (cx - r) + ' ' + (cy + r) + 'L' + (cx + r) + ' ' + (cy - r) }, attrs))
        : svgEl('circle', Object.assign({ class: 'dot', r: r, cx: cx, cy: cy }, attrs));
      var at = function (value) { return value === 'failed' ? 'failed' : fmt(Number(value)); };
      marker.appendChild(svgEl('title', {}, 'x ' + at(m.x) + ', y ' + at(m.y) + ': ' + plural(m.count, 'pair')));
      chart.appendChild(marker);
      if (m.count > 1) {
        chart.appendChild(svgEl('text', { class: 'count', x: cx, y: cy + 4, 'text-anchor': 'middle' }, String(m.count)));
      }
    });
    chart.appendChild(svgEl('text', { x: (left + right) / 2, y: size - 6, 'text-anchor': 'middle' }, 'x: ' + seriesLabel(xs)));
    chart.appendChild(svgEl('text', { x: 10, y: (top + bottom) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 10 ' + (top + bottom) / 2 + ')' }, 'y: ' + seriesLabel(ys)));
    // Counted for each split apart, as `compare` counts them: a train example is never weighed
    // against a val one.
    var splits = [];
    points.forEach(function (p) { if (splits.indexOf(p.split) < 0) splits.push(p.split); });
    var counts = splits.map(function (split) {
      var inSplit = points.filter(function (p) { return p.split === split; });
      return (splits.length > 1 && split !== null ? split + ': ' : '') + pairCounts(inSplit);
    });
    var wrap = clear(document.getElementById('scatter'));
    wrap.appendChild(chart);
    wrap.appendChild(scatterLegend());
    wrap.appendChild(el('p', { id: 'scatter-counts', className: 'muted', text: counts.join('; ') }));
  }

  // `4 paired examples: y higher in 1, x higher in 2, tied in 1` (and how many pairs have a
  // failed call), ties within float rounding.
  function pairCounts(points) {
    var yHigher = points.filter(function (p) { return higher(p.y, p.x); }).length;
    var xHigher = points.filter(function (p) { return higher(p.x, p.y); }).length;
    var failedPairs = points.filter(function (p) { return p.xAnyFailed || p.yAnyFailed; }).length;
    return plural(points.length, 'paired example') + ': y higher in ' + yHigher + ', x higher in ' + xHigher +
      ', tied in ' + (points.length - yHigher - xHigher) +
      (failedPairs ? ', ' + plural(failedPairs, 'pair') + ' with a failed call (scored 0)' : '');
  }

  function scatterLegend() {
    var swatch = function (shape) {
      var icon = svgEl('svg', { width: 14, height: 14, viewBox: '0 0 14 14', 'aria-hidden': 'true' });
      icon.appendChild(shape);
      return icon;
    };
    return el('ul', { id: 'scatter-legend', className: 'legend' }, [
      el('li', null, [swatch(svgEl('circle', { class: 'dot', cx: 7, cy: 7, r: 4 })),
        'a scored pair; pairs with the same two scores are one dot, bigger and numbered with how many they are']),
      el('li', null, [swatch(svgEl('path', { class: 'dot failed', d: 'M3 3L11 11M3 11L11 3' })),
        'a pair with a failed call (it scores 0 in every aggregate): drawn in the red “failed” lane of the axis ' +
        'whose call failed, in the corner when both did']),
    ]);
  }

  // ---- errors -----------------------------------------------------------------------------

  function drawErrors() {
    var groups = new Map();
    var order = [];
    rows.forEach(function (row, index) {
      var kind = errorKind(row);
      if (kind === null) return;
      if (!groups.has(kind)) { groups.set(kind, { count: 0, first: [] }); order.push(kind); }
      var group = groups.get(kind);
      group.count += 1;
      if (group.first.length < 3) group.first.push(index);
    });
    var wrap = document.getElementById('error-groups');
    if (!order.length) {
      wrap.appendChild(el('p', { className: 'muted', text: 'No failed results.' }));
      return;
    }
    order.sort(function (a, b) { return groups.get(b).count - groups.get(a).count; });
    var body = el('tbody', null, order.map(function (kind) {
      var group = groups.get(kind);
      return el('tr', { data: { kind: kind, count: String(group.count) } }, [
        el('td', { className: 'error-kind', text: kind }),
        el('td', { className: 'num', text: String(group.count) }),
        el('td', null, group.first.map(function (index) {
          var row = rows[index];
          return el('div', { text: rowLabel(row) + ': ' + (row[col.error_message] || '') });
        })),
      ]);
    }));
    var head = el('tr', null, [el('th', { text: 'kind' }), el('th', { className: 'num', text: 'count' }), el('th', { text: 'first messages' })]);
    wrap.appendChild(el('div', { className: 'table-wrap' }, [el('table', { id: 'error-table' }, [el('thead', null, [head]), body])]));
  }

  function exampleText(row) {
    if (row[col.label] !== null) return row[col.label];
    if (row[col.example_index] === null) return '—';
    var line = row[col.example_line] === null ? '' : ' (line ' + row[col.example_line] + ')';
    var repeat = row[col.repeat] === null ? '' : ' r' + row[col.repeat];
    var example = row[col.example_id] === null ? '#' + row[col.example_index] : row[col.example_id];
    return example + line + repeat;
  }

  function rowLabel(row) {
    return seriesLabel(row[col.series]) + ' ' + row[col.split] + ' ' + exampleText(row);
  }

  // ---- the table of every result ----------------------------------------------------------

  var view = { sortKey: null, sortDir: 1, page: 0, pageSize: 100, matching: [], open: new Set() };
  var searchText = null; // lower-cased text of each row, made on the first search

  var columns = [
    { key: 'index', label: '#', num: true, value: function (row, i) { return i; } },
    { key: 'candidate', label: 'candidate', value: function (row) { return seriesLabel(row[col.series]); } },
    { key: 'split', label: 'split', value: function (row) { return row[col.split]; } },
    { key: 'example', label: 'example', value: function (row) {
      return row[col.label] !== null ? row[col.label] : (row[col.example_index] === null ? -1 : row[col.example_index]);
    } },
    { key: 'score', label: 'score', num: true, value: function (row) { return row[col.score] === null ? -Infinity : row[col.score]; } },
    { key: 'error', label: 'error', value: function (row) { return errorKind(row) || ''; } },
    { key: 'latency', label: 'latency', num: true, value: function (row) { return row[col.latency_ms] === null ? -1 : row[col.latency_ms]; } },
    { key: 'details', label: 'side info' },
  ];

  function distinct(values) {
    return Array.from(new Set(values));
  }

  function drawFilters() {
    var filters = document.getElementById('filters');
    var option = function (value, text) { return el('option', { value: value, text: text }); };
    var candidate = el('select', { id: 'filter-candidate' }, [option('', 'all candidates')]
      .concat(series.map(function (_, index) { return option(String(index), seriesLabel(index)); })));
    var split = el('select', { id: 'filter-split' }, [option('', 'all splits')]
      .concat(splitOrder.map(function (name) { return option(name, name); })));
    var kinds = distinct(rows.map(errorKind).filter(function (kind) { return kind !== null; })).sort();
    var error = el('select', { id: 'filter-error' }, [option('', 'all results'), option('none', 'succeeded only'),
      option('any', 'failed only')].concat(kinds.map(function (kind) { return option('kind:' + kind, kind); })));
    var min = el('input', { id: 'filter-min', type: 'number', step: 'any', placeholder: 'min' });
    var max = el('input', { id: 'filter-max', type: 'number', step: 'any', placeholder: 'max' });
    var text = el('input', { id: 'filter-text', type: 'search', placeholder: 'text in side info, messages…' });
    var pageSize = el('select', { id: 'page-size' }, [50, 100, 500].map(function (n) {
      return el('option', { value: String(n), text: n + ' a page', selected: n === view.pageSize });
    }));
    [candidate, split, error, min, max, text, pageSize].forEach(function (control) {
      control.addEventListener(control.tagName === 'SELECT' ? 'change' : 'input', applyFilters);
    });
    filters.appendChild(el('label', null, ['candidate', candidate]));
    filters.appendChild(el('label', null, ['split', split]));
    filters.appendChild(el('label', null, ['error', error]));
    filters.appendChild(el('label', null, ['score ≥', min]));
    filters.appendChild(el('label', null, ['score ≤', max]));
    filters.appendChild(el('label', null, ['search', text]));
    filters.appendChild(el('label', null, ['rows', pageSize]));

    var head = document.querySelector('#rows thead');
    head.appendChild(el('tr', null, columns.map(function (column) {
      var th = el('th', { className: column.num ? 'num' : '', text: column.label });
      if (column.value) {
        th.dataset.key = column.key;
        th.addEventListener('click', function () {
          view.sortDir = view.sortKey === column.key ? -view.sortDir : (column.num ? -1 : 1);
          view.sortKey = column.key;
          head.querySelectorAll('th').forEach(function (other) { other.removeAttribute('aria-sort'); });
          th.setAttribute('aria-sort', view.sortDir > 0 ? 'ascending' : 'descending');
          sortMatching();
          view.page = 0;
          drawPage();
        });
      }
      return th;
    })));
  }

  function rowSearchText(index) {
    if (!searchText) {
      searchText = rows.map(function (row) {
        return [seriesLabel(row[col.series]), row[col.label] || '', row[col.error_kind] || '',
          row[col.error_message] || '', JSON.stringify(row[col.side_info])].join('\n').toLowerCase();
      });
    }
    return searchText[index];
  }

  function applyFilters() {
    var candidate = document.getElementById('filter-candidate').value;
    var split = document.getElementById('filter-split').value;
    var error = document.getElementById('filter-error').value;
    var minText = document.getElementById('filter-min').value;
    var maxText = document.getElementById('filter-max').value;
    var text = document.getElementById('filter-text').value.trim().toLowerCase();
    var min = minText === '' ? -Infinity : Number(minText);
    var max = maxText === '' ? Infinity : Number(maxText);
    view.pageSize = Number(document.getElementById('page-size').value);
    view.matching = [];
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      if (candidate !== '' && row[col.series] !== Number(candidate)) continue;
      if (split !== '' && row[col.split] !== split) continue;
      var kind = errorKind(row);
      if (error === 'none' && kind !== null) continue;
      if (error === 'any' && kind === null) continue;
      if (error.indexOf('kind:') === 0 && kind !== error.slice(5)) continue;
      var score = scoreOf(row);
      if (score < min || score > max) continue;
      if (text && rowSearchText(i).indexOf(text) < 0) continue;
      view.matching.push(i);
    }
    sortMatching();
    view.page = 0;
    drawPage();
  }

  function sortMatching() {
    if (!view.sortKey) return;
    var column = columns.filter(function (c) { return c.key === view.sortKey; })[0];
    var keys = new Map();
    view.matching.forEach(function (i) { keys.set(i, column.value(rows[i], i)); });
    view.matching.sort(function (a, b) {
      var ka = keys.get(a), kb = keys.get(b);
      var order = ka < kb ? -1 : ka > kb ? 1 : 0;
      return order * view.sortDir || a - b;
    });
  }

  function preview(sideInfo) {
    var keys = Object.keys(sideInfo || {});
    if (!keys.length) return '';
    var text = JSON.stringify(sideInfo);
    return text.length > 160 ? text.slice(0, 160) + '…' : text;
  }

  function drawPage() {
    var body = clear(document.querySelector('#rows tbody'));
    var total = view.matching.length;
    var pages = Math.max(1, Math.ceil(total / view.pageSize));
    view.page = Math.min(view.page, pages - 1);
    var start = view.page * view.pageSize;
    var shown = view.matching.slice(start, start + view.pageSize);
    var fragment = document.createDocumentFragment();
    shown.forEach(function (index) {
      var row = rows[index];
      var failed = errorKind(row) !== null;
      var tr = el('tr', { className: 'row' + (failed ? ' failed' : ''), data: { index: String(index) } }, [
        el('td', { className: 'num', text: String(index + 1) }),
        el('td', { className: 'cand', text: seriesLabel(row[col.series]), title: seriesLabel(row[col.series]) }),
        el('td', { text: row[col.split] }),
        el('td', { text: exampleText(row) }),
        el('td', { className: 'num score', text: row[col.score] === null ? '—' : fmt(row[col.score]) }),
        el('td', null, failed ? [el('span', { className: 'pill', text: errorKind(row) })] : []),
        el('td', { className: 'num', text: row[col.latency_ms] === null ? '—' : fmtMs(row[col.latency_ms]) }),
        el('td', { className: 'preview', text: failed ? row[col.error_message] || '' : preview(row[col.side_info]) }),
      ]);
      tr.addEventListener('click', function () {
        if (view.open.has(index)) view.open.delete(index); else view.open.add(index);
        drawPage();
      });
      fragment.appendChild(tr);
      if (view.open.has(index)) fragment.appendChild(detailRow(row));
    });
    body.appendChild(fragment);
    var count = document.getElementById('row-count');
    count.dataset.matching = String(total);
    count.dataset.total = String(rows.length);
    count.textContent = total === rows.length ? plural(total, 'result')
      : total + ' of ' + plural(rows.length, 'result') + ' match the filters';
    drawPager(pages);
  }

  function drawPager(pages) {
    var pager = clear(document.getElementById('pager'));
    var go = function (page) { view.page = page; drawPage(); };
    var button = function (id, text, page, disabled) {
      var b = el('button', { id: id, type: 'button', text: text, disabled: disabled });
      b.addEventListener('click', function () { go(page); });
      return b;
    };
    pager.appendChild(button('page-first', '« first', 0, view.page === 0));
    pager.appendChild(button('page-prev', '‹ previous', view.page - 1, view.page === 0));
    pager.appendChild(el('span', { id: 'page-of', text: 'page ' + (view.page + 1) + ' of ' + pages }));
    pager.appendChild(button('page-next', 'next ›', view.page + 1, view.page >= pages - 1));
    pager.appendChild(button('page-last', 'last »', pages - 1, view.page >= pages - 1));
  }

  function block(title, content) {
    return el('div', null, [el('h4', { text: title }), el('pre', { text: content })]);
  }

  function pretty(value) {
    return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  }

  function detailRow(row) {
    var item = series[row[col.series]];
    var source = sources[item.source];
    var parts = [];
    if (errorKind(row) !== null) parts.push(block('error: ' + errorKind(row), row[col.error_message] || ''));
    var examples = own(source.examples, row[col.split]);
    if (examples && row[col.example_index] !== null && examples[row[col.example_index]] !== undefined) {
      parts.push(block('example record', pretty(examples[row[col.example_index]])));
    }
    if (item.text !== null) parts.push(block('candidate ' + item.candidate, item.text));
    var side = row[col.side_info] || {};
    Object.keys(side).forEach(function (key) { parts.push(block(key, pretty(side[key]))); });
    var facts = [];
    if (row[col.attempts] !== null) facts.push('attempts ' + row[col.attempts]);
    if (row[col.passed] !== null) facts.push(row[col.passed] ? 'passed' : 'not passed');
    if (row[col.repeat] !== null) facts.push('repeat ' + row[col.repeat]);
    if (row[col.cached]) facts.push('from the cache');
    if (row[col.example_line] !== null) facts.push('line ' + row[col.example_line]);
    if (facts.length) parts.push(block('call', facts.join(' · ')));
    var td = el('td', { colSpan: columns.length }, [el('div', { className: 'detail-grid' }, parts)]);
    return el('tr', { className: 'detail' }, [td]);
  }

  // ---- draw everything --------------------------------------------------------------------

  drawSummary();
  drawCandidates();
  drawComparison();
  drawErrors();
  drawFilters();
  applyFilters();
  document.body.dataset.renderMs = String(Math.round(performance.now() - started));
  document.body.dataset.ready = 'true';
})();
