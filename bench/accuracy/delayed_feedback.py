# The delayed-feedback task of TREC 2007's Spam Track, against the real nbspamd over HTTP, to
# measure guarded autolearn (core/autolearn.h, docs/ACCURACY.md "Autolearn"):
#
#   1. a fresh daemon learns the labelled part (the first --labelled messages of the order, each
#      trained with its true label), and is stopped: that model is the common start of every mode;
#   2. for each mode, a daemon on a copy of that model classifies the rest in order, recording each
#      score; `off` gives no feedback, `on:S:H[:R]` runs with autolearn on at
#      autolearn_spam_confidence S, autolearn_ham_confidence H (and autolearn_max_class_ratio R),
#      `full` trains each message with its true label after classifying it (the upper line);
#   3. (1-AUC)% and FNR at FPR <= 0.1% over the classified part, per mode, and for autolearn what it
#      learned and how much of it was wrong.
#
#   bench/accuracy/delayed-feedback --corpus trec07p-early --labelled 10000 --modes off,on:0.99:0.01,full
#
# Orders: trec07p-early in arrival order; the other corpora in the harness's shuffled order
# (common.online_order); with --pretrain spamassassin the whole SpamAssassin corpus is learned first
# (before the labelled part), e.g. for csdmc2010's drift: --pretrain spamassassin --labelled 0.
import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

import datasets
import metrics
from common import online_order, stop_process

HERE = os.path.dirname(os.path.abspath(__file__))


class Daemon:
    """nbspamd on 127.0.0.1 with one keep-alive connection."""

    def __init__(self, binary, data_dir, flags, log):
        args = [binary, '--listen', '127.0.0.1:0', '--data-dir', data_dir, '--history', 'false', *flags]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(log, 'ab'), text=True)
        line = self.process.stdout.readline()
        if not line.startswith('listening on '):
            raise RuntimeError(f'nbspamd did not start: {line!r}; see {log}')
        self.port = int(line.rsplit(':', 1)[1])
        self.conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=120)

    def request(self, method, target, body=None):
        headers = {'Content-Type': 'message/rfc822'} if body is not None else {}
        for attempt in (1, 2):
            try:
                self.conn.request(method, target, body=body, headers=headers)
                response = self.conn.getresponse()
                text = response.read()
                break
            except (ConnectionError, http.client.HTTPException):
                self.conn.close()
                self.conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=120)
                if attempt == 2:
                    raise
        if method == 'GET' and target == '/metrics':
            return text.decode()
        answer = json.loads(text)
        if response.status == 409:
            return None
        if response.status != 200:
            raise RuntimeError(f'nbspamd {method} {target}: {response.status} {answer}')
        return answer

    def train(self, message):
        label = 'spam' if message.is_spam else 'ham'
        self.request('POST', f'/train?label={label}&id={urllib.parse.quote(message.id, safe="")}', message.data)

    def classify(self, message):
        """(score, verdict, spam_confidence), under the message's id (the key autolearn uses)."""
        answer = self.request('POST', f'/classify?id={urllib.parse.quote(message.id, safe="")}', message.data)
        if answer is None or answer['score'] is None:
            return 0.0, 'unsure', None
        return answer['score'], answer['verdict'], answer.get('spam_confidence')

    def stop(self):
        self.conn.close()
        stop_process(self.process)


def mode_flags(mode):
    """The daemon's flags for a mode: off, full, on:S:H or on:S:H:R."""
    if mode in ('off', 'full'):
        return []
    parts = mode.split(':')
    if parts[0] != 'on' or len(parts) not in (3, 4):
        raise SystemExit(f'unknown mode {mode}: off, full, on:S:H or on:S:H:R')
    flags = ['--autolearn', 'true', '--autolearn-spam-confidence', parts[1], '--autolearn-ham-confidence', parts[2]]
    if len(parts) == 4:
        flags += ['--autolearn-max-class-ratio', parts[3]]
    return flags


def metric_samples(text, family):
    """{labels: value} of one metric family in Prometheus text."""
    out = {}
    for line in text.splitlines():
        if line.startswith(family + '{') or line.startswith(family + ' '):
            name, value = line.rsplit(' ', 1)
            out[name[len(family):]] = float(value)
    return out


