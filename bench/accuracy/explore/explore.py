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
    ling = os.path.join(ACCURACY, 'corpora', 'lingspam-bare')
    if os.path.isdir(ling):  # the ten parts, in part order (the paper's folds)
        items = []
        for part in range(1, 11):
            pdir = os.path.join(ling, f'part{part}')
            for name in sorted(os.listdir(pdir)):
                items.append((f'ling/part{part}/{name}', os.path.join(pdir, name), name.startswith('spmsg'), part))
        out['lingspam-bare'] = items
    return out


def load_tokens(corpora, flags, binary):
    """{path: [token, ...]} from a cached dump of token_dump with `flags`."""
    paths = [m[1] for items in corpora.values() for m in items]
    key = f'{flags} {os.path.getmtime(binary)} {len(paths)} ' + hashlib.sha256('\n'.join(paths).encode()).hexdigest()
    tag = hashlib.sha256(key.encode()).hexdigest()[:10]
    cache = os.path.join(ACCURACY, 'results', 'explore', f'tokens-{tag}.tsv')
    os.makedirs(os.path.dirname(cache), exist_ok=True)
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


# The mailing-list fields the daemon leaves out (tokenizer/mail_reader.cc, IsIgnoredHeader).
LIST_FIELDS = {'list-id', 'list-unsubscribe', 'list-subscribe', 'list-help', 'list-post', 'list-archive',
               'list-owner', 'x-mailman-version', 'x-beenthere', 'precedence', 'errors-to', 'x-loop',
               'sender', 'x-list', 'mailing-list', 'x-mailing-list'}


def extra_tokens(path, families, skip):
    out = set()
    fields = raw_headers(path)
    names = {name.lower() for name, _ in fields}
    if 'listone' in families and names & LIST_FIELDS:  # one fact: it came through a list
        out.add('meta:list')
        for name, value in fields:
            if name.lower() == 'list-id':  # and which list, once
                ids = re.findall(r'<([^>]+)>', value)
                out.add('list-id:' + (ids[0] if ids else value.strip()).lower())
                break
    if 'listshape' in families and names & LIST_FIELDS:  # one token: which list fields, together
        out.add('list-fields:' + ','.join(sorted(names & LIST_FIELDS)))
    for name, value in fields:
        lname = name.lower()
        if lname in LIST_FIELDS and families & {'listhname', 'listhead'}:
            if 'listhname' in families:
                out.add('hname:' + lname)
            if 'listhead' in families:
                for w in HEADER_WORD.findall(value):
                    if len(w) >= 3 and not w.isdigit():
                        out.add('head:' + w.lower())
            continue
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


def online_key(corpus, m):
    """The harness's id of a message (common.py, datasets.py), for its online order."""
    if corpus == 'csdmc2010':
        return 'csdmc/' + m[0].split('/', 1)[1]
    return m[0]


def shuffled(corpus, items):
    """Indices of items in the harness's online order: sha256("nbspamd-online-1:" + id)."""
    return sorted(range(len(items)),
                  key=lambda i: hashlib.sha256(f'nbspamd-online-1:{online_key(corpus, items[i])}'.encode()).hexdigest())


# Protocol kinds: 'batch' learns train (in its order) then scores test; 'online' learns train
# unscored, then classifies each test message before learning it; 'folds' is a list of batch
# protocols whose test scores are pooled (lingspam-bare's 10-fold cross-validation).
def protocols(corpora):
    """{name: (kind, train [(corpus, i)], test [(corpus, i)])}, in the harness's orders."""
    sa, trec, cs = corpora['spamassassin'], corpora['trec07p-early'], corpora['csdmc2010']
    sa_shuffled = [('spamassassin', i) for i in shuffled('spamassassin', sa)]
    out = {}
    for salt in ('', 'a', 'b', 'c'):
        out[f'sa-split{salt or "0"}'] = (
            'batch', [(c, i) for c, i in sa_shuffled if in_train_split(sa[i][0], salt)],
            [('spamassassin', i) for i, m in enumerate(sa) if not in_train_split(m[0], salt)])
    out['sa-online'] = ('online', [], sa_shuffled)
    out['trec-chrono'] = ('batch', [('trec07p-early', i) for i in range(24000)],
                          [('trec07p-early', i) for i in range(24000, len(trec))])
    out['trec-online'] = ('online', [], [('trec07p-early', i) for i in range(len(trec))])
    out['csdmc-drift'] = ('batch', sa_shuffled, [('csdmc2010', i) for i in range(len(cs))])
    out['csdmc-online'] = ('online', sa_shuffled, [('csdmc2010', i) for i in shuffled('csdmc2010', cs)])
    # The corpus's own folders, one class after the other (protocols.py 'folders').
    folder = lambda names: [('spamassassin', i) for i, m in enumerate(sa) if m[0].split('/')[0] in names]
    out['sa-folders'] = ('batch', folder({'spam-1'}) + folder({'easy-ham-1'}),
                         folder({'spam-2', 'easy-ham-2', 'hard-ham-1'}))
    if 'lingspam-bare' in corpora:
        ling = corpora['lingspam-bare']
        order = shuffled('lingspam-bare', ling)
        out['ling-10fold'] = ('folds', [
            ('batch', [('lingspam-bare', i) for i in order if ling[i][3] != k],
             [('lingspam-bare', i) for i in range(len(ling)) if ling[i][3] == k]) for k in range(1, 11)], [])
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


