# Offline accuracy experiments: the daemon's maths (multinomial NB, Laplace smoothing) over the
# tokens bench/accuracy/explore/token_dump prints, on every corpus and protocol at once, so that a
# ranking or smoothing idea can be tried in seconds before it is built into model/ and measured
# through the real daemon with bench/accuracy/run. See README.md beside this file.
#
#   python3 explore.py --dump-flags '' --variant mean --variant 'mindev:d=1' ...
import argparse
import hashlib
import re
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ACCURACY = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(ACCURACY))


def corpus_lists():
    """{corpus: [(id, path, is_spam, order_key)]} for the three corpora."""
    out = {}
    sa_dir = os.path.join(ACCURACY, 'corpus', 'package', 'data')
    sa = []
    for group in sorted(os.listdir(sa_dir)):
        gdir = os.path.join(sa_dir, group)
        if not os.path.isdir(gdir):
            continue
        for name in sorted(os.listdir(gdir)):
            if name.endswith('.txt'):
                sa.append((f'{group}/{name}', os.path.join(gdir, name), group.startswith('spam-'), name))
    out['spamassassin'] = sa
    for corpus in ('trec07p-early', 'csdmc2010'):
        base = os.path.join(ACCURACY, 'corpora', corpus)
        items = []
        for label in ('ham', 'spam'):
            for name in sorted(os.listdir(os.path.join(base, label))):
                items.append((f'{corpus}/{label}/{name}', os.path.join(base, label, name), label == 'spam', name))
        if corpus == 'trec07p-early':
            items.sort(key=lambda m: int(m[3].split('.')[1]))
        out[corpus] = items
    return out


def load_tokens(corpora, flags, binary):
    """{path: [token, ...]} from a cached dump of token_dump with `flags`."""
    tag = hashlib.sha256(f'{flags} {os.path.getmtime(binary)}'.encode()).hexdigest()[:10]
    cache = os.path.join(ACCURACY, 'results', 'explore', f'tokens-{tag}.tsv')
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    paths = [m[1] for items in corpora.values() for m in items]
    if not os.path.exists(cache):
        print(f'dumping tokens ({flags or "defaults"}) to {cache}', file=sys.stderr)
        with open(cache + '.tmp', 'wb') as out:
            subprocess.run([binary, *flags.split()], input=('\n'.join(paths) + '\n').encode(),
                           stdout=out, check=True)
        os.rename(cache + '.tmp', cache)
    tokens = {}
    with open(cache, encoding='utf-8', errors='replace') as f:
        for line in f:
            parts = line.rstrip('\n').split('\t')
            tokens[parts[0]] = parts[1:]
    return tokens


class Vocabulary:
    def __init__(self):
        self.ids = {}

    def encode(self, tokens):
        ids = self.ids
        return np.array([ids.setdefault(t, len(ids)) for t in tokens], dtype=np.int64)


HEADER_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._'$-]*[A-Za-z0-9!]")
ALREADY_READ = {'subject', 'from', 'reply-to', 'message-id', 'x-mailer', 'user-agent', 'received',
                'content-type', 'to', 'cc', 'date'}


def raw_headers(path):
    with open(path, 'rb') as f:
        data = f.read(65536)
    text = data.decode('latin-1')
    if text.startswith('From '):
        text = text.split('\n', 1)[1] if '\n' in text else ''
    head = re.split(r'\r?\n\r?\n', text, 1)[0]
    fields = []
    for line in head.splitlines():
        if line[:1] in (' ', '\t') and fields:
            fields[-1][1] += ' ' + line.strip()
        elif ':' in line:
            name, _, value = line.partition(':')
            fields.append([name.strip(), value.strip()])
    return fields


def extra_tokens(path, families, skip):
    out = set()
    for name, value in raw_headers(path):
        lname = name.lower()
        if 'hname' in families:
            out.add('hname:' + lname)
        skipped = lname in skip or any(p.endswith('*') and lname.startswith(p[:-1]) for p in skip)
        if 'hnames' in families and not skipped:
            out.add('hname:' + lname)
        if lname in ALREADY_READ or lname in skip or any(p.endswith('*') and lname.startswith(p[:-1]) for p in skip):
            if lname == 'received' and 'rcvd' in families:
                for w in HEADER_WORD.findall(value):
                    if len(w) >= 3 and not w.isdigit():
                        out.add('rcvd:' + w.lower())
            if lname in ('to', 'cc') and 'to' in families:
                for w in HEADER_WORD.findall(value):
                    if len(w) >= 3 and not w.isdigit():
                        out.add('to:' + w.lower())
            continue
        if 'head' in families:
            for w in HEADER_WORD.findall(value):
                if len(w) >= 3 and not w.isdigit():
                    out.add('head:' + w.lower())
        if 'hnamed' in families:
            for w in HEADER_WORD.findall(value):
                if len(w) >= 3 and not w.isdigit():
                    out.add('h:' + lname + ':' + w.lower())
    return out


