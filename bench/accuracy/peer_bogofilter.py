# bogofilter under test: no daemon; a word list in a temp dir, defaults (-C: no config file).
# Split: one bulk registration per class, one bulk scoring run. Online: two processes per
# message (score, then register with the true label). Ranks by the spamicity at %.13g.
import os
import subprocess

from common import Peer, Verdict, command_output

HEADER_FORMAT = '%c %.13g'  # bogofilter cuts a formatted value at 19 characters: no %.17g


class Bogofilter(Peer):
    name = 'bogofilter'

    def __init__(self, workdir):
        self.base = ['bogofilter', '-C', '-d', os.path.join(workdir, 'wordlist')]
        os.makedirs(self.base[-1])

    @staticmethod
    def version():
        return command_output(['bogofilter', '-V']).splitlines()[0]

    def info(self):
        return {'version': self.version(),
                'settings': 'defaults (-C: no config file): robx 0.52, robs 0.0178, min_dev 0.375, '
                            'ham_cutoff 0.45, spam_cutoff 0.99; verdict Unsure is recorded as unsure (not spam)',
                'train': 'bogofilter -C -d DIR -s|-n -b (file names on stdin), one run per class',
                'classify': f"bogofilter -C -d DIR -v -b --header-format='{HEADER_FORMAT}'",
                'online': f"per message: bogofilter -C -d DIR -v --header-format='{HEADER_FORMAT}' -I FILE, "
                          'then bogofilter -C -d DIR -s|-n -I FILE'}

    @staticmethod
    def parse(line):
        verdict, spamicity = line.split()[-2:]  # "[path] Spam|Ham|Unsure 0.99..."
        return Verdict(float(spamicity), verdict.lower())

    def run(self, args, stdin=''):
        result = subprocess.run(self.base + args, input=stdin, capture_output=True, text=True)
        if result.returncode not in (0, 1, 2):  # 0 spam, 1 ham, 2 unsure, 3 error
            raise RuntimeError(f'bogofilter {args}: status {result.returncode}: {result.stderr}')
        return result.stdout

    def train(self, messages):
        for flag, is_spam in (('-s', True), ('-n', False)):
            paths = [m.path for m in messages if m.is_spam == is_spam]
            if paths:
                self.run([flag, '-b'], ''.join(p + '\n' for p in paths))
        return len(messages)

    def classify(self, messages):
        out = self.run(['-v', '-b', f'--header-format={HEADER_FORMAT}'], ''.join(m.path + '\n' for m in messages))
        lines = out.splitlines()
        if len(lines) != len(messages) or any(not l.startswith(m.path + ' ') for l, m in zip(lines, messages)):
            raise RuntimeError('bogofilter bulk output does not match its input')
        return [self.parse(l) for l in lines]

    def classify_one(self, message):
        if not os.path.exists(os.path.join(self.base[-1], 'wordlist.db')):  # nothing registered yet
            return Verdict(0.5, 'ham', scored=False)
        return self.parse(self.run(['-v', f'--header-format={HEADER_FORMAT}', '-I', message.path]))

    def classify_per_process(self, messages):
        """As a delivery agent runs it: one process per message (timed separately for the split)."""
        return [self.classify_one(m) for m in messages]

    def train_one(self, message):
        self.run(['-s' if message.is_spam else '-n', '-I', message.path])
        return True
