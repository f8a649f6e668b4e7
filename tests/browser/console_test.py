#!/usr/bin/python3
"""The console (/ui/) in a real headless Chromium against the real daemon on 127.0.0.1.

Debian's chromium, chromium-driver and python3-selenium (scripts/install-deps --test). Each test
starts its own nbspamd (an ephemeral port, a temp data folder), drives the page as an
administrator would, and checks what the page shows against the HTTP API. Any JavaScript error
in the page fails the test. The tests share one Chromium for each set of browser flags (one takes
seconds to start, the test's own daemon a fifth of a second), left as a new one would be after
each test: one blank tab, no script added, the daemon's storage cleared. Screenshots of each page
go to --screenshots (the README's come from
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
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select
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


# Browser flags → (Chromium, its folder), shared by the tests that ask for the same flags.
BROWSERS = {}


def shared_browser(flags):
    if flags not in BROWSERS:
        folder = tempfile.mkdtemp(prefix='nbspamd-browser-')
        try:
            BROWSERS[flags] = (new_browser(folder, flags), folder)
        except Exception:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    return BROWSERS[flags][0]


def close_browser(flags):
    browser, folder = BROWSERS.pop(flags)
    try:
        browser.quit()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def tearDownModule():
    for flags in list(BROWSERS):
        close_browser(flags)


class ConsoleTestCase(unittest.TestCase):
    flags = ()
    browser_flags = ()

    def setUp(self):
        self.daemon = Daemon(*self.flags)
        self.addCleanup(self.daemon.stop)
        self.browser = shared_browser(self.browser_flags)
        self.home = self.browser.current_window_handle
        self.added_scripts = []
        # What an earlier test's page logged as it was left is not this test's.
        self.browser.get_log('browser')
        # Runs before the daemon stops (cleanups run last first).
        self.addCleanup(self.leave_browser)
        self.wait = WebDriverWait(self.browser, WAIT_SECONDS)

    def leave_browser(self):
        """Leaves the shared browser as a new one: one blank tab, no script added, no storage of
        the page's origin; a browser that cannot be left so is closed (the next test starts
        another)."""
        try:
            try:
                self.browser.switch_to.alert.dismiss()
            except Exception:
                pass  # No dialog open.
            for handle in self.browser.window_handles:
                if handle != self.home:
                    self.browser.switch_to.window(handle)
                    self.browser.close()
            self.browser.switch_to.window(self.home)
            for identifier in self.added_scripts:
                self.browser.execute_cdp_cmd('Page.removeScriptToEvaluateOnNewDocument',
                                             {'identifier': identifier})
            try:
                self.browser.execute_script('sessionStorage.clear(); localStorage.clear();')
            except Exception:
                pass  # A page without storage (about:blank, an error page).
            self.browser.delete_all_cookies()
            self.browser.get('about:blank')
        except Exception:
            close_browser(self.browser_flags)
            raise

    def add_script_on_new_document(self, source):
        """Runs `source` in every page this test opens, before the page's own scripts."""
        added = self.browser.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument',
                                             {'source': source})
        self.added_scripts.append(added['identifier'])

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
        """The text of the element `css` once it holds `text`. A page may put a new element in its
        place at any time (a table drawn again when a later answer arrives), so the element is
        found and read in one step: an element found, then replaced before it was read, was read
        as stale."""
        def holds(_):
            try:
                content = self.browser.find_element(By.CSS_SELECTOR, css).text
            except (NoSuchElementException, StaleElementReferenceException):
                return False
            return content if text in content else False
        return self.wait.until(holds)

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
        # A word's character n-grams (the default char_ngrams 4) say what they are; words do not.
        sources = [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#scan-explain td:nth-child(2)')]
        pieces = [t['source'] + ', letters of a word' if '#' in t['token'] else t['source'] for t in scan['explain']]
        self.assertEqual(sources, pieces)
        self.assertTrue(any('#' in t['token'] for t in scan['explain']), scan['explain'])
        self.assertTrue(any('#' not in t['token'] for t in scan['explain']), scan['explain'])
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
        self.find('#chart-calibration line[data-tick=zero]')  # No curve yet: not fitted (ModelPageTest).
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
        self.text_in('#rollback-what', f'{listed} records')
        self.browser.find_element(By.CSS_SELECTOR, '#rollback-typed').send_keys('forget everything')
        self.browser.find_element(By.CSS_SELECTOR, '#rollback-go').click()
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


class ConsoleFixesTest(ConsoleTestCase):
    """Issue #61: what an administrator found misleading or broken in the console."""

    def classify(self, raw):
        status, answer = self.daemon.call('POST', '/classify', raw)
        self.assertEqual(status, 200, answer)
        return answer

    def test_check_says_whether_it_checked_the_file_or_the_pasted_text(self):
        self.daemon.seed()
        path = os.path.join(self.daemon.dir, 'upload.eml')
        with open(path, 'wb') as f:
            f.write(SPAM[0])
        self.open('check')
        self.find('#check-file').send_keys(path)
        # Typing after a file was chosen: the file is let go, and the pasted text is what is checked.
        self.visible('#check-text').send_keys('Subject: Lunch?\n\nAre you free for lunch on Thursday?')
        self.assertEqual(self.find('#check-file').get_attribute('value'), '',
                         'typing leaves the chosen file in place')
        self.browser.find_element(By.CSS_SELECTOR, '#check-form button[type=submit]').click()
        self.text_in('#check-source', 'the pasted text')
        pasted = self.classify(b'Subject: Lunch?\r\n\r\nAre you free for lunch on Thursday?\r\n')
        self.assertEqual(self.visible('#check-verdict .badge').text, pasted['verdict'])
        # Choosing a file after typing: the text is cleared, the file is what is checked.
        self.find('#check-file').send_keys(path)
        self.assertEqual(self.find('#check-text').get_attribute('value'), '')
        self.browser.find_element(By.CSS_SELECTOR, '#check-form button[type=submit]').click()
        self.text_in('#check-source', 'the file upload.eml')
        self.assertEqual(self.visible('#check-verdict .badge').text, self.classify(SPAM[0])['verdict'])

    def test_an_unknown_or_malformed_scan_id_replaces_the_scan_view(self):
        self.daemon.seed()
        scan_id = self.classify(SPAM[0])['scan_id']
        self.open(f'scan/{scan_id}')
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#scan-explain tbody tr')) > 0)
        for bad in ('0000000000000000000000000', 'not%20a%20scan%2F..'):
            self.open(f'scan/{bad}')
            self.visible('#scan-error')
            self.assertIn('no such scan', self.find('#scan-error').text.lower() + ' ' +
                          self.find('#scan-error').text)
            # Nothing of the previous scan is left to read or act on.
            for css in ('#scan-summary', '#scan-actions', '#scan-explain'):
                self.assertFalse(self.browser.find_element(By.CSS_SELECTOR, css).is_displayed(),
                                 f'{css} of the previous scan is still shown')
            self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, '#scan-explain tbody tr'), [])
        # A good id again: the view is back.
        self.open(f'scan/{scan_id}')
        self.visible('#scan-actions button[data-action=ham]')
        self.assertFalse(self.browser.find_element(By.CSS_SELECTOR, '#scan-error').is_displayed())

    def test_the_ready_badge_is_filled_on_every_page(self):
        for page in ('history', 'check', 'model'):
            self.open(page)
            WebDriverWait(self.browser, 5).until(
                lambda b: b.find_element(By.CSS_SELECTOR, '#ready-badge').text == 'ready',
                f'the ready badge is not filled on {page}')
        # Refreshed: a page stays open and the badge is redrawn (data-checked moves on).
        first = self.find('#ready-badge').get_attribute('data-checked')
        self.browser.execute_script('window.dispatchEvent(new Event("focus"));')
        self.wait.until(lambda b: b.find_element(By.CSS_SELECTOR, '#ready-badge').get_attribute('data-checked') != first)

    def test_a_rejected_training_is_not_a_failure(self):
        for n in range(6):  # The client's mistakes: an empty message (400), an unknown id (404).
            self.assertEqual(self.daemon.call('POST', f'/train?label=spam&id=empty{n}', b'')[0], 400)
            self.assertEqual(self.daemon.call('POST', f'/forget?id=unknown{n}', b'')[0], 404)
        status, activity = self.daemon.call('GET', '/activity')
        self.assertEqual(status, 200)
        self.open('status')
        detail = self.find('#trained-card .card-detail')
        self.text_in('#trained-card .card-detail', 'rejected')
        rejected = sum(m.get('train_rejected', 0) for m in activity['minutes'])
        failed = sum(m.get('train_failed', 0) for m in activity['minutes'])
        # The daemon counts the client's mistakes apart (train_rejected), not as failures.
        self.assertEqual((rejected, failed), (12, 0))
        self.assertIn(f'{rejected} rejected', detail.text)
        self.assertIn(f'{failed} failed', detail.text)
        failed_node = detail.find_element(By.CSS_SELECTOR, '.failed')
        self.assertEqual('bad' in failed_node.get_attribute('class').split(), failed > 0)

    def test_rejected_and_failed_are_shown_apart(self):
        # The /activity contract (train_rejected: 4xx, train_failed: 5xx), given to the page as the
        # daemon will answer it, whatever this build's backend counts.
        self.add_script_on_new_document("""
const realFetch = window.fetch;
window.fetch = async (path, init) => {
  const response = await realFetch(path, init);
  if (!String(path).startsWith('/activity')) return response;
  const body = await response.json();
  for (const m of body.rows) { m.train_rejected = 0; m.train_failed = 0; }
  body.rows[59].train_rejected = 1000; body.rows[58].train_failed = 15;
  return new Response(JSON.stringify(body), {status: 200, headers: {'Content-Type': 'application/json'}});
};""")
        self.open('status')
        self.text_in('#trained-card .card-detail', '1,000 rejected')
        detail = self.find('#trained-card .card-detail')
        self.assertIn('15 failed', detail.text)
        self.assertNotIn('bad', detail.find_element(By.CSS_SELECTOR, '.rejected').get_attribute('class').split())
        self.assertIn('bad', detail.find_element(By.CSS_SELECTOR, '.failed').get_attribute('class').split())
        legend = [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#legend-train li')]
        self.assertEqual(legend, ['trained', 'rejected', 'failed'])

    def train_many(self, count, prefix):
        for n in range(count):
            raw = message(f'Offer {prefix}{n}', f'cheap offer number {n} {prefix}', message_id=f'{prefix}{n}@example.org')
            status, answer = self.daemon.call('POST', f'/train?label={"spam" if n % 2 else "ham"}&id={prefix}{n}', raw)
            self.assertEqual(status, 200, answer)

    def test_what_a_source_trained_is_counted_whole_newest_first_and_paged(self):
        self.train_many(230, 'old')
        time.sleep(1.1)
        self.train_many(3, 'new')
        self.open('model')
        self.find('#users-table')
        self.browser.find_element(By.CSS_SELECTOR, '#source-form button[type=submit]').click()
        self.text_in('#source-result', '233 messages trained through (no token)')
        first_ids = [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#learned-table td.key')]
        self.assertEqual(len(first_ids), 200)
        self.assertTrue(first_ids[0].startswith('new'), first_ids[:3])
        self.text_in('#learned-count', '1–200 of 233')
        self.browser.find_element(By.CSS_SELECTOR, '#learned-older').click()
        self.text_in('#learned-count', '201–233 of 233')
        older_ids = [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#learned-table td.key')]
        self.assertEqual(len(older_ids), 33)
        self.assertEqual(len(set(first_ids) | set(older_ids)), 233)
        self.assertFalse(self.find('#learned-older').is_enabled())
        self.browser.find_element(By.CSS_SELECTOR, '#learned-newer').click()
        self.text_in('#learned-count', '1–200 of 233')
        self.assertEqual([e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#learned-table td.key')],
                         first_ids)
        self.assertFalse(self.find('#learned-newer').is_enabled())

    def test_rolling_back_the_whole_model_says_so_and_needs_it_typed(self):
        self.daemon.seed()
        documents = self.daemon.call('GET', '/stats')[1]['documents']
        self.assertGreater(documents, 0)
        self.open('model')
        self.find('#users-table')
        self.browser.find_element(By.CSS_SELECTOR, '#source-rollback').click()
        box = self.visible('#rollback-confirm')
        self.text_in('#rollback-what', '6 records')
        self.assertIn('the whole model', box.text)
        go = self.browser.find_element(By.CSS_SELECTOR, '#rollback-go')
        self.assertFalse(go.is_enabled())
        self.browser.find_element(By.CSS_SELECTOR, '#rollback-typed').send_keys('forget')
        self.assertFalse(go.is_enabled())
        self.assertEqual(self.daemon.call('GET', '/stats')[1]['documents'], documents)
        self.browser.find_element(By.CSS_SELECTOR, '#rollback-typed').send_keys(' everything')
        self.assertTrue(go.is_enabled())
        go.click()
        self.text_in('#source-result', 'forgotten: 6')
        self.assertEqual(self.daemon.call('GET', '/stats')[1]['documents'], 0)

    def test_one_probability_leads_and_the_verdict_is_said_in_words(self):
        self.daemon.seed()
        self.check_message(SPAM[1])
        meaning = self.visible('#check-meaning').text
        self.assertIn('chance this is spam', meaning.lower())
        verdict = self.visible('#check-verdict .badge').text
        self.assertIn(verdict, meaning)
        # The other numbers are there, folded away.
        details = self.find('#check-result details')
        self.assertFalse(details.get_attribute('open'))
        self.assertIn('P(spam)', details.get_attribute('textContent'))
        self.assertIn('score', details.get_attribute('textContent'))
        self.assertNotIn('P(spam)', self.find('#check-summary').get_attribute('textContent'))
        scan_id = self.find('#check-summary a').text
        self.open(f'scan/{scan_id}')
        self.text_in('#scan-meaning', 'Chance this is spam')
        self.assertIn('score', self.find('#page-scan details').get_attribute('textContent'))
        self.assertNotIn('score', [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#scan-summary dt')])

    def test_history_ids_are_links_and_pages_go_both_ways(self):
        self.daemon.seed()
        ids = [self.classify(message(f'Note {n}', f'plain note number {n}'))['scan_id'] for n in range(30)]
        self.open('history')
        self.find('#history-filters select[name=limit]')
        self.browser.execute_script(
            "document.querySelector('#history-filters select[name=limit]').value = '25';")
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 25)
        link = self.find(f'#history-table a[href="#scan/{ids[-1]}"]')
        self.assertEqual(link.text, ids[-1])
        newer = self.find('#history-newer')
        self.assertFalse(newer.is_enabled())
        self.browser.find_element(By.CSS_SELECTOR, '#history-older').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 5)
        self.assertTrue(newer.is_enabled())
        newer.click()
        self.find(f'#history-table a[href="#scan/{ids[-1]}"]')
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')), 25)
        # Ctrl+click opens the scan in a new tab and leaves this one on the History.
        link = self.find(f'#history-table a[href="#scan/{ids[-1]}"]')
        ActionChains(self.browser).key_down(Keys.CONTROL).click(link).key_up(Keys.CONTROL).perform()
        self.wait.until(lambda b: len(b.window_handles) == 2)
        self.assertTrue(self.browser.current_url.endswith('#history'), self.browser.current_url)
        # The keyboard: focus the link, Enter opens the scan.
        self.browser.execute_script('arguments[0].focus();', link)
        self.assertEqual(self.browser.switch_to.active_element, link)
        link.send_keys('\ue007')  # Enter
        self.text_in('#scan-id', ids[-1])

    def test_status_charts_have_legends(self):
        self.open('status')
        self.find('#status-cards[data-documents]')
        legends = {chart: [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, f'#legend-{chart} li')]
                   for chart in ('classify', 'latency', 'train')}
        self.assertEqual(legends['classify'], ['spam', 'unsure', 'ham'])
        self.assertEqual(legends['latency'], ['p50', 'p99'])
        self.assertIn('trained', legends['train'])

    def test_no_request_of_the_page_is_missing(self):
        self.open('status')
        self.find('#status-cards[data-documents]')
        time.sleep(1)
        self.open('history')
        self.find('#history-table')
        time.sleep(1)
        missing = [e['message'] for e in self.browser.get_log('browser')
                   if e.get('source') == 'network' and ' 404 ' in e['message']]
        self.assertEqual(missing, [])
        icon = self.browser.execute_script("const l = document.querySelector('link[rel=icon]'); return l && l.href;")
        self.assertTrue(icon, 'no icon is declared')
        with urllib.request.urlopen(icon, timeout=10) as response:
            self.assertEqual(response.status, 200)


class StatusRangesTest(ConsoleTestCase):
    """The Status page over the day and the month, and what runs since when."""

    def test_the_day_and_the_month_are_links_and_the_page_says_what_runs(self):
        self.daemon.seed()
        for raw in (SPAM[0], HAM[0]):
            self.assertEqual(self.daemon.call('POST', '/classify', raw)[0], 200)
        status, health = self.daemon.call('GET', '/healthz')
        self.assertEqual(status, 200)
        self.open('status')
        line = self.text_in('#daemon-line', f'nbspamd {health["version"]}')
        self.assertIn('up ', line)
        self.assertIn(health['build_type'], line)
        self.text_in('#caption-classify', 'per minute, last hour')
        # The ranges are links: the day by 5 minutes, then the month by hour, each with its own URL.
        self.find('#activity-ranges a[href="#status/day"]').click()
        self.text_in('#caption-classify', 'Classified per 5 minutes, last 24 hours')
        self.assertTrue(self.browser.current_url.endswith('#status/day'))
        self.assertEqual(self.find('#activity-ranges a.active').get_attribute('data-range'), 'day')
        self.wait.until(lambda b: 'classified, last 24 hours' in
                        b.find_element(By.CSS_SELECTOR, '#status-cards').text.lower())
        self.find('#activity-ranges a[href="#status/month"]').click()
        self.text_in('#caption-train', 'per hour, last 30 days')
        cards = {c.find_element(By.CSS_SELECTOR, '.card-title').text.lower():
                 c.find_element(By.CSS_SELECTOR, '.card-value').text
                 for c in self.browser.find_elements(By.CSS_SELECTOR, '#status-cards .card')}
        self.assertEqual(cards['classified, last 30 days'], '2')
        self.assertEqual(cards['trained, last 30 days'], str(len(SPAM) + len(HAM)))
        # The axis names the day once the rows span more than one (MM-DD HH:MM).
        labels = [t.text for t in self.browser.find_elements(By.CSS_SELECTOR, '#chart-classify text.axis-label')]
        self.assertTrue(any(re.fullmatch(r'\d\d-\d\d \d\d:\d\d', label) for label in labels), labels)
        self.shoot('status-month')


def crafted_calibration(ready=True):
    """A held-out histogram whose end bins (scores clamped to the range's ends) dwarf the middle:
    600 hams at or below -2, 500 spams at or above 2, a few of each in between."""
    bins = []
    for i in range(100):
        low = round(-2 + 0.04 * i, 2)
        ham = 600 if i == 0 else (3 if 30 <= i < 46 else 0)
        spam = 500 if i == 99 else (4 if 55 <= i < 71 else 0)
        bins.append({'low': low, 'high': round(low + 0.04, 2), 'spam': spam, 'ham': ham,
                     'fitted': 1 / (1 + 2.718281828 ** (-(i - 50) / 8)) if ready else 0})
    return {'ready': ready, 'spam': sum(b['spam'] for b in bins), 'ham': sum(b['ham'] for b in bins),
            'min_per_class': 20, 'bins': bins}


class ModelPageTest(ConsoleTestCase):
    """Issue #61: the Model page's calibration chart, what the model knows, thresholds."""

    def open_model_with(self, calibration):
        """The Model page, its /calibration answered with `calibration` (the rest by the daemon)."""
        self.open('status')
        self.find('#status-cards[data-documents]')
        self.browser.execute_script('''
            const crafted = arguments[0];
            const real = window.fetch.bind(window);
            window.fetch = (path, options) => String(path).startsWith('/calibration')
              ? Promise.resolve(new Response(JSON.stringify(crafted),
                                             {status: 200, headers: {'Content-Type': 'application/json'}}))
              : real(path, options);
            location.hash = 'model';''', calibration)
        self.text_in('#calibration-note', 'held-out')
        return self.find('#chart-calibration')

    def boxes(self, selector):
        return self.browser.execute_script('''
            return [...document.querySelectorAll(arguments[0])].map((e) => {
              const b = e.getBBox();
              return {x: b.x, y: b.y, w: b.width, h: b.height, text: e.textContent,
                      cls: e.getAttribute('class') || ''};
            });''', selector)

    def test_no_fitted_line_is_drawn_before_anything_is_fitted(self):
        self.daemon.seed()  # Three of each: far from the 20 of each the fit needs.
        self.open('model')
        self.text_in('#calibration-note', 'held-out')
        calibration = self.daemon.call('GET', '/calibration')[1]
        self.assertFalse(calibration['ready'])
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, '#chart-calibration .fitted'), [],
                         'a fitted line is drawn though nothing is fitted')
        note = self.find('#calibration-note').text
        self.assertIn('not fitted yet', note)
        spam_needed = max(0, 20 - calibration['spam'])
        ham_needed = max(0, 20 - calibration['ham'])
        self.assertIn(f'needs {spam_needed} more spam and {ham_needed} more ham held-out scores', note)

    def test_the_clamped_end_bins_do_not_flatten_the_middle(self):
        self.open_model_with(crafted_calibration())
        bars = self.boxes('#chart-calibration rect.bar')
        middle = [b for b in bars if 'clamped' not in b['cls']]
        ends = [b for b in bars if 'clamped' in b['cls']]
        self.assertEqual(len(ends), 2, 'the end bins are not drawn apart')
        tallest_end = max(b['h'] for b in ends)
        tallest_middle = max(b['h'] for b in middle)
        # The middle's tallest bar is scaled to the middle, not squashed by 500 against 4.
        self.assertGreater(tallest_middle, 0.8 * tallest_end)
        labels = [t['text'] for t in self.boxes('#chart-calibration text')]
        self.assertTrue(any('≥ 2' in t for t in labels), labels)
        self.assertTrue(any('≤ -2' in t or '≤ −2' in t for t in labels), labels)
        self.shoot('model-calibration')

    def test_the_calibration_labels_do_not_overlap(self):
        self.open_model_with(crafted_calibration())
        texts = self.boxes('#chart-calibration text')
        bars = self.boxes('#chart-calibration rect.bar')
        self.assertTrue(texts)

        def overlap(a, b):
            return (a['x'] < b['x'] + b['w'] and b['x'] < a['x'] + a['w'] and
                    a['y'] < b['y'] + b['h'] and b['y'] < a['y'] + a['h'])

        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                self.assertFalse(overlap(a, b), f'{a["text"]!r} overlaps {b["text"]!r}')
            for bar in bars:
                self.assertFalse(overlap(a, bar), f'{a["text"]!r} overlaps a bar')

    def test_the_calibration_chart_has_ticks_at_zero_and_at_the_thresholds(self):
        self.daemon.seed()
        self.open('model')
        self.text_in('#calibration-note', 'held-out')
        stats = self.daemon.call('GET', '/stats')[1]
        ticks = {e.get_attribute('data-tick'): float(e.get_attribute('data-score'))
                 for e in self.browser.find_elements(By.CSS_SELECTOR, '#chart-calibration [data-tick]')}
        self.assertEqual(ticks.get('zero'), 0.0, ticks)
        self.assertAlmostEqual(ticks.get('spam-threshold'), stats['spam_threshold'])
        self.assertAlmostEqual(ticks.get('ham-threshold'), stats['ham_threshold'])
        # Each tick line sits where its score is on the axis: 0 in the middle of -2..2.
        zero = self.browser.find_element(By.CSS_SELECTOR, '#chart-calibration line[data-tick=zero]')
        left, right = (float(v) for v in self.find('#chart-calibration').get_attribute('data-plot').split())
        self.assertAlmostEqual(float(zero.get_attribute('x1')), (left + right) / 2, delta=0.5)

    def test_the_calibration_chart_has_a_legend(self):
        self.open_model_with(crafted_calibration())
        legend = [e.text for e in self.browser.find_elements(By.CSS_SELECTOR, '#legend-calibration li')]
        self.assertIn('spam', legend)
        self.assertIn('ham', legend)
        self.assertTrue(any('fitted' in t for t in legend), legend)
        self.assertTrue(any('threshold' in t for t in legend), legend)

    def test_a_token_is_looked_up_and_the_strongest_are_listed(self):
        self.daemon.seed()
        self.daemon.call('POST', '/classify', SPAM[0])  # A scan of the history names its tokens.
        self.open('model')
        box = self.visible('#token-lookup input[name=word]')
        box.send_keys('Cheap')
        self.browser.find_element(By.CSS_SELECTOR, '#token-lookup button[type=submit]').click()
        self.text_in('#token-table', 'subject:cheap')
        status, answer = self.daemon.call('GET', '/model/token?word=Cheap')
        self.assertEqual(status, 200, answer)
        cheap = next(t for t in answer['tokens'] if t['token'] == 'cheap')
        row = self.find('#token-table tr[data-token="cheap"]')
        self.assertIn(str(cheap['counts']['spam']), row.text)
        self.assertIn(f'{cheap["weight"]:.3f}', row.text)
        # The strongest of each class, as the API lists them.
        self.browser.find_element(By.CSS_SELECTOR, '#strongest-form button[type=submit]').click()
        status, strongest = self.daemon.call('GET', '/model/strongest?class=spam&limit=20&min_count=2')
        self.assertEqual(status, 200, strongest)
        self.wait.until(lambda _: len(self.browser.find_elements(By.CSS_SELECTOR, '#strongest-spam tbody tr'))
                        == len(strongest['tokens']))
        if strongest['tokens']:
            first = strongest['tokens'][0]
            self.text_in('#strongest-spam tbody tr:first-child', first['token'] or first['hash'])
        self.text_in('#strongest-rule', 'at least 2')
        self.browser.execute_script("document.getElementById('token-lookup').scrollIntoView();")
        self.shoot('model-tokens')

    def test_a_threshold_pair_shows_its_consequences_before_it_is_applied(self):
        token = 'admin-secret-for-model-page'
        self.daemon.stop()
        self.daemon = Daemon('--auth-tokens', f'admin:{token}')
        self.addCleanup(self.daemon.stop)
        self.daemon.seed(token=token)
        for i in range(3):  # Spams learned once both classes exist: held-out scores of spam too.
            status, answer = self.daemon.call(
                'POST', '/train?label=spam', message(f'Cheap offer {i}', f'Buy cheap pills now, offer {i}'), token=token)
            self.assertEqual(status, 200, answer)
        self.open('model')
        self.text_in('#thresholds-current', 'in force')
        form = self.visible('#thresholds-form')
        spam = form.find_element(By.NAME, 'spam')
        ham = form.find_element(By.NAME, 'ham')
        spam.clear()
        spam.send_keys('0.5')
        ham.clear()
        ham.send_keys('-0.5')
        form.find_element(By.CSS_SELECTOR, 'button[data-action=preview]').click()
        status, answer = self.daemon.call('GET', '/model/thresholds?spam=0.5&ham=-0.5')
        self.assertEqual(status, 200, answer)
        preview = self.text_in('#thresholds-preview', 'ham called spam')
        self.assertIn(f'{answer["pair"]["hams"]["spam"]} of {answer["hams"]}', preview)
        self.assertIn(f'{answer["pair"]["spams"]["ham"]} of {answer["spams"]}', preview)
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, '#thresholds-table tbody tr')),
                         len(answer['curve']))
        # Applying without a token: the daemon refuses, the page says so and asks for a token.
        form.find_element(By.CSS_SELECTOR, 'button[data-action=apply]').click()
        self.text_in('#thresholds-result', 'Error')
        self.assertIn('401', self.find('#thresholds-result').text)
        self.assertTrue(self.find('#token-panel').is_displayed())
        self.assertEqual(self.daemon.call('GET', '/stats')[1]['spam_threshold'], 0.9)
        # With the token: POST /admin/reload {"set": ...} applies both, and the page says so.
        self.browser.execute_script(f'sessionStorage.setItem("nbspamd.token", "{token}");')
        form.find_element(By.CSS_SELECTOR, 'button[data-action=apply]').click()
        self.text_in('#thresholds-result', 'applied: spam_threshold, ham_threshold')
        stats = self.daemon.call('GET', '/stats', token=token)[1]
        self.assertEqual(stats['spam_threshold'], 0.5)
        self.assertEqual(stats['ham_threshold'], -0.5)
        self.text_in('#thresholds-current', 'spam > 0.5, ham ≤ -0.5')
        self.browser.execute_script('document.getElementById("token-panel").hidden = true;')
        self.browser.execute_script('document.getElementById("thresholds-form").scrollIntoView();')
        self.shoot('model-thresholds')
        # A pair the daemon would refuse is stopped in the page: ham above spam.
        ham.clear()
        ham.send_keys('0.9')
        form.find_element(By.CSS_SELECTOR, 'button[data-action=apply]').click()
        self.text_in('#thresholds-result', 'at most the spam threshold')


