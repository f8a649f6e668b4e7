# rspamd's Bayes under test: a private redis-server and rspamd on 127.0.0.1 with a copy of
# /etc/rspamd plus bench/accuracy/rspamd/ (every module disabled, resolver 127.0.0.1, a
# settings id that enables only BAYES_*, and the BAYES_PROB symbol printing the probability
# with %.17g). Learns one message at a time through the controller with "Learn-Type: bulk".
import http.client
import json
import os
import re
import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

from common import Peer, Verdict, command_output, free_port, stop_process, wait_for_port

IN_FLIGHT = 2  # normal workers and concurrent requests while scoring a batch (2 cores)
HEADERS = {'Settings-Id': 'bayes_only'}


class Rspamd(Peer):
    name = 'rspamd'

    def __init__(self, workdir, overrides):
        self.workdir, self.overrides = workdir, overrides
        self.redis = self.rspamd = None
        self.local = threading.local()
        self.skipped = {}  # learn refusals by reason

    def start(self):
        conf = os.path.join(self.workdir, 'conf')
        shutil.copytree('/etc/rspamd', conf)
        shutil.copytree(self.overrides, conf, dirs_exist_ok=True)
        for name in os.listdir('/etc/rspamd/modules.d'):  # every module off
            with open(os.path.join(conf, 'override.d', name), 'w') as f:
                f.write('enabled = false;\n')
        for d in ('db', 'run', 'log'):
            os.makedirs(os.path.join(self.workdir, d))
        redis_port, self.port, self.controller_port = free_port(), free_port(), free_port()
        self.redis = subprocess.Popen(
            ['redis-server', '--port', str(redis_port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
             '--dir', os.path.join(self.workdir, 'db')], stdout=open(os.path.join(self.workdir, 'redis.log'), 'wb'))
        wait_for_port(redis_port, self.redis)
        variables = {'CONFDIR': conf, 'LOCAL_CONFDIR': conf, 'DBDIR': os.path.join(self.workdir, 'db'),
                     'RUNDIR': os.path.join(self.workdir, 'run'), 'LOGDIR': os.path.join(self.workdir, 'log'),
                     'BENCH_REDIS': f'127.0.0.1:{redis_port}', 'BENCH_NORMAL_PORT': self.port,
                     'BENCH_CONTROLLER_PORT': self.controller_port}
        self.rspamd = subprocess.Popen(
            ['rspamd', '-f', '-i', '-c', os.path.join(conf, 'rspamd.conf')] + [f'--var={k}={v}' for k, v in
                                                                              variables.items()],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.workdir, 'rspamd.err'), 'wb'))
        wait_for_port(self.port, self.rspamd)
        wait_for_port(self.controller_port, self.rspamd)

    def stop(self):
        stop_process(self.rspamd)
        stop_process(self.redis)

    @staticmethod
    def version():
        return command_output(['rspamd', '--version'])

    def info(self):
        return {'version': self.version(),
                'redis': command_output(['redis-server', '--version']).split(' sha=')[0],
                'settings': 'copy of /etc/rspamd + bench/accuracy/rspamd/: classifier-bayes on redis, autolearn '
                            'false, stock min_tokens 11 and min_learns 200; enabled = false for every module '
                            'in modules.d; filters ""; resolver 127.0.0.1; Settings-Id bayes_only enabling '
                            'BAYES_SPAM, BAYES_HAM, BAYES_PROB; 2 normal workers; log level warning',
                'train': 'POST /learnspam|/learnham on the controller, Learn-Type: bulk, one at a time',
                'classify': f'POST /checkv2 on the normal worker, {IN_FLIGHT} in flight; ranks by BAYES_PROB '
                            '(0.5 when Bayes gave none), spam when > 0.5',
                'learn_refusals': self.skipped}

    def request(self, port, target, body):
        conns = getattr(self.local, 'conns', None)
        if conns is None:
            conns = self.local.conns = {}
        if port not in conns:
            conns[port] = http.client.HTTPConnection('127.0.0.1', port, timeout=120)
        headers = dict(HEADERS, **({'Learn-Type': 'bulk'} if port == self.controller_port else {}))
        try:
            conns[port].request('POST', target, body=body, headers=headers)
            response = conns[port].getresponse()
            text = response.read()
        except (ConnectionError, http.client.HTTPException):
            conns.pop(port).close()
            raise
        try:
            return response.status, json.loads(text)
        except ValueError:
            return response.status, {'error': text.decode('utf-8', 'replace')}

    def train_one(self, message):
        status, answer = self.request(self.controller_port, '/learnspam' if message.is_spam else '/learnham',
                                      message.data)
        if answer.get('success'):
            return True
        if status == 204:
            reason = '204: not learned (fewer tokens than min_tokens)'
        else:
            reason = f"{status}: " + re.sub(r'<[^>]*>|\d+', 'N', answer.get('error', ''))
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        return False

    def classify_one(self, message):
        status, answer = self.request(self.port, '/checkv2', message.data)
        if status != 200:
            raise RuntimeError(f'rspamd /checkv2: {status} {answer}')
        prob = answer.get('symbols', {}).get('BAYES_PROB')
        if prob is None:
            return Verdict(0.5, 'ham', scored=False)
        prob = float(prob['options'][0])
        return Verdict(prob, 'spam' if prob > 0.5 else 'ham')

    def classify(self, messages):
        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            return list(pool.map(self.classify_one, messages))
