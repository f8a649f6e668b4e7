# The protocols of the accuracy harness, per corpus. Each one trains a fresh peer (tenfold: one
# per fold) and returns which messages it scored, with the verdicts, counts and timings (see
# run_batch, run_online, run_folds).
#   spamassassin  split         80/20 hash split (--split-salt; `splits` runs the salts '', a, b, c)
#                 online        every message in a hash order, classified then trained
#                 folders       learn the corpus's first folders one class after the other (spam-1,
#                               then easy-ham-1, as an administrator imports sorted mail), score
#                               spam-2, easy-ham-2 and hard-ham-1 (a kind of ham never learned)
#   trec07p-early chrono        learn inmail.1-24000 in arrival order, score inmail.24001-30000
#                 online        all 30,000 in arrival order, each classified then trained (TREC's own)
#   csdmc2010     drift         learn all of SpamAssassin (2002), score all of csdmc2010 (2009-2010)
#                 drift-online  learn all of SpamAssassin, then csdmc2010 in a hash order, each
#                               classified then trained
#   lingspam-bare tenfold       the paper's 10-fold cross-validation: for each part k, a fresh peer
#                               learns the nine other parts in a hash order and scores part k; the
#                               ten test parts pooled into one result
import sys
import time

import datasets
import metrics
from common import SHUFFLE_RULE, SPLIT_RULE, in_train_split, online_order

VERSION = 2  # part of the key of cached peer results: change it when a protocol changes
PROTOCOLS = {'spamassassin': ['split', 'online', 'folders'], 'trec07p-early': ['chrono', 'online'],
             'csdmc2010': ['drift', 'drift-online'], 'lingspam-bare': ['tenfold']}
# Cross-validation protocols and their number of folds: run_folds starts a fresh peer per fold, so
# the harness starts none for them (it gives run a new_peer instead).
FOLDS = {'tenfold': datasets.LING_PARTS}
SPLIT_SALTS = ['', 'a', 'b', 'c']  # what `--protocol splits` (and `all`) runs on spamassassin
CHRONO_TRAIN = 24000  # trec07p-early chrono: inmail.1-24000 train, the rest test


def needs(corpus, protocol):
    """The corpora a protocol reads: drift learns the SpamAssassin corpus first."""
    return [corpus, 'spamassassin'] if corpus == 'csdmc2010' else [corpus]


def run_batch(peer, train, test, passes=1, per_process=False):
    """Learns train with the true labels, then scores test (passes times, to show the scores repeat);
    per_process: also times bogofilter's one process per message (slow: the split only)."""
    t0 = time.monotonic()
    learned = peer.train(train)
    train_s = time.monotonic() - t0
    runs = []
    for _ in range(passes):
        t0 = time.monotonic()
        verdicts = peer.classify(test)
        classify_s = time.monotonic() - t0
        results = [(m.is_spam, v.score, v.verdict, v.confidence) for m, v in zip(test, verdicts)]
        runs.append({'classify_s': classify_s, 'verdicts': verdicts,
                     'one_minus_auc_pct': metrics.evaluate(results)['one_minus_auc_pct']})
    extra = {}
    if per_process and hasattr(peer, 'classify_per_process'):  # bogofilter as a delivery agent runs it
        t0 = time.monotonic()
        same = [v.score for v in peer.classify_per_process(test)] == [v.score for v in runs[0]['verdicts']]
        extra = {'classify_per_process_s': time.monotonic() - t0, 'per_process_scores_equal_bulk': same}
        extra['classify_per_process_msg_per_s'] = len(test) / extra['classify_per_process_s']
    return {'trained': len(train), 'learned': learned, 'tested': len(test), 'extra_timing': extra,
            'train_s': train_s, 'classify_s': runs[0]['classify_s'], 'messages': test,
            'verdicts': runs[0]['verdicts'], 'pass_verdicts': [p['verdicts'] for p in runs],
            'passes': [{k: p[k] for k in ('one_minus_auc_pct', 'classify_s')} for p in runs]}


