// The nbspamd console: one page over the daemon's own HTTP API (docs/CONSOLE.md).
// Every value from mail reaches the page through textContent or an SVG attribute, never as
// markup; the Content-Security-Policy allows no inline script, so nothing from mail can run.
'use strict';

const TOKEN_KEY = 'nbspamd.token';
const pages = ['status', 'history', 'scan', 'check', 'model'];
let refreshTimer = null;
let historyCursors = [];  // The `before` of each page shown, for "Newest".
let checkScanId = null;
let checkMessage = null;

// ---- small helpers --------------------------------------------------------------------------

function $(id) { return document.getElementById(id); }

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === 'class') node.className = value; else node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attributes) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  return node;
}

function number(value, digits) {
  if (value === null || value === undefined) return '–';
  if (digits !== undefined) return Number(value).toFixed(digits);
  return Number(value).toLocaleString('en');
}

function time(ms) {
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
         `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function badge(verdict) { return el('span', {class: `badge ${verdict}`}, verdict); }

function notice(text, kind) {
  const box = $('notice');
  box.textContent = text;
  box.className = `notice ${kind || 'error'}`;
  box.hidden = !text;
}

// ---- the API ---------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// Calls the daemon; resolves to the parsed JSON (or text), rejects with an ApiError. A 401 or 403
// opens the token panel.
async function api(method, path, body, contentType) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  if (contentType) headers['Content-Type'] = contentType;
  const response = await fetch(path, {method, headers, body, credentials: 'omit', cache: 'no-store'});
  const type = response.headers.get('Content-Type') || '';
  const payload = type.startsWith('application/json') ? await response.json() : await response.text();
  if (!response.ok) {
    const error = payload && payload.error ? payload.error : {code: String(response.status), message: String(payload)};
    if (response.status === 401 || response.status === 403) {  // No token, or a wrong one.
      askForToken(error.message);
      throw new ApiError(response.status, error.code, `${error.message}: enter a token above`);
    }
    throw new ApiError(response.status, error.code, error.message);
  }
  return payload;
}

function askForToken(reason) {
  $('token-reason').textContent = reason ? `The daemon says: ${reason}` :
      'This daemon asks for a bearer token (setting auth_tokens).';
  $('token-panel').hidden = false;
  $('token-input').focus();
}

// ---- routing ----------------------------------------------------------------------------------

function route() {
  const hash = location.hash.replace(/^#/, '') || 'status';
  const [page, argument] = hash.split('/', 2);
  const shown = pages.includes(page) ? page : 'status';
  for (const name of pages) $(`page-${name}`).hidden = name !== shown;
  for (const link of document.querySelectorAll('nav a')) {
    link.classList.toggle('active', link.dataset.page === (shown === 'scan' ? 'history' : shown));
  }
  clearInterval(refreshTimer);
  refreshTimer = null;
  notice('');
  const show = {
    status: () => { showStatus(); refreshTimer = setInterval(showStatus, 10000); },
    history: () => showHistory(historyCursors[historyCursors.length - 1] || ''),
    scan: () => showScan(decodeURIComponent(argument || '')),
    check: () => {},
    model: showModel,
  }[shown];
  Promise.resolve(show()).catch((error) => notice(error.message));
}

// ---- Status -----------------------------------------------------------------------------------

function card(title, value, detail) {
  return el('div', {class: 'card'}, el('div', {class: 'card-title'}, title),
            el('div', {class: 'card-value'}, value), detail ? el('div', {class: 'card-detail'}, detail) : null);
}

// The verdict thresholds in force, ham / spam, and where they come from (/stats verdict_thresholds).
function thresholdsCard(stats) {
  const t = stats.verdict_thresholds;
  const round = (x) => String(Number(x.toFixed(3)));
  const feedback = t.feedback;
  const of = (n) => `${number(n)} of ${number(feedback.window)}`;
  const gathered = `held-out scores: ${of(feedback.hams)} hams, ${of(feedback.spams)} spams`;
  const detail = t.mode === 'feedback'
    ? `from feedback (${gathered}); set: ${round(stats.ham_threshold)} / ${round(stats.spam_threshold)}`
    : `fixed; feedback would give ${round(feedback.ham)} / ${round(feedback.spam)} (${gathered})`;
  const node = card('thresholds, ham / spam', `${round(t.ham)} / ${round(t.spam)}`, detail);
  node.id = 'thresholds-card';
  return node;
}

// /readyz is open (health probes call it): 200 ready, or 503 with the reasons.
async function showReadiness() {
  const response = await fetch('/readyz', {cache: 'no-store', credentials: 'omit'});
  const body = await response.json();
  const reasons = response.ok ? [] : (body.degraded || [body.status]);
  $('ready-badge').textContent = reasons.length ? 'degraded' : 'ready';
  $('ready-badge').className = `badge ${reasons.length ? 'spam' : 'ham'}`;
  $('readiness').replaceChildren(...(reasons.length ? reasons.map((r) => el('li', {class: 'bad'}, r))
                                                    : [el('li', {class: 'good'}, 'ready: classifying and training')]));
}

async function showStatus() {
  const [stats, activity] = await Promise.all([api('GET', '/stats'), api('GET', '/activity')]);
  await showReadiness();
  const cls = Object.fromEntries(stats.classes.map((c) => [c.label, c]));
  const minutes = activity.minutes;
  const sum = (key) => minutes.reduce((total, m) => total + m[key], 0);
  const classified = sum('spam') + sum('ham') + sum('unsure') + sum('unscored');
  const cards = [
    card('spam documents', number(cls.spam ? cls.spam.documents : 0), `${number(cls.spam ? cls.spam.tokens : 0)} tokens`),
    card('ham documents', number(cls.ham ? cls.ham.documents : 0), `${number(cls.ham ? cls.ham.tokens : 0)} tokens`),
    card('vocabulary', number(stats.vocabulary), `α = ${stats.alpha}`),
    card('classified, last hour', number(classified),
         `${number(sum('spam'))} spam · ${number(sum('unsure'))} unsure · ${number(sum('ham'))} ham`),
    card('trained, last hour', number(sum('trained')), `${number(sum('train_failed'))} failed`),
    thresholdsCard(stats),
  ];
  $('status-cards').replaceChildren(...cards);
  $('status-cards').dataset.documents = String(stats.documents);
  barChart($('chart-classify'), minutes, [['spam', 'spam'], ['unsure', 'unsure'], ['ham', 'ham']]);
  lineChart($('chart-latency'), minutes, [['classify_p50_ms', 'p50'], ['classify_p99_ms', 'p99']]);
  barChart($('chart-train'), minutes, [['trained', 'trained'], ['train_failed', 'spam']]);
  const cluster = activity.cluster;
  $('cluster-title').hidden = $('cluster-table').hidden = !cluster;
  if (cluster) {
    $('cluster-table').tBodies[0].replaceChildren(...cluster.daemons.map((d) =>
      el('tr', {}, el('td', {}, d.name), el('td', {}, d.position), el('td', {}, number(d.lag_seconds, 1)),
         el('td', {}, number(d.seen_seconds_ago, 1)))));
  }
}

// Stacked bars, one per minute; `series` are [field, css class].
function barChart(node, minutes, series) {
  const width = 600, height = 160, left = 36, bottom = 18;
  const totals = minutes.map((m) => series.reduce((t, [key]) => t + m[key], 0));
  const top = Math.max(1, ...totals);
  const step = (width - left) / minutes.length;
  const scale = (height - bottom - 6) / top;
  const children = axes(width, height, left, bottom, top, minutes);
  minutes.forEach((m, i) => {
    let y = height - bottom;
    for (const [key, cls] of series) {
      const h = m[key] * scale;
      if (h <= 0) continue;
      y -= h;
      const rect = svg('rect', {x: left + i * step + 1, y, width: Math.max(1, step - 2), height: h, class: `bar ${cls}`});
      rect.append(svg('title', {}));
      rect.lastChild.textContent = `${time(m.start_ms)}: ${m[key]} ${key}`;
      children.push(rect);
    }
  });
  node.replaceChildren(...children);
}

function lineChart(node, minutes, series) {
  const width = 600, height = 160, left = 36, bottom = 18;
  const top = Math.max(1, ...minutes.flatMap((m) => series.map(([key]) => m[key])));
  const step = (width - left) / minutes.length;
  const scale = (height - bottom - 6) / top;
  const children = axes(width, height, left, bottom, top, minutes);
  for (const [key, cls] of series) {
    const points = minutes.map((m, i) => `${left + (i + 0.5) * step},${height - bottom - m[key] * scale}`);
    children.push(svg('polyline', {points: points.join(' '), class: `line ${cls}`}));
  }
  node.replaceChildren(...children);
}

function axes(width, height, left, bottom, top, minutes) {
  const label = (x, y, text, anchor) => {
    const t = svg('text', {x, y, 'text-anchor': anchor || 'end', class: 'axis-label'});
    t.textContent = text;
    return t;
  };
  return [
    svg('line', {x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: 'axis'}),
    svg('line', {x1: left, y1: 4, x2: left, y2: height - bottom, class: 'axis'}),
    label(left - 4, 12, Number.isInteger(top) ? String(top) : top.toFixed(2)),
    label(left - 4, height - bottom, '0'),
    label(left, height - 4, minutes.length ? time(minutes[0].start_ms).slice(11, 16) : '', 'start'),
    label(width, height - 4, minutes.length ? time(minutes[minutes.length - 1].start_ms).slice(11, 16) : ''),
  ];
}

// ---- History ----------------------------------------------------------------------------------

function historyQuery(before) {
  const form = new FormData($('history-filters'));
  const params = new URLSearchParams();
  for (const [name, value] of form) if (value) params.set(name, value);
  if (before) params.set('before', before);
  return params;
}

async function showHistory(before) {
  const page = await api('GET', `/history?${historyQuery(before)}`);
  const rows = page.scans.map((scan) => {
    const row = el('tr', {'data-scan': scan.scan_id},
      el('td', {}, time(scan.time_ms)), el('td', {}, badge(scan.verdict)),
      el('td', {class: 'num'}, number(scan.score, 3)), el('td', {class: 'num'}, number(scan.spam_confidence, 2)),
      el('td', {}, scan.front_end), el('td', {}, scan.user || ''),
      el('td', {}, scan.facts.from_domain || ''), el('td', {class: 'subject'}, scan.facts.subject || ''),
      el('td', {class: 'key'}, scan.facts.message_id || scan.message_key),
      el('td', {class: 'num'}, number(scan.size)));
    row.addEventListener('click', () => { location.hash = `#scan/${encodeURIComponent(scan.scan_id)}`; });
    return row;
  });
  $('history-table').tBodies[0].replaceChildren(...rows);
  $('history-older').disabled = !page.next;
  $('history-older').dataset.next = page.next || '';
  $('history-count').textContent = `${rows.length} scans${before ? ' (older page)' : ''}`;
}