def in_train_split(mid, salt):
    name = salt + os.path.basename(mid)
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 100 < 80


def protocols(corpora):
    """[(name, train [(ids, spam)], test [(ids, spam)])] index lists into corpora."""
    sa, trec, cs = corpora['spamassassin'], corpora['trec07p-early'], corpora['csdmc2010']
    out = []
    for salt in ('', 'a', 'b', 'c'):
        out.append((f'sa-split{salt or "0"}', [('spamassassin', i) for i, m in enumerate(sa) if in_train_split(m[0], salt)],
                    [('spamassassin', i) for i, m in enumerate(sa) if not in_train_split(m[0], salt)]))
    out.append(('trec-chrono', [('trec07p-early', i) for i in range(24000)],
                [('trec07p-early', i) for i in range(24000, len(trec))]))
    out.append(('csdmc-drift', [('spamassassin', i) for i in range(len(sa))],
                [('csdmc2010', i) for i in range(len(cs))]))
    return out


def roc_one_minus_auc_pct(spam, ham):
    scores = np.concatenate([spam, ham])
    labels = np.concatenate([np.ones(len(spam)), np.zeros(len(ham))])
    order = np.argsort(scores, kind='mergesort')
    s = scores[order]
    ranks = np.empty(len(s))
    i = 0
    # mid ranks for ties
    uniq, first, counts = np.unique(s, return_index=True, return_counts=True)
    mid = first + (counts + 1) / 2.0
    ranks = np.repeat(mid, counts)
    spam_rank_sum = ranks[labels[order] == 1].sum()
    n1, n0 = len(spam), len(ham)
    auc = (spam_rank_sum - n1 * (n1 + 1) / 2) / (n1 * n0)
    return 100 * (1 - auc)


def fnr_at_fpr(spam, ham, max_fpr=0.001):
    allowed = math.floor(max_fpr * len(ham) + 1e-9)
    hams = np.sort(ham)[::-1]
    if allowed >= len(hams):
        return 0.0
    return 100.0 * float(np.mean(spam <= hams[allowed]))


