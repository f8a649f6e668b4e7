#!/usr/bin/python3
"""The console (/ui/) in a real headless Chromium against the real daemon on 127.0.0.1.

Debian's chromium, chromium-driver and python3-selenium (scripts/install-deps --test). Each test
starts its own nbspamd (an ephemeral port, a temp data folder), drives the page as an
administrator would, and checks what the page shows against the HTTP API. Any JavaScript error
in the page fails the test. Screenshots of each page go to --screenshots (the README's come from
`tests/browser/console_test.py --daemon build/release/server/nbspamd --screenshots docs/images`).

  /usr/bin/python3 tests/browser/console_test.py --daemon build/release/server/nbspamd \
      --screenshots /tmp/shots [unittest arguments]
"""

import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

DAEMON = None
SCREENSHOTS = None
WAIT_SECONDS = 30  # Sanitizer builds of the daemon answer slower.

HOSTILE_SUBJECT = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def message(subject, body, sender='someone@example.org', message_id=None):
    lines = [f'From: {sender}', 'To: admin@example.net', f'Subject: {subject}']
    if message_id:
        lines.append(f'Message-ID: <{message_id}>')
    return ('\r\n'.join(lines) + '\r\n\r\n' + body + '\r\n').encode()


SPAM = [
    message('Cheap watches now', 'Buy cheap replica watches now, limited offer, click here today'),
    message('You won a prize', 'Claim your free prize money now, click the link, offer ends today'),
    message('Lowest price pills', 'Cheap pills online, no prescription, buy now and save money'),
]
HAM = [
    message('Meeting notes', 'Attached are the notes from the planning meeting, see you Tuesday'),
    message('Build failed', 'The nightly build failed in the storage tests; the log is attached'),
    message('Lunch?', 'Are you free for lunch on Thursday? The usual place at noon'),
]


class Daemon:
    """nbspamd on 127.0.0.1 and a port it picks, its data in a temp folder."""

    def __init__(self, *flags):
        self.dir = tempfile.mkdtemp(prefix='nbspamd-console-')
        self.log = open(os.path.join(self.dir, 'daemon.log'), 'w+')
        self.process = subprocess.Popen(
            [DAEMON, '--listen', '127.0.0.1:0', '--data-dir', os.path.join(self.dir, 'model'),
             '--threads', '2', *flags],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        match = re.search(r'listening on 127\.0\.0\.1:(\d+)', line)
        if not match:
            log = self.read_log()
            self.stop()
            raise RuntimeError(f'the daemon did not start: {line!r}; log: {log}')
        self.base = f'http://127.0.0.1:{match.group(1)}'

    def read_log(self):
        self.log.seek(0)
        return self.log.read()

    def call(self, method, path, body=None, token=None, content_type='message/rfc822'):
        request = urllib.request.Request(self.base + path, data=body, method=method)
        if body is not None:
            request.add_header('Content-Type', content_type)
        if token:
            request.add_header('Authorization', f'Bearer {token}')
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b'null')
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b'null')

    def documents(self, label, token=None):
        status, stats = self.call('GET', '/stats', token=token)
        assert status == 200, stats
        return next(c['documents'] for c in stats['classes'] if c['label'] == label)

    def seed(self, token=None):
        for label, messages in (('spam', SPAM), ('ham', HAM)):
            for raw in messages:
                status, answer = self.call('POST', f'/train?label={label}', raw, token=token)
                assert status == 200, answer

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def new_browser(folder, flags=()):
    """A headless Chromium whose profile and temporary files (its singleton socket's folder
    among them) all live in `folder`, so that removing it leaves nothing behind in /tmp."""
    options = webdriver.ChromeOptions()
    for flag in flags:
        options.add_argument(flag)
    options.binary_location = '/usr/bin/chromium'
    options.add_argument(f'--user-data-dir={os.path.join(folder, "profile")}')
    for flag in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                 '--window-size=1440,1000', '--no-first-run', '--disable-extensions',
                 '--disable-background-networking', '--disable-sync',
                 '--disable-component-update', '--disable-default-apps'):
        options.add_argument(flag)
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    env = dict(os.environ, TMPDIR=folder)
    return webdriver.Chrome(service=Service('/usr/bin/chromedriver', env=env), options=options)