def verdict_figures(params, variant, is_spam, score):
    """At the thresholds st (spam above) and ht (ham at or below; the daemon's 1 and -0.6 by
    default): ham called spam %, spam called ham %, unsure %."""
    fisherlike = variant in NEUTRAL
    st = params.get('st', 0.99 if fisherlike else 1.0)
    ht = params.get('ht', 0.45 if fisherlike else -0.6)
    spam_v, ham_v = score > st, score <= ht
    ham, spam = ~is_spam, is_spam
    return {'ham_called_spam_pct': 100.0 * float((spam_v & ham).sum()) / max(int(ham.sum()), 1),
            'spam_called_ham_pct': 100.0 * float((ham_v & spam).sum()) / max(int(spam.sum()), 1),
            'unsure_pct': 100.0 * float((~spam_v & ~ham_v).sum()) / max(len(score), 1)}


def parse_variant(text):
    name, _, rest = text.partition(':')
    params = {}
    for kv in filter(None, rest.split(',')):
        k, _, v = kv.partition('=')
        params[k] = float(v) if v.replace('.', '', 1).replace('-', '', 1).replace('e', '', 1).isdigit() else v
    return name, params


class Counts:
    """Per-class document counts of each token (boolean counts: token_dump prints distinct tokens)
    and what the daemon's estimate needs: n_c, |V|, N_c."""

    def __init__(self, vocab_size):
        self.n = [np.zeros(vocab_size), np.zeros(vocab_size)]  # ham, spam
        self.total = [0.0, 0.0]
        self.docs = [0, 0]
        self.seen = np.zeros(vocab_size, dtype=bool)
        self.V = 0

    def add(self, ids, spam):
        self.n[spam][ids] += 1
        self.total[spam] += len(ids)
        self.docs[spam] += 1
        new = ids[~self.seen[ids]]
        self.seen[new] = True
        self.V += len(new)

    def ready(self):
        return self.docs[0] > 0 and self.docs[1] > 0

    def weights(self, ids, alpha):
        """(w, n) for the known tokens of ids: w = log P(t|spam) - log P(t|ham), n = documents with t."""
        ids = ids[self.seen[ids]]
        ns, nh = self.n[1][ids], self.n[0][ids]
        w = (np.log(ns + alpha) - math.log(self.total[1] + alpha * self.V)
             - np.log(nh + alpha) + math.log(self.total[0] + alpha * self.V))
        return w, ns + nh, ns, nh


IS_GRAM = None  # Whether each vocabulary id is a byte n-gram (b<N>:"...") or a word's character n-gram.

NEUTRAL = {'fisher': 0.5, 'fisherdf': 0.5}


def fisher(f):
    f = np.clip(f, 1e-15, 1 - 1e-15)
    H = chi2q(-2 * np.log(f).sum(), 2 * len(f))
    S = chi2q(-2 * np.log(1 - f).sum(), 2 * len(f))
    return (1 + H - S) / 2