def run_mode(args, mode, base, test, truth, workdir):
    data = os.path.join(workdir, 'db-' + mode.replace(':', '_'))
    shutil.copytree(base, data)
    daemon = Daemon(args.nbspamd, data, args.flags + mode_flags(mode), os.path.join(workdir, 'nbspamd.log'))
    t0 = time.monotonic()
    results = []
    try:
        for i, message in enumerate(test):
            score, verdict, confidence = daemon.classify(message)
            results.append((message.is_spam, score, verdict, confidence))
            if mode == 'full':
                daemon.train(message)
            if (i + 1) % 5000 == 0:
                print(f'  {mode}: {i + 1} of {len(test)}', file=sys.stderr)
        seconds = time.monotonic() - t0
        time.sleep(1)  # the last autolearns are written
        out = {'mode': mode, 'seconds': round(seconds, 1)}
        text = daemon.request('GET', '/metrics')
        out['autolearned'] = metric_samples(text, 'nbspamd_autolearn_total')
        out['autolearn_skipped'] = metric_samples(text, 'nbspamd_autolearn_skipped_total')
        if mode.startswith('on'):
            learned = daemon.request('GET', '/admin/learned?source=autolearn&limit=100000')['messages']
            wrong = [m for m in learned if (m['label'] == 'spam') != truth[m['id']]]
            out['autolearn_records'] = len(learned)
            out['autolearn_wrong'] = {'spam_as_ham': sum(1 for m in wrong if m['label'] == 'ham'),
                                      'ham_as_spam': sum(1 for m in wrong if m['label'] == 'spam')}
        out['final_stats'] = {c['label']: c['documents'] for c in daemon.request('GET', '/stats')['classes']}
    finally:
        daemon.stop()
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)
    spam = [r[1] for r in results if r[0]]
    ham = [r[1] for r in results if not r[0]]
    out['one_minus_auc_pct'] = 100.0 * (1.0 - metrics.roc_area(spam, ham))
    out['fnr_at_fpr_0.1_pct'] = 100.0 * metrics.fnr_at_fpr(spam, ham, 0.001)
    ev = metrics.evaluate(results)
    out['verdict_fpr_pct'], out['verdict_fnr_pct'] = ev['fpr_pct'], ev['fnr_pct']
    return out


def main():
    parser = argparse.ArgumentParser(usage='delayed-feedback [options] [-- nbspamd flags]')
    parser.add_argument('--corpus', choices=datasets.CORPORA, default='trec07p-early')
    parser.add_argument('--labelled', type=int, default=10000, help='messages given with their true label first')
    parser.add_argument('--limit', type=int, help='classify only this many messages after the labelled ones')
    parser.add_argument('--pretrain', choices=['spamassassin'], help='learn this whole corpus before anything')
    parser.add_argument('--modes', default='off,on:0.99:0.01,full')
    parser.add_argument('--nbspamd', default=os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                          'build', 'release', 'server', 'nbspamd'))
    parser.add_argument('--spamassassin-corpus', default=os.path.join(HERE, 'corpus'))
    parser.add_argument('--corpora', default=os.path.join(HERE, 'corpora'))
    parser.add_argument('--shared-corpora', default=datasets.default_shared_corpora())
    parser.add_argument('--state-dir', default='/dev/shm' if os.access('/dev/shm', os.W_OK) else None)
    parser.add_argument('--out', help='write the results as JSON here too')
    parser.add_argument('--keep', action='store_true', help='keep the models')
    argv = sys.argv[1:]
    args = parser.parse_args(argv[:argv.index('--')] if '--' in argv else argv)
    args.flags = argv[argv.index('--') + 1:] if '--' in argv else []
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))

    own = datasets.load(args.corpus, args)
    order = own if args.corpus == 'trec07p-early' else online_order(own)
    labelled, test = order[:args.labelled], order[args.labelled:]
    if args.limit:
        test = test[:args.limit]
    pretrain = online_order(datasets.load('spamassassin', args)) if args.pretrain else []
    truth = {m.id: m.is_spam for m in order}
    workdir = tempfile.mkdtemp(prefix='nbspamd-delayed-', dir=args.state_dir)
    try:
        base = os.path.join(workdir, 'base')
        daemon = Daemon(args.nbspamd, base, args.flags, os.path.join(workdir, 'nbspamd.log'))
        t0 = time.monotonic()
        try:
            for message in pretrain + labelled:
                daemon.train(message)
        finally:
            daemon.stop()
        print(f'{args.corpus}: learned {len(pretrain)} + {len(labelled)} labelled messages in '
              f'{time.monotonic() - t0:.0f} s; classifying {len(test)} '
              f'({sum(m.is_spam for m in test)} spam) per mode', file=sys.stderr)
        runs = []
        for mode in args.modes.split(','):
            run = run_mode(args, mode, base, test, truth, workdir)
            runs.append(run)
            print(json.dumps(run), flush=True)
        record = {'corpus': args.corpus, 'labelled': len(labelled), 'pretrain': args.pretrain,
                  'tested': len(test), 'flags': args.flags, 'runs': runs}
        if args.out:
            with open(args.out, 'w') as f:
                json.dump(record, f, indent=1)
        print(f'\n{"mode":24} {"(1-AUC)%":>9} {"FNR@0.1%":>9} {"learned":>16} {"wrong":>6}')
        for run in runs:
            learned = run.get('autolearned', {})
            counts = '/'.join(str(int(learned.get(f'{{class="{c}"}}', 0))) for c in ('spam', 'ham'))
            wrong = sum(run.get('autolearn_wrong', {}).values())
            print(f'{run["mode"]:24} {run["one_minus_auc_pct"]:9.4f} {run["fnr_at_fpr_0.1_pct"]:9.2f} '
                  f'{counts if learned else "-":>16} {wrong if learned else "-":>6}')
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == '__main__':
    main()