def run_folds(new_peer, folds, passes=1):
    """Cross-validation: for the k-th (train, test) of folds (k from 1), new_peer(k) gives a fresh
    peer, which is started, learns train, scores test (run_batch) and is stopped. The test parts'
    verdicts are pooled into one result, in fold order; counts and timings are summed. Adds
    'startup_s' (summed), 'info' (of the last fold's peer) and 'folds' (each fold's figures)."""
    pooled = {'trained': 0, 'learned': 0, 'tested': 0, 'train_s': 0.0, 'classify_s': 0.0, 'startup_s': 0.0,
              'messages': [], 'verdicts': [], 'folds': []}
    pass_verdicts, pass_classify_s = [[] for _ in range(passes)], [0.0] * passes
    for k, (train, test) in enumerate(folds, 1):
        peer = new_peer(k)
        t0 = time.monotonic()
        try:
            peer.start()
            pooled['startup_s'] += time.monotonic() - t0
            out = run_batch(peer, train, test, passes)
            pooled['info'] = peer.info()
        finally:
            peer.stop()
        for key in ('trained', 'learned', 'tested', 'train_s', 'classify_s', 'messages', 'verdicts'):
            pooled[key] += out[key]
        for i in range(passes):
            pass_verdicts[i] += out['pass_verdicts'][i]
            pass_classify_s[i] += out['passes'][i]['classify_s']
        auc = out['passes'][0]['one_minus_auc_pct']
        pooled['folds'].append({'fold': k, 'trained': out['trained'], 'learned': out['learned'],
                                'tested': out['tested'], 'one_minus_auc_pct': auc})
        print(f'  {peer.name}: fold {k} of {len(folds)}: (1-AUC)% {"-" if auc is None else f"{auc:.4f}"}',
              file=sys.stderr)
    pooled['passes'] = []  # each pass's (1-AUC)% of the pooled scores, as run_batch's passes
    for verdicts, classify_s in zip(pass_verdicts, pass_classify_s):
        results = [(m.is_spam, v.score, v.verdict, v.confidence) for m, v in zip(pooled['messages'], verdicts)]
        pooled['passes'].append({'one_minus_auc_pct': metrics.evaluate(results)['one_minus_auc_pct'],
                                 'classify_s': classify_s})
    return pooled


def stop_online(_signum=None, _frame=None):
    """SIGUSR1: an online run stops after its current message and is kept as a run of the first N
    messages (harness.py forwards the signal to its runs)."""
    global stop_requested
    stop_requested = True


stop_requested = False


def run_online(peer, order, pretrain=()):
    """Learns pretrain first (not scored), then classifies each message of order and trains it
    with its true label before the next one."""
    t0 = time.monotonic()
    learned = peer.train(pretrain) if pretrain else 0
    train_s, classify_s, verdicts = time.monotonic() - t0, 0.0, []
    for i, message in enumerate(order):
        if stop_requested:
            print(f'  {peer.name}: stopped by SIGUSR1 after {i} of {len(order)} messages', file=sys.stderr)
            order = order[:i]
            break
        t0 = time.monotonic()
        verdicts.append(peer.classify_one(message))
        t1 = time.monotonic()
        learned += peer.train_one(message)
        train_s += time.monotonic() - t1
        classify_s += t1 - t0
        if (i + 1) % 2000 == 0:
            print(f'  {peer.name}: {i + 1} of {len(order)} messages', file=sys.stderr)
    return {'trained': len(pretrain) + len(order), 'learned': learned, 'tested': len(order), 'train_s': train_s,
            'classify_s': classify_s, 'messages': order, 'verdicts': verdicts, 'stopped': stop_requested}