class ConsoleTestCase(unittest.TestCase):
    flags = ()
    browser_flags = ()

    def setUp(self):
        self.daemon = Daemon(*self.flags)
        self.addCleanup(self.daemon.stop)
        browser_folder = tempfile.mkdtemp(prefix='nbspamd-browser-')
        self.addCleanup(shutil.rmtree, browser_folder, ignore_errors=True)
        self.browser = new_browser(browser_folder, self.browser_flags)
        self.addCleanup(self.browser.quit)
        self.wait = WebDriverWait(self.browser, WAIT_SECONDS)

    def tearDown(self):
        # Any JavaScript error (an exception, a console.error, a CSP violation) fails the test;
        # a refused request (401, 503) is the network's entry, not the page's.
        errors = [entry for entry in self.browser.get_log('browser')
                  if entry['level'] == 'SEVERE' and entry.get('source') != 'network']
        self.assertEqual(errors, [], 'JavaScript errors in the console page')

    def open(self, page):
        self.browser.get(f'{self.daemon.base}/ui/#{page}')

    def find(self, css):
        return self.wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))

    def visible(self, css):
        return self.wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def text_in(self, css, text):
        self.wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))
        return self.browser.find_element(By.CSS_SELECTOR, css).text

    def shoot(self, name):
        if SCREENSHOTS:
            os.makedirs(SCREENSHOTS, exist_ok=True)
            self.browser.save_screenshot(os.path.join(SCREENSHOTS, f'console-{name}.png'))

    def check_message(self, raw):
        self.open('check')
        area = self.visible('#check-text')
        area.clear()
        self.browser.execute_script('arguments[0].value = arguments[1];', area, raw.decode())
        self.browser.find_element(By.CSS_SELECTOR, '#check-form button[type=submit]').click()


