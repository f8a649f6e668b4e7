# The multi-user cold-start protocol (issue 14): how well each way of combining the administrator's
# global model with one user's own feedback ranks that user's mail, as a function of how many of
# the user's messages were learned. The daemon's maths in numpy over token_dump's tokens, like
# explore.py (README.md beside this file); the layered estimate is model/layered.h's.
#
# Global model: the whole SpamAssassin corpus (2002), as an administrator's initial training.
# Users, each an ordered mail stream that the global model never saw:
#   csdmc        csdmc2010 (2009-2010), shuffled with a fixed seed (its file names carry no order)
#   trec-1/2/3   trec07p-early messages 1-10000, 10001-20000, 20001-30000 (2007, arrival order)
# For each user the last `test` messages of its stream are the test set; after learning the first
# n of the others (n = 0, 10, 50, 200, 1000, ...), every way below scores the same test set:
#   global    the global model alone (the user's learns are not used)
#   user      the user's learns alone (Laplace-smoothed NB; nothing to say at n = 0)
#   pooled    the global model plus the user's learns in the same counts
#   layered   the user's learns over the global model as a Dirichlet prior of strength beta
#
#   /usr/bin/python3 bench/accuracy/explore/users.py --betas 100,1000,10000,100000
import argparse
import math
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore  # noqa: E402

ALPHA = 0.1
MIN_WEIGHT = 1.0           # score_min_weight, the daemon's default.
SPAM_THRESHOLD = 1.0       # The default verdict thresholds.
HAM_THRESHOLD = -0.6


class Counts:
    """Per-class token counts over the shared vocabulary, with document counts."""

    def __init__(self, size):
        self.n = [np.zeros(size), np.zeros(size)]  # ham, spam
        self.docs = [0, 0]

    def add(self, ids, spam):
        self.n[int(spam)][ids] += 1
        self.docs[int(spam)] += 1

    def copy(self):
        c = Counts(0)
        c.n = [self.n[0].copy(), self.n[1].copy()]
        c.docs = list(self.docs)
        return c


def laplace_log_estimates(counts):
    """log P(w|ham), log P(w|spam) and the mask of tokens seen in some class."""
    seen = (counts.n[0] + counts.n[1]) > 0
    v = float(seen.sum())
    logs = [np.log(counts.n[c] + ALPHA) - math.log(counts.n[c].sum() + ALPHA * v) for c in (0, 1)]
    return logs, seen


def layered_log_estimates(global_counts, user, beta):
    """model/layered.h: (n_wcu + beta * P_g(w|c)) / (n_cu + beta); the global |V| and alpha."""
    g_logs, g_seen = laplace_log_estimates(global_counts)
    logs = []
    for c in (0, 1):
        p_global = np.exp(g_logs[c])
        logs.append(np.log(user.n[c] + beta * p_global) - math.log(user.n[c].sum() + beta))
    seen = g_seen | ((user.n[0] + user.n[1]) > 0)
    return logs, seen


def scores(logs, seen, test_ids):
    """The daemon's ranking score (the mean weight of the known tokens with |weight| > d), and
    the sum of every known token's weight (the log-odds without the prior)."""
    weight = logs[1] - logs[0]
    out = np.empty(len(test_ids))
    sums = np.empty(len(test_ids))
    for i, ids in enumerate(test_ids):
        w = weight[ids[seen[ids]]] if len(ids) else np.zeros(0)
        k = w[np.abs(w) > MIN_WEIGHT]
        out[i] = k.sum() / len(k) if len(k) else 0.0
        sums[i] = w.sum()
    return out, sums


def layered_log_prior_odds(global_counts, user, gamma):
    """log P(spam|u) - log P(ham|u) with P(c|u) = (N_cu + gamma * P_g(c)) / (N_u + gamma)."""
    total = sum(global_counts.docs)
    return math.log(user.docs[1] + gamma * global_counts.docs[1] / total) - math.log(
        user.docs[0] + gamma * global_counts.docs[0] / total)


def figures(sc, is_spam):
    spam, ham = sc[is_spam], sc[~is_spam]
    return {
        'auc': explore.roc_one_minus_auc_pct(spam, ham),
        'fnr01': explore.fnr_at_fpr(spam, ham),
        'fpr': 100.0 * float(np.mean(ham > SPAM_THRESHOLD)),
        'fnr': 100.0 * float(np.mean(spam <= HAM_THRESHOLD)),
        'unsure': 100.0 * float(np.mean((sc > HAM_THRESHOLD) & (sc <= SPAM_THRESHOLD))),
    }


def streams(corpora, test_trec, test_csdmc):
    cs = list(range(len(corpora['csdmc2010'])))
    random.Random(20101).shuffle(cs)
    out = [('csdmc', 'csdmc2010', cs, test_csdmc)]
    for k in range(3):
        out.append((f'trec-{k + 1}', 'trec07p-early', list(range(k * 10000, (k + 1) * 10000)),
                    test_trec))
    return out


