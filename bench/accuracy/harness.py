# The accuracy harness: runs the protocols of protocols.py on the corpora of datasets.py
# (spamassassin, trec07p-early, csdmc2010, lingspam-bare) for nbspamd and its peers, writes one
# JSON file of results per run, prints a table of the runs and then the summary (summary.py). Run
# it through bench/accuracy/run, which installs Python and fetches the SpamAssassin corpus first.
#
# A run is one peer on one corpus/protocol (and split salt); a cross-validation run (tenfold) is
# one peer per fold, in a temp folder each, with the folds' scores pooled. Its file is
#   RESULTS/<corpus>-<protocol>[-salt_<s>][-first_<N>]/<peer>.json  (bogofilter, spamassassin, rspamd, reference)
#   RESULTS/<corpus>-<protocol>[-salt_<s>][-first_<N>]/nbspamd-<tag>.json
# A peer's file is reused instead of running it again when its cache_key matches (corpus,
# protocol, salt, limit, passes, the peer's version and its harness code and settings); --fresh
# runs it anyway. nbspamd always runs. Each run is a child process of its own (--jobs at once),
# the peers' under nice -n 10 (--peer-nice). SIGUSR1 to the harness (or to one run's process)
# stops the online runs after their current message: each is kept as a run of the first N
# messages (-first_<N>), for a slow peer on a busy machine.
import argparse
import glob
import hashlib
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
import traceback

import datasets
import metrics
import protocols
import summary

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# reference: the TREC 2007 leaders' design (peer_reference.py), in-process, as a yardstick.
PEERS = ['nbspamd', 'bogofilter', 'spamassassin', 'rspamd', 'reference']
APT_PACKAGES = {'bogofilter': ['bogofilter'], 'spamassassin': ['spamassassin', 'spamc', 'spamd'],
                'rspamd': ['rspamd', 'redis-server'],
                'reference': []}  # python3-numpy, which bench/accuracy/run installs without recommends
PEER_FILES = {'bogofilter': [], 'spamassassin': ['spamassassin'], 'rspamd': ['rspamd'],
              'reference': []}  # settings folders
# Rough cost of a message per peer, to start the longest runs first when --jobs > 1.
COST = {'nbspamd': 1, 'bogofilter': 1, 'spamassassin': 12, 'rspamd': 3, 'reference': 1}


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
        return os.path.abspath(binary or default)
    subprocess.run([os.path.join(REPO, 'scripts/install-deps')], check=True)
    subprocess.run(['cmake', '-S', REPO, '-B', os.path.join(REPO, 'build/release'), '-G', 'Ninja',
                    '-DCMAKE_BUILD_TYPE=Release'], check=True)
    subprocess.run(['cmake', '--build', os.path.join(REPO, 'build/release'), '--target', 'nbspamd'], check=True)
    return default


def peer_class(name):
    if name == 'nbspamd':
        from peer_nbspamd import Nbspamd
        return Nbspamd
    if name == 'bogofilter':
        from peer_bogofilter import Bogofilter
        return Bogofilter
    if name == 'spamassassin':
        from peer_spamassassin import SpamAssassin
        return SpamAssassin
    if name == 'reference':
        from peer_reference import ReferenceLR
        return ReferenceLR
    from peer_rspamd import Rspamd
    return Rspamd


def make_peer(name, workdir, args):
    if name == 'nbspamd':
        return peer_class(name)(workdir, args.nbspamd, args.nbspamd_flags, args.nbspamd_bulk == 'all')
    if name in ('bogofilter', 'reference'):
        return peer_class(name)(workdir)
    return peer_class(name)(workdir, os.path.join(HERE, PEER_FILES[name][0]))


def settings_hash(name):
    """sha256 of the peer's harness module and settings folder: a change to either voids its cache."""
    digest = hashlib.sha256()
    paths = [os.path.join(HERE, f'peer_{name}.py')]
    for folder in PEER_FILES[name]:
        for root, dirs, files in os.walk(os.path.join(HERE, folder)):
            dirs.sort()
            paths += [os.path.join(root, f) for f in sorted(files)]
    for path in paths:
        digest.update(os.path.relpath(path, HERE).encode() + b'\0')
        with open(path, 'rb') as f:
            digest.update(f.read() + b'\0')
    return digest.hexdigest()


