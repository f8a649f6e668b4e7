"""The SpamAssassin corpus split by its own folders: learn spam-1 and easy-ham-1, classify
spam-2, easy-ham-2 and hard-ham-1 (a kind of ham the training set has none of), for a few
configurations, each on a fresh daemon; the classes trained one after the other (as an
administrator imports ~/sorted/spam, then ~/sorted/ham) or in turn in one nbspamc run.

  PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 bench/accuracy/explore/folder_split.py \
      [--nbspamd build/release/server/nbspamd] [--nbspamc build/release/client/nbspamc]

Prints, per configuration: documents counted, (1-AUC)%, FNR % at FPR <= 0.1%, ham called spam (of
them hard ham), unsure and spam called spam at the daemon's verdicts. docs/ACCURACY.md, "Why g5m1s
is still not the default".
"""
import argparse
import bisect
import glob
import json
import os
import re
import subprocess
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..', '..', '..')
DATA = os.path.join(HERE, '..', 'corpus', 'package', 'data')
TODAY = ['--train-margin', '', '--byte-ngrams', '0']
CONFIGURATIONS = [
    ("today's defaults, one class after the other", TODAY, 'apart'),
    ('g5m1s, one class after the other', ['--byte-ngrams', '5', '--train-margin', '1'], 'apart'),
    ('g5m1s, both classes in turn', ['--byte-ngrams', '5', '--train-margin', '1'], 'in turn'),
    ('words, margin 1, in turn', ['--train-margin', '1'], 'in turn'),
]


def files(folder):
    return sorted(os.path.relpath(f, DATA) for f in glob.glob(os.path.join(DATA, folder, '*.txt')))


def measure(args, name, flags, order):
    with tempfile.TemporaryDirectory() as state:
        daemon = subprocess.Popen([args.nbspamd, '--listen', '127.0.0.1:0', '--data-dir',
                                   os.path.join(state, 'model')] + flags,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = int(re.search(r':(\d+)', daemon.stdout.readline()).group(1))
            env = dict(os.environ, NBSPAMC_SERVER=f'127.0.0.1:{port}')
            spam, ham = ['--label', 'spam'] + files('spam-1'), ['--label', 'ham'] + files('easy-ham-1')
            runs = [spam, ham] if order == 'apart' else [spam + ham]
            for run in runs:
                subprocess.run([args.nbspamc, 'train'] + run, cwd=DATA, env=env, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            url = f'http://127.0.0.1:{port}'
            documents = json.load(urllib.request.urlopen(url + '/stats'))['documents']
            rows = []
            for folder, is_spam in (('spam-2', True), ('easy-ham-2', False), ('hard-ham-1', False)):
                for path in files(folder):
                    with open(os.path.join(DATA, path), 'rb') as f:
                        request = urllib.request.Request(url + '/classify', data=f.read(), method='POST')
                    answer = json.load(urllib.request.urlopen(request))
                    rows.append((is_spam, answer['score'] or 0.0, answer['verdict'], folder))
        finally:
            daemon.terminate()
            daemon.wait()
    spams = sorted(r[1] for r in rows if r[0])
    hams = sorted(r[1] for r in rows if not r[0])
    misordered = sum(len(hams) - bisect.bisect_right(hams, s) +
                     0.5 * (bisect.bisect_right(hams, s) - bisect.bisect_left(hams, s)) for s in spams)
    threshold = hams[-1 - int(0.001 * len(hams))]
    fnr = 100 * sum(1 for s in spams if s <= threshold) / len(spams)
    fp = [r for r in rows if not r[0] and r[2] == 'spam']
    hard_fp = sum(1 for r in fp if r[3] == 'hard-ham-1')
    unsure = 100 * sum(1 for r in rows if r[2] == 'unsure') / len(rows)
    caught = 100 * sum(1 for r in rows if r[0] and r[2] == 'spam') / len(spams)
    print(f'| {name} | {documents} | {100 * misordered / (len(spams) * len(hams)):.2f} | {fnr:.2f} | '
          f'{len(fp)} of {len(hams)} ({hard_fp}) | {unsure:.2f}% | {caught:.2f}% |')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--nbspamd', default=os.path.join(ROOT, 'build', 'release', 'server', 'nbspamd'))
    parser.add_argument('--nbspamc', default=os.path.join(ROOT, 'build', 'release', 'client', 'nbspamc'))
    args = parser.parse_args()
    print('| configuration | documents counted | (1-AUC)% | FNR % at FPR <= 0.1% | ham called spam (hard ham) '
          '| unsure | spam called spam |')
    print('|---|---|---|---|---|---|---|')
    for name, flags, order in CONFIGURATIONS:
        measure(args, name, flags, order)


if __name__ == '__main__':
    main()
