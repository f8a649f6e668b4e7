# The summary of every result file in a results folder: one table of each filter's figures per
# corpus/protocol (the peers, the reference and nbspamd's variants), one of each nbspamd variant's
# ratios to the best peer (the reference included), and one of run times.
# Prints it as Markdown and writes it to RESULTS/summary.md. Metrics are computed again from the
# stored scores, so that a change to metrics.py needs no new runs.
#   bench/accuracy/summary [--results DIR] [--tags baseline,v1]
import argparse
import json
import os
import re
import sys

import metrics

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = ['spamassassin', 'trec07p-early', 'csdmc2010', 'lingspam-bare']
# What nbspamd's variants are compared with: the Debian filters and the reference design of the field's
# best filters (peer_reference.py: online logistic regression over byte 4-grams), the bar of issue 59.
PEERS = ['bogofilter', 'spamassassin', 'rspamd', 'reference']
REFERENCES = []  # shown beside the peers but left out of the ratios
SPLIT_SALTS = ['', 'a', 'b', 'c']
ROW_ORDER = ['spamassassin-split', 'spamassassin-online', 'spamassassin-folders', 'trec07p-early-chrono', 'trec07p-early-online',
             'csdmc2010-drift', 'csdmc2010-drift-online', 'lingspam-bare-tenfold']
SPLIT_MEAN = 'spamassassin-split-mean'
AVERAGED = ['one_minus_auc_pct', 'fnr_at_fpr_0_1_pct', 'fpr_pct', 'spam_called_ham_pct', 'unsure_pct', 'brier',
            'ece', 'worst_bin']
CALIBRATION = ['brier', 'ece', 'worst_bin']  # of spam_confidence, from metrics.calibration


def row_name(corpus, protocol, salt='', limit=None):
    """The folder of a corpus/protocol's result files, e.g. spamassassin-split-salt_a."""
    salt_part = '-salt_' + re.sub(r'[^A-Za-z0-9]+', '_', salt) if salt else ''
    return f'{corpus}-{protocol}{salt_part}' + (f'-first_{limit}' if limit else '')


def row_label(row):
    if row == SPLIT_MEAN:
        return "spamassassin/split, mean of salts '', a, b, c"
    corpus = next(c for c in CORPORA + [row.split('-')[0]] if row.startswith(c + '-'))
    label = corpus + '/' + row[len(corpus) + 1:].replace('-salt_', ' salt ').replace('-first_', ' first ')
    return label + (" (salt '')" if row == 'spamassassin-split' else '')


def fmt(x, digits):
    return '-' if x is None else f'{x:.{digits}f}'


def load_records(results_dir):
    """{row: {filter: record}} for every RESULTS/<row>/<filter>.json. An online run is the same
    whatever follows its first N messages, so a row of the first N (--online-limit, or stopped by
    SIGUSR1) also gets every filter that has a longer run of that protocol, from that run's first
    N scores (the record then has 'derived_from' and no timing)."""
    rows = {}
    for row in sorted(os.listdir(results_dir)) if os.path.isdir(results_dir) else []:
        folder = os.path.join(results_dir, row)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if not name.endswith('.json'):
                continue
            with open(os.path.join(folder, name)) as f:
                record = json.load(f)
            if 'scores' in record and 'timing' in record:  # else not a result file of this harness
                rows.setdefault(row, {})[name[:-5]] = record
    for row in list(rows):
        base, _, limit = row.partition('-first_')
        if not limit.isdigit() or 'online' not in base:
            continue
        longer = sorted((r for r in rows if r == base or (r.startswith(base + '-first_') and r != row)),
                        key=lambda r: r == base)  # the full run last: it wins
        for source in longer:
            for name, record in rows[source].items():
                if name not in rows[row] and len(record['scores']) >= int(limit):
                    rows[row][name] = dict(record, scores=record['scores'][:int(limit)], timing=None,
                                           derived_from=source)
    return rows


def load(results_dir):
    """{row: {filter: figures}}, the figures of load_records plus the mean of the four splits."""
    rows = {}
    for row, records in load_records(results_dir).items():
        for name, record in records.items():
            m = metrics.evaluate([(r[1], r[2], r[3], r[5]) for r in record['scores']])
            figures = {k: m.get(k) for k in AVERAGED if k not in CALIBRATION}
            for k in CALIBRATION:
                figures[k] = m['calibration'][k] if m['calibration'] else None
            figures['total_s'] = record['timing']['total_s'] if record['timing'] else None
            figures['version'] = record['peer_info'].get('version')
            rows.setdefault(row, {})[name] = figures
    salts = [row_name('spamassassin', 'split', s) for s in SPLIT_SALTS]
    mean = {}
    for name in set.intersection(*(set(rows.get(r, {})) for r in salts)):  # filters with all four splits
        runs = [rows[r][name] for r in salts]
        mean[name] = {k: None if None in [f[k] for f in runs] else sum(f[k] for f in runs) / len(runs)
                      for k in AVERAGED}
        mean[name]['total_s'] = None if None in [f['total_s'] for f in runs] else sum(f['total_s'] for f in runs)
    if mean:
        rows[SPLIT_MEAN] = mean
    return rows


def ordered(rows):
    rank = lambda row: ([SPLIT_MEAN] + ROW_ORDER).index(re.sub(r'-(salt|first)_.*', '', row)) \
        if re.sub(r'-(salt|first)_.*', '', row) in [SPLIT_MEAN] + ROW_ORDER else 99
    return sorted(rows, key=lambda row: (rank(row), row))