// ---- One scan -----------------------------------------------------------------------------------

function facts(node, pairs) {
  node.replaceChildren(...pairs.flatMap(([name, value]) =>
    [el('dt', {}, name), el('dd', {}, value instanceof Node ? value : (value === null || value === undefined ? '–' : String(value)))]));
}

function explainRows(tbody, tokens) {
  const top = Math.max(1e-9, ...tokens.map((t) => Math.abs(t.weight)));
  tbody.replaceChildren(...tokens.map((t) => {
    // The weight as a bar: red pushes to spam, green to ham.
    const bar = svg('svg', {viewBox: '0 0 140 10', width: '140', height: '10', class: 'weight'});
    bar.append(svg('rect', {x: 0, y: 0, width: 140 * Math.abs(t.weight) / top, height: 10,
                            class: `bar ${t.weight > 0 ? 'spam' : 'ham'}`}));
    return el('tr', {}, el('td', {class: 'token'}, t.token), el('td', {}, t.source), el('td', {class: 'num'}, t.count),
              el('td', {class: 'num'}, number(t.weight, 3)), el('td', {}, bar));
  }));
}

async function showScan(id) {
  $('scan-id').textContent = id;
  $('scan-result').textContent = '';
  const scan = await api('GET', `/history/${encodeURIComponent(id)}`);
  facts($('scan-summary'), [
    ['time', time(scan.time_ms)], ['verdict', badge(scan.verdict)], ['score', number(scan.score, 4)],
    ['spam_confidence', number(scan.spam_confidence, 3)], ['front end', scan.front_end], ['user', scan.user || '(global)'],
    ['Message-ID', scan.facts.message_id], ['From domain', scan.facts.from_domain], ['Subject', scan.facts.subject],
    ['client', scan.facts.client], ['recipients', scan.facts.recipients], ['message key', scan.message_key],
    ['size', `${number(scan.size)} bytes, ${number(scan.tokens)} tokens`],
  ]);
  explainRows($('scan-explain').tBodies[0], scan.explain);
}

