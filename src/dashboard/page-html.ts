import type { DashboardAssets } from './dashboard-assets';

/**
 * The dashboard's HTML: static markup the page script fills in. No inline script or style
 * (the Content-Security-Policy forbids both); the base path and whether keys are needed reach
 * the script as data attributes, so the same build serves under any `basePath`.
 */
export function pageHtml(basePath: string, assets: DashboardAssets, auth: boolean): string {
  const base = escapeHtml(basePath);
  const href = (name: string) => `${base}/dashboard/assets/${escapeHtml(name)}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>log-endpoints dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${href(assets.css.name)}" integrity="${assets.css.integrity}">
<script defer src="${href(assets.js.name)}" integrity="${assets.js.integrity}"></script>
</head>
<body data-base="${base}" data-auth="${auth ? 'key' : 'none'}">
<header class="bar">
  <h1>log-endpoints</h1>
  <label>Project <select id="project" disabled></select></label>
  <label>Function <select id="function" disabled></select></label>
  <label>Range <select id="range" disabled></select></label>
  <label>Refresh <select id="refresh">
    <option value="0">off</option>
    <option value="15">every 15 s</option>
    <option value="30" selected>every 30 s</option>
    <option value="60">every minute</option>
    <option value="300">every 5 min</option>
  </select></label>
  <button id="refresh-now" type="button" disabled>Refresh now</button>
  <button id="change-key" type="button">Change key</button>
</header>
<p id="notice" class="notice" role="status">Loading the dashboard…</p>
<form id="key-form" class="key-form" hidden>
  <h2>API key</h2>
  <p id="key-message" class="key-message"></p>
  <p class="hint">Every data request needs a key of this server (sent as <code>X-API-KEY</code>). It is kept in this tab only (<code>sessionStorage</code>).</p>
  <label>Key <input id="key" name="key" type="password" autocomplete="off" spellcheck="false" required></label>
  <button type="submit">Open the dashboard</button>
</form>
<main id="panels" hidden>
  <section class="panel" id="stats-panel" data-state="idle">
    <header><h2>Edge-function invocations</h2></header>
    <p class="totals" data-role="totals"></p>
    <p class="cache-state" data-role="cache-state"></p>
    <p class="error" data-role="error" role="alert" hidden></p>
    <figure class="chart" data-chart="latency"><figcaption>Execution time (ms, logarithmic): average, p95, p99</figcaption></figure>
    <figure class="chart" data-chart="counts"><figcaption>Invocations and errors (status 400 and above)</figcaption></figure>
  </section>
  <section class="panel" id="usage-panel" data-state="idle">
    <header><h2>API requests</h2></header>
    <p class="totals" data-role="totals"></p>
    <p class="cache-state" data-role="cache-state"></p>
    <p class="error" data-role="error" role="alert" hidden></p>
    <figure class="chart" data-chart="requests"><figcaption>Requests per bucket by product: REST, storage, auth, realtime (stacked). The rows hold no status: the error rate is in Recent requests.</figcaption></figure>
  </section>
  <section class="panel wide" id="logs-panel" data-state="idle">
    <header>
      <h2>Recent requests</h2>
      <label>Tier <select data-param="project_tier"></select></label>
      <label>After <input data-param="iso_timestamp_start" placeholder="start of the range" spellcheck="false"></label>
      <label>Until <input data-param="iso_timestamp_end" placeholder="(now)" spellcheck="false"></label>
      <button type="button" data-role="apply">Apply</button>
      <button type="button" data-role="clear" hidden>Back to the range</button>
    </header>
    <p class="totals" data-role="totals"></p>
    <p class="cache-state" data-role="cache-state"></p>
    <p class="bucket" data-role="bucket" hidden></p>
    <form class="sql-form" data-role="sql-form" hidden>
      <label for="logs-sql">Your SELECT over this endpoint's rows (the project, tier and time bounds above still apply)</label>
      <textarea id="logs-sql" rows="3" spellcheck="false" placeholder="select count(*) as requests from edge_logs"></textarea>
      <button type="submit">Run</button>
      <button type="button" data-role="sql-clear" hidden>Back to the entries</button>
    </form>
    <p class="error" data-role="error" role="alert" hidden></p>
    <div class="table-scroll">
      <table data-role="entries">
        <thead><tr><th>Time (UTC)</th><th>Status</th><th>Message</th></tr></thead>
        <tbody></tbody>
      </table>
    </div>
    <div class="table-scroll" hidden>
      <table data-role="sql-rows"><tbody></tbody></table>
    </div>
  </section>
</main>
<noscript><p class="notice">This dashboard needs JavaScript.</p></noscript>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
