# Accuracy metrics of one run: verdict rates (spam, unsure, ham), ROC area the TREC way, FNR at a
# fixed low FPR and, for a calibrated P(spam), the Brier score and a reliability table.
# Spam is the positive class; a higher score means more spammy.
import math


def roc_area(spam_scores, ham_scores):
    """P(a spam scores above a ham), ties counting one half (TREC's ROCA), by ranks."""
    both = sorted([(s, 1) for s in spam_scores] + [(s, 0) for s in ham_scores])
    rank_sum, i = 0.0, 0
    while i < len(both):  # give each group of tied scores its mid rank
        j = i
        while j < len(both) and both[j][0] == both[i][0]:
            j += 1
        mid_rank = (i + 1 + j) / 2
        rank_sum += mid_rank * sum(1 for k in range(i, j) if both[k][1] == 1)
        i = j
    n_spam, n_ham = len(spam_scores), len(ham_scores)
    return (rank_sum - n_spam * (n_spam + 1) / 2) / (n_spam * n_ham)


def fnr_at_fpr(spam_scores, ham_scores, max_fpr):
    """The least FNR of any rule 'spam when score > t' whose FPR is at most max_fpr."""
    allowed_fp = math.floor(max_fpr * len(ham_scores) + 1e-9)
    hams = sorted(ham_scores, reverse=True)
    if allowed_fp >= len(hams):
        return 0.0
    threshold = hams[allowed_fp]  # the highest ham score that must be called ham
    return sum(1 for s in spam_scores if s <= threshold) / len(spam_scores)


WORST_BIN_MIN = 50  # the worst bin of the reliability table counts only bins of this many messages


def calibration(pairs, bins=10):
    """pairs: [(is_spam, P(spam))]. The Brier score (mean squared error of P against 1 for spam, 0
    for ham), a reliability table: per tenth of [0, 1] (1.0 in the last), the mean predicted P,
    the observed spam share and the count; the expected calibration error (ECE: the mean over
    messages of |mean predicted - observed| of their bin) and the worst such gap of a bin with at
    least WORST_BIN_MIN messages."""
    table = [[0.0, 0, 0] for _ in range(bins)]  # sum of P, spams, count
    for is_spam, p in pairs:
        row = table[min(int(p * bins), bins - 1)]
        row[0] += p
        row[1] += is_spam
        row[2] += 1
    gaps = [(n, abs(s / n - k / n)) for s, k, n in table if n]
    return {'brier': sum((p - is_spam) ** 2 for is_spam, p in pairs) / len(pairs), 'messages': len(pairs),
            'ece': sum(n * gap for n, gap in gaps) / len(pairs),
            'worst_bin': max((gap for n, gap in gaps if n >= WORST_BIN_MIN), default=None),
            'reliability': [{'bin': [i / bins, (i + 1) / bins], 'mean_predicted': s / n if n else None,
                             'observed_spam': k / n if n else None, 'count': n}
                            for i, (s, k, n) in enumerate(table)]}


def evaluate(results):
    """results: [(is_spam, score, verdict, confidence)], verdict 'spam', 'unsure' or 'ham',
    confidence a calibrated P(spam) or None; returns the metrics as a dict (rates in %)."""
    spam = [score for is_spam, score, _, _ in results if is_spam]
    ham = [score for is_spam, score, _, _ in results if not is_spam]
    count = lambda want_spam, verdict: sum(1 for r in results if r[0] == want_spam and r[2] == verdict)
    pct = lambda n, total: 100.0 * n / total if total else None
    fp, spam_as_ham = count(False, 'spam'), count(True, 'ham')
    fn = len(spam) - count(True, 'spam')  # spam not called spam: called ham or unsure
    unsure = sum(1 for r in results if r[2] == 'unsure')
    out = {'spam': len(spam), 'ham': len(ham), 'false_positives': fp, 'false_negatives': fn,
           'accuracy_pct': 100.0 * (len(results) - fp - fn) / len(results),
           'fpr_pct': pct(fp, len(ham)),  # ham called spam
           'fnr_pct': pct(fn, len(spam)),  # spam not called spam (unsure counts as missed)
           'spam_called_ham_pct': pct(spam_as_ham, len(spam)),  # the FNR of 'ham' verdicts only
           'unsure': unsure, 'unsure_pct': pct(unsure, len(results)),
           'spam_unsure_pct': pct(count(True, 'unsure'), len(spam)),
           'ham_unsure_pct': pct(count(False, 'unsure'), len(ham)),
           'one_minus_auc_pct': None, 'fnr_at_fpr_0_1_pct': None, 'calibration': None}
    if spam and ham:
        out['one_minus_auc_pct'] = 100.0 * (1.0 - roc_area(spam, ham))
        out['fnr_at_fpr_0_1_pct'] = 100.0 * fnr_at_fpr(spam, ham, 0.001)
    confident = [(is_spam, p) for is_spam, _, _, p in results if p is not None]
    if confident:
        out['calibration'] = calibration(confident)
    return out