async function learn(action, scanId, message, resultNode) {
  resultNode.textContent = '…';
  resultNode.className = 'result';
  try {
    let answer;
    if (scanId) {
      const id = encodeURIComponent(scanId);
      answer = action === 'forget' ? await api('POST', `/forget?scan_id=${id}`, '')
                                   : await api('POST', `/train?scan_id=${id}&label=${action}`, '');
    } else {
      answer = action === 'forget' ? await api('POST', '/forget', message, 'message/rfc822')
                                   : await api('POST', `/train?label=${action}`, message, 'message/rfc822');
    }
    const stats = await api('GET', '/stats');
    const counts = stats.classes.map((c) => `${c.label} ${number(c.documents)}`).join(', ');
    resultNode.textContent = `${answer.status}${answer.label ? ` as ${answer.label}` : ''}: the model now holds ${counts} documents`;
    resultNode.className = 'result ok';
  } catch (error) {
    resultNode.textContent = `${error.code || 'error'}: ${error.message}`;
    resultNode.className = 'result bad';
  }
}

// ---- Check a message ------------------------------------------------------------------------------

async function check(event) {
  event.preventDefault();
  const file = $('check-file').files[0];
  const message = file ? await file.text() : $('check-text').value;
  if (!message.trim()) { notice('Paste a message or choose a file first.'); return; }
  notice('');
  const result = await api('POST', '/classify?explain=20', message, 'message/rfc822');
  checkScanId = result.scan_id || null;
  checkMessage = message;
  $('check-result').hidden = false;
  $('check-verdict').replaceChildren('Verdict: ', badge(result.verdict));
  facts($('check-summary'), [
    ['score', number(result.score, 4)], ['spam_confidence', number(result.spam_confidence, 3)],
    ['P(spam)', number(result.probability, 6)], ['tokens', `${result.tokens} (${result.known_tokens} known, ${result.scored_tokens} scored)`],
    ['scan', checkScanId ? el('a', {href: `#scan/${encodeURIComponent(checkScanId)}`}, checkScanId) : '(history off)'],
  ]);
  $('check-learned').textContent = '';
  explainRows($('check-explain').tBodies[0], result.explain || []);
}

