# Compares nbspamd variants (harness result tags) with today's defaults on every row, with each
# row's noise, and runs the leave-one-corpus-out rule of docs/ACCURACY.md ("Learning from
# mistakes", "The rule, applied"): for each corpus left out, the variant the other corpora choose
# must be no worse than the defaults on the corpus left out (beyond that row's noise) and better
# overall.
#
#   python3 regime.py --base base --tags base,m1,m2 [--results DIR] [--boot 1000]
#
# Noise: a bootstrap over the scored messages of a row (the same resamples for every tag). A row's
# noise is half the width of the 95% interval of the defaults' own figure, (1-AUC)% and FNR % at
# FPR <= 0.1% (at least 3 misordered pairs, 3 spams: the 95% bound of a count seen 0 times). A
# variant is "worse" on a row when for either figure its change from the defaults is larger than
# that noise and the paired interval of the change lies above 0; "better" likewise below, for one
# figure, and not worse for the other.
import argparse
import json
import math
import os
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, '..', 'results')
# Row, corpus and weight in the overall figure: online protocols first (how the daemon is used),
# batch second, the cross-organisation drift (cold start without feedback) last.
ROWS = [('spamassassin-online', 'spamassassin', 3), ('trec07p-early-online', 'trec07p-early', 3),
        ('csdmc2010-drift-online', 'csdmc2010', 3),
        ('spamassassin-split', 'spamassassin', 1), ('spamassassin-split-salt_a', 'spamassassin', 1),
        ('spamassassin-split-salt_b', 'spamassassin', 1), ('spamassassin-split-salt_c', 'spamassassin', 1),
        ('spamassassin-folders', 'spamassassin', 1), ('trec07p-early-chrono', 'trec07p-early', 2), ('lingspam-bare-tenfold', 'lingspam-bare', 2),
        ('csdmc2010-drift', 'csdmc2010', 1)]
CORPORA = ['spamassassin', 'trec07p-early', 'csdmc2010', 'lingspam-bare']


def load(results, row, filter_name, verdicts=False):
    """(ids, is_spam, scores[, verdicts]) of a result file, in its order; None when it is missing."""
    path = os.path.join(results, row, f'{filter_name}.json')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        d = json.load(f)
    column = {name: i for i, name in enumerate(d['scores_columns'])}
    rows = d['scores']
    out = ([r[column['id']] for r in rows], np.array([r[column['is_spam']] for r in rows], bool),
           np.array([r[column['score']] for r in rows], float))
    return out + (np.array([r[column['verdict']] for r in rows]),) if verdicts else out


def figures(is_spam, score):
    """(1-AUC)% with ties one half, and FNR % at FPR <= 0.1% (metrics.py's definitions)."""
    order = np.argsort(score, kind='mergesort')
    s = score[order]
    y = is_spam[order]
    # Mid ranks of tied groups.
    _, first, counts = np.unique(s, return_index=True, return_counts=True)
    mid = first + (counts + 1) / 2.0
    ranks = np.repeat(mid, counts)
    n_spam = int(y.sum())
    n_ham = len(y) - n_spam
    if n_spam == 0 or n_ham == 0:
        return float('nan'), float('nan')
    auc = (ranks[y].sum() - n_spam * (n_spam + 1) / 2) / (n_spam * n_ham)
    hams = np.sort(score[~is_spam])[::-1]
    allowed = math.floor(0.001 * n_ham + 1e-9)
    fnr = 0.0 if allowed >= n_ham else float((score[is_spam] <= hams[allowed]).sum()) / n_spam
    return 100 * (1 - auc), 100 * fnr


def compare(base, variant, boot, seed):
    """Point figures of both, the paired-bootstrap 95% intervals of variant − base, and the row's
    noise (half the width of the 95% interval of base's own figures). The resamples depend only on
    `seed` (the row's), so every variant of a row is judged on the same ones."""
    rng = np.random.default_rng(seed)
    _, y, a = base
    _, _, b = variant
    fa, fb = figures(y, a), figures(y, b)
    n = len(y)
    diffs, bases = [], []
    for _ in range(boot):
        idx = rng.integers(0, n, n)
        ya = y[idx]
        da, db = figures(ya, a[idx]), figures(ya, b[idx])
        diffs.append((db[0] - da[0], db[1] - da[1]))
        bases.append(da)
    diffs, bases = np.array(diffs), np.array(bases)
    lo = np.nanpercentile(diffs, 2.5, axis=0)
    hi = np.nanpercentile(diffs, 97.5, axis=0)
    noise = (np.nanpercentile(bases, 97.5, axis=0) - np.nanpercentile(bases, 2.5, axis=0)) / 2
    return fa, fb, lo, hi, noise


def floor_of(y):
    """The least noise a row's figures can have: 3 misordered pairs in (1-AUC)%, 3 spams in FNR %
    (of a count seen 0 times, the 95% upper bound is 3: a row at 0 is not known to be exactly 0)."""
    n_spam, n_ham = int(y.sum()), int((~y).sum())
    return 300.0 / (n_spam * n_ham), 300.0 / n_spam