def summary(results, betas):
    """The curves as tables, and for each beta how the layered model fares against the best of
    the other three ways at each point with learns (ratios of (1-AUC)% + 0.0005, about one
    misordered pair in a thousand, so that two perfect rankings compare as equal)."""
    users = list(dict.fromkeys(r['user'] for r in results))
    points = sorted({r['n'] for r in results})
    at = {(r['user'], r['n'], r['way']): r for r in results if 'auc' in r}
    first = f'layered b={betas[0]:g}'
    for key, name in (('auc', '(1-AUC)%'), ('fnr01', 'FNR % at FPR <= 0.1%')):
        print(f'\n{name}')
        print('user    way'.ljust(28) + ''.join(f'n={n}'.rjust(10) for n in points))
        for user in users:
            for way in ('global', 'user', 'pooled', first):
                cells = [f'{at[(user, n, way)][key]:.4f}' if (user, n, way) in at else '-'
                         for n in points]
                print(f'{user:8}{way:20}' + ''.join(c.rjust(10) for c in cells))
    print('\nlayered against the best of global, user and pooled, every user and point n > 0')
    for beta in betas:
        way = f'layered b={beta:g}'
        ratios = []
        for (user, n, other), r in at.items():
            if other != way or n == 0:
                continue
            best = min(at[(user, n, o)]['auc'] for o in ('global', 'user', 'pooled')
                       if (user, n, o) in at)
            ratios.append(((r['auc'] + 0.0005) / (best + 0.0005), user, n))
        worst = max(ratios)
        good = sum(1 for q, _, _ in ratios if q <= 1.0)
        mean = math.exp(sum(math.log(q) for q, _, _ in ratios) / len(ratios))
        print(f'beta {beta:>8g}: at least as good at {good}/{len(ratios)} points, geometric mean '
              f'ratio {mean:.2f}, worst {worst[0]:.2f} ({worst[1]}, n={worst[2]})')


def plot(results, layered, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    users = list(dict.fromkeys(r['user'] for r in results))
    fig, axes = plt.subplots(1, len(users), figsize=(4 * len(users), 3.6), sharey=True)
    for ax, user in zip(axes, users):
        for way, style in (('global', 'k:'), ('user', 'C1--'), ('pooled', 'C2-.'), (layered, 'C0-')):
            points = [(r['n'], r['auc']) for r in results if r['user'] == user and r['way'] == way]
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, [max(y, 1e-4) for y in ys], style, marker='o', ms=3,
                        label=way.replace('layered b=', 'layered, beta '))
        ax.set_xscale('symlog', linthresh=10)
        ax.set_yscale('log')
        ax.set_title(user)
        ax.set_xlabel("the user's learns")
        ax.grid(True, which='both', alpha=0.3)
    axes[0].set_ylabel('(1-AUC)% (floor 0.0001)')
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--binary', default=os.path.join(explore.REPO, 'build/release/bench/token_dump'))
    parser.add_argument('--betas', default='100,1000,10000,100000')
    parser.add_argument('--points', default='0,10,50,200,1000,5000')
    parser.add_argument('--test-trec', type=int, default=2000)
    parser.add_argument('--test-csdmc', type=int, default=900)
    parser.add_argument('--gammas', default='1,20,100,1000',
                        help='for the first beta: the label error (most probable class) by gamma')
    parser.add_argument('--json', help='write every figure here')
    parser.add_argument('--plot', help='write the cold-start curves (PNG) of the first beta here')
    args = parser.parse_args()
    corpora = explore.corpus_lists()
    tokens = explore.load_tokens(corpora, '', args.binary)
    vocab = explore.Vocabulary()
    encoded = {c: [vocab.encode(tokens[m[1]]) for m in items] for c, items in corpora.items()}
    labels = {c: np.array([m[2] for m in items]) for c, items in corpora.items()}
    size = len(vocab.ids)

    global_counts = Counts(size)
    for ids, spam in zip(encoded['spamassassin'], labels['spamassassin']):
        global_counts.add(ids, spam)
    global_logs = laplace_log_estimates(global_counts)

    betas = [float(b) for b in args.betas.split(',')]
    points = [int(p) for p in args.points.split(',')]
    results = []
    for user, corpus, order, test_size in streams(corpora, args.test_trec, args.test_csdmc):
        learn, test = order[:-test_size], order[-test_size:]
        test_ids = [encoded[corpus][i] for i in test]
        test_spam = labels[corpus][test]
        print(f'# {user}: {len(test)} test messages ({int(test_spam.sum())} spam), '
              f'up to {len(learn)} learns', flush=True)
        user_counts = Counts(size)
        learned = 0
        for n in points:
            if n > len(learn):
                continue
            while learned < n:
                i = learn[learned]
                user_counts.add(encoded[corpus][i], labels[corpus][i])
                learned += 1
            ways = {'global': global_logs}
            if n > 0 and min(user_counts.docs) > 0:
                ways['user'] = laplace_log_estimates(user_counts)
            pooled = global_counts.copy()
            pooled.n = [pooled.n[c] + user_counts.n[c] for c in (0, 1)]
            ways['pooled'] = laplace_log_estimates(pooled)
            for beta in betas:
                ways[f'layered b={beta:g}'] = layered_log_estimates(global_counts, user_counts, beta)
            for way, (logs, seen) in ways.items():
                ranking, sums = scores(logs, seen, test_ids)
                f = figures(ranking, test_spam)
                results.append({'user': user, 'n': n, 'way': way, **f})
                print(f'{user:7} n={n:5} {way:22} (1-AUC)% {f["auc"]:8.4f}  FNR@0.1% {f["fnr01"]:6.2f}  '
                      f'FPR {f["fpr"]:5.2f}  FNR {f["fnr"]:5.2f}  unsure {f["unsure"]:5.2f}', flush=True)
                if way == f'layered b={betas[0]:g}':
                    for gamma in [float(g) for g in args.gammas.split(',')]:
                        odds = sums + layered_log_prior_odds(global_counts, user_counts, gamma)
                        error = 100.0 * float(np.mean((odds > 0) != test_spam))
                        results.append({'user': user, 'n': n, 'way': f'{way} g={gamma:g}',
                                        'label_error': error})
                        print(f'{user:7} n={n:5} {way} g={gamma:g}: label error {error:.2f}%')
    summary(results, betas)
    if args.plot:
        plot(results, f'layered b={betas[0]:g}', args.plot)
    if args.json:
        import json
        with open(args.json, 'w') as out:
            json.dump(results, out, indent=1)


if __name__ == '__main__':
    main()