class ConsoleRefusedTest(ConsoleTestCase):
    flags = ('--auth-tokens', 'admin:s3cret-console-token-1', '--auth-classify', 'true')

    def test_every_page_whose_calls_are_refused_says_a_token_is_needed(self):
        for page in ('status', 'history', 'model', 'scan/abc'):
            self.open(page)
            self.text_in('#notice', 'token')
            self.assertTrue(self.find('#notice').is_displayed(), page)
            self.assertIn('needs a token', self.find('#notice').text, page)
        # The refresh of Status is refused as well: the notice stays, no error escapes.
        self.open('status')
        self.text_in('#notice', 'needs a token')
        self.browser.execute_script('window.dispatchEvent(new Event("focus"));')
        time.sleep(1)
        self.assertIn('needs a token', self.find('#notice').text)


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


class LearnedHistoryTest(ConsoleTestCase):
    """The History page shows whether a scan was learned (how, when, by whom) and finds a scan by
    a word of its subject, which the history keeps in clear by default."""

    def classify(self, raw):
        status, answer = self.daemon.call('POST', '/classify', raw)
        self.assertEqual(status, 200, answer)
        return answer['scan_id']

    def test_the_learned_badge_after_a_train_by_scan_id(self):
        self.daemon.seed()
        scan_id = self.classify(message('Cheap watches again', 'Cheap replica watches, click here now'))
        other = self.classify(message('Agenda', 'The agenda for the planning meeting on Tuesday'))
        status, answer = self.daemon.call('POST', f'/train?label=spam&scan_id={scan_id}', b'')
        self.assertEqual(status, 200, answer)

        self.open('history')
        badge = self.find(f'#history-table tr[data-scan="{scan_id}"] td.learned .badge')
        self.assertEqual(badge.text, 'spam')
        self.assertIn('Learned as spam', badge.get_attribute('title'))
        self.assertIn('by scan id', badge.get_attribute('title'))
        untouched = self.find(f'#history-table tr[data-scan="{other}"] td.learned')
        self.assertEqual(untouched.find_elements(By.CSS_SELECTOR, '.badge'), [])
        self.assertEqual(self.find('#history-table th.learned').text.lower(), 'learned')

        # The filter: only the learned scan.
        from selenium.webdriver.support.ui import Select  # pylint: disable=import-outside-toplevel
        Select(self.find('#history-filters select[name=learned]')).select_by_visible_text('spam')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 1)
        self.find(f'#history-table tr[data-scan="{scan_id}"]')

        # The scan's page says how, and a relearn from there changes it.
        self.open(f'scan/{scan_id}')
        self.text_in('#scan-learned', 'Learned as spam')
        self.assertIn('by scan id', self.find('#scan-learned').text)
        self.browser.find_element(By.CSS_SELECTOR, '#scan-actions button[data-action=ham]').click()
        self.text_in('#scan-result', 'relearned as ham')
        self.text_in('#scan-learned', 'Learned as ham')
        self.assertIn('2 changes', self.find('#scan-learned').text)
        self.shoot('scan-learned')

    def test_a_scan_learned_as_what_it_was_scored_says_it_was_only_checked(self):
        checked = Daemon('--train-margin', '0')  # Anything scored right is only checked.
        self.addCleanup(checked.stop)
        checked.seed()
        status, answer = checked.call('POST', '/classify',
                                      message('Cheap watches again', 'Cheap replica watches, click here now'))
        self.assertEqual(status, 200, answer)
        self.assertGreater(answer['score'], 0, answer)
        documents = checked.call('GET', '/stats')[1]['documents']
        self.browser.get(f'{checked.base}/ui/#scan/{answer["scan_id"]}')
        self.find('#scan-actions button[data-action=spam]').click()
        self.text_in('#scan-result', 'checked as spam: already scored spam beyond train_margin, so recorded, '
                                     'not counted')
        self.assertEqual(checked.call('GET', '/stats')[1]['documents'], documents)
        # The scan's learned line says the same, not "Learned as spam".
        self.text_in('#scan-learned', 'Checked as spam')
        self.text_in('#scan-learned', 'recorded, not counted')
        self.assertEqual(self.find('#scan-learned .badge').text, 'spam (checked)')
        self.assertEqual(checked.call('GET', f'/history/{answer["scan_id"]}')[1]['learned']['state'], 'checked')
        self.shoot('scan-checked')
        # The History's Learned filter finds it as checked, and not a scan never learned.
        other = checked.call('POST', '/classify', message('Lunch on Friday', 'The usual place at noon'))[1]
        self.browser.get(f'{checked.base}/ui/#history')
        self.find(f'#history-table tr[data-scan="{other["scan_id"]}"]')
        Select(self.find('#history-filters select[name=learned]')).select_by_visible_text('checked')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 1)
        self.text_in(f'#history-table tr[data-scan="{answer["scan_id"]}"] td.learned', 'spam (checked)')
        # On one line in the narrow column: two lines would be about twice this height.
        badge = self.find(f'#history-table tr[data-scan="{answer["scan_id"]}"] td.learned .badge')
        self.assertLess(badge.size['height'], 26, badge.size)
        self.shoot('history-checked')
        status, page = checked.call('GET', '/history?learned=checked')
        self.assertEqual([scan['scan_id'] for scan in page['scans']], [answer['scan_id']], page)

    def test_a_word_of_the_subject_finds_the_scan(self):
        self.daemon.seed()
        scan_id = self.classify(message('Quarterly invoice from Globex', 'Please find the invoice attached'))
        self.classify(message('Lunch on Friday', 'The usual place at noon'))
        self.open('history')
        self.find(f'#history-table tr[data-scan="{scan_id}"]')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters input[name=q]').send_keys('INVOICE')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 1)
        self.find(f'#history-table tr[data-scan="{scan_id}"]')
        # Older scans keep hashes only: the page says what a word cannot find.
        self.text_in('#history-privacy', 'older than 7 days')
        self.shoot('history-search')