class ConsoleTest(ConsoleTestCase):
    # The subject kept as text, so the hostile one reaches the History table.
    flags = ('--history-keep-subject', 'keep')

    def test_the_administrators_loop(self):
        self.daemon.seed()
        # Status: the same document counts as /stats.
        self.open('status')
        cards = self.find('#status-cards[data-documents]')
        status, stats = self.daemon.call('GET', '/stats')
        self.assertEqual(status, 200)
        self.assertEqual(cards.get_attribute('data-documents'), str(stats['documents']))
        self.text_in('#status-cards', 'SPAM DOCUMENTS')
        values = [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#status-cards .card-value')]
        self.assertEqual(values[0], str(self.daemon.documents('spam')))
        self.assertEqual(values[1], str(self.daemon.documents('ham')))
        # The thresholds in force, ham / spam, as /stats gives them, and where they come from.
        in_force = stats['verdict_thresholds']
        self.assertEqual(self.find('#thresholds-card .card-value').text,
                         f"{round(in_force['ham'], 3):g} / {round(in_force['spam'], 3):g}")
        self.assertIn('fixed; feedback would give', self.find('#thresholds-card .card-detail').text)
        self.text_in('#ready-badge', 'ready')

        # Check a message: paste it, see its verdict and its explanation.
        hostile = message(HOSTILE_SUBJECT, 'Cheap replica watches, click here now, limited offer',
                          message_id='hostile@example.org')
        self.check_message(hostile)
        verdict = self.visible('#check-verdict .badge').text
        self.assertIn(verdict, ('spam', 'unsure', 'ham'))
        scan_link = self.find('#check-summary a')
        scan_id = scan_link.text
        self.assertRegex(scan_id, r'^[0-9a-z]+$')
        self.assertGreater(len(self.browser.find_elements(By.CSS_SELECTOR, '#check-explain tbody tr')), 0)
        status, scan = self.daemon.call('GET', f'/history/{scan_id}')
        self.assertEqual(status, 200)
        self.assertEqual(scan['verdict'], verdict)
        self.shoot('check')

        # More traffic for the graphs and the table, then the History page finds the scan.
        for raw in SPAM + HAM:
            self.assertEqual(self.daemon.call('POST', '/classify', raw)[0], 200)
        self.open('history')
        row = self.find(f'#history-table tr[data-scan="{scan_id}"]')
        subject = row.find_element(By.CSS_SELECTOR, 'td.subject')
        # The hostile Subject is text: shown as written, no element made of it, nothing ran.
        self.assertEqual(subject.get_attribute('textContent'), HOSTILE_SUBJECT)
        self.assertEqual(subject.find_elements(By.CSS_SELECTOR, '*'), [])
        self.assertIsNone(self.browser.execute_script('return window.__pwned;'))
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')), 7)
        self.shoot('history')

        # A filter narrows the table server-side.
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters input[name=q]').send_keys('hostile@example.org')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 1)

        # The scan's explanation; learn it as ham; /stats changes; forget it; /stats is back.
        self.find(f'#history-table tr[data-scan="{scan_id}"]').click()
        self.text_in('#scan-id', scan_id)
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#scan-explain tbody tr')) > 0)
        tokens = [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#scan-explain td.token')]
        self.assertEqual(tokens, [t['token'] for t in scan['explain']])
        self.shoot('explanation')
        hams = self.daemon.documents('ham')
        self.browser.find_element(By.CSS_SELECTOR, '#scan-actions button[data-action=ham]').click()
        self.text_in('#scan-result', 'learned as ham')
        self.assertEqual(self.daemon.documents('ham'), hams + 1)
        self.text_in('#scan-result', f'ham {hams + 1} documents')
        self.browser.find_element(By.CSS_SELECTOR, '#scan-actions button[data-action=forget]').click()
        self.text_in('#scan-result', 'forgotten')
        self.assertEqual(self.daemon.documents('ham'), hams)

        # Status again: the last hour's graphs have bars now.
        self.open('status')
        self.find('#chart-classify rect.bar')
        self.find('#chart-train rect.bar')
        self.text_in('#status-cards', 'CLASSIFIED, LAST HOUR')
        self.shoot('status')

        # Model: the calibration chart, the training by source, the users' layers.
        for user in ('alice@example.org', 'bob@example.org'):
            status, answer = self.daemon.call('POST', f'/train?label=ham&id=u1&user={user}', HAM[0])
            self.assertEqual(status, 200, answer)
        self.open('model')
        self.find('#chart-calibration polyline')
        self.text_in('#calibration-note', 'held-out scores')
        self.find('#sources-table tbody tr')
        headers = [th.text for th in self.browser.find_elements(By.CSS_SELECTOR, '#sources-table th')]
        self.assertEqual(headers, ['source', 'learned', 'relearned', 'unchanged', 'checked', 'forgotten', 'failed'])
        row = self.find('#users-table tr[data-user="alice@example.org"]')
        self.assertEqual([td.text for td in row.find_elements(By.CSS_SELECTOR, 'td.num')][:3], ['0', '1', '1'])
        self.shoot('model')
        row.find_element(By.CSS_SELECTOR, 'button').click()
        self.wait.until(ec.alert_is_present()).accept()
        self.text_in('#user-result', 'alice@example.org: deleted')
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, '#users-table tbody tr')), 1)
        self.assertEqual(self.daemon.call('GET', '/users/alice%40example.org/stats')[0], 404)

        # What the training without a token (source "") learned, then its rollback.
        self.browser.find_element(By.CSS_SELECTOR, '#source-form button[type=submit]').click()
        self.text_in('#source-result', 'messages trained through (no token)')
        listed = len(self.browser.find_elements(By.CSS_SELECTOR, '#learned-table tbody tr'))
        # Each message trained has a record; under the default regime only those the model got
        # wrong or nearly count a document, the others are shown as checked.
        counted = [td.text for td in self.browser.find_elements(By.CSS_SELECTOR, '#learned-table td.counted')]
        self.assertEqual(len(counted), listed)
        self.assertEqual(counted.count('yes'), stats['documents'])
        self.text_in('#source-result', f'{counted.count("yes")} of those shown counted')
        self.browser.find_element(By.CSS_SELECTOR, '#source-rollback').click()
        self.wait.until(ec.alert_is_present()).accept()
        self.text_in('#source-result', f'forgotten: {listed}')
        self.assertEqual(self.daemon.call('GET', '/stats')[1]['documents'], 0)

    def test_an_uploaded_file_is_classified(self):
        self.daemon.seed()
        path = os.path.join(self.daemon.dir, 'upload.eml')
        with open(path, 'wb') as f:
            f.write(SPAM[0])
        self.open('check')
        self.find('#check-file').send_keys(path)
        self.browser.find_element(By.CSS_SELECTOR, '#check-form button[type=submit]').click()
        verdict = self.visible('#check-verdict .badge').text
        status, answer = self.daemon.call('POST', '/classify', SPAM[0])
        self.assertEqual(status, 200)
        self.assertEqual(verdict, answer['verdict'])

    def test_the_page_is_served_with_a_strict_policy(self):
        with urllib.request.urlopen(self.daemon.base + '/ui/', timeout=10) as response:
            policy = response.headers['Content-Security-Policy']
            page = response.read().decode()
        self.assertIn("script-src 'self'", policy)
        self.assertNotIn('unsafe-inline', policy)
        self.assertEqual(re.findall(r'<script>|\son\w+=', page), [])  # No inline script.
        with self.assertRaises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(self.daemon.base + '/ui/nothing.js', timeout=10)
        self.assertEqual(missing.exception.code, 404)
        # The page itself: it loads, and no JavaScript error (tearDown) with an empty model.
        self.open('status')
        self.find('#status-cards[data-documents]')


