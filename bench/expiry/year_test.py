#!/usr/bin/env python3
# bench/expiry/year.py's stream: the corpora one after another, or with --interleave merged at
# random, each corpus's messages still in their own order and every message once.
import argparse
import os
import sys
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import year  # noqa: E402

CORPORA = {'a': [f'a{i}' for i in range(50)], 'b': [f'b{i}' for i in range(30)],
           'trec07p-early': [f't{i}' for i in range(120)]}


def stream(corpus, interleave):
    args = argparse.Namespace(corpus=corpus, interleave=interleave)
    with unittest.mock.patch.object(year.datasets, 'load', lambda name, _: list(CORPORA[name])), \
            unittest.mock.patch.object(year, 'online_order', lambda own: list(reversed(own))):
        return year.stream(args)


class StreamTest(unittest.TestCase):
    def test_without_interleave_the_corpora_come_one_after_another(self):
        # trec07p-early in arrival order, the others in the harness's order (here: reversed).
        self.assertEqual(stream('a,trec07p-early', None),
                         list(reversed(CORPORA['a'])) + CORPORA['trec07p-early'])

    def test_interleaving_keeps_each_corpus_in_its_order_and_every_message_once(self):
        merged = stream('a,trec07p-early,b', 1)
        self.assertEqual(sorted(merged), sorted(sum(CORPORA.values(), [])))
        self.assertEqual([m for m in merged if m.startswith('t')], CORPORA['trec07p-early'])
        self.assertEqual([m for m in merged if m.startswith('a')], list(reversed(CORPORA['a'])))
        self.assertEqual([m for m in merged if m.startswith('b')], list(reversed(CORPORA['b'])))
        # Merged, not concatenated: a corpus's messages are spread over the whole stream.
        last_quarter = merged[3 * len(merged) // 4:]
        self.assertTrue(any(m.startswith('a') for m in last_quarter))
        self.assertTrue(any(m.startswith('t') for m in last_quarter))

    def test_a_seed_gives_one_order_and_another_seed_another(self):
        self.assertEqual(stream('a,trec07p-early,b', 3), stream('a,trec07p-early,b', 3))
        self.assertNotEqual(stream('a,trec07p-early,b', 3), stream('a,trec07p-early,b', 4))


if __name__ == '__main__':
    unittest.main()
