#!/usr/bin/env python3
"""Writes N deterministic, varied English sentences of 5-60 words, one per line.

Usage: python3 bench/embedding_sentences.py N OUT_FILE [--seed S]

Standard library only; the same N and seed give the same file on any Python 3. Sentence
lengths are uniform in 5..60 words; words come from a fixed vocabulary (common words, some
long and rare ones, numbers, names), with commas, capitals and a final . ? or !.
"""

import argparse
import random

SUBJECTS = ["the server", "a small model", "our team", "the new library", "every request",
            "the scheduler", "a curious student", "the old lighthouse keeper", "this benchmark",
            "the city council", "my neighbour", "the research group", "a tired engineer",
            "the weather service", "the orchestra", "each worker thread", "the database"]
VERBS = ["handles", "measures", "builds", "describes", "ignores", "transforms", "remembers",
         "compares", "reads", "sends", "explains", "discovers", "repairs", "predicts",
         "summarizes", "encodes", "schedules", "visits", "questions", "celebrates"]
OBJECTS = ["the results", "a long document", "thousands of sentences", "the quarterly report",
           "an unexpected error", "the morning train", "a quiet harbour", "the embedding vectors",
           "several hundred photographs", "the recipe for bread", "a broken bicycle",
           "the history of mathematics", "a cup of coffee", "the latency distribution",
           "the garden behind the house", "a list of questions", "the mountain trail"]
ADVERBS = ["quickly", "carefully", "rarely", "twice", "again", "quietly", "eventually",
           "reluctantly", "precisely", "almost", "surprisingly", "every morning", "at night"]
CONNECTORS = ["because", "although", "while", "after", "before", "so that", "unless", "and",
              "but", "whereas", "since", "until"]
FILLER = ("about with from into during including without under around among through "
          "photosynthesis quantization throughput tokenizer neighbourhood electricity "
          "university Amsterdam Tuesday October Einstein Shakespeare algorithm vocabulary "
          "seventeen 42 3.5 2024 1,000 percent kilometers minutes yesterday tomorrow "
          "beautiful complicated ordinary remarkable distributed asynchronous green red "
          "river forest ocean window kitchen library station engine signal memory").split()


def clause(rng):
    parts = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)]
    if rng.random() < 0.5:
        parts.insert(1 if rng.random() < 0.5 else 3, rng.choice(ADVERBS))
    return " ".join(parts).split()


def sentence(rng):
    n = rng.randint(5, 60)
    words = clause(rng)
    while len(words) < n:
        r = rng.random()
        if r < 0.45:
            words += rng.choice(CONNECTORS).split() + clause(rng)
        elif r < 0.6:
            words[-1] += ","
            words += rng.sample(FILLER, 2)
        else:
            words.append(rng.choice(FILLER))
    words = words[:n]
    words[-1] = words[-1].rstrip(",") + rng.choice([".", ".", ".", "?", "!"])
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        for _ in range(args.n):
            f.write(sentence(rng) + "\n")


if __name__ == "__main__":
    main()