class ConsoleWithTokensTest(ConsoleTestCase):
    # Tokens for training, and for reading too (auth_classify).
    flags = ('--auth-tokens', 'admin:s3cret-console-token-1', '--auth-classify', 'true')

    def test_nothing_works_without_the_token(self):
        self.daemon.seed(token='s3cret-console-token-1')
        documents = self.daemon.call('GET', '/stats')[1]['documents']
        self.open('history')
        # The API refuses: the page asks for the token and shows no scans.
        self.visible('#token-panel')
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, '#history-table tbody tr'), [])
        self.check_message(SPAM[0])
        self.text_in('#notice', 'enter a token above')
        self.assertFalse(self.browser.find_element(By.CSS_SELECTOR, '#check-result').is_displayed())
        self.assertEqual(self.daemon.call('GET', '/history', token='s3cret-console-token-1')[1]['scans'], [])

        # A wrong token is refused too.
        self.browser.find_element(By.CSS_SELECTOR, '#token-input').send_keys('wrong')
        self.browser.find_element(By.CSS_SELECTOR, '#token-form button[type=submit]').click()
        self.check_message(SPAM[0])
        self.visible('#token-panel')
        self.assertEqual(self.daemon.call('GET', '/history', token='s3cret-console-token-1')[1]['scans'], [])

        # With the token: classify works and the scan can be learned.
        self.browser.find_element(By.CSS_SELECTOR, '#token-input').send_keys('s3cret-console-token-1')
        self.browser.find_element(By.CSS_SELECTOR, '#token-form button[type=submit]').click()
        self.check_message(SPAM[0])
        self.visible('#check-verdict .badge')
        self.assertEqual(len(self.daemon.call('GET', '/history', token='s3cret-console-token-1')[1]['scans']), 1)
        # The token is in the tab's sessionStorage, never a cookie.
        self.assertEqual(self.browser.get_cookies(), [])
        self.assertEqual(self.browser.execute_script("return sessionStorage.getItem('nbspamd.token');"),
                         's3cret-console-token-1')

        # Forgetting the token: learning from the page is refused and the model is unchanged.
        self.browser.execute_script("sessionStorage.removeItem('nbspamd.token');")
        self.browser.find_element(By.CSS_SELECTOR, '#check-actions button[data-action=spam]').click()
        self.text_in('#check-learned', 'unauthenticated')
        self.assertEqual(self.daemon.call('GET', '/stats')[1]['documents'], documents)
        self.shoot('token')


