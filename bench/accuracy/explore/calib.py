# spam_confidence offline: the daemon's calibration (model/calibration.h) fitted the way the daemon
# fits it, from held-out scores (each learned message scored by the model just before it learned
# it), and measured on the protocols' test scores: expected calibration error (ten bins), the worst
# bin with at least 50 messages, and the Brier score. Compares fits of the same histogram.
#
#   python3 calib.py [--variant 'mindev:d=1'] [--only trec-online,...] [--refit 50]
import argparse
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import explore  # noqa: E402

LOW, HIGH, BINS = -2.0, 2.0, 100  # kCalibrationLow, kCalibrationHigh, kCalibrationBins
MIN_PER_CLASS = 20                 # kMinFeedbackPerClass
WIDTH = (HIGH - LOW) / BINS


def bin_of(score):
    if not score > LOW:
        return 0
    if score >= HIGH:
        return BINS - 1
    return min(int((score - LOW) / WIDTH), BINS - 1)


def pav(spam, ham, k):
    """Steps 1-3 of calibration.h: the non-empty bins, their PAV pools [(first, end, mean, weight)]."""
    filled = [b for b in range(BINS) if spam[b] + ham[b] > 0]
    base = (spam.sum() + 1) / (spam.sum() + ham.sum() + 2)
    pools = []
    for i, b in enumerate(filled):
        pool = [spam[b] + k * base, spam[b] + ham[b] + k, i]
        while pools and pools[-1][0] / pools[-1][1] > pool[0] / pool[1]:
            last = pools.pop()
            pool = [pool[0] + last[0], pool[1] + last[1], last[2]]
        pools.append(pool)
    return filled, pools


def fit_flat(spam, ham, k=1.0):
    """The daemon's fit: each bin its pool's mean, empty bins the line between neighbours."""
    filled, pools = pav(spam, ham, k)
    if not filled:
        return np.full(BINS, 0.5)
    value = np.empty(len(filled))
    for p, pool in enumerate(pools):
        end = pools[p + 1][2] if p + 1 < len(pools) else len(filled)
        value[pool[2]:end] = pool[0] / pool[1]
    return np.interp(np.arange(BINS), filled, value)


def fit_centred(spam, ham, k=1.0):
    """Centred isotonic regression (Oron & Flournoy 2017): each pool is one point, at the
    count-weighted mean of its bins' centres, and bins between points take the straight line."""
    filled, pools = pav(spam, ham, k)
    if not filled:
        return np.full(BINS, 0.5)
    xs, ys = [], []
    for p, pool in enumerate(pools):
        end = pools[p + 1][2] if p + 1 < len(pools) else len(filled)
        bins = filled[pool[2]:end]
        n = np.array([spam[b] + ham[b] for b in bins], dtype=float)
        xs.append(float((np.array(bins) * n).sum() / n.sum()))
        ys.append(pool[0] / pool[1])
    return np.interp(np.arange(BINS), xs, ys)


def fit_platt(spam, ham, k=1.0):
    """Platt scaling: P(spam | score) = sigmoid(a * score + b), by maximum likelihood over the bin
    centres weighted by their counts (Newton's method), with Platt's targets (N+ + 1)/(N+ + 2) and
    1/(N- + 2) instead of 1 and 0."""
    x = LOW + (np.arange(BINS) + 0.5) * WIDTH
    s, h = np.asarray(spam, float), np.asarray(ham, float)
    t1, t0 = (s.sum() + 1) / (s.sum() + 2), 1 / (h.sum() + 2)
    xs = np.concatenate([x, x])
    n = np.concatenate([s, h])
    t = np.concatenate([np.full(BINS, t1), np.full(BINS, t0)])
    a, b = 1.0, 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(a * xs + b)))
        g = np.array([(n * (p - t) * xs).sum(), (n * (p - t)).sum()])
        w = n * p * (1 - p) + 1e-12
        H = np.array([[(w * xs * xs).sum(), (w * xs).sum()], [(w * xs).sum(), w.sum()]])
        step = np.linalg.solve(H + 1e-9 * np.eye(2), g)
        a, b = a - step[0], b - step[1]
        if abs(step).max() < 1e-9:
            break
    return 1 / (1 + np.exp(-(a * x + b)))


