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


class Nbspamd(Peer):
    name = 'nbspamd'

    def __init__(self, workdir, binary, extra_args):
        self.workdir, self.binary, self.extra_args = workdir, binary, list(extra_args)
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

    def train_one(self, message):
        label = 'spam' if message.is_spam else 'ham'
        answer = self.request('POST', f'/train?label={label}&id={urllib.parse.quote(message.id, safe="")}',
                              message.data)
        return answer['status'] in ('learned', 'relearned')

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