class Job:
    """One peer on one corpus/protocol (split: one salt)."""

    def __init__(self, peer, corpus, protocol, salt, args):
        self.peer, self.corpus, self.protocol, self.salt = peer, corpus, protocol, salt
        self.filter = peer if peer != 'nbspamd' else f'nbspamd-{args.tag}'
        self.set_limit(args.online_limit if 'online' in protocol else None, args)

    def set_limit(self, limit, args):
        self.limit = limit
        self.row = summary.row_name(self.corpus, self.protocol, self.salt, limit)
        self.path = os.path.join(args.results, self.row, self.filter + '.json')

    def cost(self, sizes):
        n = sum(sizes[c] for c in protocols.needs(self.corpus, self.protocol))
        online = 'online' in self.protocol
        if online and self.limit:
            n = min(n, self.limit + (sizes['spamassassin'] if self.corpus == 'csdmc2010' else 0))
        return n * COST[self.peer] * (3 if online else 1) * protocols.FOLDS.get(self.protocol, 1)


def plan(args):
    """The jobs the options ask for, in the summary's row order."""
    corpora = datasets.CORPORA if args.corpus == 'all' else [args.corpus]
    jobs = []
    for corpus in corpora:
        for protocol in protocols.PROTOCOLS[corpus]:
            wanted = args.protocol in ('all', protocol) or (args.protocol == 'splits' and protocol == 'split') or \
                (args.protocol is None and protocol == protocols.PROTOCOLS[corpus][0])
            if not wanted:
                continue
            salts = protocols.SPLIT_SALTS if protocol == 'split' and args.protocol in ('all', 'splits') \
                else [args.split_salt if protocol == 'split' else '']
            jobs += [Job(peer, corpus, protocol, salt, args) for salt in salts for peer in args.peers]
    if not jobs:
        raise SystemExit(f'no protocol {args.protocol} on {args.corpus}; protocols: {protocols.PROTOCOLS}')
    return jobs


def run_one(job, messages, args):
    """Runs the job in a fresh temp folder (a cross-validation: one per fold) and returns its
    record (the JSON of the result file)."""
    args.split_salt = job.salt
    workdirs = []

    def new_peer(fold=None):
        """A peer with its state in a new temp folder, removed at the end unless --keep."""
        label = f'fold{fold}-' if fold else ''
        workdirs.append(tempfile.mkdtemp(prefix=f'nbspamd-accuracy-{job.peer}-{label}', dir=args.state_dir))
        if fold:
            print(f'{job.row} / {job.filter}: fold {fold} (state in {workdirs[-1]})', file=sys.stderr)
        return make_peer(job.peer, workdirs[-1], args)

    folded = job.protocol in protocols.FOLDS  # run_folds starts and stops a peer per fold itself
    peer = None if folded else new_peer()
    print(f'{job.row} / {job.filter}: running' + ('' if folded else f' (state in {workdirs[0]})'), file=sys.stderr)
    started = time.monotonic()
    try:
        if peer:
            peer.start()
        startup_s = time.monotonic() - started
        run = protocols.run(peer, job.corpus, job.protocol, messages, args, new_peer)
        info = run['info'] if folded else peer.info()
        startup_s = run.get('startup_s', startup_s)
        if run.get('stopped'):  # kept as a run of the first N messages, in the row of that limit
            job.set_limit(run['tested'], args)
            if job.cache_key:
                job.cache_key['online_limit'] = job.limit
    finally:
        if peer:
            peer.stop()
        if not args.keep:
            for workdir in workdirs:
                shutil.rmtree(workdir, ignore_errors=True)
    rows = [[m.id, m.is_spam, v.score, v.verdict, v.scored, v.confidence]
            for m, v in zip(run['messages'], run['verdicts'])]
    results = [(r[1], r[2], r[3], r[5]) for r in rows]
    online = 'online' in job.protocol
    return {
        'peer': job.peer, 'tag': args.tag if job.peer == 'nbspamd' else None, 'filter': job.filter,
        'corpus_name': job.corpus, 'protocol': job.protocol, 'split_salt': job.salt if job.protocol == 'split' else None,
        'online_limit': job.limit, 'row': job.row, 'peer_info': info, 'cache_key': job.cache_key,
        'corpus': {name: {'source': datasets.SOURCES[name], 'messages': len(messages[name])}
                   for name in protocols.needs(job.corpus, job.protocol)},
        'order_rule': run['rule'], 'trained': run['trained'], 'learned': run['learned'], 'tested': run['tested'],
        'unscored': sum(1 for v in run['verdicts'] if not v.scored),
        'metrics': metrics.evaluate(results), 'passes': run.get('passes'),
        'folds': run.get('folds'),  # cross-validation: each fold's counts and (1-AUC)% (the metrics pool them)
        # online: the same without the first 1000 messages, once every peer has learned enough to score
        'metrics_after_1000': metrics.evaluate(results[1000:]) if online and len(results) > 1000 else None,
        'timing': {'startup_s': startup_s, 'train_s': run['train_s'], 'classify_s': run['classify_s'],
                   'train_msg_per_s': run['trained'] / run['train_s'] if run['train_s'] else None,
                   'classify_msg_per_s': run['tested'] / run['classify_s'] if run['classify_s'] else None,
                   **run.get('extra_timing', {}), 'total_s': time.monotonic() - started},
        'host': {'cpus': os.cpu_count(), 'platform': platform.platform(), 'python': platform.python_version(),
                 'niceness': os.nice(0), 'state_dir': args.state_dir, 'loadavg_at_end': os.getloadavg()},
        'finished_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'scores_columns': ['id', 'is_spam', 'score', 'verdict', 'scored', 'spam_confidence'],
        'scores': rows,
    }