def fit_logistic(features, spam, ham):
    """Maximum likelihood of P(spam | score) = sigmoid(w . features(x) + c) over the bin centres
    weighted by their counts, Platt's targets, w >= 0 (a negative weight is fixed at 0 and the
    rest refitted): Newton's method with a backtracking line search."""
    x = LOW + (np.arange(BINS) + 0.5) * WIDTH
    F = np.column_stack([f(x) for f in features] + [np.ones(BINS)])
    s, h = np.asarray(spam, float), np.asarray(ham, float)
    t1, t0 = (s.sum() + 1) / (s.sum() + 2), 1 / (h.sum() + 2)
    X = np.vstack([F, F])
    n = np.concatenate([s, h])
    t = np.concatenate([np.full(BINS, t1), np.full(BINS, t0)])
    free = list(range(F.shape[1]))

    def loss(w):
        z = X @ w
        return float((n * (np.logaddexp(0, z) - t * z)).sum())

    while True:
        w = np.zeros(F.shape[1])
        for _ in range(100):
            p = 1 / (1 + np.exp(-(X @ w)))
            g = X.T @ (n * (p - t))
            H = X.T @ (X * (n * p * (1 - p) + 1e-12)[:, None])
            step = np.zeros_like(w)
            idx = np.array(free)
            step[idx] = np.linalg.solve(H[np.ix_(idx, idx)] + 1e-9 * np.eye(len(idx)), g[idx])
            lr, base = 1.0, loss(w)
            while lr > 1e-8 and loss(w - lr * step) > base - 1e-4 * lr * (g @ step):
                lr /= 2
            w = w - lr * step
            if abs(lr * step).max() < 1e-10:
                break
        negative = [i for i in free[:-1] if w[i] < 0]
        if not negative:
            return 1 / (1 + np.exp(-(F @ w)))
        free.remove(negative[0])


def fit_beta(k):
    """Beta calibration (Kull, Silva Filho and Flach 2017) of p = sigmoid(k * score):
    logit P = a ln p - b ln(1 - p) + c, a, b >= 0: Platt's curve with a slope of its own on each
    side."""
    return lambda spam, ham: fit_logistic(
        [lambda x: -np.logaddexp(0, -k * x), lambda x: np.logaddexp(0, k * x)], spam, ham)


FITS = {'flat': fit_flat, 'centred': fit_centred, 'platt': fit_platt,
        'beta1': fit_beta(1.0), 'beta2': fit_beta(2.0), 'beta4': fit_beta(4.0)}
RECENT = 0  # --recent W: also 'recent', the daemon's fit of the last W held-out scores only
GENERATIONS = 0  # --generations W: also 'gen-platt', Platt on two generations of W / 2 each
CLASS_WINDOW = 0  # --class-window N: also 'cw-platt' (weighed) and 'cw-raw' (not)


def confidence(fitted, score):
    x = (score - LOW) / WIDTH - 0.5
    return float(np.interp(x, np.arange(BINS), fitted))


def figures(conf, spam):
    conf, spam = np.array(conf), np.array(spam, dtype=float)
    edges = np.minimum((conf * 10).astype(int), 9)
    ece, worst = 0.0, 0.0
    for b in range(10):
        sel = edges == b
        if not sel.any():
            continue
        gap = abs(conf[sel].mean() - spam[sel].mean())
        ece += sel.sum() / len(conf) * gap
        if sel.sum() >= 50:
            worst = max(worst, gap)
    return ece, worst, float(((conf - spam) ** 2).mean()), len(conf)