def table(head, body):
    """Markdown with padded columns, readable in a terminal too."""
    cells = [list(head)] + [list(r) for r in body]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    line = lambda r: '| ' + ' | '.join(c.ljust(w) for c, w in zip(r, widths)) + ' |'
    return '\n'.join([line(cells[0]), '|' + '|'.join('-' * (w + 2) for w in widths) + '|'] + [line(r) for r in cells[1:]])


def ratio(value, best):
    if value is None or best is None:
        return None
    if best == 0:
        return 1.0 if value == 0 else float('inf')
    return value / best


def render(rows, tags=None):
    """The three tables as Markdown; tags: the nbspamd variants to show (default all)."""
    found = sorted({f for figures in rows.values() for f in figures})
    variants = [f for f in found if f.startswith('nbspamd-') and (tags is None or f[8:] in tags)]
    peers = [p for p in PEERS if p in found]
    filters = peers + [r for r in REFERENCES if r in found] + variants
    order = ordered(rows)
    out = ['Columns per filter: (1-AUC)% (ties count one half); FNR % at FPR ≤ 0.1%; and at its own verdict '
           '"FP/FN/U %": ham called spam %, spam called ham % and unsure % of all messages (bogofilter and nbspamd '
           'have an unsure verdict). Split rows are means when marked so.', '']
    body = []
    for row in order:
        cells = [row_label(row)]
        for name in filters:
            f = rows[row].get(name)
            cells += ['', '', ''] if f is None else [
                fmt(f['one_minus_auc_pct'], 4), fmt(f['fnr_at_fpr_0_1_pct'], 2),
                '/'.join(fmt(f[k], 2) for k in ('fpr_pct', 'spam_called_ham_pct', 'unsure_pct'))]
        body.append(cells)
    head = ['corpus/protocol'] + [h for name in filters for h in (f'{name} 1-AUC%', f'{name} FNR@.1%',
                                                                   f'{name} FP/FN/U %')]
    out.append(table(head, body))
    if variants and peers:
        out += ['', 'nbspamd variants: ratio to the best peer of the row (below 1 beats every peer). The worst row '
                'leaves out the single split salts when their mean is there.', '']
        body, worst = [], {v: [None, None] for v in variants}
        for row in order:
            best = [min(((rows[row][p][k], p) for p in peers if p in rows[row] and rows[row][p][k] is not None),
                        default=(None, None)) for k in ('one_minus_auc_pct', 'fnr_at_fpr_0_1_pct')]
            cells = [row_label(row)] + [f'{fmt(v, 4 if i == 0 else 2)} {p or ""}'.strip() for i, (v, p) in enumerate(best)]
            counts = not (row.startswith('spamassassin-split') and row != SPLIT_MEAN and SPLIT_MEAN in rows)
            for v in variants:
                for i, key in enumerate(('one_minus_auc_pct', 'fnr_at_fpr_0_1_pct')):
                    r = ratio(rows[row][v][key], best[i][0]) if v in rows[row] else None
                    cells.append(fmt(r, 2))
                    if counts and r is not None and (worst[v][i] is None or r > worst[v][i]):
                        worst[v][i] = r
            body.append(cells)
        body.append(['**worst**', '', ''] + [fmt(worst[v][i], 2) for v in variants for i in (0, 1)])
        head = ['corpus/protocol', 'best peer 1-AUC%', 'best peer FNR@.1%'] + \
            [h for v in variants for h in (f'{v[8:]} 1-AUC ×', f'{v[8:]} FNR@.1 ×')]
        out.append(table(head, body))
    if variants:
        out += ['', f'spam_confidence of the nbspamd variants: Brier score, expected calibration error (ten bins) '
                f'and the worst bin of at least {metrics.WORST_BIN_MIN} messages (|mean confidence - spam share|).', '']
        body = [[row_label(row)] + [fmt(rows[row][v][k], 4 if k != 'worst_bin' else 3) if v in rows[row] else ''
                                    for v in variants for k in CALIBRATION] for row in order]
        out.append(table(['corpus/protocol'] + [f'{v[8:]} {h}' for v in variants
                                                for h in ('Brier', 'ECE', 'worst bin')], body))
    out += ['', 'Run time, s (the split mean: the sum of four runs; a cached peer keeps the time of its run; '
            '"-" in a first-N row: taken from the full run).', '']
    body = [[row_label(row)] + [fmt(rows[row][n]['total_s'], 0) if n in rows[row] else '' for n in filters]
            for row in order]
    out.append(table(['corpus/protocol'] + filters, body))
    versions = {n: f.get('version') for r in rows.values() for n, f in r.items() if f.get('version')}
    out += [''] + [f'- {n}: {versions[n]}' for n in filters if n in versions]
    return '\n'.join(out) + '\n'


def report(results_dir, rows=None, tags=None):
    """Prints the summary (only the given rows, with their split mean, when rows is given) and
    writes it to RESULTS/summary.md."""
    loaded = load(results_dir)
    if rows is not None:
        salts = {row_name('spamassassin', 'split', s) for s in SPLIT_SALTS}
        keep = set(rows) | ({SPLIT_MEAN} if salts <= set(rows) else set())
        loaded = {r: f for r, f in loaded.items() if r in keep}
    if not loaded:
        print(f'no result files in {results_dir}', file=sys.stderr)
        return
    text = render(loaded, tags)
    print(text)
    with open(os.path.join(results_dir, 'summary.md'), 'w') as f:
        f.write(text)
    print(f'wrote {os.path.join(results_dir, "summary.md")}', file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description='Summarises the result files of bench/accuracy/run.')
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    parser.add_argument('--tags', help='the nbspamd variants to show, comma-separated (default all)')
    args = parser.parse_args()
    report(args.results, tags=args.tags.split(',') if args.tags else None)


if __name__ == '__main__':
    main()
