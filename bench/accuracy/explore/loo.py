# Leave one corpus out: which value of a default the other corpora would choose, and how that
# choice does on the corpus left out. Reads the figures explore.py --json wrote and the peers'
# figures of peers.json (docs/ACCURACY.md), per row (1-AUC)% and FNR % at FPR <= 0.1%.
#
#   python3 loo.py FIGURES.json --family 'mindev:d=1' --family 'mindev:d=1,toe=4' ...
#
# A variant's ratio on a row is the larger of its (1-AUC)% and its FNR over the best peer's of
# that row (each figure's best peer may differ); its worst ratio over rows is what is minimised.
# The SpamAssassin split row is the mean of the four salts, as in the harness's summary.
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def rows_of(figures):
    """{row: (auc, fnr)}: the protocols of one variant, the four splits as their mean."""
    out = {name: (f['one_minus_auc_pct'], f['fnr_at_fpr_0_1']) for name, f in figures.items()
           if not name.startswith('sa-split')}
    splits = [f for name, f in figures.items() if name.startswith('sa-split')]
    if len(splits) == 4:
        out['sa-split-mean'] = (sum(f['one_minus_auc_pct'] for f in splits) / 4,
                                sum(f['fnr_at_fpr_0_1'] for f in splits) / 4)
    return out


def ratio(ours, peers):
    best_auc = min(p[0] for p in peers.values())
    best_fnr = min(p[1] for p in peers.values())
    div = lambda a, b: (0.0 if a == 0 else float('inf')) if b == 0 else a / b
    return max(div(ours[0], best_auc), div(ours[1], best_fnr))


def worst(rows, peers, names):
    return max(ratio(rows[n], peers[n]) for n in names)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('figures')
    parser.add_argument('--peers', default=os.path.join(HERE, 'peers.json'))
    parser.add_argument('--family', action='append', required=True,
                        help='a variant key of FIGURES (the candidates for one default)')
    args = parser.parse_args()
    with open(args.figures) as f:
        figures = json.load(f)
    with open(args.peers) as f:
        known = json.load(f)
    peers, groups = known['rows'], known['groups']
    rows = {v: rows_of(figures[v]) for v in args.family}
    names = [n for names in groups.values() for n in names]
    print('| variant | ' + ' | '.join(names) + ' | worst |')
    print('| --- ' * (len(names) + 2) + '|')
    for v in args.family:
        cells = [f'{rows[v][n][0]:.4f} / {rows[v][n][1]:.2f} ({ratio(rows[v][n], peers[n]):.2f})' for n in names]
        print(f'| {v} | ' + ' | '.join(cells) + f' | {worst(rows[v], peers, names):.2f} |')
    print()
    print('| left out | chosen on the others | its worst ratio there | on the one left out |')
    print('| --- | --- | --- | --- |')
    for g, left in groups.items():
        others = [n for h, ns in groups.items() if h != g for n in ns]
        chosen = min(args.family, key=lambda v: worst(rows[v], peers, others))
        print(f'| {g} | {chosen} | {worst(rows[chosen], peers, others):.2f} | '
              f'{worst(rows[chosen], peers, left):.2f} |')
    chosen = min(args.family, key=lambda v: worst(rows[v], peers, names))
    print(f'\nchosen on every corpus: {chosen} (worst ratio {worst(rows[chosen], peers, names):.2f})')


if __name__ == '__main__':
    main()
