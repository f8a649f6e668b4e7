# Writes the scores explore.py saved (--save-scores) as harness result files, so that regime.py
# applies issue 59's rule (every row's noise, leave one corpus out against today's defaults) to
# variants tried in numpy before any is built into the daemon:
#
#   python3 explore.py --only ... --save-scores S.json --variant V1 --variant V2
#   python3 scores_to_results.py S.json --tag V1=t1 --tag V2=t2 --results DIR
#   python3 regime.py --results DIR --tags base,t1,t2 --peers ''
#
# Each row's messages keep explore.py's order, which is the same for every variant, so the paired
# bootstrap compares like with like.
import argparse
import json
import os

ROWS = {'sa-online': 'spamassassin-online', 'trec-online': 'trec07p-early-online',
        'csdmc-online': 'csdmc2010-drift-online', 'sa-split0': 'spamassassin-split',
        'sa-splita': 'spamassassin-split-salt_a', 'sa-splitb': 'spamassassin-split-salt_b',
        'sa-splitc': 'spamassassin-split-salt_c', 'sa-folders': 'spamassassin-folders',
        'trec-chrono': 'trec07p-early-chrono', 'ling-10fold': 'lingspam-bare-tenfold',
        'csdmc-drift': 'csdmc2010-drift'}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('scores', help='the file explore.py --save-scores wrote')
    parser.add_argument('--tag', action='append', default=[], help='VARIANT=TAG: the tag for a variant')
    parser.add_argument('--results', required=True)
    args = parser.parse_args()
    with open(args.scores) as f:
        saved = json.load(f)
    for pair in args.tag:
        variant, _, tag = pair.rpartition('=')
        if variant not in saved:
            raise SystemExit(f'{variant!r} is not in {args.scores}: {sorted(saved)}')
        for protocol, rows in saved[variant].items():
            if protocol not in ROWS:
                continue
            folder = os.path.join(args.results, ROWS[protocol])
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f'nbspamd-{tag}.json'), 'w') as out:
                json.dump({'scores_columns': ['id', 'is_spam', 'score', 'verdict'],
                           'scores': [[i, bool(spam), score, ''] for i, (spam, score, _) in enumerate(rows)]},
                          out)


if __name__ == '__main__':
    main()
