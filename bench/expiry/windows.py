#!/usr/bin/env python3
# The windows of a year replay (bench/expiry/run) against a baseline policy, with how far each
# ratio can be trusted: for the last 30, 90 and 183 simulated days and the whole year, each
# policy's (1-AUC)% with its misordered spam-ham pairs and their ratio to the baseline's, and its
# FNR at FPR <= 0.1% with the spams missed and their ratio, each ratio with a 95% interval from a
# paired bootstrap (the window's messages resampled with replacement, the same resample scored
# under both policies). A window of a dozen misordered pairs cannot show a 5% difference; the
# interval says so.
#   bench/expiry/windows.py DIR BASELINE POLICY... [--resamples N] [--seed S]
# DIR holds the replay's POLICY-scores.csv files (bench/expiry/run --out OUT: OUT/CORPUS_TAG),
# e.g. bench/expiry/windows.py /tmp/exp/trec07p-early unbounded r90-t180-c1-h-m20k
import argparse
import bisect
import csv
import math
import os
import random

WINDOWS = [('last 30 days', 335), ('last 90 days', 275), ('last 183 days', 182), ('year', 0)]
MAX_FPR = 0.001


def load(path):
    """[(day, is_spam, score)]; a message scored before any training counts as 0, as year.py does."""
    with open(path) as f:
        return [(int(r['day']), r['spam'] == '1', float(r['score']) if r['score'] else 0.0)
                for r in csv.DictReader(f)]


class Window:
    """One policy's scores of a window's messages, arranged so that a resample (a weight per
    message) costs one pass: every spam's place among the sorted hams is found once."""

    def __init__(self, rows):
        self.is_spam = [s for _, s, _ in rows]
        self.hams = sorted((score, i) for i, (_, s, score) in enumerate(rows) if not s)
        self.spams = sorted((score, i) for i, (_, s, score) in enumerate(rows) if s)
        ham_scores = [score for score, _ in self.hams]
        # For each spam: the hams below it and the hams tied with it, as indices into self.hams.
        self.places = [(i, bisect.bisect_left(ham_scores, score), bisect.bisect_right(ham_scores, score))
                       for score, i in self.spams]

    def figures(self, weight):
        """(misordered pairs, spams missed at FPR <= 0.1%) with `weight` per message."""
        prefix = [0]
        for _, i in self.hams:
            prefix.append(prefix[-1] + weight[i])
        total_ham = prefix[-1]
        pairs = 0.0
        for i, lo, hi in self.places:
            if weight[i]:
                pairs += weight[i] * (total_ham - prefix[hi] + 0.5 * (prefix[hi] - prefix[lo]))
        # The highest ham score that must be called ham: FPR <= 0.1% allows floor(0.001 * hams)
        # hams above the threshold.
        allowed = math.floor(MAX_FPR * total_ham + 1e-9)
        threshold, above = None, 0
        for score, i in reversed(self.hams):
            above += weight[i]
            if above > allowed:
                threshold = score
                break
        missed = 0
        if threshold is not None:
            for score, i in self.spams:
                if score > threshold:
                    break
                missed += weight[i]
        return pairs, missed

    def spam_and_ham(self, weight):
        spam = sum(weight[i] for _, i in self.spams)
        return spam, sum(weight[i] for _, i in self.hams)


def interval(ratios):
    ratios = sorted(r for r in ratios if r is not None)
    if not ratios:
        return 'n/a'
    lo, hi = ratios[int(0.025 * (len(ratios) - 1))], ratios[int(0.975 * (len(ratios) - 1))]
    return f'{lo:.2f}–{hi:.2f}'


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('dir')
    parser.add_argument('baseline')
    parser.add_argument('policies', nargs='+')
    parser.add_argument('--resamples', type=int, default=500)
    parser.add_argument('--seed', type=int, default=1)
    args = parser.parse_args()
    scores = {p: load(os.path.join(args.dir, f'{p}-scores.csv')) for p in [args.baseline] + args.policies}
    days = [d for d, _, _ in scores[args.baseline]]
    for p, rows in scores.items():
        if [(d, s) for d, s, _ in rows] != [(d, s) for d, s, _ in scores[args.baseline]]:
            raise SystemExit(f'{p}: not the same messages in the same order as {args.baseline}')
    print(f'Cells: (1-AUC)% (misordered pairs; ratio to {args.baseline}, 95% interval) / FNR % at '
          f'FPR <= 0.1% (spams missed; ratio, interval); {args.resamples} paired resamples\n')
    print('| policy | ' + ' | '.join(name for name, _ in WINDOWS) + ' |')
    print('|---|' + '---|' * len(WINDOWS))
    rng = random.Random(args.seed)
    cells = {p: [] for p in scores}
    for name, first_day in WINDOWS:
        start = bisect.bisect_left(days, first_day)
        windows = {p: Window(rows[start:]) for p, rows in scores.items()}
        size = len(days) - start
        one = [1] * size
        base = windows[args.baseline]
        spam, ham = base.spam_and_ham(one)
        observed = {p: w.figures(one) for p, w in windows.items()}
        resampled = {p: [] for p in scores}
        for _ in range(args.resamples):
            weight = [0] * size
            for i in rng.choices(range(size), k=size):
                weight[i] += 1
            for p, w in windows.items():
                resampled[p].append(w.figures(weight))
        for p in scores:
            pairs, missed = observed[p]
            auc = 100.0 * pairs / (spam * ham)
            fnr = 100.0 * missed / spam
            if p == args.baseline:
                cells[p].append(f'{auc:.4f} ({pairs:,.0f}) / {fnr:.2f} ({missed:,})')
                continue
            b_pairs, b_missed = observed[args.baseline]
            pair_ratios = [a[0] / b[0] if b[0] else None for a, b in zip(resampled[p], resampled[args.baseline])]
            miss_ratios = [a[1] / b[1] if b[1] else None for a, b in zip(resampled[p], resampled[args.baseline])]
            pr = f'{pairs / b_pairs:.3f}' if b_pairs else 'n/a'
            mr = f'{missed / b_missed:.2f}' if b_missed else 'n/a'
            cells[p].append(f'{auc:.4f} ({pairs:,.0f}; {pr}, {interval(pair_ratios)}) / '
                            f'{fnr:.2f} ({missed:,}; {mr}, {interval(miss_ratios)})')
    for p in scores:
        print(f'| {p} | ' + ' | '.join(cells[p]) + ' |')


if __name__ == '__main__':
    main()
