"""Verdict thresholds from the site's own feedback, simulated on the online rows of the harness.

Issue 59: where the thresholds sit should follow what the feedback shows, not a constant, with ham
called spam held at 0.1% or less. Each message of an online row is given the verdict of the
thresholds in force when it was scored, computed only from the (score, label) of the messages fed
back before it, in stream order; a message the daemon could not score keeps its recorded verdict
and is no feedback. Replaying the fixed defaults (1.0 / -0.6) gives the harness's own figures.

Rule R (the one recommended in docs/ACCURACY.md):
  spam threshold = the highest score of the last 1,000 hams fed back + 0.1, kept within
                   [0.25, 1.0]; the default (1.0) until 1,000 hams have been fed back;
  ham threshold  = the 1st percentile of the last 1,000 spams fed back, kept within
                   [-0.6, spam threshold]; the default (-0.6) until 1,000 spams.
It can only narrow the unsure band: never stricter than the defaults, never spam at 0.25 or below.
With stable mail a new ham beats the highest of n earlier ones with probability 1/(n+1): 0.1% at
n = 1,000.

  PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 bench/accuracy/explore/feedback_thresholds.py \
      [--tags base,g5m1] [--results bench/accuracy/results]

`seeded` rows start with the feedback a daemon's ledger already holds: csdmc2010 drift-online is
the SpamAssassin stream then csdmc2010's; its first part's held-out scores are the same tag's
spamassassin-online scores.
"""
import argparse
import bisect
import collections
import json
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ONLINE = ['spamassassin-online', 'trec07p-early-online', 'csdmc2010-drift-online']
DEFAULT_SPAM, DEFAULT_HAM = 1.0, -0.6
RULE_R = dict(window=1000, min_feedback=1000, margin=0.1, floor=0.25, cap=1.0, spam_quantile=0.01)


def load(results, row, tag):
    with open(os.path.join(results, row, f'nbspamd-{tag}.json')) as f:
        scores = json.load(f)['scores']
    spam = np.array([r[1] for r in scores], bool)
    score = np.array([r[2] if r[2] is not None else 0.0 for r in scores], float)
    verdict = np.array([r[3] for r in scores])
    scored = np.array([r[4] for r in scores], bool)
    return spam, score, verdict, scored


class Window:
    """The last `size` feedback scores of one class, kept sorted too."""

    def __init__(self, size):
        self.size, self.fifo, self.sorted = size, collections.deque(), []

    def add(self, x):
        self.fifo.append(x)
        bisect.insort(self.sorted, x)
        if len(self.fifo) > self.size:
            del self.sorted[bisect.bisect_left(self.sorted, self.fifo.popleft())]


def thresholds(hams, spams, rule):
    spam_threshold = DEFAULT_SPAM
    if len(hams.sorted) >= rule['min_feedback']:
        spam_threshold = min(max(hams.sorted[-1] + rule['margin'], rule['floor']), rule['cap'])
    ham_threshold = min(DEFAULT_HAM, spam_threshold)
    if len(spams.sorted) >= rule['min_feedback']:
        low = spams.sorted[math.floor(rule['spam_quantile'] * len(spams.sorted))]
        ham_threshold = min(max(low - 1e-12, DEFAULT_HAM), spam_threshold)
    return spam_threshold, ham_threshold


def simulate(spam, score, verdict, scored, rule, seed=None):
    """The verdicts under `rule`, and the median thresholds in force."""
    hams, spams = Window(rule['window']), Window(rule['window'])
    if seed is not None:
        for is_spam, x in zip(*seed):
            (spams if is_spam else hams).add(x)
    out = verdict.copy()
    in_force = []
    for i in range(len(spam)):
        spam_threshold, ham_threshold = thresholds(hams, spams, rule)
        in_force.append((spam_threshold, ham_threshold))
        if scored[i]:
            x = score[i]
            out[i] = 'spam' if x > spam_threshold else ('ham' if x <= ham_threshold else 'unsure')
            (spams if spam[i] else hams).add(x)
    medians = np.median(np.array(in_force), axis=0)
    return out, medians


def fixed(score, verdict, scored, spam_threshold, ham_threshold):
    out = verdict.copy()
    x = score[scored]
    out[scored] = np.where(x > spam_threshold, 'spam', np.where(x <= ham_threshold, 'ham', 'unsure'))
    return out


def figures(spam, out):
    hams, spams = int((~spam).sum()), int(spam.sum())
    false_positives = int(((~spam) & (out == 'spam')).sum())
    return {
        'hams': hams,
        'fp': false_positives,
        'ham_called_spam': 100 * false_positives / hams,
        'unsure': 100 * (out == 'unsure').sum() / len(spam),
        'spam_not_spam': 100 * (spam & (out != 'spam')).sum() / spams,
        'spam_called_ham': 100 * (spam & (out == 'ham')).sum() / spams,
    }


def meets(f):
    return f['fp'] <= math.floor(0.001 * f['hams'] + 1e-9) and f['unsure'] <= 5


def cell(f):
    return (f"{f['ham_called_spam']:.3f} ({f['fp']}) / {f['unsure']:.2f} / {f['spam_not_spam']:.2f} / "
            f"{f['spam_called_ham']:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--results', default=os.path.join(HERE, '..', 'results'))
    parser.add_argument('--tags', default='base,g5m1')
    args = parser.parse_args()
    print('Cells: ham called spam % (count) / unsure % / spam not called spam % / spam called ham %')
    print()
    print('| tag | row | hams (0.1% of them) | defaults 1.0 / -0.6 | rule R | R median thresholds | R meets both targets |')
    print('|---|---|---|---|---|---|---|')
    for tag in args.tags.split(','):
        data = {row: load(args.results, row, tag) for row in ONLINE}
        for row in ONLINE:
            spam, score, verdict, scored = data[row]
            seeds = [None]
            if row.startswith('csdmc2010'):
                s_spam, s_score, _, s_scored = data['spamassassin-online']
                seeds.append((s_spam[s_scored], s_score[s_scored]))
            for seed in seeds:
                before = figures(spam, fixed(score, verdict, scored, DEFAULT_SPAM, DEFAULT_HAM))
                out, medians = simulate(spam, score, verdict, scored, RULE_R, seed)
                after = figures(spam, out)
                name = row.replace('-online', ' online') + (', seeded' if seed is not None else '')
                print(f"| {tag} | {name} | {before['hams']} ({0.001 * before['hams']:.1f}) | {cell(before)} | "
                      f"{cell(after)} | {medians[0]:.2f} / {medians[1]:.2f} | {'yes' if meets(after) else '**no**'} |")


if __name__ == '__main__':
    main()
