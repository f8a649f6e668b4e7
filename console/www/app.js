// The nbspamd console: one page over the daemon's own HTTP API (docs/CONSOLE.md).
// Every value from mail reaches the page through textContent or an SVG attribute, never as
// markup; the Content-Security-Policy allows no inline script, so nothing from mail can run.
'use strict';

const TOKEN_KEY = 'nbspamd.token';
const pages = ['status', 'history', 'scan', 'check', 'model'];
let refreshTimer = null;
let historyCursors = [];  // The `before` of each page shown, for "Newest" and "Newer".
let learnedCursors = [];  // The same for the Model page's "List what it trained".
let readinessChecks = 0;
let shownScanId = null;   // The scan whose buttons are live; null while none is shown.
let pendingRollback = null;  // The selection the rollback confirmation is about.
const LEARNED_PAGE = 200;
const WHOLE_MODEL_PHRASE = 'forget everything';
let checkScanId = null;
let checkMessage = null;

// ---- small helpers --------------------------------------------------------------------------

function $(id) { return document.getElementById(id); }

// A view can be asked for again before its answer arrives (a form sent while the page's first
// load is out, a refresh beside a click, paging), and answers arrive in any order. Each loader
// takes a ticket for its view before it calls the daemon and draws only while its ticket is the
// view's newest: an older call's late answer is dropped, never drawn over a newer one.
const newestTickets = new Map();
function takeTicket(view) {
  const mine = (newestTickets.get(view) || 0) + 1;
  newestTickets.set(view, mine);
  return () => newestTickets.get(view) === mine;
}

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

function percent(p) {
  const value = 100 * p;
  return `${value < 1 || value > 99 ? value.toFixed(2) : value.toFixed(1)}%`;
}

// The verdict in plain words, and the one probability to read first: spam_confidence, calibrated on
// the model's own feedback, as "chance this is spam" (docs/CONSOLE.md, "Which number to read").
function meaning(node, result) {
  const words = {
    spam: 'The verdict is spam: the filter is sure enough to treat this message as spam (the mail system tags or refuses it, as it is set up).',
    unsure: 'The verdict is unsure: the score falls between the ham and spam thresholds, so the filter does not decide; a person should look (it is delivered marked unsure).',
    ham: 'The verdict is ham: the filter takes this message for legitimate mail and lets it through unmarked.',
  }[result.verdict] || `The verdict is ${result.verdict}: no score yet (the model has not learned both spam and ham).`;
  const known = result.spam_confidence !== null && result.spam_confidence !== undefined;
  const chance = known
    ? el('span', {}, 'Chance this is spam: ', el('strong', {class: 'chance'}, percent(result.spam_confidence)),
         ' (spam_confidence, calibrated on this model\'s own feedback: of messages scored like this one, that share were spam).')
    : el('span', {}, 'Chance this is spam: not known yet (spam_confidence is fitted once the model has feedback on 20 spam and 20 ham); the verdict comes from the score and the thresholds.');
  node.replaceChildren(el('span', {class: 'verdict-words'}, words), ' ', chance);
}

function chanceText(result) {
  return result.spam_confidence === null || result.spam_confidence === undefined ? 'not known yet' : percent(result.spam_confidence);
}

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
      const pathOnly = String(path).split('?')[0];
      throw new ApiError(response.status, error.code,
                         `This page needs a token: the daemon refused ${pathOnly} (${error.message}): enter a token above`);
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
    status: () => {
      const range = ACTIVITY_RANGES[argument] ? argument : 'hour';
      refreshTimer = setInterval(guarded(() => showStatus(range)), 10000);
      return showStatus(range);
    },
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

