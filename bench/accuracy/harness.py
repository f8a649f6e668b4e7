# The accuracy harness: runs the split or online protocol on the SpamAssassin public corpus for
# nbspamd and its peers, prints a table and writes one JSON file of results per run.
# Run it through bench/accuracy/run, which installs Python and fetches the corpus first.
import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import metrics
from common import (CORPUS_PACKAGE, SHUFFLE_RULE, SPLIT_RULE, in_train_split, load_corpus,
                    online_order)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEERS = ['nbspamd', 'bogofilter', 'spamassassin', 'rspamd']
APT_PACKAGES = {'bogofilter': ['bogofilter'], 'spamassassin': ['spamassassin', 'spamc', 'spamd'],
                'rspamd': ['rspamd', 'redis-server']}


def ensure_packages(packages):
    missing = [p for p in packages if subprocess.run(
        ['dpkg-query', '-W', '-f=${Status}', p], capture_output=True, text=True).stdout != 'install ok installed']
    if not missing:
        return
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    if subprocess.run(['apt-get', 'install', '-y', *missing], env=env).returncode != 0:
        subprocess.run(['apt-get', 'update'], env=env, check=True)
        subprocess.run(['apt-get', 'install', '-y', *missing], env=env, check=True)


def ensure_nbspamd(binary):
    """The given binary, else build/release/server/nbspamd, built the way scripts/run does if missing."""
    default = os.path.join(REPO, 'build/release/server/nbspamd')
    if binary or os.path.exists(default):
        return binary or default
    subprocess.run([os.path.join(REPO, 'scripts/install-deps')], check=True)
    subprocess.run(['cmake', '-S', REPO, '-B', os.path.join(REPO, 'build/release'), '-G', 'Ninja',
                    '-DCMAKE_BUILD_TYPE=Release'], check=True)
    subprocess.run(['cmake', '--build', os.path.join(REPO, 'build/release'), '--target', 'nbspamd'], check=True)
    return default


def make_peer(name, workdir, args):
    if name == 'nbspamd':
        from peer_nbspamd import Nbspamd
        return Nbspamd(workdir, ensure_nbspamd(args.nbspamd), args.nbspamd_flags)
    ensure_packages(APT_PACKAGES[name])
    if name == 'bogofilter':
        from peer_bogofilter import Bogofilter
        return Bogofilter(workdir)
    if name == 'spamassassin':
        from peer_spamassassin import SpamAssassin
        return SpamAssassin(workdir, os.path.join(HERE, 'spamassassin'))
    from peer_rspamd import Rspamd
    return Rspamd(workdir, os.path.join(HERE, 'rspamd'))


def run_split(peer, corpus, args):
    train = [m for m in corpus if in_train_split(m, args.split_salt)]
    test = [m for m in corpus if not in_train_split(m, args.split_salt)]
    t0 = time.monotonic()
    learned = peer.train(train)
    train_s = time.monotonic() - t0
    passes = []
    for _ in range(args.passes):  # later passes only show how reproducible the scores are
        t0 = time.monotonic()
        verdicts = peer.classify(test)
        classify_s = time.monotonic() - t0
        results = [(m.is_spam, v.score, v.spam) for m, v in zip(test, verdicts)]
        passes.append({'classify_s': classify_s, 'verdicts': verdicts,
                       'one_minus_auc_pct': metrics.evaluate(results)['one_minus_auc_pct']})
    extra = {}
    if hasattr(peer, 'classify_per_process'):  # bogofilter as a delivery agent runs it
        t0 = time.monotonic()
        same = [v.score for v in peer.classify_per_process(test)] == [v.score for v in passes[0]['verdicts']]
        extra = {'classify_per_process_s': time.monotonic() - t0, 'per_process_scores_equal_bulk': same}
        extra['classify_per_process_msg_per_s'] = len(test) / extra['classify_per_process_s']
    rule = SPLIT_RULE + (f'; with the salt {args.split_salt!r} prefixed to the name' if args.split_salt else '')
    return {'rule': rule, 'trained': len(train), 'learned': learned, 'tested': len(test),
            'extra_timing': extra, 'train_s': train_s, 'classify_s': passes[0]['classify_s'], 'messages': test,
            'verdicts': passes[0]['verdicts'],
            'passes': [{k: p[k] for k in ('one_minus_auc_pct', 'classify_s')} for p in passes]}


def run_online(peer, corpus, args):
    limit = args.online_limit or getattr(peer, 'online_limit', None)
    order = online_order(corpus)[:limit]
    verdicts, learned, train_s, classify_s = [], 0, 0.0, 0.0
    for i, message in enumerate(order):
        t0 = time.monotonic()
        verdicts.append(peer.classify_one(message))
        t1 = time.monotonic()
        learned += peer.train_one(message)
        train_s += time.monotonic() - t1
        classify_s += t1 - t0
        if (i + 1) % 1000 == 0:
            print(f'  {peer.name}: {i + 1} of {len(order)} messages', file=sys.stderr)
    rule = SHUFFLE_RULE + (f'; first {limit} messages of that order only' if limit else '')
    return {'rule': rule, 'trained': len(order), 'learned': learned, 'tested': len(order),
            'train_s': train_s, 'classify_s': classify_s, 'messages': order, 'verdicts': verdicts}


