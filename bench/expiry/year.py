# A year of mail in simulated time (docs/STORAGE.md "A year of mail"): lists the corpora's
# labelled messages in order (trec07p-early in arrival order, the others in the accuracy harness's
# shuffled order, concatenated in the order given or, with --interleave SEED, merged at random),
# runs expiry_year_of_mail once per policy (one process each, so its RSS is its own), then
# prints, per policy, the figures at the end of the year and (1-AUC)% and FNR at FPR <= 0.1% of
# the last 30 simulated days (bench/accuracy/metrics.py) and the default verdicts' ham called
# spam and spam missed, and draws db size and |V| over the year into an SVG. Also the folder's
# size once fully compacted at the end (compacted_db_bytes of the tool's log): the live data
# alone.
#   bench/expiry/run [--corpus trec07p-early[,spamassassin,...]] [--interleave SEED] [--days 365]
#       [--policies unbounded,r90,...] [--cap N] [--out DIR] [--svg FILE] [--plot-only]
#       [--bin BINARY]
import argparse
import csv
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'accuracy'))
import datasets  # noqa: E402
import metrics  # noqa: E402
import svg_plot  # noqa: E402
from common import online_order  # noqa: E402

LAST_DAYS = 30  # "the last month" of the accuracy figures


def policies(cap):
    """The named policies run when --policies is not given."""
    return ['unbounded', 'r90', 'r90-t90-c2', 'r30-t30-c1', 'r90-t90-c1', 'r90-t180-c1',
            f'r30-t30-c1-cap{cap // 1000}k']


def policy_flags(name):
    """A policy's name -> the flags of expiry_year_of_mail (the daemon's settings of the same
    names). A name is 'unbounded' or dash-separated parts: rD (ledger_retention_days D), tD
    (token_expiry_days D), cN (token_expiry_max_count N), wX (token_keep_weight X), h
    (token_keep_ham on; off without it), capNk (token_cap N thousand), mNk
    (token_expiry_min_messages N thousand; 0 without it); e.g. r90-t180-c1-h-m20k."""
    if name == 'unbounded':
        return []
    flags = []
    for part in name.split('-'):
        if part == 'h':
            flags += ['--keep-ham', '1']
            continue
        if part.startswith('cap') and part.endswith('k') and part[3:-1].isdigit():
            flags += ['--cap', str(int(part[3:-1]) * 1000)]
            continue
        if part.startswith('m') and part.endswith('k') and part[1:-1].isdigit():
            flags += ['--min-messages', str(int(part[1:-1]) * 1000)]
            continue
        key, value = part[:1], part[1:]
        flag = {'r': '--retention-days', 't': '--token-days', 'c': '--max-count',
                'w': '--keep-weight'}.get(key)
        try:
            ok = flag is not None and (float(value) >= 0 if key == 'w' else int(value) >= 0)
        except ValueError:
            ok = False
        if not ok:
            raise SystemExit(f'{name}: not a policy (unbounded, or parts rD, tD, cN, wX, h, capNk, mNk)')
        flags += [flag, value]
    return flags


def stream(args):
    """The corpora's messages, each corpus in its own order: concatenated in the order given, or
    with --interleave SEED merged at random (each next message from a corpus with the chance of
    its share of the messages left), as a site that receives all of them at once would."""
    streams = []
    for name in args.corpus.split(','):
        own = datasets.load(name, args)
        streams.append(own if name == 'trec07p-early' else online_order(own))
    if args.interleave is None:
        return [m for own in streams for m in own]
    rng = random.Random(args.interleave)
    # Every draw order of the concatenation's labels is equally likely: a uniform random merge.
    sources = [i for i, own in enumerate(streams) for _ in own]
    rng.shuffle(sources)
    taken = [0] * len(streams)
    messages = []
    for i in sources:
        messages.append(streams[i][taken[i]])
        taken[i] += 1
    return messages


def accuracy(scores_path, first_day):
    results = []
    with open(scores_path) as f:
        for row in csv.DictReader(f):
            if int(row['day']) >= first_day:
                score = float(row['score']) if row['score'] else 0.0
                results.append((row['spam'] == '1', score, row['verdict'], None))
    return metrics.evaluate(results)