def write_record(path, record):
    """JSON with one line per scored message (json.dump's indent would give six)."""
    head = json.dumps({k: v for k, v in record.items() if k != 'scores'}, indent=1)
    rows = ',\n'.join('  ' + json.dumps(row) for row in record['scores'])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '.tmp', 'w') as f:
        f.write(head[:-2] + ',\n "scores": [\n' + rows + '\n ]\n}\n')
    os.replace(path + '.tmp', path)


def cached(job):
    """The job's earlier record when its cache key matches, else None."""
    try:
        with open(job.path) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    return record if record.get('cache_key') == job.cache_key else None


def run_jobs(jobs, messages, args):
    """Runs each job in a forked child, at most args.jobs at once, longest first. A child writes
    its result file and exits 0; SIGTERM, SIGHUP or Ctrl-C stop the children, which stop their
    servers."""
    sizes = {name: len(m) for name, m in messages.items()}
    waiting = sorted(jobs, key=lambda j: -j.cost(sizes))
    running, failed = {}, []
    signal.signal(signal.SIGUSR1, lambda _s, _f: [os.kill(pid, signal.SIGUSR1) for pid in list(running)])
    try:
        while waiting or running:
            while waiting and len(running) < args.jobs:
                job = waiting.pop(0)
                if job.cache_key and not args.fresh and cached(job):  # another run wrote it meanwhile
                    print(f'{job.row} / {job.filter}: reusing {job.path}', file=sys.stderr)
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    status = 1
                    try:
                        signal.signal(signal.SIGUSR1, protocols.stop_online)
                        if job.peer != 'nbspamd':
                            os.nice(args.peer_nice)
                        record = run_one(job, messages, args)
                        write_record(job.path, record)
                        print(f'{job.row} / {job.filter}: (1-AUC)% '
                              f'{summary.fmt(record["metrics"]["one_minus_auc_pct"], 4)}, '
                              f'{record["timing"]["total_s"]:.0f} s; wrote {job.path}', file=sys.stderr)
                        status = 0
                    except SystemExit as e:
                        status = e.code if isinstance(e.code, int) else 1
                    except BaseException:
                        traceback.print_exc()
                    finally:
                        sys.stderr.flush()
                        os._exit(status)
                running[pid] = job
            if not running:
                break
            pid, status = os.wait()
            job = running.pop(pid)
            if status != 0:
                failed.append(job)
                print(f'{job.row} / {job.filter}: FAILED (status {status >> 8})', file=sys.stderr)
    finally:
        for pid in running:
            os.kill(pid, signal.SIGTERM)
        for pid in running:
            os.waitpid(pid, 0)
    return failed


