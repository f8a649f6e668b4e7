# The reference design of the best filters of TREC 2007: online logistic regression over hashed
# byte 4-grams, in-process (numpy; no daemon, no files). Features: every 4-byte window of the
# message's first 2,500 raw bytes (headers included), hashed to 2^20 buckets, as a set. Score:
# the sum of the buckets' weights (the logit, no bias term); learning: after each message,
# w[b] += 0.002 * (y - p) for each of its buckets, p = sigmoid(logit) before the update. Batch
# training is one pass in the harness's order, each message scored then updated. Verdict spam
# when the logit > 0 (no unsure band); ranks by the logit.
import math
import platform

import numpy as np

from common import Peer, Verdict

PREFIX_BYTES = 2500
HASH_BITS = 20
HASH_MULTIPLIER = np.uint32(0x9E3779B1)  # Fibonacci hashing: the top HASH_BITS of the 32-bit product
LEARNING_RATE = 0.002


def buckets(data):
    """The distinct buckets of the 4-byte windows of data[:PREFIX_BYTES] (none under 4 bytes)."""
    b = np.frombuffer(data[:PREFIX_BYTES], dtype=np.uint8).astype(np.uint32)
    if len(b) < 4:
        return np.zeros(0, dtype=np.uint32)
    windows = b[:-3] | (b[1:-2] << 8) | (b[2:-1] << 16) | (b[3:] << 24)
    return np.unique((windows * HASH_MULTIPLIER) >> np.uint32(32 - HASH_BITS))  # uint32: the product wraps


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


class ReferenceLR(Peer):
    name = 'reference'

    def __init__(self, _workdir=None):
        self.w = np.zeros(1 << HASH_BITS)
        self.last = None  # (path, buckets) of the last message: online scores then trains the same one

    @staticmethod
    def version():
        return f'peer_reference.py on Python {platform.python_version()}, numpy {np.__version__}'

    def info(self):
        return {'version': self.version(),
                'settings': f'online logistic regression, no bias term; features: the set of 4-byte windows of '
                            f'the first {PREFIX_BYTES} raw bytes (headers included), window bytes b0..b3 as the '
                            f'little-endian uint32 v, bucket ((v * 0x9E3779B1) mod 2^32) >> {32 - HASH_BITS} '
                            f'(2^{HASH_BITS} buckets), each bucket once per message; weights start at 0; '
                            f'logit = sum of the weights of the buckets; update w[b] += {LEARNING_RATE} * '
                            f'(y - sigmoid(logit)), the logit taken before the update; verdict spam when logit > 0, '
                            f'else ham (no unsure); ranks by the logit',
                'train': 'one pass over the training messages in the given order, each scored then updated',
                'classify': 'the logit of the final weights',
                'online': 'per message: the logit, then the update with the true label'}

    def features(self, message):
        if self.last is None or self.last[0] != message.path:
            self.last = (message.path, buckets(message.data))
        return self.last[1]

    def logit(self, b):
        return float(self.w[b].sum())

    def train_one(self, message):
        b = self.features(message)
        self.w[b] += LEARNING_RATE * (message.is_spam - sigmoid(self.logit(b)))  # b is a set: no repeats
        return True

    def classify_one(self, message):
        score = self.logit(self.features(message))
        return Verdict(score, 'spam' if score > 0 else 'ham')