def plot(args, tag, count, series):
    """db size, its table files and |V| over the year, one line per policy, into args.svg."""
    mib = {n: [(int(r['day']) + 1, int(r['db_bytes']) / 2**20) for r in rows] for n, rows in series.items()}
    vocab = {n: [(int(r['day']) + 1, int(r['vocabulary']) / 1000) for r in rows] for n, rows in series.items()}
    sst = {n: [(int(r['day']) + 1, int(r['sst_bytes']) / 2**20) for r in rows] for n, rows in series.items()}
    svg_plot.draw(args.svg, f'A year of mail in simulated time: {tag}, {count:,} messages',
                  'simulated day', [('RocksDB folder, MiB', mib), ('of which table files, MiB', sst),
                                    ('distinct tokens |V|, thousands', vocab)])
    print(f'\nplot: {args.svg}', file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--corpus', default='trec07p-early')
    parser.add_argument('--days', type=int, default=365)
    parser.add_argument('--policies', default='')
    parser.add_argument('--cap', type=int, default=200000)
    parser.add_argument('--interleave', type=int, default=None, metavar='SEED',
                        help="merge the corpora at random (each in its own order) instead of one after another")
    parser.add_argument('--limit', type=int, default=0, help='the first N messages only (a trial)')
    parser.add_argument('--out', default=os.path.join(HERE, 'results'))
    parser.add_argument('--svg', default='')
    parser.add_argument('--plot-only', action='store_true',
                        help="draw --svg from the policies' CSVs already in --out, running nothing")
    parser.add_argument('--bin', default=os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                                      'build', 'release', 'bench', 'expiry_year_of_mail'))
    parser.add_argument('--spamassassin-corpus', default=os.path.join(HERE, '..', 'accuracy', 'corpus'))
    parser.add_argument('--corpora', default=os.path.join(HERE, '..', 'accuracy', 'corpora'))
    parser.add_argument('--shared-corpora', default=datasets.default_shared_corpora())
    args = parser.parse_args()

    chosen = args.policies.split(',') if args.policies else policies(args.cap)
    table = {name: policy_flags(name) for name in chosen}
    messages = stream(args)
    if args.limit:
        messages = messages[:args.limit]
    tag = args.corpus.replace(',', '+') + ('' if args.interleave is None else f'~{args.interleave}')
    out = os.path.join(args.out, tag)
    os.makedirs(out, exist_ok=True)
    manifest = os.path.join(out, 'manifest.tsv')
    with open(manifest, 'w') as f:
        for m in messages:
            f.write(f"{'spam' if m.is_spam else 'ham'}\t{os.path.abspath(m.path)}\n")
    spam = sum(m.is_spam for m in messages)
    print(f'{tag}: {len(messages)} messages ({spam} spam, {len(messages) - spam} ham) over {args.days} '
          f'simulated days, {len(messages) / args.days:.0f} a day', file=sys.stderr)

    series, summary = {}, []
    if args.plot_only:
        for name in chosen:
            with open(os.path.join(out, f'{name}.csv')) as f:
                series[name] = list(csv.DictReader(f))
        plot(args, tag, len(messages), series)
        return
    for name in chosen:
        work = tempfile.mkdtemp(prefix='nbspamd-year-')
        try:
            rows_path, scores_path = os.path.join(out, f'{name}.csv'), os.path.join(out, f'{name}-scores.csv')
            log_path = os.path.join(out, f'{name}.log')  # the passes' log lines
            with open(rows_path, 'w') as rows, open(log_path, 'w') as log:
                ran = subprocess.run([args.bin, '--manifest', manifest, '--dir', os.path.join(work, 'model'),
                                      '--policy', name, '--days', str(args.days), '--scores', scores_path]
                                     + table[name], stdout=rows, stderr=log)
            if ran.returncode != 0:
                raise SystemExit(f'{name}: expiry_year_of_mail failed, see {log_path}')
        finally:
            shutil.rmtree(work, ignore_errors=True)
        with open(rows_path) as f:
            rows = list(csv.DictReader(f))
        with open(log_path) as f:
            compacted = [int(line.split('=')[1]) for line in f if line.startswith('compacted_db_bytes=')]
        series[name] = rows
        last = rows[-1]
        month = accuracy(scores_path, args.days - LAST_DAYS)
        year = accuracy(scores_path, 0)
        summary.append({
            'policy': name, 'db_mib': int(last['db_bytes']) / 2**20,
            'db_peak_mib': max(int(r['db_bytes']) for r in rows) / 2**20,
            'compacted_mib': compacted[0] / 2**20,
            'sst_mib': int(last['sst_bytes']) / 2**20, 'wal_mib': int(last['wal_bytes']) / 2**20,
            'wal_peak_mib': max(int(r['wal_bytes']) for r in rows) / 2**20,
            'rss_mib': int(last['rss_bytes']) / 2**20,
            'rss_peak_mib': max(int(r['rss_bytes']) for r in rows) / 2**20,
            'vocabulary': int(last['vocabulary']), 'vocabulary_peak': max(int(r['vocabulary']) for r in rows),
            'ledger_live': int(last['ledger_live']), 'retired': int(last['retired']),
            'dropped': int(last['dropped']), 'pass_ms_max': max(float(r['pass_ms']) for r in rows),
            'cap_met': last['cap_met'] == '1',
            'month_auc': month['one_minus_auc_pct'], 'month_fnr': month['fnr_at_fpr_0_1_pct'],
            'month_messages': month['spam'] + month['ham'], 'month_ham': month['ham'],
            'year_auc': year['one_minus_auc_pct'], 'year_fnr': year['fnr_at_fpr_0_1_pct'],
            'month_fp': month['false_positives'], 'month_fpr': month['fpr_pct'],
            'month_fn': month['false_negatives'], 'month_spam': month['spam'],
            'month_verdict_fnr': month['fnr_pct'], 'year_fp': year['false_positives'],
            'year_fpr': year['fpr_pct'], 'year_verdict_fnr': year['fnr_pct']})
        print(f'{name}: done', file=sys.stderr)

    s0 = summary[0]
    print(f'\n{tag}, {len(messages)} messages over {args.days} days; accuracy of the last {LAST_DAYS} days '
          f'({s0["month_messages"]} messages, {s0["month_ham"]} ham) and of the whole year\n')
    print('| policy | db MiB (end / peak / compacted) | RSS MiB (end / peak) | \\|V\\| (end / peak) | live records | '
          'retired | tokens dropped | slowest pass ms | last month (1-AUC)% | last month FNR@0.1% | '
          'year (1-AUC)% | year FNR@0.1% |')
    print('|' + '---|' * 12)
    for s in summary:
        print(f"| {s['policy']} | {s['db_mib']:.1f} / {s['db_peak_mib']:.1f} / {s['compacted_mib']:.1f} | "
              f"{s['rss_mib']:.0f} / "
              f"{s['rss_peak_mib']:.0f} | {s['vocabulary']:,} / {s['vocabulary_peak']:,} | "
              f"{s['ledger_live']:,} | {s['retired']:,} | {s['dropped']:,} | {s['pass_ms_max']:.0f} | "
              f"{s['month_auc']:.4f} | {s['month_fnr']:.2f} | {s['year_auc']:.4f} | {s['year_fnr']:.2f} |")
    print('\nthe default verdicts: ham called spam (false positives) and spam not called spam '
          '(called ham or unsure), last month and whole year\n')
    print('| policy | last month ham called spam | last month spam missed | '
          'year ham called spam | year spam missed |')
    print('|' + '---|' * 5)
    for s in summary:
        print(f"| {s['policy']} | {s['month_fp']} of {s['month_ham']} ({s['month_fpr']:.2f}%) | "
              f"{s['month_fn']} of {s['month_spam']} ({s['month_verdict_fnr']:.2f}%) | "
              f"{s['year_fp']} ({s['year_fpr']:.3f}%) | {s['year_verdict_fnr']:.2f}% |")
    print('\nwhat the folder holds at the end: table files, write-ahead logs (MiB; the logs go only once '
          'every column family flushed what they hold)\n')
    print('| policy | folder | table files | write-ahead logs (end / peak) | fully compacted |')
    print('|' + '---|' * 5)
    for s in summary:
        print(f"| {s['policy']} | {s['db_mib']:.1f} | {s['sst_mib']:.1f} | {s['wal_mib']:.1f} / "
              f"{s['wal_peak_mib']:.1f} | {s['compacted_mib']:.1f} |")
    base = next((s for s in summary if s['policy'] == 'unbounded'), None)
    if base:
        ratio = lambda a, b: f'{a / b:.3f}' if b else ('1.000' if a == b else 'inf')
        print('\nagainst the unbounded model (1.000: the same; the target is at most 1.05)\n')
        print('| policy | last month (1-AUC)% | last month FNR@0.1% | year (1-AUC)% | year FNR@0.1% |')
        print('|' + '---|' * 5)
        for s in summary:
            print(f"| {s['policy']} | {ratio(s['month_auc'], base['month_auc'])} | "
                  f"{ratio(s['month_fnr'], base['month_fnr'])} | {ratio(s['year_auc'], base['year_auc'])} | "
                  f"{ratio(s['year_fnr'], base['year_fnr'])} |")
    if args.svg:
        plot(args, tag, len(messages), series)


if __name__ == '__main__':
    main()
