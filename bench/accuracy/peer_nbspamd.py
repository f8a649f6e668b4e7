# nbspamd under test: the real daemon on 127.0.0.1 with a fresh data folder, spoken to over
# HTTP/1.1 keep-alive. Ranks by the JSON "score"; the verdict is its "verdict" (spam, unsure or
# ham) when the daemon gives one, else its "label"; "spam_confidence" is recorded when present.
import http.client
import json
import os
import subprocess
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

from common import VERDICTS, Peer, Verdict, command_output, stop_process

CLASSIFY_CONNECTIONS = 2  # requests in flight while classifying a batch (2 cores)
MAX_PASSES = 10  # bulk training under error-driven training: passes over what was only checked


class Nbspamd(Peer):
    name = 'nbspamd'

    def __init__(self, workdir, binary, extra_args, bulk_count_all=True):
        self.workdir, self.binary, self.extra_args = workdir, binary, list(extra_args)
        self.bulk_count_all = bulk_count_all  # bulk training with count=all (harness --nbspamd-bulk all)
        self.process, self.port = None, None
        self.local = threading.local()  # one keep-alive connection per thread

    def start(self):
        args = [self.binary, '--listen', '127.0.0.1:0', '--data-dir', os.path.join(self.workdir, 'db'),
                *self.extra_args]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(
            os.path.join(self.workdir, 'nbspamd.log'), 'wb'), text=True)
        line = self.process.stdout.readline()
        if not line.startswith('listening on '):
            raise RuntimeError(f'nbspamd did not start: {line!r}; see {self.workdir}/nbspamd.log')
        self.port = int(line.rsplit(':', 1)[1])

    def stop(self):
        stop_process(self.process)

    def info(self):
        stats = self.request('GET', '/stats')
        return {'version': command_output([self.binary, '--version']), 'binary': self.binary,
                'flags': self.extra_args, 'alpha': stats.get('alpha'), 'options': stats.get('options'),
                'train_margin': stats.get('train_margin'), 'train_passes': getattr(self, 'passes', None),
                'bulk_count_all': self.bulk_count_all,
                'final_stats': {k: stats.get(k) for k in ('classes', 'documents', 'vocabulary')}}

    def request(self, method, target, body=None):
        headers = {'Content-Type': 'message/rfc822'} if body is not None else {}
        for attempt in (1, 2):  # the daemon closes connections idle for a minute: reconnect once
            conn = getattr(self.local, 'conn', None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=60)
            try:
                conn.request(method, target, body=body, headers=headers)
                response = conn.getresponse()
                answer = json.loads(response.read())
                break
            except (ConnectionError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
        if response.status == 409:  # nothing learned yet
            return None
        if response.status != 200:
            raise RuntimeError(f'nbspamd {method} {target}: {response.status} {answer}')
        return answer

    def train_status(self, message, count_all=False):
        label = 'spam' if message.is_spam else 'ham'
        extra = '&count=all' if count_all else ''
        answer = self.request('POST', f'/train?label={label}&id={urllib.parse.quote(message.id, safe="")}{extra}',
                              message.data)
        return answer['status']

    def train_one(self, message):
        return self.train_status(message) in ('learned', 'relearned')

    def train(self, messages):
        """Bulk training as nbspamc does it: by default one pass, every message counted (count=all);
        with bulk_count_all False (nbspamc train --error-driven), a pass under the daemon's
        training regime, then more passes over the ones only checked, for as long as a pass still
        counts some and at most MAX_PASSES in all. Returns how many were counted."""
        learned, pending = 0, list(messages)
        self.passes = []
        for _ in range(MAX_PASSES):
            statuses = [self.train_status(m, self.bulk_count_all) for m in pending]
            counted = sum(s in ('learned', 'relearned') for s in statuses)
            learned += counted
            pending = [m for m, s in zip(pending, statuses) if s == 'checked']
            self.passes.append({'sent': len(statuses), 'counted': counted, 'checked': len(pending)})
            if not pending or counted == 0:
                break
        return learned

    def classify_one(self, message):
        answer = self.request('POST', '/classify', message.data)
        if answer is None:
            return Verdict(0.0, 'ham', scored=False)
        verdict = answer.get('verdict') or answer['label']
        if verdict not in VERDICTS:
            raise RuntimeError(f'nbspamd /classify: unknown verdict {verdict!r}')
        confidence = answer.get('spam_confidence')
        if answer['score'] is None:  # one class is still empty: only the verdict means something
            return Verdict(0.0, verdict, scored=False, confidence=confidence)
        return Verdict(answer['score'], verdict, confidence=confidence)

    def classify(self, messages):
        with ThreadPoolExecutor(CLASSIFY_CONNECTIONS) as pool:
            return list(pool.map(self.classify_one, messages))