def run_one(name, protocol, corpus, args):
    workdir = tempfile.mkdtemp(prefix=f'nbspamd-accuracy-{name}-')
    peer = make_peer(name, workdir, args)
    print(f'{name} / {protocol}: running (state in {workdir})', file=sys.stderr)
    started = time.monotonic()
    try:
        peer.start()
        startup_s = time.monotonic() - started
        run = (run_split if protocol == 'split' else run_online)(peer, corpus, args)
        info = peer.info()
    finally:
        peer.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    results = [(m.is_spam, v.score, v.spam) for m, v in zip(run['messages'], run['verdicts'])]
    return {
        'peer': name, 'protocol': protocol, 'tag': args.tag, 'peer_info': info,
        'corpus': {'package': CORPUS_PACKAGE, 'messages': len(corpus)}, 'order_rule': run['rule'],
        'trained': run['trained'], 'learned': run['learned'], 'tested': run['tested'],
        'unscored': sum(1 for v in run['verdicts'] if not v.scored),
        'metrics': metrics.evaluate(results), 'passes': run.get('passes'),
        # online: the same without the first 1000 messages, once every peer has learned enough to score
        'metrics_after_1000': metrics.evaluate(results[1000:]) if protocol == 'online' and len(results) > 1000
        else None,
        'timing': {'startup_s': startup_s, 'train_s': run['train_s'], 'classify_s': run['classify_s'],
                   'train_msg_per_s': run['trained'] / run['train_s'],
                   'classify_msg_per_s': run['tested'] / run['classify_s'],
                   **run.get('extra_timing', {}), 'total_s': time.monotonic() - started},
        'host': {'cpus': os.cpu_count(), 'platform': platform.platform(), 'python': platform.python_version(),
                 'loadavg_at_end': os.getloadavg()},
        'finished_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'scores': [[m.id, m.is_spam, v.score, v.spam, v.scored] for m, v in zip(run['messages'], run['verdicts'])],
    }


def fmt(x, digits):
    return '-' if x is None else f'{x:.{digits}f}'


def print_table(records):
    head = ('peer', 'protocol', 'tag', 'trained', 'learned', 'tested', 'unscored', 'acc %', 'FPR %', 'FNR %',
            '(1-AUC)%', 'FNR%@FPR<=0.1%', 'train s', 'train msg/s', 'classify s', 'classify msg/s', 'total s')
    rows = [head]
    for r in records:
        m, t = r['metrics'], r['timing']
        auc = fmt(m['one_minus_auc_pct'], 4)
        if r['passes'] and len(r['passes']) > 1:
            auc += ' [' + ' '.join(fmt(p['one_minus_auc_pct'], 4) for p in r['passes']) + ']'
        rows.append((r['peer'], r['protocol'], r['tag'] or '', str(r['trained']), str(r['learned']),
                     str(r['tested']), str(r['unscored']), fmt(m['accuracy_pct'], 2), fmt(m['fpr_pct'], 2),
                     fmt(m['fnr_pct'], 2), auc, fmt(m['fnr_at_fpr_0_1_pct'], 2), fmt(t['train_s'], 1),
                     fmt(t['train_msg_per_s'], 0), fmt(t['classify_s'], 1), fmt(t['classify_msg_per_s'], 0),
                     fmt(t['total_s'], 0)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        print('  '.join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def main():
    parser = argparse.ArgumentParser(description=__doc__, usage='run [options] [-- nbspamd flags]')
    parser.add_argument('--peer', choices=PEERS + ['all'], default='all')
    parser.add_argument('--protocol', choices=['split', 'online', 'all'], default='split')
    parser.add_argument('--corpus', default=os.path.join(HERE, 'corpus'))
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    parser.add_argument('--nbspamd', help='the daemon binary (default build/release/server/nbspamd)')
    parser.add_argument('--passes', type=int, default=1, help='split: classify the test set N times')
    parser.add_argument('--split-salt', default='', help='split: another 80/20 split, to see its variance')
    parser.add_argument('--online-limit', type=int, help='online: only the first N messages of the order')
    parser.add_argument('--tag', default='', help='names the result file (default: from nbspamd flags)')
    parser.add_argument('--keep', action='store_true', help='keep the temp state folders')
    argv = sys.argv[1:]
    flags = argv[argv.index('--') + 1:] if '--' in argv else []
    args = parser.parse_args(argv[:argv.index('--')] if '--' in argv else argv)
    args.nbspamd_flags = flags
    if flags and not args.tag:
        args.tag = re.sub(r'[^A-Za-z0-9.=_-]+', '_', ' '.join(flags).lstrip('-')).replace('_--', '_')
    if args.split_salt:
        args.tag = '-'.join(filter(None, [args.tag, 'salt_' + re.sub(r'[^A-Za-z0-9]+', '_', args.split_salt)]))
    for sig in (signal.SIGTERM, signal.SIGHUP):  # unwind, so that every server gets stopped
        signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))

    corpus = load_corpus(args.corpus)
    os.makedirs(args.results, exist_ok=True)
    records = []
    for protocol in (['split', 'online'] if args.protocol == 'all' else [args.protocol]):
        for name in (PEERS if args.peer == 'all' else [args.peer]):
            record = run_one(name, protocol, corpus, args)
            records.append(record)
            path = os.path.join(args.results, f'{name}-{protocol}{"-" + args.tag if args.tag else ""}.json')
            with open(path, 'w') as f:
                json.dump(record, f, indent=1)
            print(f'{name} / {protocol}: (1-AUC)% {fmt(record["metrics"]["one_minus_auc_pct"], 4)}, '
                  f'{record["timing"]["total_s"]:.0f} s; wrote {path}', file=sys.stderr)
    print_table(records)


if __name__ == '__main__':
    main()