def run(kind, train, test, variant, params, encoded, labels, vocab, refit):
    """Per fit: (confidences, is_spam) of the test messages that got one."""
    counts = explore.Counts(vocab)
    hist = {'spam': np.zeros(BINS), 'ham': np.zeros(BINS)}
    window = {'spam': np.zeros(BINS), 'ham': np.zeros(BINS)}
    # --generations W: the current generation and the one before, the current handed down once
    # it holds W / 2 held-out scores; fits named 'gen-*' read both.
    gen_current = {'spam': np.zeros(BINS), 'ham': np.zeros(BINS)}
    gen_previous = {'spam': np.zeros(BINS), 'ham': np.zeros(BINS)}
    recent = []
    # --class-window N: the newest N held-out scores of each class (core/recent_feedback.h), and
    # the classes' shares among the newest 20 N records, which weigh them back to the stream's
    # prevalence; fits named 'cw-*' read that.
    class_scores = {'spam': [], 'ham': []}
    labels_seen = []
    fitted = {}
    since = [refit]

    def learn(ids, spam, score):
        if score is not None:
            cell = ('spam' if spam else 'ham', bin_of(score))
            hist[cell[0]][cell[1]] += 1
            since[0] += 1
            if CLASS_WINDOW:
                class_scores[cell[0]].append(cell[1])
                if len(class_scores[cell[0]]) > CLASS_WINDOW:
                    class_scores[cell[0]].pop(0)
                labels_seen.append(spam)
                if len(labels_seen) > 20 * CLASS_WINDOW:
                    labels_seen.pop(0)
            if GENERATIONS:
                gen_current[cell[0]][cell[1]] += 1
                if gen_current['spam'].sum() + gen_current['ham'].sum() >= GENERATIONS // 2:
                    for label in ('spam', 'ham'):
                        gen_previous[label] = gen_current[label]
                        gen_current[label] = np.zeros(BINS)
            if RECENT:
                recent.append(cell)
                window[cell[0]][cell[1]] += 1
                if len(recent) > RECENT:
                    old = recent.pop(0)
                    window[old[0]][old[1]] -= 1
        counts.add(ids, spam)

    def current():
        ready = hist['spam'].sum() >= MIN_PER_CLASS and hist['ham'].sum() >= MIN_PER_CLASS
        if ready and since[0] >= refit:
            for name, fit in FITS.items():
                if name.startswith('recent'):
                    fitted[name] = fit(window['spam'], window['ham'])
                elif name.startswith('cw-'):
                    n_s, n_h = len(class_scores['spam']), len(class_scores['ham'])
                    share = sum(labels_seen) / len(labels_seen)
                    hs = np.bincount(class_scores['spam'], minlength=BINS).astype(float)
                    hh = np.bincount(class_scores['ham'], minlength=BINS).astype(float)
                    if name == 'cw-platt':  # weighed back to the prevalence
                        hs *= share * (n_s + n_h) / n_s
                        hh *= (1 - share) * (n_s + n_h) / n_h
                    fitted[name] = fit(hs, hh)
                elif name.startswith('gen-'):
                    fitted[name] = fit(gen_current['spam'] + gen_previous['spam'],
                                       gen_current['ham'] + gen_previous['ham'])
                else:
                    fitted[name] = fit(hist['spam'], hist['ham'])
            since[0] = 0
        return ready

    for c, i in train:
        ids, spam = encoded[c][i], labels[c][i]
        learn(ids, spam, explore.combine(variant, params, counts, ids) if counts.ready() else None)
    since[0] = refit
    out = {name: ([], []) for name in FITS}
    for c, i in test:
        ids, spam = encoded[c][i], labels[c][i]
        score = explore.combine(variant, params, counts, ids) if counts.ready() else None
        if score is not None and current():
            for name in FITS:
                out[name][0].append(confidence(fitted[name], score))
                out[name][1].append(spam)
        if kind == 'online':
            learn(ids, spam, score)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--variant', default='mindev:d=1')
    parser.add_argument('--only', default='sa-split0,sa-splita,sa-splitb,sa-splitc,trec-chrono,csdmc-drift,'
                        'ling-10fold,sa-online,trec-online,csdmc-online')
    parser.add_argument('--refit', type=int, default=1, help='online: refit after this many new held-out scores')
    parser.add_argument('--binary', default=os.path.join(explore.REPO, 'build/release/bench/token_dump'))
    parser.add_argument('--bins', action='store_true', help='also print each tenth: count, mean confidence, spam share')
    parser.add_argument('--recent', type=int, default=0)
    parser.add_argument('--generations', type=int, default=0)
    parser.add_argument('--class-window', type=int, default=0)
    parser.add_argument('--dump-flags', default='', help="token_dump's flags, e.g. '--char-ngrams 4'")
    parser.add_argument('--fits', default='', help='only these fits, comma-separated')
    args = parser.parse_args()
    if args.recent:
        global RECENT
        RECENT = args.recent
        FITS['recent'] = fit_flat
        FITS['recent-platt'] = fit_platt
        FITS['recent-beta2'] = fit_beta(2.0)
    corpora = explore.corpus_lists()
    if args.class_window:
        global CLASS_WINDOW
        CLASS_WINDOW = args.class_window
        FITS['cw-platt'] = fit_platt
        FITS['cw-raw'] = fit_platt
    if args.generations:
        global GENERATIONS
        GENERATIONS = args.generations
        FITS['gen-platt'] = fit_platt
    if args.fits:
        for name in list(FITS):
            if name not in args.fits.split(','):
                del FITS[name]
    tokens = explore.load_tokens(corpora, args.dump_flags, args.binary)
    vocab = explore.Vocabulary()
    encoded = {c: [vocab.encode(tokens[m[1]]) for m in items] for c, items in corpora.items()}
    explore.IS_GRAM = np.zeros(len(vocab.ids), dtype=bool)
    for token, i in vocab.ids.items():
        if re.match(r'b[0-9]+:"|(?:[a-z0-9-]+:)?#', token):
            explore.IS_GRAM[i] = True
    labels = {c: [m[2] for m in items] for c, items in corpora.items()}
    variant, params = explore.parse_variant(args.variant)
    protos = explore.protocols(corpora)
    print('| protocol | messages | ' + ' | '.join(f'{n}: ECE / worst bin / Brier' for n in FITS) + ' |')
    print('| --- ' * (2 + len(FITS)) + '|')
    for name in args.only.split(','):
        kind, train, test = protos[name]
        folds = train if kind == 'folds' else [(kind, train, test)]
        pooled = {n: ([], []) for n in FITS}
        for k, tr, te in folds:
            for n, (conf, spam) in run(k, tr, te, variant, params, encoded, labels, len(vocab.ids), args.refit).items():
                pooled[n][0].extend(conf)
                pooled[n][1].extend(spam)
        cells = []
        for n in FITS:
            ece, worst, brier, count = figures(*pooled[n])
            cells.append(f'{ece:.4f} / {worst:.3f} / {brier:.4f}')
        print(f'| {name} | {count} | ' + ' | '.join(cells) + ' |', flush=True)
        if args.bins:
            for n in FITS:
                conf, spam = np.array(pooled[n][0]), np.array(pooled[n][1], dtype=float)
                edges = np.minimum((conf * 10).astype(int), 9)
                print(f'    {n}: ' + '  '.join(f'{b / 10:.1f}: n={int((edges == b).sum())} '
                                            f'{conf[edges == b].mean():.3f}->{spam[edges == b].mean():.3f}'
                                            for b in range(10) if (edges == b).any()))


if __name__ == '__main__':
    main()