// Trainings in the last hour: the requests refused as the client's mistake (4xx, /activity
// train_rejected) are shown apart and neutrally; only the daemon's own failures (5xx,
// train_failed) are red. A daemon without train_rejected yet gives 0.
function trainedCard(trained, rejected, failed, span) {
  const detail = el('span', {},
    el('span', {class: 'rejected', title: 'refused as malformed or not allowed (4xx): the client\'s mistake, nothing lost'},
       `${number(rejected)} rejected`), ' · ',
    el('span', {class: `failed${failed > 0 ? ' bad' : ''}`, title: 'the daemon failed (5xx): see its log'},
       `${number(failed)} failed`));
  const node = card(`trained, ${span || 'last hour'}`, number(trained), detail);
  node.id = 'trained-card';
  return node;
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

// /readyz is open (health probes call it): 200 ready, or 503 with the reasons. The badge in the
// header is filled on every page, at load, every 15 s and when the window gets the focus.
async function showReadiness() {
  const newest = takeTicket('readiness');
  let reasons;
  try {
    const response = await fetch('/readyz', {cache: 'no-store', credentials: 'omit'});
    const body = await response.json();
    reasons = response.ok ? [] : (body.degraded || [body.status]);
  } catch (error) {
    reasons = [`the daemon does not answer (${error.message})`];
  }
  if (!newest()) return;
  $('ready-badge').textContent = reasons.length ? 'degraded' : 'ready';
  $('ready-badge').className = `badge ${reasons.length ? 'spam' : 'ham'}`;
  $('ready-badge').title = reasons.length ? reasons.join('; ') : 'ready: classifying and training';
  $('ready-badge').dataset.checked = String(++readinessChecks);
  $('readiness').replaceChildren(...(reasons.length ? reasons.map((r) => el('li', {class: 'bad'}, r))
                                                    : [el('li', {class: 'good'}, 'ready: classifying and training')]));
}

// The ranges of /activity: what a row is and what the range covers, in words.
const ACTIVITY_RANGES = {
  hour: {row: 'minute', span: 'last hour'},
  day: {row: '5 minutes', span: 'last 24 hours'},
  month: {row: 'hour', span: 'last 30 days'},
};

function duration(seconds) {
  const days = Math.floor(seconds / 86400), hours = Math.floor(seconds % 86400 / 3600);
  const minutes = Math.floor(seconds % 3600 / 60);
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  return `${minutes} min ${seconds % 60} s`;
}

// What runs and since when (/healthz): version, build, uptime.
function showDaemon(health) {
  const build = [health.build_type, health.compiler, health.commit ? `commit ${health.commit}` : null]
    .filter(Boolean).join(', ');
  $('daemon-line').textContent = `nbspamd ${health.version} (${build}) · up ${duration(health.uptime_seconds)}, ` +
    `since ${time(health.started_ms)}`;
}

async function showStatus(range) {
  range = range || 'hour';
  const newest = takeTicket('status');
  const [stats, activity, health] = await Promise.all([
    api('GET', '/stats'), api('GET', `/activity?range=${range}`), api('GET', '/healthz')]);
  await showReadiness();
  if (!newest()) return;
  showDaemon(health);
  const {row, span} = ACTIVITY_RANGES[range];
  for (const link of document.querySelectorAll('#activity-ranges a')) {
    link.classList.toggle('active', link.dataset.range === range);
    if (link.dataset.range === range) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
  }
  $('caption-classify').textContent = `Classified per ${row}, ${span}`;
  $('caption-latency').textContent = `Classify latency per ${row} (ms), ${span}`;
  $('caption-train').textContent = `Trained and forgotten per ${row}, ${span}`;
  const cls = Object.fromEntries(stats.classes.map((c) => [c.label, c]));
  const minutes = activity.rows;
  const sum = (key) => minutes.reduce((total, m) => total + (m[key] || 0), 0);
  const classified = sum('spam') + sum('ham') + sum('unsure') + sum('unscored');
  const cards = [
    card('spam documents', number(cls.spam ? cls.spam.documents : 0), `${number(cls.spam ? cls.spam.tokens : 0)} tokens`),
    card('ham documents', number(cls.ham ? cls.ham.documents : 0), `${number(cls.ham ? cls.ham.tokens : 0)} tokens`),
    card('vocabulary', number(stats.vocabulary), `α = ${stats.alpha}`),
    card(`classified, ${span}`, number(classified),
         `${number(sum('spam'))} spam · ${number(sum('unsure'))} unsure · ${number(sum('ham'))} ham`),
    trainedCard(sum('trained'), sum('train_rejected'), sum('train_failed'), span),
    thresholdsCard(stats),
  ];
  $('status-cards').replaceChildren(...cards);
  $('status-cards').dataset.documents = String(stats.documents);
  barChart($('chart-classify'), minutes, [['spam', 'spam'], ['unsure', 'unsure'], ['ham', 'ham']]);
  lineChart($('chart-latency'), minutes, [['classify_p50_ms', 'p50'], ['classify_p99_ms', 'p99']]);
  barChart($('chart-train'), minutes, [['trained', 'trained'], ['train_rejected', 'rejected'], ['train_failed', 'spam']]);
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
  const totals = minutes.map((m) => series.reduce((t, [key]) => t + (m[key] || 0), 0));
  const top = Math.max(1, ...totals);
  const step = (width - left) / minutes.length;
  const scale = (height - bottom - 6) / top;
  const children = axes(width, height, left, bottom, top, minutes);
  minutes.forEach((m, i) => {
    let y = height - bottom;
    for (const [key, cls] of series) {
      const h = (m[key] || 0) * scale;
      if (!(h > 0)) continue;
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

// A row's start as the time axis shows it: the hour and minute, with the day too once the rows
// cover more than a day.
function axisTime(rows, i) {
  const spansDays = rows[rows.length - 1].start_ms - rows[0].start_ms > 86400000;
  return time(rows[i].start_ms).slice(spansDays ? 5 : 11, 16);
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
    label(left, height - 4, minutes.length ? axisTime(minutes, 0) : '', 'start'),
    label(width, height - 4, minutes.length ? axisTime(minutes, minutes.length - 1) : ''),
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
  const newest = takeTicket('history');
  const page = await api('GET', `/history?${historyQuery(before)}`);
  if (!newest()) return;
  const rows = page.scans.map((scan) => {
    const row = el('tr', {'data-scan': scan.scan_id},
      el('td', {class: 'time'}, time(scan.time_ms)), el('td', {}, badge(scan.verdict)),
      el('td', {class: 'num'}, number(scan.score, 3)), el('td', {class: 'num'}, number(scan.spam_confidence, 2)),
      el('td', {}, scan.front_end), el('td', {}, scan.user || ''),
      el('td', {}, scan.facts.from_domain || ''), el('td', {class: 'subject'}, scan.facts.subject || ''),
      el('td', {class: 'key'}, scan.facts.message_id || scan.message_key),
      el('td', {class: 'num'}, number(scan.size)),
      el('td', {class: 'scan-link'}, el('a', {href: `#scan/${encodeURIComponent(scan.scan_id)}`}, scan.scan_id)));
    // The id is the link (keyboard, a new tab); a plain click elsewhere on the row opens it too.
    row.addEventListener('click', (event) => {
      if (event.target.closest('a') || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
      location.hash = `#scan/${encodeURIComponent(scan.scan_id)}`;
    });
    return row;
  });
  $('history-table').tBodies[0].replaceChildren(...rows);
  $('history-older').disabled = !page.next;
  $('history-older').dataset.next = page.next || '';
  $('history-newer').disabled = !before;
  $('history-count').textContent = `${rows.length} scans${before ? ` (page ${historyCursors.length + 1})` : ''}`;
  historyLearnedAndPrivacy(page, rows);
}

// ---- Learned state and the facts' privacy (History and one scan) --------------------------------
// GET /history and /history/{id} say of each scan whether it was learned, how, when and by whom
// ("learned"), and how the history keeps the facts ("history_facts", "notice"). Added to the pages
// here, apart from their own code: a Learned column, a filter, a line on the scan page, a notice.

const LEARNED_HOW = {
  scan_id: 'by scan id', scan_header: 'from a reported copy', spamd: 'over spamd (TELL)',
  autolearn: 'by autolearn', message_id: 'by message id', message: 'from the message itself',
};

function learnedText(learned) {
  if (!learned) return 'Not learned';
  const what = {forgotten: 'Forgotten', checked: `Checked as ${learned.as}`}[learned.state] || `Learned as ${learned.as}`;
  const who = learned.by ? ` by ${learned.by}` : '';
  const changes = learned.changes > 1 ? `, ${learned.changes} changes` : '';
  const counted = learned.state === 'checked'
    ? `: already scored ${learned.as} beyond train_margin, so recorded, not counted` : '';
  return `${what}${who} at ${learned.at.replace('T', ' ').replace('Z', ' UTC')} (${LEARNED_HOW[learned.how] || learned.how}${changes})${counted}`;
}

function learnedBadge(learned) {
  if (!learned) return el('span', {class: 'learned-none'}, '–');
  const forgotten = learned.state === 'forgotten';
  const checked = learned.state === 'checked';
  return el('span', {class: `badge learned ${forgotten ? 'unsure' : learned.as}${checked ? ' checked' : ''}`, title: learnedText(learned)},
            forgotten ? 'forgotten' : checked ? `${learned.as} (checked)` : learned.as);
}

// The Learned filter, the column's head and the privacy line, made once.
function historyLearnedSetUp() {
  const form = $('history-filters');
  if (!form.elements.learned) {
    const select = el('select', {name: 'learned'}, el('option', {value: ''}, 'any'),
                      ...['yes', 'no', 'spam', 'ham', 'checked', 'forgotten'].map((value) => el('option', {}, value)));
    form.querySelector('button[type=submit]').before(el('label', {}, 'Learned ', select), ' ');
  }
  const head = $('history-table').tHead.rows[0];
  if (!head.querySelector('th.learned')) head.insertBefore(el('th', {class: 'learned'}, 'learned'), head.lastElementChild);
  if (!$('history-privacy')) $('history-table').before(el('p', {id: 'history-privacy', class: 'notice info'}));
}

// What a search can find, said before the table: facts kept as hashes are found only typed whole.
function privacyText(page) {
  const facts = page.history_facts || {};
  const names = {subject: 'subjects', from_domain: 'senders', recipients: 'recipients'};
  const hashed = Object.keys(names).filter((name) => facts[name] === 'hash');
  const lines = [];
  if (hashed.length) {
    lines.push(`${hashed.map((name) => names[name]).join(', ')} are kept as hashes: type the whole ${hashed.map((name) => names[name].replace(/s$/, '')).join(' or ')} to find a scan by it.`);
  }
  if (page.notice) lines.push(`Search: ${page.notice}.`);
  return lines.join(' ');
}

function historyLearnedAndPrivacy(page, rows) {
  historyLearnedSetUp();
  page.scans.forEach((scan, i) => {
    rows[i].insertBefore(el('td', {class: 'learned'}, learnedBadge(scan.learned)), rows[i].lastElementChild);
  });
  const text = privacyText(page);
  $('history-privacy').textContent = text;
  $('history-privacy').hidden = !text;
}

// "Learned as spam by alice at …" under the scan's meaning.
function scanLearnedLine(scan) {
  if (!$('scan-learned')) $('scan-meaning').after(el('p', {id: 'scan-learned', class: 'learned-line'}));
  $('scan-learned').replaceChildren(learnedBadge(scan.learned), ' ', learnedText(scan.learned));
}

async function refreshScanLearned(scanId) {
  if (shownScanId !== scanId) return;
  const scan = await api('GET', `/history/${encodeURIComponent(scanId)}`);
  if (shownScanId === scanId) scanLearnedLine(scan);
}

// ---- One scan -----------------------------------------------------------------------------------

function facts(node, pairs) {
  node.replaceChildren(...pairs.flatMap(([name, value]) =>
    [el('dt', {}, name), el('dd', {}, value instanceof Node ? value : (value === null || value === undefined ? '–' : String(value)))]));
}

// A word's character n-gram ("#lick" of "click", "subject:#viag" of a Subject's "viagra"): the
// tokenizer writes '#' only there, right after the optional "prefix:" (a word never holds one).
// Its source says so, so that "#lick" reads as four letters of a word, not as a hash.
function isWordPiece(text) {
  return typeof text === 'string' && /^(?:[^:#\s]+:)?#[^#]+$/.test(text);
}

function sourceText(t) {
  return isWordPiece(t.token) ? `${t.source}, letters of a word` : t.source;
}

function explainRows(tbody, tokens) {
  const top = Math.max(1e-9, ...tokens.map((t) => Math.abs(t.weight)));
  tbody.replaceChildren(...tokens.map((t) => {
    // The weight as a bar: red pushes to spam, green to ham.
    const bar = svg('svg', {viewBox: '0 0 140 10', width: '140', height: '10', class: 'weight'});
    bar.append(svg('rect', {x: 0, y: 0, width: 140 * Math.abs(t.weight) / top, height: 10,
                            class: `bar ${t.weight > 0 ? 'spam' : 'ham'}`}));
    return el('tr', {}, el('td', {class: 'token'}, t.token), el('td', {}, sourceText(t)), el('td', {class: 'num'}, t.count),
              el('td', {class: 'num'}, number(t.weight, 3)), el('td', {}, bar));
  }));
}

// An unknown or malformed id (or any error) replaces the whole scan view: nothing of the scan shown
// before stays on the page, and no button acts on it.
async function showScan(id) {
  const newest = takeTicket('scan');
  shownScanId = null;
  $('scan-id').textContent = id;
  $('scan-result').textContent = '';
  $('scan-view').hidden = true;
  $('scan-error').hidden = true;
  for (const node of [$('scan-meaning'), $('scan-summary'), $('scan-more'), $('scan-explain').tBodies[0]]) node.replaceChildren();
  let scan;
  try {
    scan = await api('GET', `/history/${encodeURIComponent(id)}`);
  } catch (error) {
    if (!newest()) return;
    $('scan-error').textContent = error.status === 404 || error.status === 400
      ? `No such scan: ${id} (${error.message})` : `${error.code || 'error'}: ${error.message}`;
    $('scan-error').hidden = false;
    if (error.status === 401 || error.status === 403) throw error;  // The page's notice asks for a token.
    return;
  }
  if (!newest()) return;
  meaning($('scan-meaning'), scan);
  facts($('scan-summary'), [
    ['time', time(scan.time_ms)], ['verdict', badge(scan.verdict)], ['chance this is spam', chanceText(scan)],
    ['front end', scan.front_end], ['user', scan.user || '(global)'],
    ['Message-ID', scan.facts.message_id], ['From domain', scan.facts.from_domain], ['Subject', scan.facts.subject],
    ['client', scan.facts.client], ['recipients', scan.facts.recipients], ['message key', scan.message_key],
    ['size', `${number(scan.size)} bytes, ${number(scan.tokens)} tokens`],
  ]);
  facts($('scan-more'), [
    ['score', `${number(scan.score, 4)} (the verdict compares it with the thresholds, Status page)`],
    ['spam_confidence', number(scan.spam_confidence, 3)],
  ]);
  explainRows($('scan-explain').tBodies[0], scan.explain);
  if (scan.explain.length === 0) {
    $('scan-explain').tBodies[0].append(el('tr', {}, el('td', {colspan: '5'},
      'No explaining tokens were kept with this scan (setting history_explain is 0).')));
  }
  scanLearnedLine(scan);
  shownScanId = id;
  $('scan-view').hidden = false;
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
    // checked: error-driven training (train_margin) recorded the label but counted nothing.
    const what = answer.status === 'checked'
      ? `checked as ${answer.label}: already scored ${answer.label} beyond train_margin, so recorded, not counted`
      : `${answer.status}${answer.label ? ` as ${answer.label}` : ''}`;
    resultNode.textContent = `${what}: the model now holds ${counts} documents`;
    resultNode.className = 'result ok';
    if (scanId) await refreshScanLearned(scanId);
  } catch (error) {
    resultNode.textContent = `${error.code || 'error'}: ${error.message}`;
    resultNode.className = 'result bad';
  }
}

// ---- Check a message ------------------------------------------------------------------------------

// One message is checked, the file or the pasted text, never one for the other: typing lets go of
// a chosen file, choosing a file clears the text (start()), and the answer says which it was.
async function check(event) {
  event.preventDefault();
  const file = $('check-file').files[0];
  const message = file ? await file.text() : $('check-text').value;
  if (!message.trim()) { notice('Paste a message or choose a file first.'); return; }
  notice('');
  const what = file ? `the file ${file.name} (${number(file.size)} bytes)` : `the pasted text (${number(message.length)} characters)`;
  const result = await api('POST', '/classify?explain=20', message, 'message/rfc822');
  checkScanId = result.scan_id || null;
  checkMessage = message;
  $('check-result').hidden = false;
  $('check-source').textContent = `Checked: ${what}.`;
  $('check-verdict').replaceChildren('Verdict: ', badge(result.verdict));
  meaning($('check-meaning'), result);
  facts($('check-summary'), [
    ['chance this is spam', chanceText(result)],
    ['scan', checkScanId ? el('a', {href: `#scan/${encodeURIComponent(checkScanId)}`}, checkScanId) : '(history off)'],
  ]);
  facts($('check-more'), [
    ['score', `${number(result.score, 4)} (the verdict compares it with the thresholds, Status page)`],
    ['spam_confidence', number(result.spam_confidence, 3)],
    ['P(spam)', `${number(result.probability, 6)} (the naive Bayes posterior: near 0 or 1 for most long messages, so not a chance to read)`],
    ['tokens', `${result.tokens} (${result.known_tokens} known, ${result.scored_tokens} scored)`],
  ]);
  $('check-learned').textContent = '';
  explainRows($('check-explain').tBodies[0], result.explain || []);
}

// ---- Model ------------------------------------------------------------------------------------

async function showModel() {
  const newest = takeTicket('model');
  const newestThresholds = takeTicket('thresholds');
  const [calibration, metrics, thresholds] = await Promise.all([
    api('GET', '/calibration'), api('GET', '/metrics'), api('GET', '/model/thresholds')]);
  if (!newest()) return;
  calibrationChart($('chart-calibration'), calibration, thresholds.current);
  $('calibration-note').textContent = calibrationNote(calibration);
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
  if (newestThresholds()) showThresholds(thresholds, true);
  $('user-result').textContent = '';
  await Promise.all([showUsers(''), showStrongest()]);
}

// What the calibration rests on; before it is fitted, how many more held-out scores it needs.
function calibrationNote(calibration) {
  const needed = calibration.min_per_class ?? 20;
  if (calibration.ready) {
    return `Fitted from ${number(calibration.spam)} spam and ${number(calibration.ham)} ham held-out scores.`;
  }
  const spam = Math.max(0, needed - calibration.spam), ham = Math.max(0, needed - calibration.ham);
  return `No curve: not fitted yet: needs ${spam} more spam and ${ham} more ham held-out scores ` +
         `(${needed} of each; ${number(calibration.spam)} spam and ${number(calibration.ham)} ham so far).`;
}

// Labels in rows under a chart: each goes in the first row where it overlaps no other label.
// Widths are estimated generously (10px text), so that labels never touch.
function placeLabels(labels, firstRowY, rowHeight) {
  const rows = [];
  return labels.map((label) => {
    const width = 6.5 * String(label.text).length + 6;
    const x0 = label.anchor === 'start' ? label.x : label.anchor === 'end' ? label.x - width : label.x - width / 2;
    const span = [x0, x0 + width];
    let row = 0;
    while (rows[row] && rows[row].some(([a, b]) => span[0] < b && a < span[1])) row++;
    (rows[row] = rows[row] || []).push(span);
    const text = svg('text', {x: label.x, y: firstRowY + row * rowHeight, 'text-anchor': label.anchor, class: `axis-label ${label.cls || ''}`});
    text.textContent = label.text;
    return text;
  });
}

// The held-out histogram (spam up, ham down), the fitted curve once it is fitted, and ticks at 0
// and at the thresholds in force. The end bins hold every score beyond the range (clamped): they
// are drawn apart (class clamped) and cut at the middle bins' scale, their counts in a tooltip.
function calibrationChart(node, calibration, thresholds) {
  const width = 600, height = 252, left = 44, right = 590, middle = 104, span = 84;
  const bins = calibration.bins, n = bins.length;
  const low = n ? bins[0].low : -2, high = n ? bins[n - 1].high : 2;
  const xOf = (score) => left + (Math.min(high, Math.max(low, score)) - low) / (high - low) * (right - left);
  node.setAttribute('viewBox', `0 0 ${width} ${height}`);
  node.dataset.plot = `${left} ${right}`;
  const step = (right - left) / Math.max(1, n);
  const scale = Math.max(1, ...bins.slice(1, -1).map((b) => Math.max(b.spam, b.ham)));
  const children = [svg('line', {x1: left, y1: middle, x2: right, y2: middle, class: 'axis'})];
  bins.forEach((b, i) => {
    const end = i === 0 || i === n - 1;
    const range = i === 0 ? `≤ ${low}` : i === n - 1 ? `≥ ${high}` : `${b.low} to ${b.high}`;
    for (const [cls, count, up] of [['spam', b.spam, true], ['ham', b.ham, false]]) {
      if (!count) continue;
      const h = Math.max(1, span * Math.min(1, count / scale));
      const rect = svg('rect', {x: left + i * step, y: up ? middle - h : middle, width: Math.max(1, step - 1), height: h,
                                class: `bar ${cls}${end ? ' clamped' : ''}`});
      const title = svg('title', {});
      title.textContent = `${range}: ${number(count)} ${cls}${end && count > scale ? ' (cut at the scale of the middle bins)' : ''}`;
      rect.append(title);
      children.push(rect);
    }
  });
  if (calibration.ready) {
    const points = bins.map((b, i) => `${left + (i + 0.5) * step},${middle + span - 2 * span * b.fitted}`);
    children.push(svg('polyline', {points: points.join(' '), class: 'line fitted'}));
  }
  const ticks = [{name: 'zero', score: 0, text: '0', cls: ''}];
  if (thresholds) {
    ticks.push({name: 'ham-threshold', score: thresholds.ham_threshold, text: `ham ≤ ${thresholds.ham_threshold}`, cls: 'ham'},
               {name: 'spam-threshold', score: thresholds.spam_threshold, text: `spam > ${thresholds.spam_threshold}`, cls: 'spam'});
  }
  for (const tick of ticks) {
    children.push(svg('line', {x1: xOf(tick.score), y1: middle - span, x2: xOf(tick.score), y2: middle + span + 4,
                               class: `tick ${tick.name === 'zero' ? 'zero' : `threshold ${tick.cls}`}`,
                               'data-tick': tick.name, 'data-score': tick.score}));
  }
  const labels = [{x: left, text: `≤ ${low}`, anchor: 'start'}, {x: right, text: `≥ ${high}`, anchor: 'end'},
                  ...ticks.map((t) => ({x: xOf(t.score), text: t.text, anchor: 'middle', cls: t.cls}))];
  children.push(...placeLabels(labels, middle + span + 18, 14));
  if (calibration.ready) {
    const p = (y, text) => { const t = svg('text', {x: left - 4, y, 'text-anchor': 'end', class: 'axis-label'}); t.textContent = text; return t; };
    children.push(p(middle - span + 8, 'P=1'), p(middle + span, 'P=0'));
  }
  node.replaceChildren(...children);
}

// ---- What the model knows (GET /model/token, /model/strongest) ----

function probability(p) {
  if (p === null || p === undefined) return '–';
  return p < 0.001 ? Number(p).toExponential(2) : Number(p).toFixed(4);
}

async function lookUpToken(event) {
  if (event) event.preventDefault();
  const form = new FormData($('token-lookup'));
  const value = String(form.get('word') || '').trim();
  if (!value) {
    takeTicket('token');  // A lookup still out must not fill the table under this note.
    $('token-note').textContent = 'Type a word, a token text (e.g. subject:free) or a hash.';
    return;
  }
  const kind = form.get('kind') || 'word';
  const newest = takeTicket('token');
  const answer = await api('GET', `/model/token?${new URLSearchParams({[kind]: value})}`);
  if (!newest()) return;
  $('token-table').tBodies[0].replaceChildren(...answer.tokens.map((t) => {
    const users = t.users.map((u) => `${u.user} (${u.counts.spam ?? 0} spam, ${u.counts.ham ?? 0} ham)`).join(', ') +
                  (t.more_users ? ' …' : '');
    return el('tr', {'data-token': t.token ?? t.hash, class: t.known ? 'known' : 'unknown'},
              el('td', {class: 'token'}, t.token ?? `hash ${t.hash}`), el('td', {}, sourceText(t)),
              el('td', {class: 'num'}, number(t.counts.spam ?? 0)), el('td', {class: 'num'}, number(t.counts.ham ?? 0)),
              el('td', {class: 'num'}, probability(t.probabilities.spam)), el('td', {class: 'num'}, probability(t.probabilities.ham)),
              el('td', {class: 'num'}, t.weight === null ? '–' : number(t.weight, 3)), el('td', {}, users || '–'));
  }));
  const known = answer.tokens.filter((t) => t.known).length;
  $('token-note').textContent = answer.tokens.length
    ? `${answer.tokens.length} tokens, ${known} known to the model (|V| ${number(answer.vocabulary)}, alpha ${answer.alpha}). ` +
      `weight = ln P(w|spam) − ln P(w|ham): what one occurrence adds to a score; only |weight| > ${answer.score_min_weight} counts in it. ` +
      `User layers: of the first ${answer.users_examined} users${answer.users_truncated ? ' (there are more)' : ''}.`
    : 'That gives no token.';
}

function strongestRows(table, tokens) {
  table.tBodies[0].replaceChildren(...tokens.map((t) => {
    const row = el('tr', {'data-hash': t.hash}, el('td', {class: 'token'}, t.token ?? `hash ${t.hash}`),
                   el('td', {class: 'num'}, number(t.spam)), el('td', {class: 'num'}, number(t.ham)),
                   el('td', {class: 'num'}, number(t.weight, 3)));
    row.addEventListener('click', guarded(() => {
      $('token-lookup').elements.word.value = t.token ?? t.hash;
      $('token-lookup').elements.kind.value = t.token ? 'text' : 'hash';
      return lookUpToken();
    }));
    return row;
  }));
}

async function showStrongest(event) {
  if (event) event.preventDefault();
  const form = new FormData($('strongest-form'));
  const params = new URLSearchParams({limit: form.get('limit') || '20', min_count: form.get('min_count') || '2'});
  const newest = takeTicket('strongest');
  let spam, ham;
  try {
    [spam, ham] = await Promise.all([api('GET', `/model/strongest?class=spam&${params}`),
                                     api('GET', `/model/strongest?class=ham&${params}`)]);
  } catch (error) {
    if (!newest()) return;
    if (error.status !== 409) throw error;
    $('strongest-rule').textContent = 'No token has a weight until the model has learned both spam and ham.';
    for (const id of ['strongest-spam', 'strongest-ham']) $(id).tBodies[0].replaceChildren();
    return;
  }
  if (!newest()) return;
  strongestRows($('strongest-spam'), spam.tokens);
  strongestRows($('strongest-ham'), ham.tokens);
  $('strongest-rule').textContent =
    `Tokens counted at least ${spam.min_count} times in spam and ham together (${number(spam.eligible)} of ${number(spam.tokens_visited)}), ` +
    'by weight ln P(w|spam) − ln P(w|ham), strongest first. The model keeps only hashes: texts come from the explanations of the ' +
    `newest ${spam.scans_read} scans (${number(spam.texts_known)} known); others show as "hash" and the hash. Computed ${time(spam.computed_at_ms)}.`;
}

// ---- Thresholds and their consequences (GET /model/thresholds, POST /admin/reload) ----

function share(count, total) {
  return total ? `${percent(count / total)} (${number(count)} of ${number(total)})` : 'no feedback yet';
}

function consequences(answer, pair) {
  return `ham called spam ${share(pair.hams.spam, answer.hams)}, spam missed ${share(pair.spams.ham, answer.spams)}, ` +
         `unsure ${share(pair.hams.unsure, answer.hams)} of ham and ${share(pair.spams.unsure, answer.spams)} of spam`;
}

function showThresholds(answer, fillForm) {
  const current = answer.current;
  $('thresholds-current').textContent =
    `Thresholds in force: spam > ${current.spam_threshold}, ham ≤ ${current.ham_threshold} ` +
    `(configured ${answer.configured.spam_threshold} / ${answer.configured.ham_threshold}). ` +
    `On the held-out scores of the newest ${number(answer.hams)} hams and ${number(answer.spams)} spams fed back: ${consequences(answer, current)}.`;
  if (fillForm) {
    $('thresholds-form').elements.spam.value = current.spam_threshold;
    $('thresholds-form').elements.ham.value = current.ham_threshold;
  }
  $('thresholds-table').tBodies[0].replaceChildren(...answer.curve.map((p) =>
    el('tr', {}, el('td', {class: 'num'}, number(p.threshold, 1)),
       el('td', {class: 'num'}, share(p.hams_above, answer.hams)), el('td', {class: 'num'}, share(p.spams_at_or_below, answer.spams)))));
  thresholdsChart($('chart-thresholds'), answer);
}

// The two single-threshold curves: the share of hams above t (called spam were t the spam
// threshold) and of spams at or below t (missed were t the ham threshold), with the pair marked.
function thresholdsChart(node, answer) {
  const width = 600, height = 190, left = 44, right = 590, top = 10, bottom = 150;
  const curve = answer.curve;
  if (!curve.length) { node.replaceChildren(); return; }
  const low = curve[0].threshold, high = curve[curve.length - 1].threshold;
  const xOf = (t) => left + (Math.min(high, Math.max(low, t)) - low) / (high - low) * (right - left);
  const yOf = (share) => bottom - (bottom - top) * share;
  const children = [svg('line', {x1: left, y1: bottom, x2: right, y2: bottom, class: 'axis'})];
  if (answer.hams) {
    children.push(svg('polyline', {points: curve.map((p) => `${xOf(p.threshold)},${yOf(p.hams_above / answer.hams)}`).join(' '), class: 'line ham-called-spam'}));
  }
  if (answer.spams) {
    children.push(svg('polyline', {points: curve.map((p) => `${xOf(p.threshold)},${yOf(p.spams_at_or_below / answer.spams)}`).join(' '), class: 'line spam-missed'}));
  }
  const pair = answer.pair;
  for (const [name, score] of [['ham-threshold', pair.ham_threshold], ['spam-threshold', pair.spam_threshold]]) {
    children.push(svg('line', {x1: xOf(score), y1: top, x2: xOf(score), y2: bottom + 4, class: `tick threshold ${name === 'ham-threshold' ? 'ham' : 'spam'}`, 'data-tick': name}));
  }
  const labels = [{x: left, text: String(low), anchor: 'start'}, {x: right, text: String(high), anchor: 'end'},
                  {x: xOf(0), text: '0', anchor: 'middle'},
                  {x: xOf(pair.ham_threshold), text: `ham ≤ ${pair.ham_threshold}`, anchor: 'middle', cls: 'ham'},
                  {x: xOf(pair.spam_threshold), text: `spam > ${pair.spam_threshold}`, anchor: 'middle', cls: 'spam'}];
  children.push(...placeLabels(labels, bottom + 16, 14));
  const p = (y, text) => { const t = svg('text', {x: left - 4, y, 'text-anchor': 'end', class: 'axis-label'}); t.textContent = text; return t; };
  children.push(p(top + 8, '100%'), p(bottom, '0%'));
  node.setAttribute('viewBox', `0 0 ${width} ${height}`);
  node.replaceChildren(...children);
}

// The pair the form holds; throws when it is not one.
function formPair() {
  const form = $('thresholds-form').elements;
  const spam = Number(String(form.spam.value).trim()), ham = Number(String(form.ham.value).trim());
  if (String(form.spam.value).trim() === '' || String(form.ham.value).trim() === '' || !Number.isFinite(spam) || !Number.isFinite(ham)) {
    throw new Error('Both thresholds must be numbers.');
  }
  if (ham > spam) throw new Error('The ham threshold must be at most the spam threshold.');
  return {spam, ham};
}

async function previewThresholds(event) {
  if (event) event.preventDefault();
  $('thresholds-result').textContent = '';
  let pair;
  try {
    pair = formPair();
  } catch (error) {
    $('thresholds-preview').textContent = error.message;
    return;
  }
  const newest = takeTicket('thresholds');
  const answer = await api('GET', `/model/thresholds?${new URLSearchParams({spam: pair.spam, ham: pair.ham})}`);
  if (!newest()) return;
  showThresholds(answer, false);
  $('thresholds-preview').textContent =
    `With spam > ${pair.spam} and ham ≤ ${pair.ham}: ${consequences(answer, answer.pair)}. ` +
    `Now: ${consequences(answer, answer.current)}.`;
}

// Applies the form's pair as live settings (POST /admin/reload with {"set": {...}}: kept in the
// data folder); shows the daemon's answer, applied or refused.
async function applyThresholds() {
  const result = $('thresholds-result');
  result.className = 'result';
  let pair;
  try {
    pair = formPair();
  } catch (error) {
    result.textContent = `Error: ${error.message}`;
    result.className = 'result bad';
    return;
  }
  await previewThresholds();
  try {
    const answer = await api('POST', '/admin/reload', JSON.stringify({set: {spam_threshold: pair.spam, ham_threshold: pair.ham}}),
                             'application/json');
    const applied = (answer && answer.applied) || [];
    const restart = (answer && answer.restart_needed) || [];
    result.textContent = `applied: ${applied.length ? applied.join(', ') : 'nothing changed'}` +
                         (restart.length ? `; needs a restart: ${restart.join(', ')}` : '');
    result.className = 'result ok';
    const newest = takeTicket('thresholds');
    const [thresholds, calibration] = await Promise.all([api('GET', '/model/thresholds'), api('GET', '/calibration')]);
    if (!newest()) return;
    showThresholds(thresholds, true);
    calibrationChart($('chart-calibration'), calibration, thresholds.current);
  } catch (error) {
    result.textContent = `Error: the daemon refused it${error.status ? ` (${error.status} ${error.code})` : ''}: ${error.message}`;
    result.className = 'result bad';
  }
}

function sourceParams() {
  const form = new FormData($('source-form'));
  const params = new URLSearchParams({source: form.get('source') || ''});
  const since = form.get('since');
  if (since) params.set('since', String(Math.floor(new Date(since).getTime() / 1000)));
  return params;
}

function listLearned(event) {
  event.preventDefault();
  learnedCursors = [];
  return showLearned('');
}

// One page of what the source trained, newest first; `total` is the whole window's (a daemon
// before it gave only the page's `count`).
async function showLearned(before) {
  const params = sourceParams();
  params.set('limit', String(LEARNED_PAGE));
  if (before) params.set('before', before);
  const newest = takeTicket('learned');
  const answer = await api('GET', `/admin/learned?${params}`);
  if (!newest()) return;
  $('learned-table').tBodies[0].replaceChildren(...answer.messages.map((m) =>
    el('tr', {}, el('td', {}, time(m.learned_at * 1000)), el('td', {class: 'key'}, m.id), el('td', {}, badge(m.label)),
      el('td', {class: 'counted'}, m.counted ? 'yes' : 'checked'))));
  const total = answer.total ?? answer.count;
  const counted = answer.messages.filter((m) => m.counted).length;
  $('source-result').textContent = `${number(total)} messages trained through ${params.get('source') || '(no token)'}` +
      `${params.get('since') ? ' since then' : ''}, newest first; ${counted} of those shown counted`;
  const first = learnedCursors.length * LEARNED_PAGE;
  $('learned-count').textContent = answer.messages.length
    ? `${number(first + 1)}–${number(first + answer.messages.length)} of ${number(total)}` : `none of ${number(total)}`;
  $('learned-older').disabled = !answer.next;
  $('learned-older').dataset.next = answer.next || '';
  $('learned-newer').disabled = !before;
}

// Says what a rollback will forget, how many records, before anything is forgotten; everything
// trained without a token (on a daemon without tokens: the whole model) must be typed to confirm.
async function rollback() {
  const params = sourceParams();
  const probe = new URLSearchParams(params);
  probe.set('limit', '1');
  const answer = await api('GET', `/admin/learned?${probe}`);
  const total = answer.total ?? answer.count;
  const source = params.get('source');
  const since = params.get('since') ? ` since ${time(Number(params.get('since')) * 1000)}` : '';
  if (!total) {
    $('source-result').textContent = `Nothing to roll back: ${source ? `the token "${source}"` : 'training without a token'} trained nothing${since}.`;
    return;
  }
  const whole = !source && !since;
  let text = `Roll back will forget ${number(total)} records: everything trained ${source ? `through the token "${source}"` : 'without a token'}${since}.`;
  if (whole) {
    text += sessionStorage.getItem(TOKEN_KEY)
      ? ' That is all the training done before tokens were set or by front ends without a token: it can be most of the model.'
      : ' This daemon takes training without a token, so that is everything trained = the whole model here: every spam and ham it learned.';
  }
  pendingRollback = params;
  $('rollback-what').textContent = text;
  $('rollback-type-line').hidden = !whole;
  $('rollback-typed').value = '';
  $('rollback-go').disabled = whole;
  $('rollback-go').dataset.whole = whole ? 'yes' : '';
  $('rollback-confirm').hidden = false;
  (whole ? $('rollback-typed') : $('rollback-go')).focus();
}

async function rollbackConfirmed() {
  const params = pendingRollback;
  if (!params) return;
  pendingRollback = null;
  $('rollback-confirm').hidden = true;
  // The daemon forgets at most `limit` a call: repeat while a call forgets that many.
  const limit = 100000;
  params.set('limit', String(limit));
  let forgotten = 0;
  for (;;) {
    const answer = await api('POST', `/admin/rollback?${params}`, '');
    forgotten += answer.forgotten;
    if (answer.forgotten < limit) break;
  }
  takeTicket('learned');  // A page still out lists what is now forgotten: dropped.
  $('learned-table').tBodies[0].replaceChildren();
  $('learned-count').textContent = '';
  $('learned-older').disabled = $('learned-newer').disabled = true;
  $('source-result').textContent = `forgotten: ${forgotten}`;
}

function classDocuments(stats, label) {
  const found = stats.classes.find((c) => c.label === label);
  return found ? found.documents : 0;
}

async function showUsers(after) {
  const newest = takeTicket('users');
  const page = await api('GET', `/users?limit=50${after ? `&after=${encodeURIComponent(after)}` : ''}`);
  if (!newest()) return;
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
  $('history-newer').addEventListener('click', guarded(() => {
    historyCursors.pop();
    return showHistory(historyCursors[historyCursors.length - 1] || '');
  }));
  for (const button of $('scan-actions').querySelectorAll('button')) {
    button.addEventListener('click', guarded(() => {
      if (!shownScanId) return undefined;  // No scan shown: nothing to act on.
      return learn(button.dataset.action, shownScanId, null, $('scan-result'));
    }));
  }
  $('check-text').addEventListener('input', () => { if ($('check-file').value) $('check-file').value = ''; });
  $('check-file').addEventListener('change', () => { if ($('check-file').files.length) $('check-text').value = ''; });
  for (const button of $('check-actions').querySelectorAll('button')) {
    button.addEventListener('click', guarded(() => learn(button.dataset.action, checkScanId, checkMessage, $('check-learned'))));
  }
  $('check-form').addEventListener('submit', guarded(check));
  $('source-form').addEventListener('submit', guarded(listLearned));
  $('source-rollback').addEventListener('click', guarded(rollback));
  $('rollback-typed').addEventListener('input', () => {
    $('rollback-go').disabled = $('rollback-typed').value.trim() !== WHOLE_MODEL_PHRASE;
  });
  $('rollback-go').addEventListener('click', guarded(rollbackConfirmed));
  $('rollback-cancel').addEventListener('click', () => { pendingRollback = null; $('rollback-confirm').hidden = true; });
  $('learned-older').addEventListener('click', guarded(() => {
    const next = $('learned-older').dataset.next;
    if (!next) return undefined;
    learnedCursors.push(next);
    return showLearned(next);
  }));
  $('learned-newer').addEventListener('click', guarded(() => {
    learnedCursors.pop();
    return showLearned(learnedCursors[learnedCursors.length - 1] || '');
  }));
  $('token-lookup').addEventListener('submit', guarded(lookUpToken));
  $('strongest-form').addEventListener('submit', guarded(showStrongest));
  $('thresholds-form').addEventListener('submit', guarded(previewThresholds));
  $('thresholds-form').querySelector('[data-action=preview]').addEventListener('click', guarded(previewThresholds));
  $('thresholds-form').querySelector('[data-action=apply]').addEventListener('click', guarded(applyThresholds));
  $('users-first').addEventListener('click', guarded(() => showUsers('')));
  $('users-more').addEventListener('click', guarded(() => showUsers($('users-more').dataset.next)));
  window.addEventListener('hashchange', route);
  // The readiness badge, on every page: at load, every 15 s, and when the window gets the focus.
  showReadiness();
  setInterval(showReadiness, 15000);
  window.addEventListener('focus', () => { showReadiness(); });
  route();
}

start();