def combine(variant, params, counts, ids):
    """The ranking value of one message under `variant`, from the model `counts`."""
    alpha = params.get('alpha', 0.1)
    w, n, ns, nh = counts.weights(ids, alpha)
    if variant == 'mean':  # the old score: log-odds / known tokens
        prior = math.log(counts.docs[1]) - math.log(counts.docs[0])
        return (prior + w.sum()) / max(len(w), 1)
    if variant == 'mindev':  # the daemon's score: mean of the weights with |w| > d
        k = w[np.abs(w) > params.get('d', 1.0)]
        return k.sum() / len(k) if len(k) else 0.0
    if variant == 'fam':  # mindev of the words and of the byte n-grams apart, mixed: (1-l)·words + l·n-grams
        d, lam = params.get('d', 1.0), params.get('l', 0.5)
        grams = IS_GRAM[ids[counts.seen[ids]]]
        strong = np.abs(w) > d
        kw, kg = w[strong & ~grams], w[strong & grams]
        sw = kw.sum() / len(kw) if len(kw) else 0.0
        sg = kg.sum() / len(kg) if len(kg) else 0.0
        if not len(kw) or not len(kg):
            return sw + sg
        return (1 - lam) * sw + lam * sg
    if variant == 'mindevn':  # sum of |w| > d over (their count) ^ p
        k = w[np.abs(w) > params.get('d', 1.0)]
        return k.sum() / max(len(k), 1) ** params.get('p', 1.0)
    if variant == 'tstat':  # mean of the strong weights over (their spread + s0) · k^-q: mixed evidence → 0
        k = w[np.abs(w) > params.get('d', 1.0)]
        if len(k) == 0:
            return 0.0
        return k.mean() / (k.std() + params.get('s0', 1.0)) * len(k) ** params.get('q', 0.0)
    if variant == 'mindocs':  # mindev, but neutral (0) until each class has m documents (SpamAssassin: 200)
        if min(counts.docs) < params.get('m', 200):
            return 0.0
        k = w[np.abs(w) > params.get('d', 1.0)]
        return k.sum() / len(k) if len(k) else 0.0
    if variant == 'young':  # mindev shrunk while the model is young: times m / (m + n0), m = min docs of a class
        k = w[np.abs(w) > params.get('d', 1.0)]
        m = min(counts.docs)
        return (k.sum() / len(k) if len(k) else 0.0) * m / (m + params.get('n0', 10.0))
    if variant == 'robw':  # mindev on weights shrunk by the documents n that have the token: w * n / (n + s)
        w = w * n / (n + params.get('s', 1.0))
        k = w[np.abs(w) > params.get('d', 1.0)]
        return k.sum() / len(k) if len(k) else 0.0
    if variant == 'shrink':  # sum of the weights with |w| > d over (their count + c): few strong tokens say less
        k = w[np.abs(w) > params.get('d', 1.0)]
        return k.sum() / (len(k) + params.get('c', 0.0))
    if variant == 'balance':  # mean of the strong weights, shrunk by how far the evidence disagrees
        k = w[np.abs(w) > params.get('d', 1.0)]
        if not len(k):
            return 0.0
        pos, neg = k[k > 0].sum(), -k[k < 0].sum()
        return (pos - neg) / len(k) * (abs(pos - neg) / (pos + neg)) ** params.get('p', 1.0)
    if variant in ('fisher', 'fisherdf'):
        # Robinson: f(w) from the NB weight (fisher: sigmoid(w)) or bogofilter's class-normalised
        # document frequencies (fisherdf), shrunk to x with strength s by the documents with the
        # token; tokens with |f - 0.5| <= md left out; Fisher's chi-square combination.
        s = params.get('s', 0.0178 if variant == 'fisherdf' else 1.0)
        x = params.get('x', 0.52 if variant == 'fisherdf' else 0.5)
        md = params.get('md', 0.375 if variant == 'fisherdf' else 0.1)
        if variant == 'fisher':
            p = 1.0 / (1.0 + np.exp(-w))
        else:
            a, b = ns / counts.docs[1], nh / counts.docs[0]
            p = np.where(a + b > 0, a / np.maximum(a + b, 1e-300), 0.5)
        f = (s * x + n * p) / (s + n) if s > 0 else p
        f = f[np.abs(f - 0.5) > md]
        return fisher(f) if len(f) else 0.5
    if variant == 'topk':  # mean of the k weights of largest |w|
        k = int(params.get('k', 15))
        if len(w) > k:
            w = w[np.argpartition(-np.abs(w), k)[:k]]
        return w.sum() / max(len(w), 1)
    if variant == 'clip':  # mean of weights clipped to ±c
        return np.clip(w, -params.get('c', 3.0), params.get('c', 3.0)).sum() / max(len(w), 1)
    raise SystemExit(f'unknown variant {variant}')


def learns(params, score, spam):
    """Train-on-error with a thick threshold (`toe=m` around `tt`): learn a message only when its
    score was on the wrong side of tt or within m of it. Without toe, learn everything."""
    if 'toe' not in params or score is None:
        return True
    t, m = params.get('tt', 0.0), params['toe']
    return score <= t + m if spam else score >= t - m


