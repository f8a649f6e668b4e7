# The cold-start curve of the online protocols: how each filter does over successive windows of
# the stream (the first 250 messages, the next 250, ...), from the harness's stored scores. Each
# window's (1-AUC)% is computed over its own messages; "errors" are its messages whose verdict was
# wrong (spam not called spam, ham called spam; unsure counts as a miss for spam only).
#
#   python3 cold_start.py --filters nbspamd-base,nbspamd-m4b,reference,bogofilter [--results DIR]
import argparse

from regime import RESULTS, figures, load

ONLINE = ['trec07p-early-online', 'spamassassin-online', 'csdmc2010-drift-online']
WINDOWS = [0, 250, 500, 1000, 2000, 5000, 10000, 20000, 30000]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--results', default=RESULTS)
    parser.add_argument('--filters', required=True)
    args = parser.parse_args()
    names = args.filters.split(',')
    for row in ONLINE:
        data = {n: load(args.results, row, n, verdicts=True) for n in names}
        data = {n: d[1:] for n, d in data.items() if d is not None}
        if not data:
            continue
        total = len(next(iter(data.values()))[0])
        bounds = [b for b in WINDOWS if b < total] + [total]
        print(f'\n{row}: per window, (1-AUC)% / errors at the verdict (of the window\'s messages)\n')
        print('| messages | ' + ' | '.join(data) + ' |')
        print('|---' * (1 + len(data)) + '|')
        for lo, hi in zip(bounds, bounds[1:]):
            cells = []
            for y, s, v in data.values():
                yw, sw, vw = y[lo:hi], s[lo:hi], v[lo:hi]
                auc = figures(yw, sw)[0] if yw.any() and (~yw).any() else float('nan')
                errors = int((yw & (vw != 'spam')).sum() + ((~yw) & (vw == 'spam')).sum())
                cells.append(f'{auc:.3f} / {errors}')
            print(f'| {lo + 1}–{hi} | ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    main()
