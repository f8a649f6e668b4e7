"""/classify throughput and latency of nbspamd side by side with rspamd, spamd and bogofilter.

Each peer is set up as bench/accuracy sets it up (Bayes only, everything on 127.0.0.1, state in
a temp dir) and learns the 4,789 training messages of the accuracy split. Then, in rounds, each
peer scores the 1,257 test messages of the split:
- nbspamd and rspamd (HTTP): wrk posts the messages over keep-alive connections. Saturation:
  CONNECTIONS connections, no pause, for SECONDS seconds. Latency: the same connections, each
  paced so that the offered rate is half the saturation rate of that round.
- SpamAssassin: spamc per message (as an MTA runs it) against spamd, IN_FLIGHT at a time.
- bogofilter: its bulk mode (-b), one process for all messages (its fastest way).
The result is the median of the rounds, with the ratios nbspamd / peer. The peers take turns
in an order that rotates by one each round, so that no peer always runs first (right after the
last one's paced run, with the page cache and the CPU's state that leaves).

With --baseline BIN, another nbspamd binary (say, a build of an earlier commit, with its own
defaults) runs as the peer `nbspamd-baseline` in the same rounds, so that the cost of a change
is a ratio measured in one run. --nbspamd-flags gives the daemon under test extra flags too: with
the same flags on both (an A/A run) the ratio shows what the method alone gives. For both
nbspamd daemons the table also gives the mean number of token occurrences per test message (the
`tokens` of /classify).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'accuracy'))
import harness  # noqa: E402  (the accuracy harness: peers, corpus, split, installs)
from common import in_train_split, load_corpus  # noqa: E402

LUA = os.path.join(HERE, 'post_messages.lua')


# CPUs for wrk (taskset -c), from --wrk-cpus; None: wherever the kernel puts it.
WRK_CPUS = None


def wrk(port, target, list_file, connections, seconds, delay_ms=0, headers=()):
    pin = ['taskset', '-c', WRK_CPUS] if WRK_CPUS else []
    args = pin + ['wrk', '-t1', f'-c{connections}', f'-d{seconds}s', '--timeout', '10s', '-s', LUA,
                  f'http://127.0.0.1:{port}', '--', list_file, target, str(delay_ms), *headers]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    if result['status_errors'] or result['socket_errors']:
        raise RuntimeError(f'wrk against {target}: {result}')
    result['requests_per_s'] = result['requests'] / (result['duration_us'] / 1e6)
    return result


def http_round(port, target, list_file, args, headers=()):
    saturation = wrk(port, target, list_file, args.connections, args.seconds, headers=headers)
    rate = saturation['requests_per_s'] / 2
    delay_ms = max(1, round(1000 * args.connections / rate))
    paced = wrk(port, target, list_file, args.connections, args.seconds, delay_ms, headers)
    return {'requests_per_s': saturation['requests_per_s'], 'saturation_latency_us': saturation['latency_us'],
            'paced_rate_per_s': paced['requests_per_s'], 'paced_latency_us': paced['latency_us']}


def spamc_round(peer, test, args):
    def one(message):
        t0 = time.monotonic()
        peer.classify_one(message)
        return time.monotonic() - t0
    t0 = time.monotonic()
    with ThreadPoolExecutor(args.spamd_children) as pool:
        latencies = sorted(pool.map(one, test))
    elapsed = time.monotonic() - t0
    def pct(p):
        return round(1e6 * latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))])
    return {'requests_per_s': len(test) / elapsed,
            'saturation_latency_us': {'p50': pct(50), 'p99': pct(99), 'p999': pct(99.9)}}


def bogofilter_round(peer, test):
    t0 = time.monotonic()
    peer.classify(test)
    return {'requests_per_s': len(test) / (time.monotonic() - t0)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--peer', action='append', choices=['nbspamd', 'rspamd', 'spamassassin', 'bogofilter'],
                        help='peers to run (repeatable; default all four)')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--seconds', type=int, default=10, help='length of each wrk run')
    parser.add_argument('--connections', type=int, default=16, help='wrk keep-alive connections')
    parser.add_argument('--spamd-children', type=int, default=4, help='spamd children = spamc in flight')
    parser.add_argument('--nbspamd', default=None, help='daemon binary (default build/release/server/nbspamd)')
    parser.add_argument('--nbspamd-threads', type=int, default=2)
    parser.add_argument('--wrk-cpus', default=None,
                        help="pin wrk to these CPUs (taskset -c's list); with a --nbspamd wrapper that "
                        'execs taskset -c OTHER nbspamd "$@", the daemon\'s work alone on a core')
    parser.add_argument('--nbspamd-flags', default='',
                        help="extra flags of the daemon under test, e.g. '--history false' for an A/A run")
    parser.add_argument('--baseline', help='another nbspamd binary to run as the peer nbspamd-baseline')
    parser.add_argument('--baseline-flags', default='',
                        help="the baseline's own extra flags, e.g. '--history false' (same binary: the cost of a setting)")
    parser.add_argument('--corpus', default=os.path.join(HERE, '..', 'accuracy', 'corpus'))
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    args = parser.parse_args()
    global WRK_CPUS
    WRK_CPUS = args.wrk_cpus
    names = args.peer or ['nbspamd', 'rspamd', 'spamassassin', 'bogofilter']
    if args.baseline:
        names.append('nbspamd-baseline')

    for name in names:  # the peers' Debian packages, as bench/accuracy/run installs them
        harness.ensure_packages(harness.APT_PACKAGES.get(name, []))
    corpus = load_corpus(args.corpus)
    train = [m for m in corpus if in_train_split(m)]
    test = [m for m in corpus if not in_train_split(m)]
    workdirs, peers = {}, {}
    list_file = tempfile.NamedTemporaryFile('w', prefix='nbspamd-perf-', suffix='.list', delete=False)
    list_file.writelines(m.path + '\n' for m in test)
    list_file.close()
    # As bench/accuracy/harness.py's defaults: bulk training by the daemon's regime.
    accuracy_args = argparse.Namespace(nbspamd=harness.ensure_nbspamd(args.nbspamd),
                                       nbspamd_flags=['--threads', str(args.nbspamd_threads)],
                                       nbspamd_bulk='regime')
    main_flags = args.nbspamd_flags.split()
    import peer_spamassassin
    peer_spamassassin.SPAMC_IN_FLIGHT = args.spamd_children
    rounds = {name: [] for name in names}
    try:
        for name in names:
            workdirs[name] = tempfile.mkdtemp(prefix=f'nbspamd-perf-{name}-')
            if name == 'nbspamd-baseline':
                from peer_nbspamd import Nbspamd
                peer = peers[name] = Nbspamd(workdirs[name], args.baseline,
                                             accuracy_args.nbspamd_flags + args.baseline_flags.split())
            elif name == 'nbspamd' and main_flags:
                from peer_nbspamd import Nbspamd
                peer = peers[name] = Nbspamd(workdirs[name], accuracy_args.nbspamd,
                                             accuracy_args.nbspamd_flags + main_flags)
            else:
                peer = peers[name] = harness.make_peer(name, workdirs[name], accuracy_args)
            print(f'{name}: starting and learning {len(train)} messages', file=sys.stderr)
            if hasattr(peer, 'start'):
                peer.start()
            peer.train(train)
        tokens = {name: statistics.mean(peers[name].request('POST', '/classify', m.data)['tokens'] for m in test)
                  for name in names if name.startswith('nbspamd')}
        for r in range(args.rounds):
            shift = r % len(names)
            for name in names[shift:] + names[:shift]:
                peer = peers[name]
                if name.startswith('nbspamd'):
                    result = http_round(peer.port, '/classify', list_file.name, args)
                elif name == 'rspamd':
                    result = http_round(peer.port, '/checkv2', list_file.name, args,
                                        ['Settings-Id: bayes_only'])
                elif name == 'spamassassin':
                    result = spamc_round(peer, test, args)
                else:
                    result = bogofilter_round(peer, test)
                rounds[name].append(result)
                print(f'round {r + 1}: {name}: {result["requests_per_s"]:.0f} msg/s', file=sys.stderr)
    finally:
        for name, peer in peers.items():
            if hasattr(peer, 'stop'):
                try:
                    peer.stop()
                except Exception as error:  # keep stopping the others
                    print(f'{name}: stop failed: {error}', file=sys.stderr)
        os.unlink(list_file.name)
        for workdir in workdirs.values():
            subprocess.run(['rm', '-rf', workdir])

    summary = {}
    for name, results in rounds.items():
        entry = {'requests_per_s': [r['requests_per_s'] for r in results]}
        entry['median_requests_per_s'] = statistics.median(entry['requests_per_s'])
        for key in ('saturation_latency_us', 'paced_latency_us'):
            if key in results[0]:
                entry[key] = {p: statistics.median(r[key][p] for r in results) for p in ('p50', 'p99', 'p999')}
        if 'paced_rate_per_s' in results[0]:
            entry['paced_rate_per_s'] = statistics.median(r['paced_rate_per_s'] for r in results)
        if name in tokens:
            entry['tokens_per_message'] = tokens[name]
        summary[name] = entry
    if 'nbspamd' in summary:
        for name, entry in summary.items():
            if name != 'nbspamd':
                entry['ratio_nbspamd_to_peer'] = summary['nbspamd']['median_requests_per_s'] / entry['median_requests_per_s']
                ours = summary['nbspamd']['requests_per_s']
                entry['median_round_ratio'] = statistics.median(a / b for a, b in zip(ours, entry['requests_per_s']))
                entry['ratio_of_totals'] = sum(ours) / sum(entry['requests_per_s'])
    report = {'finished_at': time.strftime('%Y-%m-%dT%H:%M:%S'), 'load_average': os.getloadavg(),
              'messages': len(test), 'connections': args.connections, 'seconds': args.seconds,
              'rounds': args.rounds, 'spamd_children': args.spamd_children,
              'nbspamd_threads': args.nbspamd_threads, 'summary': summary, 'all_rounds': rounds}
    os.makedirs(args.results, exist_ok=True)
    path = os.path.join(args.results, 'classify-peers.json')
    with open(path, 'w') as f:
        json.dump(report, f, indent=1)
    print('| peer | msg/s per round | median msg/s | nbspamd ÷ peer | p50 / p99 / p99.9 µs at half rate '
          '| tokens per message |')
    print('| --- | --- | --- | --- | --- | --- |')
    for name, entry in summary.items():
        latency = entry.get('paced_latency_us') or {}
        print(f"| {name} | {', '.join(f'{x:,.0f}' for x in entry['requests_per_s'])} | "
              f"{entry['median_requests_per_s']:,.0f} | {entry.get('ratio_nbspamd_to_peer', 1):.1f} | "
              + (' / '.join(f'{latency[p]:,}' for p in ('p50', 'p99', 'p999')) if latency else '—') + ' | '
              + (f"{entry['tokens_per_message']:.0f}" if 'tokens_per_message' in entry else '—') + ' |')
    if 'nbspamd-baseline' in summary:  # the cost of a change is a few percent: three decimals, three ways
        entry = summary['nbspamd-baseline']
        print(f"nbspamd ÷ nbspamd-baseline: ratio of medians {entry['ratio_nbspamd_to_peer']:.3f}, "
              f"median of round ratios {entry['median_round_ratio']:.3f}, ratio of totals {entry['ratio_of_totals']:.3f}")
    print(f'written: {path}', file=sys.stderr)


if __name__ == '__main__':
    main()