def judge(diff, lo, hi, noise):
    """worse: for one figure the change is beyond the row's noise and its paired interval is above
    0; better: likewise below 0 for one figure, and not worse for the other."""
    worse = any(diff[k] > noise[k] and lo[k] > 0 for k in (0, 1))
    better = not worse and any(diff[k] < -noise[k] and hi[k] < 0 for k in (0, 1))
    return 'worse' if worse else 'better' if better else 'same'


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--results', default=RESULTS)
    parser.add_argument('--base', default='base')
    parser.add_argument('--tags', required=True)
    parser.add_argument('--peers', default='reference,bogofilter')
    parser.add_argument('--boot', type=int, default=1000)
    parser.add_argument('--json', help='also write the comparisons here')
    args = parser.parse_args()
    tags = args.tags.split(',')
    table = {}  # (row, tag) -> dict
    for row, corpus, weight in ROWS:
        base = load(args.results, row, f'nbspamd-{args.base}')
        if base is None:
            continue
        floors = floor_of(base[1])
        for tag in tags:
            variant = load(args.results, row, f'nbspamd-{tag}')
            if variant is None:
                continue
            if variant[0] != base[0]:
                raise SystemExit(f'{row}: {tag} scored other messages than {args.base}')
            seed = zlib.crc32(row.encode())
            fa, fb, lo, hi, noise = compare(base, variant, args.boot, seed)
            noise = np.maximum(noise, floors)
#Ratio to the defaults with the row's granularity added to both (a 0 stays finite).
            ratio = [(fb[k] + floors[k]) / (fa[k] + floors[k]) for k in (0, 1)]
            diff = (fb[0] - fa[0], fb[1] - fa[1])
            table[(row, tag)] = {'auc': fb[0], 'fnr': fb[1], 'lo': lo.tolist(), 'hi': hi.tolist(),
                                 'noise': noise.tolist(), 'ratio': ratio,
                                 'judge': judge(diff, lo, hi, noise) if tag != args.base else 'same'}
        for peer in args.peers.split(','):
            p = load(args.results, row, peer)
            if p is not None and p[0] == base[0]:
                f = figures(p[1], p[2])
                table[(row, peer)] = {'auc': f[0], 'fnr': f[1]}

    print('Cells: (1-AUC)% / FNR % at FPR <= 0.1%; for variants, then the paired-bootstrap 95% interval of '
          'the change from the defaults (both figures) and the verdict: worse / same / better.\n')
    peers = [p for p in args.peers.split(',') if any((r, p) in table for r, _, _ in ROWS)]
    print('| row | ' + ' | '.join(peers + tags) + ' |')
    print('|---' * (1 + len(peers) + len(tags)) + '|')
    for row, _, _ in ROWS:
        cells = []
        for name in peers + tags:
            t = table.get((row, name))
            if t is None:
                cells.append('–')
            elif name == args.base:
                cells.append(f"{t['auc']:.4f} ± {t['noise'][0]:.4f} / {t['fnr']:.2f} ± {t['noise'][1]:.2f}")
            elif 'lo' not in t:
                cells.append(f"{t['auc']:.4f} / {t['fnr']:.2f}")
            else:
                cells.append(f"{t['auc']:.4f} / {t['fnr']:.2f} [{t['lo'][0]:+.4f}..{t['hi'][0]:+.4f}, "
                             f"{t['lo'][1]:+.2f}..{t['hi'][1]:+.2f}] {t['judge']}")
        print(f'| {row} | ' + ' | '.join(cells) + ' |')

    def overall(tag, corpora):
        """Weighted mean over the rows of `corpora` of each figure's change from the defaults in units
        of that row's noise (half the width of the 95% interval of the defaults' figure under the
        bootstrap, at least 3 misordered pairs or 3 spams): below 0 is better."""
        total, weights = 0.0, 0.0
        for row, corpus, weight in ROWS:
            t = table.get((row, tag))
            if corpus in corpora and t is not None:
                base = table[(row, args.base)]
                z = 0.0
                for k, key in enumerate(('auc', 'fnr')):
                    z += (t[key] - base[key]) / t['noise'][k] / 2
                total += weight * z
                weights += weight
        return total / weights if weights else float('nan')

    print('\nOverall: the weighted mean over rows of each figure\'s change from the defaults in units of '
          'the row\'s noise (online rows weigh 3, trec chrono and lingspam 2, the splits and the drift '
          '1); below 0 is better:\n')
    print('| tag | all corpora | ' + ' | '.join(f'without {c}' for c in CORPORA) + ' |')
    print('|---' * (2 + len(CORPORA)) + '|')
    for tag in tags:
        print(f'| {tag} | {overall(tag, CORPORA):+.2f} | ' +
              ' | '.join(f'{overall(tag, [c for c in CORPORA if c != left]):+.2f}' for left in CORPORA) + ' |')

    print('\nLeave one corpus out: the tag the other corpora choose (lowest overall there, no row of '
          'theirs worse), and how it does on the corpus left out:\n')
    print('| left out | chosen on the others | overall there | rows left out: judge (figures) | passes |')
    print('|---|---|---|---|---|')
    outcome = {}
    for left in CORPORA:
        others = [c for c in CORPORA if c != left]
        fair = [t for t in tags if all(table.get((r, t), {}).get('judge') != 'worse'
                                        for r, c, _ in ROWS if c in others)]
        chosen = min(fair or tags, key=lambda t: overall(t, others))
        cells, ok = [], True
        for row, corpus, _ in ROWS:
            t = table.get((row, chosen))
            if corpus == left and t is not None:
                ok &= t['judge'] != 'worse'
                cells.append(f"{row} {t['judge']} ({t['auc']:.4f} / {t['fnr']:.2f})")
        outcome[left] = (chosen, ok)
        print(f'| {left} | {chosen} | {overall(chosen, others):+.2f} | {"; ".join(cells)} | '
              f'{"yes" if ok else "no"} |')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({f'{r}|{t}': v for (r, t), v in table.items()}, f, indent=1)


if __name__ == '__main__':
    main()