class HashedSubjectHistoryTest(ConsoleTestCase):
    """With subjects kept as hashes, a word finds nothing and the page says why."""
    flags = ('--history-keep-subject', 'hash')

    def test_the_page_says_subjects_are_hashed(self):
        self.daemon.seed()
        raw = message('Quarterly invoice from Globex', 'Please find the invoice attached')
        status, answer = self.daemon.call('POST', '/classify', raw)
        self.assertEqual(status, 200, answer)
        self.open('history')
        self.find(f'#history-table tr[data-scan="{answer["scan_id"]}"]')
        self.text_in('#history-privacy', 'subjects are kept as hashes: type the whole subject')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters input[name=q]').send_keys('invoice')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 0)
        self.text_in('#history-privacy', 'Search:')
        # The whole subject, in another case, finds it.
        box = self.browser.find_element(By.CSS_SELECTOR, '#history-filters input[name=q]')
        box.clear()
        box.send_keys('quarterly invoice from globex')
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, '#history-table tbody tr')) == 1)



class NoExplanationHistoryTest(ConsoleTestCase):
    """With history_explain 0 a scan keeps no tokens, and its page says so rather than nothing."""
    flags = ('--history-explain', '0')

    def test_the_scan_page_says_no_tokens_were_kept(self):
        self.daemon.seed()
        status, answer = self.daemon.call('POST', '/classify', message('Lunch', 'See you at noon'))
        self.assertEqual(status, 200, answer)
        self.open(f'scan/{answer["scan_id"]}')
        self.text_in('#scan-id', answer['scan_id'])
        self.text_in('#scan-explain tbody', 'No explaining tokens were kept with this scan')
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, '#scan-explain td.token'), [])

