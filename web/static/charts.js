// Small canvas line charts for the operator page (no dependencies).
"use strict";

/** Draws series of values in [0, 1] against episode index: [{ values, color, label }]. */
function drawChart(canvas, series) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || canvas.width;
  const h = canvas.clientHeight || canvas.height;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  const g = canvas.getContext("2d");
  g.scale(dpr, dpr);
  g.clearRect(0, 0, w, h);
  const pad = 22;
  g.strokeStyle = "#2a323c";
  g.fillStyle = "#8a97a6";
  g.font = "10px system-ui";
  for (const y of [0, 0.5, 1]) {
    const py = h - pad / 2 - y * (h - pad);
    g.beginPath();
    g.moveTo(pad, py);
    g.lineTo(w - 4, py);
    g.stroke();
    g.fillText(`${Math.round(y * 100)}%`, 0, py + 3);
  }
  const n = Math.max(...series.map((s) => s.values.length), 0);
  if (n === 0) {
    g.fillText("no finished episodes yet", pad + 6, h / 2);
    return;
  }
  for (const s of series) {
    g.strokeStyle = s.color;
    g.lineWidth = 2;
    g.beginPath();
    s.values.forEach((v, i) => {
      const px = pad + (n === 1 ? 0.5 : i / (n - 1)) * (w - pad - 6);
      const py = h - pad / 2 - Math.max(0, Math.min(1, v)) * (h - pad);
      if (i === 0) g.moveTo(px, py);
      else g.lineTo(px, py);
      if (n === 1) g.arc(px, py, 2, 0, 2 * Math.PI);
    });
    g.stroke();
  }
}

/** Rolling mean of the last `w` values at each index. */
function rolling(values, w) {
  return values.map((_, i) => {
    const s = values.slice(Math.max(0, i - w + 1), i + 1);
    return s.reduce((a, b) => a + b, 0) / s.length;
  });
}

window.rlftCharts = { drawChart, rolling };
