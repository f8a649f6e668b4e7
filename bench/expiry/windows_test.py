#!/usr/bin/env python3
# bench/expiry/windows.py counts what bench/accuracy/metrics.py measures: misordered pairs as
# (1 - ROC area) times spams times hams, ties one half, and the spams missed at FPR <= 0.1%; a
# message's weight counts it that many times.
import os
import random
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'accuracy'))
import metrics  # noqa: E402
import windows  # noqa: E402


def rows_of(rng, count, spam_share):
    # Scores on a coarse grid, so that ties (within a class and across) are common.
    return [(0, rng.random() < spam_share, round(rng.gauss(0, 2), 1)) for _ in range(count)]


class WindowTest(unittest.TestCase):
    def test_unit_weights_give_the_metrics_figures(self):
        rng = random.Random(7)
        for count, spam_share in [(50, 0.5), (3000, 0.7), (2500, 0.2)]:
            rows = rows_of(rng, count, spam_share)
            spam = [score for _, is_spam, score in rows if is_spam]
            ham = [score for _, is_spam, score in rows if not is_spam]
            pairs, missed = windows.Window(rows).figures([1] * count)
            self.assertAlmostEqual(pairs, (1 - metrics.roc_area(spam, ham)) * len(spam) * len(ham), places=6)
            self.assertEqual(missed, round(metrics.fnr_at_fpr(spam, ham, 0.001) * len(spam)))

    def test_a_weight_counts_a_message_that_many_times(self):
        rng = random.Random(11)
        rows = rows_of(rng, 4000, 0.6)
        weight = [rng.choice([0, 0, 1, 1, 2, 3]) for _ in rows]
        repeated = [row for row, w in zip(rows, weight) for _ in range(w)]
        self.assertEqual(windows.Window(rows).figures(weight),
                         windows.Window(repeated).figures([1] * len(repeated)))

    def test_one_ham_above_every_spam(self):
        rows = [(0, True, 1.0), (0, True, 2.0), (0, False, 3.0), (0, False, -1.0), (0, False, 1.0)]
        pairs, _ = windows.Window(rows).figures([1] * len(rows))
        self.assertEqual(pairs, 2.5)  # 3.0 above both spams; 1.0 tied with one


if __name__ == '__main__':
    unittest.main()