# Installed before the page's own scripts: the answers to requests whose path matches the
# pattern are held (their bodies read, the page not told) until window.releaseHeld() is called,
# which resolves once the page has done all it does with them (an answer is handed over as an
# object whose json() and text() resolve at once: the page's work on it is microtasks only, and
# the release resolves in the next task).
HOLD_ANSWERS = r"""
(() => {
  const pattern = new RegExp(%s);
  const real = window.fetch.bind(window);
  const held = [];
  window.heldAnswers = () => held.length;
  window.releaseHeld = () => {
    for (const release of held.splice(0)) release();
    return new Promise((done) => setTimeout(done, 0));
  };
  window.fetch = (path, options) => !pattern.test(String(path)) ? real(path, options) :
    real(path, options).then(async (response) => {
      const text = await response.text();
      const copy = {ok: response.ok, status: response.status, headers: response.headers,
                    json: () => Promise.resolve(JSON.parse(text)), text: () => Promise.resolve(text)};
      return new Promise((resolve) => held.push(() => resolve(copy)));
    });
})();
"""


class LateAnswerTest(ConsoleTestCase):
    """A view asked for again before its first answer arrives shows the newer answer: the older
    one, arriving last, is dropped (a form sent while the page's first load is still out)."""

    def hold_answers(self, pattern):
        self.add_script_on_new_document(HOLD_ANSWERS % json.dumps(pattern))

    def release_held(self):
        self.browser.execute_async_script(
            'const done = arguments[arguments.length - 1]; window.releaseHeld().then(done);')

    def rows(self, css):
        return len(self.browser.find_elements(By.CSS_SELECTOR, css))

    def test_the_strongest_sent_while_the_first_load_is_out_stay(self):
        self.daemon.seed()
        # The page's own load asks for the default 20; both of its answers are held.
        self.hold_answers(r'^/model/strongest\?.*[?&]limit=20(&|$)')
        self.open('model')
        self.wait.until(lambda b: b.execute_script('return window.heldAnswers();') == 2)
        form = self.visible('#strongest-form')
        for name, value in (('limit', '3'), ('min_count', '1')):
            box = form.find_element(By.NAME, name)
            box.clear()
            box.send_keys(value)
        form.find_element(By.CSS_SELECTOR, 'button[type=submit]').click()
        self.wait.until(lambda _: self.rows('#strongest-spam tbody tr') == 3 and
                        self.rows('#strongest-ham tbody tr') == 3)
        self.text_in('#strongest-rule', 'at least 1 times')
        # The first load's answers now arrive, last: the tables stay those of the form.
        self.release_held()
        self.assertEqual(self.rows('#strongest-spam tbody tr'), 3)
        self.assertEqual(self.rows('#strongest-ham tbody tr'), 3)
        self.assertIn('at least 1 times', self.find('#strongest-rule').text)

    def test_a_search_sent_while_the_first_page_is_out_stays(self):
        self.daemon.seed()
        for n in range(4):
            status, answer = self.daemon.call('POST', '/classify', message(f'Note {n}', f'plain note {n}'))
            self.assertEqual(status, 200, answer)
        wanted = answer['scan_id']
        # The page's own load has no search; its answer is held.
        self.hold_answers(r'^/history\?(?!(.*&)?q=)')
        self.open('history')
        self.wait.until(lambda b: b.execute_script('return window.heldAnswers();') == 1)
        box = self.visible('#history-filters input[name=q]')
        box.send_keys(wanted)
        self.browser.find_element(By.CSS_SELECTOR, '#history-filters button[type=submit]').click()
        self.find(f'#history-table a[href="#scan/{wanted}"]')
        self.assertEqual(self.rows('#history-table tbody tr'), 1)
        # The unsearched page's answer arrives last: the search's one row stays.
        self.release_held()
        self.assertEqual(self.rows('#history-table tbody tr'), 1)
        self.assertIn('1 scans', self.find('#history-count').text)


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
