// Cairn fleet overview: draws the last hour's per-minute series with uPlot (served by the producer).
// The numbers are in the page already (the series in data-series, the busy minutes in a table);
// without JavaScript the table is what shows them.
/* global document, uPlot, ResizeObserver */
(() => {
  'use strict';

  const root = document.getElementById('overview-chart');
  if (!root || typeof uPlot !== 'function') return;
  const { minutes } = JSON.parse(root.dataset.series);
  const column = (key) => minutes.map((m) => m[key]);
  const data = [
    minutes.map((m) => Date.parse(m.at) / 1000),
    column('created'),
    column('completed'),
    column('error'),
    column('recovered'),
  ];
  const line = (label, stroke) => ({ label, stroke, width: 2, points: { size: 4 } });
  const width = () => Math.max(320, root.clientWidth);
  const plot = new uPlot(
    {
      width: width(),
      height: 200,
      // UTC, as the table and the rest of the pages show times.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      series: [
        {},
        line('created', '#2563eb'),
        line('completed', '#16a34a'),
        line('error', '#dc2626'),
        line('recovered', '#d97706'),
      ],
      axes: [
        { label: 'UTC' },
        { label: 'runs per minute', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] },
      ],
    },
    data,
    root,
  );
  root.dataset.drawn = '1';
  // The table's numbers are drawn now: fold it away (it stays a click away).
  const table = document.getElementById('overview-minutes');
  if (table) table.open = false;
  if (typeof ResizeObserver === 'function') {
    new ResizeObserver(() => plot.setSize({ width: width(), height: 200 })).observe(root);
  }
})();
