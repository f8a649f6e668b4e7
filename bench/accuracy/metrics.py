# Accuracy metrics of one run: verdict rates, ROC area the TREC way and FNR at a fixed low FPR.
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


def evaluate(results):
    """results: [(is_spam, score, verdict_spam)]; returns the metrics as a dict (rates in %)."""
    spam = [score for is_spam, score, _ in results if is_spam]
    ham = [score for is_spam, score, _ in results if not is_spam]
    fp = sum(1 for is_spam, _, verdict in results if verdict and not is_spam)
    fn = sum(1 for is_spam, _, verdict in results if is_spam and not verdict)
    out = {'spam': len(spam), 'ham': len(ham), 'false_positives': fp, 'false_negatives': fn,
           'accuracy_pct': 100.0 * (len(results) - fp - fn) / len(results),
           'fpr_pct': 100.0 * fp / len(ham) if ham else None,
           'fnr_pct': 100.0 * fn / len(spam) if spam else None,
           'one_minus_auc_pct': None, 'fnr_at_fpr_0_1_pct': None}
    if spam and ham:
        out['one_minus_auc_pct'] = 100.0 * (1.0 - roc_area(spam, ham))
        out['fnr_at_fpr_0_1_pct'] = 100.0 * fnr_at_fpr(spam, ham, 0.001)
    return out
