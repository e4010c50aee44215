#!/usr/bin/env python3
"""Regenerate tests/golden/metrics_golden.jsonl: (output, targets) pairs with the scores the
reference implementations give. evalctl's `f1`, `bleu_4` and `rouge_l` must match each to 1e-9.

    pip install sacrebleu==2.6.0 rouge-score==0.1.2
    python3 scripts/gen_metric_golden.py > tests/golden/metrics_golden.jsonl

Each line: {"output", "targets", "f1", "bleu_4", "rouge_l"}; every score is the maximum over the
targets of the single-target score:
  f1      SQuAD v1.1 token F1 (the official evaluate-v1.1.py normalisation, reproduced below)
  bleu_4  sacrebleu.sentence_bleu(output, [target]).score / 100, all defaults
  rouge_l rouge_score RougeScorer(["rougeL"]).score(target, output)["rougeL"].fmeasure
The pairs are deterministic (fixed seed); CI never runs this script, it reads the committed file.
"""

import json
import random
import re
import string
import sys
from collections import Counter

import sacrebleu
from rouge_score import rouge_scorer


def squad_normalize(s):
    """normalize_answer from SQuAD's evaluate-v1.1.py."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_f1(prediction, ground_truth):
    """f1_score from SQuAD's evaluate-v1.1.py."""
    prediction_tokens = squad_normalize(prediction).split()
    ground_truth_tokens = squad_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


SCORER = rouge_scorer.RougeScorer(["rougeL"])

METRICS = {
    "f1": lambda out, tgt: float(squad_f1(out, tgt)),
    "bleu_4": lambda out, tgt: sacrebleu.sentence_bleu(out, [tgt]).score / 100,
    "rouge_l": lambda out, tgt: SCORER.score(tgt, out)["rougeL"].fmeasure,
}

# Hand-picked edges: empty strings, whitespace only, punctuation, articles, numbers, HTML entities,
# repeated tokens, no overlap, unicode (accents, Greek final sigma, CJK, emoji, Turkish dotted I),
# Python-only whitespace separators, multiple targets.
EDGES = [
    ("", [""]),
    ("", ["the cat"]),
    ("the cat", [""]),
    ("   ", ["   "]),
    ("\t\n", ["a"]),
    ("The cat sat on the mat.", ["The cat sat on the mat."]),
    ("the cat sat on the mat", ["a cat sat on a mat"]),
    ("cat", ["cat sat down"]),
    ("cat sat down on the big red mat today", ["cat"]),
    ("red fox", ["blue whale"]),
    ("the the the the", ["the cat"]),
    ("a an the", ["the an a"]),
    ("cat cat cat cat cat", ["cat"]),
    ("cat", ["cat cat cat cat"]),
    ("Hello, world! It's 3.14 -- (ok).", ["hello world its 314 ok"]),
    ("1,000 people; 5-3 win.", ["1,000 people: a 5-3 win!"]),
    ("x.. y,, z.,", ["x. y, z"]),
    ("Tom &amp; Jerry &lt;3 &quot;cartoon&quot;", ['Tom & Jerry <3 "cartoon"']),
    ("line-\nbreak <skipped> here", ["linebreak here"]),
    ("multi\nline\noutput", ["multi line output"]),
    ("Café crème brûlée", ["café crème brûlée"]),
    ("Ελληνικά ΟΔΟΣ", ["ελληνικά οδος"]),
    ("東京は日本の首都です。", ["東京は日本の首都です。"]),
    ("東京 大阪 京都", ["東京 京都"]),
    ("I love 🍕 and 🍣!", ["I love 🍕"]),
    ("İstanbul KELVIN Straße", ["istanbul kelvin strasse"]),
    ("naïve résumé", ["naive resume"]),
    ("a\u001cb\u001dc", ["a b c"]),
    ("non\u00a0breaking\u3000space", ["non breaking space"]),
    ("zero\u200bwidth", ["zero width"]),
    ("the—cat", ["cat"]),
    ("under_score snake_case", ["under score snake case"]),
    ("UPPER lower MiXeD", ["upper LOWER mixed"]),
    ("42", ["42", "forty-two", "forty two"]),
    ("Paris", ["London", "Paris, France", "paris"]),
    ("the answer is B", ["B", "b", "answer B"]),
    ("police killed the gunman", ["the gunman police killed", "gunman killed"]),
    ("a b c d e f g h", ["h g f e d c b a", "a c e g", "b d f h"]),
    ("It is a guide to action which ensures that the military always obeys the commands of the party.",
     ["It is a guide to action that ensures that the military will forever heed Party commands.",
      "It is the guiding principle which guarantees the military forces always being under the command of the Party.",
      "It is the practical guide for the army always to heed the directions of the party."]),
    ("word " * 30, ["word " * 10]),
    ("trailing space   ", ["trailing space"]),
    ("   leading space", ["leading space"]),
    ("e.g. i.e. U.S.A.", ["eg ie USA"]),
    ("$100 (50%) @home #tag", ["100 50 home tag"]),
    ("don't can't won't", ["do not cannot will not"]),
    ("3.5-4.0 ranges 10-20", ["3.5 - 4.0 ranges 10 - 20"]),
]

WORDS = (
    "the a an cat dog sat on mat red blue fox whale quick brown jumps over lazy model output "
    "answer question paris london 42 7 3.14 1,000 2024 café naïve crème ελληνικά σοφία 東京 "
    "大阪 🍕 ok yes no maybe Hello World ALPHA beta Gamma e.g. U.S. don't it's x-ray co-op"
).split()
PUNCT = [".", ",", "!", "?", ";", ":", "-", "(", ")", '"', "'", "…", "—", "&amp;", "/"]


def random_sentence(rng, length):
    parts = []
    for _ in range(length):
        word = rng.choice(WORDS)
        if rng.random() < 0.2:
            word = word.upper() if rng.random() < 0.5 else word.capitalize()
        parts.append(word)
        if rng.random() < 0.15:
            parts.append(rng.choice(PUNCT))
    glue = rng.choice([" ", " ", " ", "  ", "\n", "\t"])
    return glue.join(parts)


def perturb(rng, sentence):
    tokens = sentence.split()
    for _ in range(rng.randint(0, 3)):
        action = rng.random()
        if tokens and action < 0.3:
            del tokens[rng.randrange(len(tokens))]
        elif action < 0.6:
            tokens.insert(rng.randint(0, len(tokens)), rng.choice(WORDS))
        elif tokens:
            i = rng.randrange(len(tokens))
            tokens.insert(i, tokens[i])
    return " ".join(tokens)


def random_pairs(rng, count):
    for _ in range(count):
        base = random_sentence(rng, rng.randint(0, 14))
        output = perturb(rng, base) if rng.random() < 0.7 else random_sentence(rng, rng.randint(0, 10))
        targets = [base] + [perturb(rng, base) for _ in range(rng.randint(0, 2))]
        rng.shuffle(targets)
        yield output, targets


def main():
    rng = random.Random(20240604)
    pairs = EDGES + list(random_pairs(rng, 220))
    for output, targets in pairs:
        record = {"output": output, "targets": targets}
        for name, metric in METRICS.items():
            record[name] = max(metric(output, target) for target in targets)
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