class AttackerSite:
    """A web page of another site: `html` served at http://attacker.example:PORT/ (the browser
    resolves attacker.example to 127.0.0.1), on a port of its own."""

    def __init__(self, html):
        page = html.encode()

        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header('Content-Type', 'text/html; charset=utf-8')
                self.send_header('Content-Length', str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Page)
        self.url = f'http://attacker.example:{self.server.server_address[1]}/'
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class CrossSiteTest(ConsoleTestCase):
    """What a page on another site, or reached through a name of its own (DNS rebinding), can
    make the administrator's browser do to a daemon without tokens: nothing."""
    browser_flags = ('--host-resolver-rules=MAP attacker.example 127.0.0.1',)

    def learned_ids(self):
        status, listed = self.daemon.call('GET', '/admin/learned?source=&limit=1000')
        self.assertEqual(status, 200, listed)
        return sorted(m['id'] for m in listed['messages'])

    def test_a_page_of_another_site_cannot_train_forget_or_roll_back(self):
        self.daemon.seed()
        status, answer = self.daemon.call('POST', '/train?label=ham&id=keep', HAM[0])
        self.assertEqual(status, 200, answer)
        before_ids = self.learned_ids()
        _, before = self.daemon.call('GET', '/stats')
        base = self.daemon.base
        # A no-cors fetch and an auto-submitted text/plain form: neither needs a CORS preflight.
        attacker = AttackerSite(f"""<!doctype html><title>win a prize</title>
<iframe name="sink"></iframe>
<form id="f" method="post" target="sink" enctype="text/plain"
      action="{base}/train?label=spam&amp;id=formed"><input name="Subject: x" value="cheap"></form>
<script>
const post = (path, body) =>
  fetch({json.dumps(base)} + path, {{method: 'POST', mode: 'no-cors', body}}).then(() => 'sent', () => 'failed');
Promise.all([
  post('/train?label=spam&id=evil', 'Subject: prize\\r\\n\\r\\nMeeting notes for Tuesday'),
  post('/forget?id=keep', ''),
  post('/admin/rollback?source=', ''),
]).then((outcomes) => {{
  document.getElementById('f').submit();
  document.title = 'sent: ' + outcomes.join(' ');
}});
</script>""")
        self.addCleanup(attacker.stop)
        self.browser.get(attacker.url)
        self.wait.until(lambda browser: browser.title.startswith('sent:'))
        # The form's answer lands in the frame; wait until the daemon has seen it.
        self.wait.until(lambda _: self.refused() >= 4)
        self.assertEqual(self.learned_ids(), before_ids)
        _, after = self.daemon.call('GET', '/stats')
        self.assertEqual(after['classes'], before['classes'])

    def refused(self):
        """Requests the daemon answered 403 cross_site, from /metrics."""
        request = urllib.request.Request(self.daemon.base + '/metrics')
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
        return sum(float(line.rsplit(' ', 1)[1]) for line in text.splitlines()
                   if line.startswith('nbspamd_http_requests_total{') and 'status="403"' in line)

    def test_a_name_that_resolves_to_the_daemon_reads_nothing(self):
        self.daemon.seed()
        port = self.daemon.base.rsplit(':', 1)[1]
        # DNS rebinding: attacker.example now resolves to 127.0.0.1, so the page at
        # http://attacker.example:PORT is "same-origin" with the daemon; its Host names no daemon.
        self.browser.get(f'http://attacker.example:{port}/ui/')
        statuses = self.browser.execute_async_script("""
const done = arguments[arguments.length - 1];
Promise.all(['/history', '/stats', '/admin/learned?source='].map(
  (path) => fetch(path).then((r) => r.status, () => 'failed'))).then(done);""")
        self.assertEqual(statuses, [421, 421, 421])
        # The console itself, at the daemon's own address, keeps working.
        self.open('status')
        self.find('#status-cards[data-documents]')


def main():
    global DAEMON, SCREENSHOTS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--daemon', required=True, help='the nbspamd binary')
    parser.add_argument('--screenshots', help='a folder for the pages\' screenshots')
    args, rest = parser.parse_known_args()
    DAEMON = os.path.abspath(args.daemon)
    SCREENSHOTS = args.screenshots
    unittest.main(argv=[sys.argv[0], '-v', *rest])


if __name__ == '__main__':
    main()