def run_protocol(kind, train, test, variant, params, encoded, labels, vocab_size):
    """(is_spam, score, scored) of the test messages; train then test in their orders."""
    counts = Counts(vocab_size)
    neutral = NEUTRAL.get(variant, 0.0)
    # Bulk training under the regime makes passes (`passes`, as nbspamc train --passes) until a
    # pass learns nothing; a message is learned at most once.
    # `bulk=1`: the training set is counted whole (nbspamc train --count-all); the regime is
    # feedback's only.
    pending = list(train)
    for _ in range(int(params.get('passes', 1)) if 'toe' in params and not params.get('bulk') else 1):
        left = []
        for c, i in pending:
            ids, spam = encoded[c][i], labels[c][i]
            regime = 'toe' in params and not params.get('bulk')
            score = combine(variant, params, counts, ids) if regime and counts.ready() else None
            if learns(params, score, spam):
                counts.add(ids, spam)
            else:
                left.append((c, i))
        if len(left) == len(pending):
            break
        pending = left
    out = []
    for c, i in test:
        ids, spam = encoded[c][i], labels[c][i]
        scored = counts.ready()
        score = combine(variant, params, counts, ids) if scored else neutral
        out.append((spam, score, scored))
        if kind == 'online' and learns(params, score if scored else None, spam):
            counts.add(ids, spam)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dump-flags', default='')
    parser.add_argument('--binary', default=os.path.join(REPO, 'build/release/bench/token_dump'))
    parser.add_argument('--variant', action='append', default=[])
    parser.add_argument('--only', help='comma-separated protocol names (default: the batch ones)')
    parser.add_argument('--extra', default='', help='header families added in Python: head,hname,rcvd,to,hnamed,'
                        'listhead,listhname,listone')
    parser.add_argument('--skip', default='', help='header names the extra families leave out')
    parser.add_argument('--drop', help='a regular expression: tokens it matches fully are left out')
    parser.add_argument('--json', help='append {variant: {protocol: figures}} to this JSON file (for loo.py)')
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
    global IS_GRAM
    IS_GRAM = np.zeros(len(vocab.ids), dtype=bool)
    for token, i in vocab.ids.items():
        # Byte n-grams (b5:"...") and the words' character n-grams (#..., after a prefix).
        if re.match(r'b[0-9]+:"|(?:[a-z0-9-]+:)?#', token):
            IS_GRAM[i] = True
    labels = {c: [m[2] for m in items] for c, items in corpora.items()}
    total = sum(len(v) for v in encoded.values())
    mean_tokens = sum(len(x) for v in encoded.values() for x in v) / total
    print(f'# dump flags: {args.dump_flags!r}; extra {args.extra!r}; {total} messages, '
          f'{mean_tokens:.0f} distinct tokens/message, vocabulary {len(vocab.ids)}')
    protos = protocols(corpora)
    keep = args.only.split(',') if args.only else [n for n, p in protos.items() if p[0] != 'online']
    protos = {n: protos[n] for n in keep}
    print('variant'.ljust(36) + ''.join(n.rjust(17) for n in protos) + '   sa-mean(auc)')
    saved_all = {}
    figures = {}
    if args.json and os.path.exists(args.json):
        import json
        with open(args.json) as f:
            figures = json.load(f)
    for text in args.variant or ['mindev:d=1']:
        variant, params = parse_variant(text)
        key = ' '.join(filter(None, [text, f'extra={args.extra}' if args.extra else '',
                                     f'dump={args.dump_flags}' if args.dump_flags else '',
                                     f'drop={args.drop}' if args.drop else '']))
        cells, sa, saved = [], [], {}
        for name, (kind, train, test) in protos.items():
            folds = train if kind == 'folds' else [(kind, train, test)]
            scored = [r for k, tr, te in folds
                      for r in run_protocol(k, tr, te, variant, params, encoded, labels, len(vocab.ids))]
            te_sp = np.array([r[0] for r in scored])
            sc = np.array([r[1] for r in scored], dtype=float)
            saved[name] = [[bool(r[0]), float(r[1]), bool(r[2])] for r in scored]
            auc = roc_one_minus_auc_pct(sc[te_sp], sc[~te_sp])
            fnr = fnr_at_fpr(sc[te_sp], sc[~te_sp])
            if name.startswith('sa-split'):
                sa.append(auc)
            cells.append(f'{auc:.4f}/{fnr:5.2f}')
            figures.setdefault(key, {})[name] = verdict_figures(params, variant, te_sp, sc)
            figures[key][name].update(one_minus_auc_pct=auc, fnr_at_fpr_0_1=fnr)
        saved_all[text] = saved
        print(text.ljust(36) + ''.join(c.rjust(17) for c in cells) + (f'   {np.mean(sa):.4f}' if sa else ''),
              flush=True)
    if args.json:
        import json
        with open(args.json + '.tmp', 'w') as f:
            json.dump(figures, f, indent=1, sort_keys=True)
        os.replace(args.json + '.tmp', args.json)
    if args.save_scores:
        import json
        with open(args.save_scores, 'w') as f:
            json.dump(saved_all, f)


if __name__ == '__main__':
    main()
