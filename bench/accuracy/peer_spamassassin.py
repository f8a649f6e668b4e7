# SpamAssassin's Bayes under test: sa-learn -L trains, spamd -L on 127.0.0.1 scores through
# spamc. Rules: only the stock Bayes rules and their scores, plus the TLD list and the stock Bayes
# stop words; the local BayesProb plugin writes the Bayes probability (%.17g) into a header.
# Everything runs as nobody (spamd will not run its children as root). Online: spamc, then
# spamc -L spam|ham (spamd --allow-tell), which learns in spamd with the same code as sa-learn.
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

from common import Peer, Verdict, command_output, free_port, stop_process, wait_for_port

STOCK = '/usr/share/spamassassin'
STOCK_FILES = ['10_default_prefs.cf', '20_aux_tlds.cf', '23_bayes.cf', '60_bayes_stopwords.cf']
AS_NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']
SPAMC_IN_FLIGHT = 2  # spamd children and concurrent spamc while scoring a batch (2 cores)
SPAMC_MAX_BYTES = 16 << 20  # spamc passes larger messages through unscored (default 500 KB); sa-learn has no limit


class SpamAssassin(Peer):
    name = 'spamassassin'

    def __init__(self, workdir, config_dir):
        self.workdir, self.config_dir = workdir, config_dir
        self.site, self.rules = os.path.join(workdir, 'site'), os.path.join(workdir, 'rules')
        self.env = dict(os.environ, HOME=os.path.join(workdir, 'home'))
        self.bayes_cf = f'bayes_path {workdir}/bayes/bayes'
        self.spamd, self.port = None, None

    def start(self):
        shutil.copytree(self.config_dir, self.site)
        os.makedirs(self.rules)
        for name in STOCK_FILES:
            shutil.copy(os.path.join(STOCK, name), self.rules)
        with open(os.path.join(STOCK, '50_scores.cf')) as f, open(os.path.join(self.rules, '50_bayes_scores.cf'), 'w') as out:
            out.writelines(line for line in f if line.startswith('score BAYES_'))
        os.makedirs(os.path.join(self.workdir, 'bayes'))
        os.makedirs(self.env['HOME'])
        os.chmod(self.workdir, 0o755)
        subprocess.run(['chown', '-R', 'nobody:nogroup', self.workdir], check=True)
        self.start_spamd()

    def config_args(self):
        return ['-L', f'--siteconfigpath={self.site}', f'--configpath={self.rules}', f'--cf={self.bayes_cf}']

    def start_spamd(self):
        self.port = free_port()
        args = ['spamd', *self.config_args(), '-x', '-u', 'nobody', '-g', 'nogroup', '-H', self.env['HOME'],
                f'--pre=loadplugin BayesProb {self.site}/BayesProb.pm', f'--listen=127.0.0.1:{self.port}',
                f'--max-children={SPAMC_IN_FLIGHT}', f'--min-children={SPAMC_IN_FLIGHT}', '--allow-tell',
                '--syslog=stderr']
        self.spamd = subprocess.Popen(args, env=self.env, stdout=subprocess.DEVNULL,
                                      stderr=open(os.path.join(self.workdir, 'spamd.log'), 'wb'))
        wait_for_port(self.port, self.spamd)
        if self.spamc([], b'Subject: warm-up\n\nwarm-up\n').returncode != 0:  # waits for a child
            raise RuntimeError(f'spamd does not answer; see {self.workdir}/spamd.log')

    def stop(self):
        stop_process(self.spamd)

    @staticmethod
    def version():
        return command_output(['spamassassin', '--version']).splitlines()[0]

    def info(self):
        with open(os.path.join(self.site, 'local.cf')) as f:
            local_cf = [l.strip() for l in f if l.strip() and not l.startswith('#')]
        return {'version': self.version(),
                'rules': STOCK_FILES + ['BAYES_* scores of 50_scores.cf'],
                'plugins': ['Check', 'Bayes', 'BayesProb (local: prints the Bayes probability with %.17g)'],
                'local_cf': local_cf + [self.bayes_cf.replace(self.workdir, 'TMP')],
                'train': 'sa-learn -L --spam|--ham -f LIST, one run per class',
                'classify': f'spamd -L -x on 127.0.0.1, {SPAMC_IN_FLIGHT} children; spamc per message, '
                            f'{SPAMC_IN_FLIGHT} in flight; ranks by the Bayes probability, spam when > 0.5',
                'online': 'spamc, then spamc -L spam|ham (spamd --allow-tell), one message at a time'}

    def train(self, messages):
        learned = 0
        for flag, is_spam in (('--spam', True), ('--ham', False)):
            paths = [m.path for m in messages if m.is_spam == is_spam]
            list_file = os.path.join(self.workdir, f'train{flag}.list')
            with open(list_file, 'w') as f:
                f.writelines(p + '\n' for p in paths)
            out = subprocess.run(AS_NOBODY + ['sa-learn', *self.config_args(), flag, '-f', list_file],
                                 env=self.env, capture_output=True, text=True, check=True).stdout
            learned += int(out.split('Learned tokens from ')[1].split()[0])  # "... N message(s) (M examined)"
        return learned

    def spamc(self, args, data):
        return subprocess.run(['spamc', '-d', '127.0.0.1', '-p', str(self.port), '-x', '-t', '120',
                               '-s', str(SPAMC_MAX_BYTES), *args], input=data, capture_output=True)

    def classify_one(self, message):
        result = self.spamc(['--headers'], message.data)
        if result.returncode != 0:
            raise RuntimeError(f'spamc: status {result.returncode}: {result.stderr!r}')
        headers = result.stdout.split(b'\n\n', 1)[0].decode('latin-1')
        prob = [l.split(':', 1)[1].strip() for l in headers.splitlines() if l.startswith('X-Spam-BayesProb:')]
        if not prob or prob[0] == 'none':
            return Verdict(0.5, 'ham', scored=False)
        return Verdict(float(prob[0]), 'spam' if float(prob[0]) > 0.5 else 'ham')

    def classify(self, messages):
        with ThreadPoolExecutor(SPAMC_IN_FLIGHT) as pool:
            return list(pool.map(self.classify_one, messages))

    def train_one(self, message):
        result = self.spamc(['-L', 'spam' if message.is_spam else 'ham'], message.data)
        out = result.stdout.decode()
        if 'successfully' not in out and 'already' not in out:
            raise RuntimeError(f'spamc -L: status {result.returncode}: {out!r} {result.stderr!r}')
        return 'successfully' in out