fmt = summary.fmt


def print_table(records):
    head = ('corpus/protocol', 'filter', 'trained', 'learned', 'tested', 'unscored', 'acc %', 'FPR %', 'FNR %',
            'spam→ham %', 'unsure %', '(1-AUC)%', 'FNR%@FPR<=0.1%', 'Brier', 'train s', 'classify s', 'total s')
    rows = [head]
    for r in records:
        m, t = r['metrics'], r['timing']
        auc = fmt(m['one_minus_auc_pct'], 4)
        if r['passes'] and len(r['passes']) > 1:
            auc += ' [' + ' '.join(fmt(p['one_minus_auc_pct'], 4) for p in r['passes']) + ']'
        brier = fmt(m['calibration']['brier'], 4) if m.get('calibration') else '-'
        rows.append((r['row'], r['filter'] + (' (cached)' if r.get('reused') else ''), str(r['trained']),
                     str(r['learned']), str(r['tested']), str(r['unscored']), fmt(m['accuracy_pct'], 2),
                     fmt(m['fpr_pct'], 2), fmt(m['fnr_pct'], 2), fmt(m.get('spam_called_ham_pct'), 2),
                     fmt(m.get('unsure_pct'), 2), auc, fmt(m['fnr_at_fpr_0_1_pct'], 2), brier,
                     fmt(t['train_s'], 1), fmt(t['classify_s'], 1), fmt(t['total_s'], 0)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        print('  '.join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def default_state_dir():
    shm = '/dev/shm'
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else tempfile.gettempdir()


def parse_args():
    parser = argparse.ArgumentParser(usage='run [options] [-- nbspamd flags]')
    parser.add_argument('--peer', default='all', help='nbspamd, bogofilter, spamassassin, rspamd, reference, a '
                                                      'comma list, or all (default)')
    parser.add_argument('--corpus', choices=datasets.CORPORA + ['all'], default='spamassassin')
    parser.add_argument('--protocol', help='split, splits (the four salts), online, folders, chrono, drift, drift-online, '
                                           'tenfold, or all (default: the first of each corpus: split, chrono, '
                                           'drift, tenfold)')
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    parser.add_argument('--spamassassin-corpus', default=os.path.join(HERE, 'corpus'),
                        help='where fetch-corpus put the SpamAssassin corpus')
    parser.add_argument('--corpora', default=os.path.join(HERE, 'corpora'), help='where the extra corpora are '
                                                                                 'unpacked')
    parser.add_argument('--shared-corpora', default=datasets.default_shared_corpora(),
                        help='the folder of trec07p-early.tar.xz, csdmc2010.tar.xz and lingspam-bare.tar.xz '
                             '(default ../shared/corpora beside the repository)')
    parser.add_argument('--nbspamd', help='the daemon binary (default build/release/server/nbspamd)')
    parser.add_argument('--nbspamd-bulk', choices=['all', 'regime'], default='all',
                        help="nbspamd's bulk training (the batch protocols, the online protocols' pretraining): "
                             "every message counted (count=all, as nbspamc train does by default), or under the "
                             "daemon's training regime with passes (as nbspamc train --error-driven)")
    parser.add_argument('--passes', type=int, default=1, help='batch protocols: classify the test set N times')
    parser.add_argument('--split-salt', default='', help='split: another 80/20 split, to see its variance')
    parser.add_argument('--online-limit', type=int, help='online protocols: only the first N messages of the order')
    parser.add_argument('--tag', default='', help='the nbspamd variant: names its result files (default: from '
                                                  'the nbspamd flags, or "default" without flags)')
    parser.add_argument('--fresh', action='store_true', help='run the peers again even when cached')
    parser.add_argument('--jobs', type=int, default=2, help='runs at once (default 2)')
    parser.add_argument('--peer-nice', type=int, default=10, help='the niceness added to the peers\' runs (default '
                                                                  '10; 0 when they must finish on a busy machine)')
    parser.add_argument('--plots', action='store_true', help='then draw the PNG plots (plot.py) into RESULTS')
    parser.add_argument('--state-dir', default=default_state_dir(),
                        help='where the temp state folders go (default /dev/shm, a tmpfs: there fsync costs '
                             'nothing, which makes nbspamd train several times faster; else the temp dir)')
    parser.add_argument('--keep', action='store_true', help='keep the temp state folders')
    argv = sys.argv[1:]
    flags = argv[argv.index('--') + 1:] if '--' in argv else []
    args = parser.parse_args(argv[:argv.index('--')] if '--' in argv else argv)
    args.nbspamd_flags = flags
    args.peers = PEERS if args.peer == 'all' else args.peer.split(',')
    if not set(args.peers) <= set(PEERS):
        parser.error(f'--peer: choose from {", ".join(PEERS)} or all')
    if not args.tag:
        args.tag = re.sub(r'[^A-Za-z0-9.=_-]+', '_', ' '.join(flags).lstrip('-')).replace('_--', '_') or 'default'
    if not re.fullmatch(r'[A-Za-z0-9.=_-]+', args.tag):
        parser.error('--tag: letters, digits and . = _ - only')
    return args


def main():
    args = parse_args()
    for sig in (signal.SIGTERM, signal.SIGHUP):  # unwind, so that every server gets stopped
        signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
    jobs = plan(args)
    names = sorted({c for j in jobs for c in protocols.needs(j.corpus, j.protocol)}, key=datasets.CORPORA.index)
    messages = {name: datasets.load(name, args) for name in names}
    for name in sorted({j.peer for j in jobs}, key=PEERS.index):
        if name == 'nbspamd':
            args.nbspamd = ensure_nbspamd(args.nbspamd)
        else:
            ensure_packages(APT_PACKAGES[name])
    versions = {name: peer_class(name).version() for name in {j.peer for j in jobs} if name != 'nbspamd'}
    todo, reused = [], {}
    for job in jobs:
        job.cache_key = None if job.peer == 'nbspamd' else {
            'corpus': job.corpus, 'protocol': job.protocol, 'split_salt': job.salt, 'online_limit': job.limit,
            'passes': args.passes, 'messages': {c: len(messages[c]) for c in protocols.needs(job.corpus, job.protocol)},
            'protocols_version': protocols.VERSION, 'peer_version': versions[job.peer],
            'peer_settings_sha256': settings_hash(job.peer)}
        record = None if args.fresh or job.peer == 'nbspamd' else cached(job)
        if record:
            print(f'{job.row} / {job.filter}: reusing {job.path}', file=sys.stderr)
            reused[job.path] = dict(record, reused=True)
        else:
            todo.append(job)
    failed = run_jobs(todo, messages, args)
    records = []
    for job in jobs:
        if job in failed:
            continue
        if job.path not in reused:
            if not os.path.exists(job.path):  # stopped early (SIGUSR1): written under its first_N row
                stopped = glob.glob(os.path.join(args.results, summary.row_name(job.corpus, job.protocol, job.salt)
                                                 + '-first_*', job.filter + '.json'))
                if not stopped:
                    continue
                job.path = max(stopped, key=os.path.getmtime)
                job.row = os.path.basename(os.path.dirname(job.path))
            with open(job.path) as f:
                reused[job.path] = json.load(f)
        records.append(reused[job.path])
    print_table(records)
    print()
    tags = sorted({args.tag} if 'nbspamd' in args.peers else set())
    summary.report(args.results, rows={j.row for j in jobs}, tags=tags or None)
    if args.plots:
        subprocess.run(['/usr/bin/python3', os.path.join(HERE, 'plot.py'), '--results', args.results], check=True)
    if failed:
        raise SystemExit(f'{len(failed)} run(s) failed')


if __name__ == '__main__':
    main()
