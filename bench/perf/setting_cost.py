"""The /classify throughput cost of a setting (or of a change of code): two daemons, paired runs.

Daemon A runs with FLAGS_A, daemon B with FLAGS_B (say, A '--history false' and B the defaults:
what the scan history costs), in BLOCKS blocks; both run one binary, or with --nbspamd-b daemon
B runs another: what a change of code costs or gains. In each block two fresh daemons, started in
turns (A first in even blocks, B first in odd ones), learn the 4,789 training messages of the
accuracy split; each is saturated for WARMUP seconds (so that a history reaches its bound: the steady
state of a daemon that has run for a while); then, PAIRS times, each is saturated for SECONDS
seconds by wrk posting the 1,257 test messages over CONNECTIONS keep-alive connections, A then B
in even pairs and B then A in odd ones (ABBA: a drift of the machine's speed cancels within two
pairs).

The machine's own speed moves by up to a fifth from one minute to the next, far more than the
few percent a setting costs; short runs side by side, many of them, keep each pair's two runs
under the same conditions. Two daemons started alike still differ by a percent or two (where
their memory and files landed, their RocksDB's layout): fresh daemons in each block average that
out. The result is B ÷ A three ways: the geometric mean of all pairs' ratios with a 95% bootstrap
interval (10,000 resamplings, each drawing whole blocks, then pairs within them; fixed seed), the
median of the pairs' ratios, and the ratio of the totals; and each block's geometric mean. With
the same flags on both (an A/A run) the interval shows what the method alone gives.
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'accuracy'))
import harness  # noqa: E402  (the accuracy harness: corpus, split, the daemon's build)
from classify_peers import wrk  # noqa: E402
from common import in_train_split, load_corpus  # noqa: E402
from peer_nbspamd import Nbspamd  # noqa: E402


def bootstrap_interval(blocks, resamplings=10_000, seed=27):
    """The 95% percentile interval of the mean log ratio, as a ratio; `blocks` holds each block's
    log ratios. Blocks are drawn whole, then pairs within each: both kinds of variation count."""
    rng = random.Random(seed)
    means = []
    for _ in range(resamplings):
        drawn = [x for block in rng.choices(blocks, k=len(blocks)) for x in rng.choices(block, k=len(block))]
        means.append(statistics.fmean(drawn))
    means.sort()
    return math.exp(means[int(0.025 * resamplings)]), math.exp(means[int(0.975 * resamplings) - 1])


def run_block(block, binaries, train, list_file, args, runs):
    """One block: two fresh daemons, warmed up, then args.pairs paired runs appended to runs."""
    workdirs, daemons = {}, {}
    try:
        order = (('A', args.flags_a), ('B', args.flags_b))
        for name, flags in order if block % 2 == 0 else order[::-1]:
            workdirs[name] = tempfile.mkdtemp(prefix=f'nbspamd-cost-{name}-')
            daemon = daemons[name] = Nbspamd(workdirs[name], binaries[name],
                                             ['--threads', str(args.threads), *flags.split()])
            print(f'block {block + 1}: {name} ({flags or "defaults"}): starting and learning {len(train)} messages',
                  file=sys.stderr)
            daemon.start()
            daemon.train(train)
        if args.warmup:
            for name, daemon in daemons.items():
                warm = wrk(daemon.port, '/classify', list_file, args.connections, args.warmup)
                print(f'block {block + 1}: {name}: warm-up {warm["requests_per_s"]:.0f} msg/s', file=sys.stderr)
        for pair in range(args.pairs):
            for name in ('A', 'B') if pair % 2 == 0 else ('B', 'A'):
                result = wrk(daemons[name].port, '/classify', list_file, args.connections, args.seconds)
                runs[name].append(result['requests_per_s'])
            print(f'block {block + 1}, pair {pair + 1}: A {runs["A"][-1]:.0f}, B {runs["B"][-1]:.0f} msg/s, '
                  f'B ÷ A {runs["B"][-1] / runs["A"][-1]:.3f}', file=sys.stderr)
    finally:
        for daemon in daemons.values():
            try:
                daemon.stop()
            except Exception as error:  # keep stopping the other
                print(f'stop failed: {error}', file=sys.stderr)
        for workdir in workdirs.values():
            subprocess.run(['rm', '-rf', workdir])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--flags-a', default='--history false', help="daemon A's extra flags (the baseline)")
    parser.add_argument('--flags-b', default='', help="daemon B's extra flags (the setting under test)")
    parser.add_argument('--blocks', type=int, default=4, help='fresh pairs of daemons')
    parser.add_argument('--pairs', type=int, default=10, help='paired runs in each block')
    parser.add_argument('--seconds', type=int, default=3, help='length of each saturation run')
    parser.add_argument('--warmup', type=int, default=30, help='seconds of saturation of each daemon first')
    parser.add_argument('--connections', type=int, default=16)
    parser.add_argument('--threads', type=int, default=2, help="each daemon's --threads")
    parser.add_argument('--nbspamd', default=None, help='daemon binary (default build/release/server/nbspamd)')
    parser.add_argument('--nbspamd-b', default=None,
                        help="daemon B's binary, to measure a change of code rather than of a setting (default: --nbspamd)")
    parser.add_argument('--corpus', default=os.path.join(HERE, '..', 'accuracy', 'corpus'))
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    args = parser.parse_args()
    if args.blocks < 1 or args.pairs < 2 or args.seconds < 1 or args.warmup < 0:
        parser.error('--blocks must be at least 1, --pairs at least 2, --seconds at least 1, --warmup at least 0')

    if args.nbspamd_b and not os.access(args.nbspamd_b, os.X_OK):
        parser.error(f'--nbspamd-b {args.nbspamd_b}: not an executable file')
    binary = harness.ensure_nbspamd(args.nbspamd)
    binaries = {'A': binary, 'B': os.path.abspath(args.nbspamd_b) if args.nbspamd_b else binary}
    corpus = load_corpus(args.corpus)
    train = [m for m in corpus if in_train_split(m)]
    test = [m for m in corpus if not in_train_split(m)]
    with tempfile.NamedTemporaryFile('w', prefix='nbspamd-cost-', suffix='.list', delete=False) as list_file:
        list_file.writelines(m.path + '\n' for m in test)
    runs = {'A': [], 'B': []}
    try:
        for block in range(args.blocks):
            run_block(block, binaries, train, list_file.name, args, runs)
    finally:
        os.unlink(list_file.name)

    ratios = [b / a for a, b in zip(runs['A'], runs['B'])]
    logs = [math.log(r) for r in ratios]
    blocks = [logs[i * args.pairs:(i + 1) * args.pairs] for i in range(args.blocks)]
    low, high = bootstrap_interval(blocks)
    summary = {'geometric_mean_ratio': math.exp(statistics.fmean(logs)), 'interval_95': [low, high],
               'block_ratios': [math.exp(statistics.fmean(block)) for block in blocks],
               'median_ratio': statistics.median(ratios), 'ratio_of_totals': sum(runs['B']) / sum(runs['A']),
               'median_a': statistics.median(runs['A']), 'median_b': statistics.median(runs['B'])}
    report = {'finished_at': time.strftime('%Y-%m-%dT%H:%M:%S'), 'load_average': os.getloadavg(),
              'binary': binary, 'binary_b': binaries['B'], 'flags_a': args.flags_a, 'flags_b': args.flags_b, 'blocks': args.blocks,
              'pairs': args.pairs,
              'seconds': args.seconds, 'warmup': args.warmup, 'connections': args.connections,
              'threads': args.threads, 'summary': summary, 'runs': runs}
    os.makedirs(args.results, exist_ok=True)
    path = os.path.join(args.results, 'setting-cost.json')
    with open(path, 'w') as f:
        json.dump(report, f, indent=1)
    print(f"A ({args.flags_a or 'defaults'}): median {summary['median_a']:,.0f} msg/s; "
          f"B ({args.flags_b or 'defaults'}): median {summary['median_b']:,.0f} msg/s")
    print(f"B ÷ A over {args.blocks} blocks of {args.pairs} pairs: geometric mean {summary['geometric_mean_ratio']:.3f} "
          f"(95% interval {low:.3f} to {high:.3f}), median {summary['median_ratio']:.3f}, "
          f"ratio of totals {summary['ratio_of_totals']:.3f}; blocks "
          + ', '.join(f'{r:.3f}' for r in summary['block_ratios']))
    print(f'written: {path}', file=sys.stderr)


if __name__ == '__main__':
    main()