// ---- Model ------------------------------------------------------------------------------------

async function showModel() {
  const [calibration, metrics] = await Promise.all([api('GET', '/calibration'), api('GET', '/metrics')]);
  calibrationChart($('chart-calibration'), calibration);
  $('calibration-note').textContent = calibration.ready
    ? `Fitted from ${number(calibration.spam)} spam and ${number(calibration.ham)} ham held-out scores.`
    : `Not fitted yet: ${number(calibration.spam)} spam and ${number(calibration.ham)} ham held-out scores (20 of each are needed).`;
  const bySource = {};
  for (const line of String(metrics).split('\n')) {
    const match = /^nbspamd_training_total\{source="((?:[^"\\]|\\.)*)",outcome="(\w+)"\} (\d+)/.exec(line);
    if (!match) continue;
    const source = match[1].replace(/\\(.)/g, '$1');
    (bySource[source] = bySource[source] || {})[match[2]] = Number(match[3]);
  }
  const outcomes = ['learned', 'relearned', 'unchanged', 'checked', 'forgotten', 'failed'];
  $('sources-table').tBodies[0].replaceChildren(...Object.entries(bySource).map(([source, counts]) =>
    el('tr', {}, el('td', {}, source || '(no token)'), ...outcomes.map((o) => el('td', {class: 'num'}, number(counts[o] || 0))))));
  $('user-result').textContent = '';
  await showUsers('');
}

function calibrationChart(node, calibration) {
  const width = 600, height = 200, left = 36, middle = 100;
  const bins = calibration.bins;
  const top = Math.max(1, ...bins.map((b) => Math.max(b.spam, b.ham)));
  const step = (width - left) / bins.length;
  const children = [svg('line', {x1: left, y1: middle, x2: width, y2: middle, class: 'axis'})];
  bins.forEach((b, i) => {
    const x = left + i * step;
    const hs = (middle - 8) * b.spam / top, hh = (middle - 8) * b.ham / top;
    if (hs > 0) children.push(svg('rect', {x, y: middle - hs, width: Math.max(1, step - 1), height: hs, class: 'bar spam'}));
    if (hh > 0) children.push(svg('rect', {x, y: middle, width: Math.max(1, step - 1), height: hh, class: 'bar ham'}));
  });
  const points = bins.map((b, i) => `${left + (i + 0.5) * step},${height - 4 - (height - 8) * b.fitted}`);
  children.push(svg('polyline', {points: points.join(' '), class: 'line fitted'}));
  const label = (x, y, text, anchor) => {
    const t = svg('text', {x, y, 'text-anchor': anchor, class: 'axis-label'});
    t.textContent = text;
    return t;
  };
  children.push(label(left, height - 2, `score ${bins.length ? bins[0].low : ''}`, 'start'),
                label(width, height - 2, `${bins.length ? bins[bins.length - 1].high : ''}`, 'end'),
                label(left - 4, 12, 'P=1', 'end'), label(left - 4, height - 4, 'P=0', 'end'));
  node.replaceChildren(...children);
}

