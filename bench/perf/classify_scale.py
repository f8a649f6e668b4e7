"""/classify latency through the real daemon as the model grows from 10k to 10M tokens.

For each size, a synthetic two-class model (bench/scale_benchmark write, kept in --work and
reused) is copied to a temp dir, the daemon starts on it and learns the accuracy split's 4,789
training messages over HTTP (so real mail tokens sit among the synthetic ones), then wrk posts
the 1,257 test messages to /classify at the same paced rate for every size. Sizes run in turn
within each round; the result is the median over rounds of p50/p99/p99.9 and the p99 ratio of
each size to the smallest.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, '..', 'accuracy'))
from common import in_train_split, load_corpus  # noqa: E402
from peer_nbspamd import Nbspamd  # noqa: E402
from classify_peers import wrk  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--build', default=os.path.join(REPO, 'build/release'))
    parser.add_argument('--work', default='/tmp/nbspamd-scale')
    parser.add_argument('--sizes', default='10000,100000,1000000,10000000')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--rate', type=int, default=1000, help='offered /classify requests per second')
    parser.add_argument('--connections', type=int, default=8)
    parser.add_argument('--seconds', type=int, default=10)
    parser.add_argument('--corpus', default=os.path.join(HERE, '..', 'accuracy', 'corpus'))
    args = parser.parse_args()
    daemon = os.path.join(args.build, 'server', 'nbspamd')
    writer = os.path.join(args.build, 'bench', 'scale_benchmark')
    sizes = [int(s) for s in args.sizes.split(',')]
    corpus = load_corpus(args.corpus)
    train = [m for m in corpus if in_train_split(m)]
    test = [m for m in corpus if not in_train_split(m)]
    list_file = tempfile.NamedTemporaryFile('w', prefix='nbspamd-scale-', suffix='.list', delete=False)
    list_file.writelines(m.path + '\n' for m in test)
    list_file.close()
    os.makedirs(args.work, exist_ok=True)
    for tokens in sizes:
        folder = os.path.join(args.work, f'm{tokens}')
        if not os.path.exists(folder):
            subprocess.run([writer, 'write', folder, str(tokens)], check=True)

    delay_ms = max(1, round(1000 * args.connections / args.rate))
    results = {tokens: [] for tokens in sizes}
    try:
        for round_number in range(args.rounds):
            for tokens in sizes:
                workdir = tempfile.mkdtemp(prefix=f'nbspamd-scale-{tokens}-')
                shutil.copytree(os.path.join(args.work, f'm{tokens}'), os.path.join(workdir, 'db'))
                peer = Nbspamd(workdir, daemon, ['--threads', '2'])
                try:
                    peer.start()
                    peer.train(train)
                    stats = peer.request('GET', '/stats')
                    result = wrk(peer.port, '/classify', list_file.name, args.connections, args.seconds, delay_ms)
                finally:
                    peer.stop()
                    shutil.rmtree(workdir)
                result['vocabulary'] = stats['vocabulary']
                results[tokens].append(result)
                latency = result['latency_us']
                print(f"round {round_number + 1}: {tokens} tokens (|V| {stats['vocabulary']}): "
                      f"{result['requests_per_s']:.0f}/s p50 {latency['p50']} p99 {latency['p99']} µs",
                      file=sys.stderr)
    finally:
        os.unlink(list_file.name)

    base = statistics.median(r['latency_us']['p99'] for r in results[sizes[0]])
    print(f'| synthetic tokens | |V| | rate /s | p50 µs | p99 µs | p99.9 µs | p99 ÷ p99 at {sizes[0]:,} |')
    print('| --- | --- | --- | --- | --- | --- | --- |')
    for tokens in sizes:
        runs = results[tokens]
        median = {p: statistics.median(r['latency_us'][p] for r in runs) for p in ('p50', 'p99', 'p999')}
        print(f"| {tokens:,} | {runs[0]['vocabulary']:,} | "
              f"{statistics.median(r['requests_per_s'] for r in runs):,.0f} | {median['p50']:,.0f} | "
              f"{median['p99']:,.0f} | {median['p999']:,.0f} | {median['p99'] / base:.2f} |")


if __name__ == '__main__':
    main()
