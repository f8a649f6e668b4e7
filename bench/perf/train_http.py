"""/train throughput and latency through HTTP with wrk: saturation, then half that rate.

A fresh daemon (empty RocksDB in a temp dir on the real disk: fsync is real) learns the corpus
messages posted in turn by wrk over keep-alive connections, each request with an id no other
request has (so every request is a real, durable learn) and the label of its corpus group. Each
round: SECONDS at saturation, then SECONDS with each connection paced to half that rate, on a new
daemon each time. Medians over rounds.
"""
import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, '..', 'accuracy'))
from common import load_corpus  # noqa: E402
from peer_nbspamd import Nbspamd  # noqa: E402
from classify_peers import wrk  # noqa: E402

TARGET = '/train?label={label}&id={id}'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nbspamd', default=os.path.join(REPO, 'build/release/server/nbspamd'))
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--seconds', type=int, default=10)
    parser.add_argument('--connections', type=int, default=64)
    parser.add_argument('--corpus', default=os.path.join(HERE, '..', 'accuracy', 'corpus'))
    args = parser.parse_args()
    corpus = load_corpus(args.corpus)
    list_file = tempfile.NamedTemporaryFile('w', prefix='nbspamd-train-', suffix='.list', delete=False)
    list_file.writelines(m.path + '\n' for m in corpus)
    list_file.close()

    def fresh_daemon_run(delay_ms):
        workdir = tempfile.mkdtemp(prefix='nbspamd-train-http-', dir=os.path.join(REPO, 'build'))
        peer = Nbspamd(workdir, args.nbspamd, ['--threads', '2'])
        try:
            peer.start()
            return wrk(peer.port, TARGET, list_file.name, args.connections, args.seconds, delay_ms)
        finally:
            peer.stop()
            os.system(f'rm -rf {workdir}')

    rounds = []
    try:
        for r in range(args.rounds):
            saturation = fresh_daemon_run(0)
            rate = saturation['requests_per_s'] / 2
            paced = fresh_daemon_run(max(1, round(1000 * args.connections / rate)))
            rounds.append((saturation, paced))
            print(f"round {r + 1}: {saturation['requests_per_s']:.0f} trains/s; at {paced['requests_per_s']:.0f}/s "
                  f"p50 {paced['latency_us']['p50']} p99 {paced['latency_us']['p99']} "
                  f"p99.9 {paced['latency_us']['p999']} µs", file=sys.stderr)
    finally:
        os.unlink(list_file.name)
    median = statistics.median
    print('| trains/s per round | median trains/s | paced rate /s | p50 / p99 / p99.9 µs at half rate |')
    print('| --- | --- | --- | --- |')
    per_round = ', '.join(f"{s['requests_per_s']:,.0f}" for s, _ in rounds)
    print(f"| {per_round} | "
          f"{median(s['requests_per_s'] for s, _ in rounds):,.0f} | "
          f"{median(p['requests_per_s'] for _, p in rounds):,.0f} | "
          + ' / '.join(f"{median(p['latency_us'][k] for _, p in rounds):,.0f}" for k in ('p50', 'p99', 'p999'))
          + ' |')


if __name__ == '__main__':
    main()