def chi2q(x2, v):
    """P(chi-square with v (even) degrees of freedom > x2), Robinson's series."""
    m = x2 / 2.0
    term = math.exp(-m)
    total = term
    for i in range(1, v // 2):
        term *= m / i
        total += term
    return min(total, 1.0)


def parse_variant(text):
    name, _, rest = text.partition(':')
    params = {}
    for kv in filter(None, rest.split(',')):
        k, _, v = kv.partition('=')
        params[k] = float(v) if v.replace('.', '', 1).replace('-', '', 1).replace('e', '', 1).isdigit() else v
    return name, params


def score_messages(variant, params, train_ids, train_spam, test_ids, vocab_size):
    alpha = params.get('alpha', 1.0)
    ns = np.zeros(vocab_size)
    nh = np.zeros(vocab_size)
    docs_s = docs_h = 0
    for ids, spam in zip(train_ids, train_spam):
        if spam:
            ns[ids] += 1
            docs_s += 1
        else:
            nh[ids] += 1
            docs_h += 1
    seen = (ns + nh) > 0
    V = float(seen.sum())
    log_ps = np.log(ns + alpha) - math.log(ns.sum() + alpha * V)
    log_ph = np.log(nh + alpha) - math.log(nh.sum() + alpha * V)
    weight = log_ps - log_ph
    prior = math.log(docs_s) - math.log(docs_h)
    # Document-frequency estimates, for bogofilter-like variants.
    fs = ns / docs_s
    fh = nh / docs_h
    out = []
    for ids in test_ids:
        ids = ids[seen[ids]] if len(ids) else ids
        w = weight[ids]
        if variant == 'mean':  # the daemon's score: log-odds / known tokens
            out.append((prior + w.sum()) / max(len(ids), 1))
        elif variant == 'mindev':  # mean of the weights with |w| > d (prior ignored)
            d = params.get('d', 1.0)
            k = w[np.abs(w) > d]
            out.append(k.sum() / max(len(k), 1) if len(k) else 0.0)
        elif variant == 'mindevsum':  # (prior + sum of weights with |w| > d) / known
            d = params.get('d', 1.0)
            k = w[np.abs(w) > d]
            out.append((prior + k.sum()) / max(len(ids), 1))
        elif variant == 'mindevn':  # sum of |w|>d over count of those ^ p
            d = params.get('d', 1.0)
            p = params.get('p', 1.0)
            k = w[np.abs(w) > d]
            out.append(k.sum() / max(len(k), 1) ** p)
        elif variant in ('fisher', 'fisherdf'):
            # Robinson: p(w) from NB likelihoods (fisher) or class-normalised document frequencies
            # (fisherdf, bogofilter's), shrunk to x=0.5 with strength s; tokens with
            # |p - 0.5| <= min_dev left out; Fisher's chi-square combination.
            s = params.get('s', 0.0178 if variant == 'fisherdf' else 1.0)
            x = params.get('x', 0.52 if variant == 'fisherdf' else 0.5)
            md = params.get('md', 0.375 if variant == 'fisherdf' else 0.1)
            if variant == 'fisher':
                p = 1.0 / (1.0 + np.exp(-w))
                n = ns[ids] + nh[ids]
            else:
                a, b = fs[ids], fh[ids]
                p = np.where(a + b > 0, a / np.maximum(a + b, 1e-300), 0.5)
                n = ns[ids] + nh[ids]
            f = (s * x + n * p) / (s + n)
            f = f[np.abs(f - 0.5) > md]
            if len(f) == 0:
                out.append(0.5)
                continue
            f = np.clip(f, 1e-15, 1 - 1e-15)
            H = chi2q(-2 * np.log(f).sum(), 2 * len(f))
            S = chi2q(-2 * np.log(1 - f).sum(), 2 * len(f))
            out.append((1 + H - S) / 2)
        elif variant == 'topk':  # mean of the k weights of largest |w|
            k = int(params.get('k', 15))
            if len(w) > k:
                w = w[np.argpartition(-np.abs(w), k)[:k]]
            out.append(w.sum() / max(len(w), 1))
        elif variant == 'clip':  # mean of weights clipped to ±c
            c = params.get('c', 3.0)
            out.append((prior + np.clip(w, -c, c).sum()) / max(len(ids), 1))
        else:
            raise SystemExit(f'unknown variant {variant}')
    return np.array(out, dtype=float)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dump-flags', default='')
    parser.add_argument('--binary', default=os.path.join(REPO, 'build/release/bench/token_dump'))
    parser.add_argument('--variant', action='append', default=[])
    parser.add_argument('--only', help='comma-separated protocol names')
    parser.add_argument('--extra', default='', help='header families added in Python: head,hname,rcvd,to,hnamed')
    parser.add_argument('--skip', default='', help='header names the extra families leave out')
    parser.add_argument('--drop', help='a regular expression: tokens it matches fully are left out')
    parser.add_argument('--save-scores', help='write {protocol: [[is_spam, score], ...]} of the last variant')
    args = parser.parse_args()
    corpora = corpus_lists()
    tokens = load_tokens(corpora, args.dump_flags, args.binary)
    if args.extra:
        families = set(args.extra.split(','))
        skip = set(filter(None, args.skip.lower().split(',')))
        for items in corpora.values():
            for m in items:
                tokens[m[1]] = tokens[m[1]] + sorted(extra_tokens(m[1], families, skip))
    if args.drop:
        pattern = re.compile(args.drop)
        for key in tokens:
            tokens[key] = [t for t in tokens[key] if not pattern.fullmatch(t)]
    vocab = Vocabulary()
    encoded = {c: [vocab.encode(tokens[m[1]]) for m in items] for c, items in corpora.items()}
    labels = {c: [m[2] for m in items] for c, items in corpora.items()}
    total = sum(len(v) for v in encoded.values())
    mean_tokens = sum(len(x) for v in encoded.values() for x in v) / total
    print(f'# dump flags: {args.dump_flags!r}; {total} messages, {mean_tokens:.0f} distinct tokens/message, '
          f'vocabulary {len(vocab.ids)}')
    protos = protocols(corpora)
    if args.only:
        keep = args.only.split(',')
        protos = [p for p in protos if p[0] in keep]
    print('variant'.ljust(36) + ''.join(p[0].rjust(22) for p in protos) + '   sa-mean(auc)')
    for text in args.variant or ['mean']:
        variant, params = parse_variant(text)
        cells, sa, saved = [], [], {}
        for name, train, test in protos:
            tr_ids = [encoded[c][i] for c, i in train]
            tr_sp = [labels[c][i] for c, i in train]
            te_ids = [encoded[c][i] for c, i in test]
            te_sp = np.array([labels[c][i] for c, i in test])
            sc = score_messages(variant, params, tr_ids, tr_sp, te_ids, len(vocab.ids))
            saved[name] = [[bool(a), float(b)] for a, b in zip(te_sp, sc)]
            auc = roc_one_minus_auc_pct(sc[te_sp], sc[~te_sp])
            fnr = fnr_at_fpr(sc[te_sp], sc[~te_sp])
            if name.startswith('sa-split'):
                sa.append(auc)
            cells.append(f'{auc:.4f}/{fnr:5.2f}%')
        if args.save_scores:
            import json
            with open(args.save_scores, 'w') as f:
                json.dump(saved, f)
        print(text.ljust(36) + ''.join(c.rjust(22) for c in cells) + (f'   {np.mean(sa):.4f}' if sa else ''),
              flush=True)


if __name__ == '__main__':
    main()