def run(peer, corpus, protocol, messages, args, new_peer=None):
    """Runs one protocol on a started peer, or for a protocol of FOLDS on the fresh peers that
    new_peer(k) makes (peer is then None); messages: {corpus name: [Message]}. Returns run_batch's,
    run_online's or run_folds's dict plus 'rule', the order and selection in words."""
    own = messages[corpus]
    limit = args.online_limit
    cut = f'; first {limit} messages of that order only' if limit else ''
    if (corpus, protocol) == ('spamassassin', 'split'):
        salt = args.split_salt
        # Trained in the shuffled order, not folder by folder (all ham, then all spam): the counts
        # are the same either way, but only a mixed order gives each message a held-out score of
        # the other class's model too, which spam_confidence is calibrated on.
        out = run_batch(peer, [m for m in online_order(own) if in_train_split(m, salt)],
                        [m for m in own if not in_train_split(m, salt)], args.passes, per_process=True)
        out['rule'] = SPLIT_RULE + (f'; with the salt {salt!r} prefixed to the name' if salt else '') + \
            '; train in the order ' + SHUFFLE_RULE + ', test in id order'
    elif (corpus, protocol) == ('spamassassin', 'online'):
        out = run_online(peer, online_order(own)[:limit])
        out['rule'] = SHUFFLE_RULE + cut
    elif (corpus, protocol) == ('spamassassin', 'folders'):
        group = lambda m: m.id.split('/')[0]  # 'spam-1/00001.7848....txt': spam-1
        train = [m for m in own if group(m) == 'spam-1'] + [m for m in own if group(m) == 'easy-ham-1']
        test = [m for m in own if group(m) in ('spam-2', 'easy-ham-2', 'hard-ham-1')]
        out = run_batch(peer, train, test, args.passes)
        out['rule'] = ('train spam-1, then easy-ham-1, each in id order (one class after the other); test spam-2, '
                       'easy-ham-2 and hard-ham-1 in id order')
    elif (corpus, protocol) == ('trec07p-early', 'chrono'):
        out = run_batch(peer, own[:CHRONO_TRAIN], own[CHRONO_TRAIN:], args.passes)
        out['rule'] = f'train inmail.1-{CHRONO_TRAIN} in arrival order, test inmail.{CHRONO_TRAIN + 1}-{len(own)}'
    elif (corpus, protocol) == ('trec07p-early', 'online'):
        out = run_online(peer, own[:limit])
        out['rule'] = 'inmail.N in arrival order (N ascending), each classified then trained' + cut
    elif (corpus, protocol) == ('csdmc2010', 'drift'):
        out = run_batch(peer, online_order(messages['spamassassin']), own, args.passes)
        out['rule'] = ('train every SpamAssassin message in the order ' + SHUFFLE_RULE +
                       ', test every csdmc2010 message in id order')
    elif (corpus, protocol) == ('csdmc2010', 'drift-online'):
        out = run_online(peer, online_order(own)[:limit], pretrain=online_order(messages['spamassassin']))
        out['rule'] = ('train every SpamAssassin message in the shuffled order, then csdmc2010 classified then trained in '
                       'the order ' + SHUFFLE_RULE.replace('"<group>/<file name>"', '"csdmc/<ham|spam>/<file>"') + cut)
    elif (corpus, protocol) == ('lingspam-bare', 'tenfold'):
        part = lambda m: m.id.split('/')[1]  # 'ling/part3/spmsga36.txt': part3
        parts = [f'part{k}' for k in range(1, FOLDS[protocol] + 1)]
        # Each fold trained in the shuffled order, for the reason the split gives (a held-out
        # score of both classes for spam_confidence), not part by part nor ham before spam.
        folds = [([m for m in online_order(own) if part(m) != p], [m for m in own if part(m) == p]) for p in parts]
        out = run_folds(new_peer, folds, args.passes)
        out['rule'] = (f'{FOLDS[protocol]}-fold cross-validation over part1-{FOLDS[protocol]}: for each k, a fresh '
                       'peer learns the other parts in the order ' +
                       SHUFFLE_RULE.replace('"<group>/<file name>"', '"ling/part<n>/<file>"') +
                       ', then scores part k in id order; the test parts pooled in part order')
    else:
        raise SystemExit(f'no protocol {protocol} on {corpus}')
    if out.get('stopped'):
        out['rule'] += f'; stopped (SIGUSR1) after the first {out["tested"]} messages of that order'
    return out