function sourceParams() {
  const form = new FormData($('source-form'));
  const params = new URLSearchParams({source: form.get('source') || ''});
  const since = form.get('since');
  if (since) params.set('since', String(Math.floor(new Date(since).getTime() / 1000)));
  return params;
}

async function listLearned(event) {
  event.preventDefault();
  const params = sourceParams();
  params.set('limit', '200');
  const answer = await api('GET', `/admin/learned?${params}`);
  $('learned-table').tBodies[0].replaceChildren(...answer.messages.map((m) =>
    el('tr', {}, el('td', {}, time(m.learned_at * 1000)), el('td', {class: 'key'}, m.id), el('td', {}, badge(m.label)),
      el('td', {class: 'counted'}, m.counted ? 'yes' : 'checked'))));
  const counted = answer.messages.filter((m) => m.counted).length;
  $('source-result').textContent = `${answer.count} messages trained through ${params.get('source') || '(no token)'}, ${counted} of those shown counted (at most 200 shown)`;
}

async function rollback() {
  const params = sourceParams();
  if (!confirm(`Forget everything ${params.get('source') || '(no token)'} trained${params.get('since') ? ' since then' : ''}?`)) return;
  const answer = await api('POST', `/admin/rollback?${params}`, '');
  $('source-result').textContent = `forgotten: ${answer.forgotten}`;
}

function classDocuments(stats, label) {
  const found = stats.classes.find((c) => c.label === label);
  return found ? found.documents : 0;
}

async function showUsers(after) {
  const page = await api('GET', `/users?limit=50${after ? `&after=${encodeURIComponent(after)}` : ''}`);
  $('users-table').tBodies[0].replaceChildren(...page.users.map((u) => {
    const remove = el('button', {type: 'button', class: 'danger', 'data-user': u.user}, 'Delete');
    remove.addEventListener('click', guarded(() => deleteUser(u.user)));
    return el('tr', {'data-user': u.user}, el('td', {class: 'key'}, u.user),
              el('td', {class: 'num'}, number(classDocuments(u, 'spam'))), el('td', {class: 'num'}, number(classDocuments(u, 'ham'))),
              el('td', {class: 'num'}, number(u.documents)), el('td', {class: 'num'}, number(u.vocabulary)), el('td', {}, remove));
  }));
  $('users-more').disabled = !page.next;
  $('users-more').dataset.next = page.next || '';
  if (!page.users.length) $('user-result').textContent = 'No user has a layer.';
}

async function deleteUser(user) {
  if (!confirm(`Delete ${user}'s layer and scans?`)) return;
  await api('DELETE', `/users/${encodeURIComponent(user)}`);
  $('user-result').textContent = `${user}: deleted`;
  await showUsers('');
}

// ---- wiring -------------------------------------------------------------------------------------

function guarded(handler) {
  return (...args) => Promise.resolve(handler(...args)).catch((error) => notice(error.message));
}

function start() {
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $('token-input').value.trim());
    $('token-input').value = '';
    $('token-panel').hidden = true;
    route();
  });
  $('token-clear').addEventListener('click', () => { sessionStorage.removeItem(TOKEN_KEY); $('token-panel').hidden = true; });
  $('token-button').addEventListener('click', () => askForToken(''));
  $('history-filters').addEventListener('submit', guarded((event) => {
    event.preventDefault();
    historyCursors = [];
    return showHistory('');
  }));
  $('history-older').addEventListener('click', guarded(() => {
    const next = $('history-older').dataset.next;
    if (!next) return undefined;
    historyCursors.push(next);
    return showHistory(next);
  }));
  $('history-newest').addEventListener('click', guarded(() => { historyCursors = []; return showHistory(''); }));
  for (const button of $('scan-actions').querySelectorAll('button')) {
    button.addEventListener('click', guarded(() => learn(button.dataset.action, $('scan-id').textContent, null, $('scan-result'))));
  }
  for (const button of $('check-actions').querySelectorAll('button')) {
    button.addEventListener('click', guarded(() => learn(button.dataset.action, checkScanId, checkMessage, $('check-learned'))));
  }
  $('check-form').addEventListener('submit', guarded(check));
  $('source-form').addEventListener('submit', guarded(listLearned));
  $('source-rollback').addEventListener('click', guarded(rollback));
  $('users-first').addEventListener('click', guarded(() => showUsers('')));
  $('users-more').addEventListener('click', guarded(() => showUsers($('users-more').dataset.next)));
  window.addEventListener('hashchange', route);
  route();
}

start();
