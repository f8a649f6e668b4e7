# PNG plots of the result files of bench/accuracy/run, drawn with Debian's python3-matplotlib
# (run it with /usr/bin/python3, as bench/accuracy/plot does):
# - RESULTS/plots/roc-<row>.png per corpus/protocol: every filter's ROC curve, spam missed (FNR)
#   against ham called spam (FPR), both on log axes, with its (1-AUC)% in the legend (tenfold: one
#   curve of the ten test parts' pooled scores, as the paper draws it);
# - RESULTS/plots/calibration-nbspamd-<tag>.png per nbspamd variant that gives spam_confidence:
#   observed spam share against mean predicted P(spam) in ten bins, one line per corpus/protocol,
#   the Brier score of each in the legend.
# --docs also copies the plots of the main rows into docs/accuracy/: of the splits only the
# documented one (no salt), and no --online-limit runs.
#   bench/accuracy/plot [--results DIR] [--tags baseline,v1] [--docs [DIR]]
import argparse
import os
import shutil
import sys

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import metrics  # noqa: E402
import summary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'docs', 'accuracy')
FLOOR = 0.005  # % drawn for a rate of 0 (below the axes' 0.01%), so the curve leaves the plot there
MIN_BIN = 10  # calibration: bins with fewer messages are left out of the line (too noisy to read)
COLORS = {'bogofilter': 'tab:green', 'spamassassin': 'tab:orange', 'rspamd': 'tab:purple', 'reference': 'tab:red'}


def roc_points(is_spam, scores):
    """FPR % and FNR % of the rule 'spam when score >= t' for every distinct score t, from the
    strictest rule to the loosest (straight lines between them: ties count one half, like ROCA)."""
    order = np.argsort(-scores, kind='stable')
    scores, is_spam = scores[order], is_spam[order]
    last = np.r_[scores[1:] != scores[:-1], True]  # the last message of each group of tied scores
    spam_above = np.cumsum(is_spam)[last]
    ham_above = np.cumsum(~is_spam)[last]
    fpr = np.r_[0.0, 100.0 * ham_above / max(1, (~is_spam).sum())]
    fnr = np.r_[100.0, 100.0 * (1 - spam_above / max(1, is_spam.sum()))]
    return np.maximum(fpr, FLOOR), np.maximum(fnr, FLOOR)


def load_rows(results_dir, tags):
    """{row: {filter: record}} (summary.load_records) with the records' scores as numpy arrays."""
    rows = {}
    for row, records in summary.load_records(results_dir).items():
        for name, record in records.items():
            if name.startswith('nbspamd-') and tags and name[8:] not in tags:
                continue
            s = record['scores']
            record['is_spam'] = np.array([r[1] for r in s], dtype=bool)
            record['score'] = np.array([r[2] for r in s], dtype=float)
            record['confidence'] = [(r[1], r[5]) for r in s if r[5] is not None]
            rows.setdefault(row, {})[name] = record
    return {row: rows[row] for row in summary.ordered(rows)}


def plot_roc(row, records, path):
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for name in sorted(records, key=lambda n: (n not in COLORS, list(COLORS).index(n) if n in COLORS else 0, n)):
        record = records[name]
        spam = record['score'][record['is_spam']]
        ham = record['score'][~record['is_spam']]
        if not len(spam) or not len(ham):
            continue
        auc = 100.0 * (1.0 - metrics.roc_area(list(spam), list(ham)))
        fpr, fnr = roc_points(record['is_spam'], record['score'])
        ax.plot(fpr, fnr, label=f'{name} (1-AUC {auc:.4f}%)', color=COLORS.get(name), linewidth=1.4)
    ax.axvline(0.1, color='grey', linestyle=':', linewidth=1, label='FPR 0.1%')
    ax.set(xscale='log', yscale='log', xlim=(0.01, 100), ylim=(0.01, 100),
           xlabel='ham called spam (FPR), %', ylabel='spam missed (FNR), %',
           title=f'ROC, {summary.row_label(row)}: lower left is better')
    ticks = [0.01, 0.1, 1, 10, 100]
    ax.set_xticks(ticks, [f'{t:g}' for t in ticks])
    ax.set_yticks(ticks, [f'{t:g}' for t in ticks])
    ax.grid(True, which='major', alpha=0.3)
    ax.legend(fontsize=8, loc='lower left')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_calibration(variant, lines, path):
    """lines: [(row, [(is_spam, P)])]."""
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    ax.plot([0, 1], [0, 1], color='grey', linestyle=':', linewidth=1, label='perfect calibration')
    briers = []
    for row, pairs in lines:
        c = metrics.calibration(pairs)
        bins = [b for b in c['reliability'] if b['count'] >= MIN_BIN]
        briers.append(c['brier'])
        ax.plot([b['mean_predicted'] for b in bins], [b['observed_spam'] for b in bins], marker='o', markersize=3,
                linewidth=1.2, label=f'{summary.row_label(row)} (Brier {c["brier"]:.4f}, n={c["messages"]})')
    ax.set(xlim=(0, 1), ylim=(0, 1),
           xlabel=f'mean predicted P(spam) in the bin (spam_confidence; bins of {MIN_BIN}+ messages)',
           ylabel='observed spam share in the bin',
           title=f'{variant}: calibration, Brier {min(briers):.4f}–{max(briers):.4f}')
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc='upper left')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description='Draws the ROC and calibration PNGs of bench/accuracy/run results.')
    parser.add_argument('--results', default=os.path.join(HERE, 'results'))
    parser.add_argument('--tags', help='the nbspamd variants to draw, comma-separated (default all)')
    parser.add_argument('--docs', nargs='?', const=DOCS, metavar='DIR',
                        help='also copy the main plots into DIR (default docs/accuracy/)')
    args = parser.parse_args()
    rows = load_rows(args.results, args.tags.split(',') if args.tags else None)
    out_dir = os.path.join(args.results, 'plots')
    os.makedirs(out_dir, exist_ok=True)
    main_row = lambda row: '-first_' not in row and '-salt_' not in row
    written = []
    for row, records in rows.items():
        path = os.path.join(out_dir, f'roc-{row}.png')
        plot_roc(row, records, path)
        written.append((path, main_row(row)))
    variants = sorted({n for records in rows.values() for n in records if n.startswith('nbspamd-')})
    for variant in variants:
        lines = [(row, records[variant]['confidence']) for row, records in rows.items()
                 if variant in records and records[variant]['confidence'] and main_row(row)]
        if lines:
            path = os.path.join(out_dir, f'calibration-{variant}.png')
            plot_calibration(variant, lines, path)
            written.append((path, True))
    for path, _ in written:
        print(f'wrote {path} ({os.path.getsize(path) // 1024} KB)', file=sys.stderr)
    if args.docs:
        os.makedirs(args.docs, exist_ok=True)
        for path, main in written:
            if main:
                shutil.copy(path, args.docs)
                print(f'copied {os.path.basename(path)} into {args.docs}', file=sys.stderr)


if __name__ == '__main__':
    main()
