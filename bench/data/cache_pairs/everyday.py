#!/usr/bin/env python3
"""Deterministic generator for the "everyday" semantic-cache evaluation set.

Writes everyday.jsonl next to this file (Python 3 standard library only,
fixed random seed, so every run produces the same bytes).

Line format:
  {"kind": ..., "a": cached prompt, "b": later prompt, "hit": bool}
  plus "context_a"/"context_b" (earlier chat messages) for multi-turn kinds.

How the set is built
--------------------
* SCENARIOS: hand-written everyday requests (household, parenting, pets,
  cooking, money, travel, fitness, gardening, cars, homework, office
  software, relationships, small business, health, shopping).  Each scenario
  has a few equivalent base phrasings B (same question, same constraints),
  and hand-crafted variants:
    V  wordier / terser restatements that add no constraint   -> verbosity
    S  (base index, word, true synonym in context)            -> synonym
    R  (base index, meaning-preserving reordering)            -> reorder
    role/scope/neg/nocue/num/ent/ant/temp/cond/fmt            -> must-not-hit
  A must-not-hit variant is a rewrite of base 0 with exactly one meaning
  change; it is paired with base 0 and with another base phrasing.
* typo pairs come from a phone-keyboard typo model (adjacent-key hits,
  dropped/doubled/swapped letters, missing apostrophes, casing, punctuation,
  merged words).  Digits and negation words are never touched.
* format pairs are hand-written, topped up by appending an explicit output
  format / length / tone / language instruction to a base phrasing.
* THREADS: multi-turn conversations.  Each thread has alternative earlier
  contexts that give the same follow-up message different meanings
  (context_changed) and several paraphrases of the follow-up under one
  identical context (context_same).
Per kind, candidates are picked round-robin over scenarios so that no single
scenario or template dominates a kind; pairs are de-duplicated and a random
subset is presented with a and b swapped.
"""
import json
import os
import random
import re

SEED = 20250611
TARGET = 150

SCENARIOS = []
THREADS = []

NEGKIND = {
    "role": "role_swap", "scope": "scope", "neg": "negation",
    "nocue": "negation_nocue", "num": "number", "ent": "entity",
    "ant": "antonym", "temp": "temporal", "cond": "conditional",
    "fmt": "format",
}


def sc(topic, B, V=(), S=(), R=(), autofmt="all", **neg):
    for k in neg:
        assert k in NEGKIND, k
    SCENARIOS.append(dict(topic=topic, B=list(B), V=list(V), S=list(S),
                          R=list(R), autofmt=autofmt, neg=neg))


def U(t):
    return {"role": "user", "content": t}


def A(t):
    return {"role": "assistant", "content": t}


def thread(ctxs, follow):
    THREADS.append(dict(ctxs=ctxs, follow=list(follow)))


# ---------------------------------------------------------------------------
# Typo model (phone keyboard)
# ---------------------------------------------------------------------------
NEIGH = {
    "q": "wa", "w": "qeas", "e": "wrsd", "r": "etdf", "t": "ryfg",
    "y": "tugh", "u": "yihj", "i": "uojk", "o": "ipkl", "p": "ol",
    "a": "qwsz", "s": "awedxz", "d": "serfcx", "f": "drtgvc", "g": "ftyhbv",
    "h": "gyujnb", "j": "huikmn", "k": "jiolm", "l": "kop", "z": "asx",
    "x": "zsdc", "c": "xdfv", "v": "cfgb", "b": "vghn", "n": "bhjm",
    "m": "njk",
}
# never touched by the typo model: negations and quantity/time words whose
# corruption could plausibly read as a different word
PROTECT = {
    "not", "no", "never", "without", "dont", "don't", "doesn't", "doesnt",
    "can't", "cant", "won't", "wont", "isn't", "isnt", "aren't", "haven't",
    "hasn't", "didn't", "shouldn't", "wasn't", "nothing", "none", "nor",
    "before", "after", "more", "less", "most", "least", "some", "every",
    "each", "once", "twice", "first", "last", "next", "over", "under",
    "than", "then", "from", "into", "onto", "what", "when", "where", "which",
}
WORD_RE = re.compile(r"[A-Za-z']+")


_VOCAB = set()
# a few real words that single-key slips on our prompts would produce
EXTRA_WORDS = {"bets", "latte", "cots", "wins", "clods", "bail", "bike", "hat", "bat",
               "cat", "car", "bad", "bed", "sat", "say", "seed", "pay", "stay",
               "wine", "fine", "dine", "mine", "nine", "line", "sore", "store", "shore",
               "form", "from", "reason", "season", "wear", "tear", "fear", "near",
               "bay", "ride", "rid", "lid", "ties", "tired", "tried", "diary", "dairy"}


def vocab():
    """Every word used anywhere in the data set; typos must not produce one."""
    if not _VOCAB:
        texts = []
        for s in SCENARIOS:
            texts += s["B"] + s["V"] + [t for _, t in s["R"]]
            texts += [n for _, _, n in s["S"]]
            for lst in s["neg"].values():
                texts += lst
        for t in THREADS:
            texts += t["follow"]
            for c in t["ctxs"]:
                texts += [m["content"] for m in c]
        for t in texts:
            _VOCAB.update(w.lower() for w in WORD_RE.findall(t))
        _VOCAB.update(EXTRA_WORDS)
    return _VOCAB


def _word_typo(w, rng):
    out = _word_typo_raw(w, rng)
    if out != w and out.lower() in vocab():
        return w
    return out


def _word_typo_raw(w, rng):
    letters = list(w)
    n = len(letters)
    op = rng.choice(["sub", "sub", "sub", "drop", "dup", "swap"])
    pos = [i for i in range(1, n) if letters[i].isalpha()]
    if not pos:
        return w
    i = rng.choice(pos)
    if op == "sub":
        c = letters[i]
        nb = NEIGH.get(c.lower())
        if not nb:
            return w
        r = rng.choice(nb)
        letters[i] = r.upper() if c.isupper() else r
    elif op == "drop":
        del letters[i]
    elif op == "dup":
        letters.insert(i, letters[i])
    elif op == "swap":
        if i >= n - 1 or not letters[i + 1].isalpha() or letters[i] == letters[i + 1]:
            return w
        letters[i], letters[i + 1] = letters[i + 1], letters[i]
    return "".join(letters)


def make_typo(text, rng):
    """Realistic phone typing noise; digits and protected words stay intact."""
    for _attempt in range(50):
        t = text
        # word-level slips
        spans = [m for m in WORD_RE.finditer(t)
                 if len(m.group()) >= 4 and m.group().lower() not in PROTECT
                 and "'" not in m.group()]
        k = rng.choice([1, 1, 2, 2, 3])
        chosen = rng.sample(spans, min(k, len(spans)))
        for m in sorted(chosen, key=lambda m: -m.start()):
            t = t[:m.start()] + _word_typo(m.group(), rng) + t[m.end():]
        # sentence-level habits
        if rng.random() < 0.35:
            t = t.lower()
        if rng.random() < 0.4:
            t = t.rstrip("?.!")
        if rng.random() < 0.5:
            t = re.sub(r"\b(\w+)'(s|t|m|re|ll|ve|d)\b", r"\1\2", t)
        if rng.random() < 0.3:
            t = re.sub(r"\bI\b", "i", t)
        if rng.random() < 0.15:
            t = t.replace(",", "", 1)
        if rng.random() < 0.2:
            # space bar missed between two short-ish words
            ws = [m for m in re.finditer(r"[a-z]{2,6} [a-z]{2,6}", t)
                  if not set(m.group().split()) & PROTECT]
            if ws:
                m = rng.choice(ws)
                t = t[:m.start()] + m.group().replace(" ", "", 1) + t[m.end():]
        if t != text and re.findall(r"\d+", t) == re.findall(r"\d+", text):
            return t
    return None


# ---------------------------------------------------------------------------
# Output-format instructions for topping up the format kind
# ---------------------------------------------------------------------------
FMT_LANG_SUFFIX = [
    "answer in Spanish please", "reply in French", "can you answer in German?",
    "respond in Portuguese", "in Italian please", "please write the answer in Dutch",
    "answer in Japanese", "reply in Polish please",
]
FMT_LANG_PREFIX = ["In Spanish: ", "Answer in French - ", "en español por favor: ", "Auf Deutsch bitte: "]
FMT_OTHER_SUFFIX = [
    "explain it like I'm 5", "in one sentence", "keep it under 20 words",
    "put the answer in a table", "write it as a short poem",
    "answer like a pirate would", "use lots of emojis", "as a numbered list of exactly 5 steps",
    "give me a really detailed answer, at least 800 words", "tl;dr version only",
    "write it as a tweet", "as a haiku",
    "in a funny sarcastic tone", "just one line please", "format it as an FAQ with 3 questions",
    "as a checklist with checkboxes", "answer in all caps", "answer in exactly three words",
    "make it a limerick", "as a text message I could forward to my mom",
]
FMT_OTHER_PREFIX = ["ELI5: ", "One sentence only: ", "Emoji-only answer: ", "tl;dr answer: ",
                    "Quick 10-word answer: ", "In a markdown table: "]


def add_format(base, rng, lang_only):
    if lang_only or rng.random() < 0.3:
        if rng.random() < 0.3:
            p = rng.choice(FMT_LANG_PREFIX)
            return p + base
        ins = rng.choice(FMT_LANG_SUFFIX)
    else:
        if rng.random() < 0.3:
            p = rng.choice(FMT_OTHER_PREFIX)
            return p + base
        ins = rng.choice(FMT_OTHER_SUFFIX)
    if base[-1] in "?.!":
        return base + " " + ins
    return base + rng.choice([", ", " - ", ". "]) + ins


def syn_replace(text, old, new):
    m = re.search(r"(?<![A-Za-z])" + re.escape(old) + r"(?![A-Za-z])", text, re.I)
    assert m, (text, old)
    rep = new
    if m.group()[0].isupper() and not new[0].isupper():
        rep = new[0].upper() + new[1:]
    return text[:m.start()] + rep + text[m.end():]


# ---------------------------------------------------------------------------
# Pair assembly
# ---------------------------------------------------------------------------
KIND_ORDER = ["paraphrase", "reorder", "verbosity", "synonym", "typo", "context_same",
              "role_swap", "scope", "negation", "negation_nocue", "number", "entity",
              "antonym", "temporal", "conditional", "format", "context_changed"]
HIT_KINDS = {"paraphrase", "reorder", "verbosity", "synonym", "typo", "context_same"}


def collect(rng):
    cands = {k: [] for k in KIND_ORDER}

    def add(kind, group, a, b, prio=0, ca=None, cb=None):
        cands[kind].append(dict(group=group, prio=prio, a=a, b=b, ca=ca, cb=cb))

    for si, s in enumerate(SCENARIOS):
        B = s["B"]
        g = "s%d" % si
        for i in range(len(B)):
            for j in range(i + 1, len(B)):
                add("paraphrase", g, B[i], B[j], prio=0 if j == i + 1 else 1)
        for v in s["V"]:
            lp = -1 if len(v.split()) >= 35 else 0
            add("verbosity", g, B[0], v, prio=lp)
            add("verbosity", g, B[rng.randrange(1, len(B))], v, prio=lp + 1)
        for (i, old, new) in s["S"]:
            add("synonym", g, B[i], syn_replace(B[i], old, new))
        for (i, t) in s["R"]:
            add("reorder", g, B[i], t)
        for i, bb in enumerate(B):
            tb = make_typo(bb, rng)
            if tb is not None:
                add("typo", g, bb, tb, prio=0 if i < 2 else 1)
        for key, lst in s["neg"].items():
            kind = NEGKIND[key]
            for t in lst:
                add(kind, g, B[0], t)
                add(kind, g, B[rng.randrange(1, len(B))], t, prio=1)
        if s["autofmt"] != "none":
            for _ in range(2):
                bb = B[rng.randrange(len(B))]
                add("format", g, bb, add_format(bb, rng, s["autofmt"] == "lang"), prio=2)

    for ti, t in enumerate(THREADS):
        g = "t%d" % ti
        ctxs, fol = t["ctxs"], t["follow"]
        for ci, c in enumerate(ctxs):
            for i in range(len(fol)):
                for j in range(i + 1, len(fol)):
                    add("context_same", g, fol[i], fol[j], prio=0 if ci == 0 else 1, ca=c, cb=c)
        for fi, f in enumerate(fol):
            for i in range(len(ctxs)):
                for j in range(i + 1, len(ctxs)):
                    add("context_changed", g, f, f, prio=0 if fi == 0 else 1, ca=ctxs[i], cb=ctxs[j])
    return cands


def select(cands, rng):
    out = []
    for kind in KIND_ORDER:
        groups = {}
        for c in cands[kind]:
            groups.setdefault(c["group"], []).append(c)
        keys = sorted(groups)
        rng.shuffle(keys)
        for k in keys:
            lst = groups[k]
            rng.shuffle(lst)
            lst.sort(key=lambda c: c["prio"])
        picked, seen = [], set()
        rnd = 0
        while len(picked) < TARGET:
            # one candidate per scenario per round; within a round, lower prio first
            layer = [groups[k][rnd] for k in keys if rnd < len(groups[k])]
            if not layer:
                break
            layer.sort(key=lambda c: c["prio"])  # stable: keeps shuffled group order
            for c in layer:
                key = (c["a"].lower().strip(), c["b"].lower().strip(),
                       json.dumps(c["ca"]), json.dumps(c["cb"]))
                rkey = (key[1], key[0], key[3], key[2])
                if c["a"] == c["b"] and c["ca"] == c["cb"]:
                    continue
                if key in seen or rkey in seen:
                    continue
                seen.add(key)
                picked.append(c)
                if len(picked) >= TARGET:
                    break
            rnd += 1
        rng.shuffle(picked)
        for c in picked:
            a, b, ca, cb = c["a"], c["b"], c["ca"], c["cb"]
            if rng.random() < 0.3:
                a, b, ca, cb = b, a, cb, ca
            rec = {"kind": kind, "a": a, "b": b, "hit": kind in HIT_KINDS}
            if ca is not None:
                rec["context_a"] = ca
                rec["context_b"] = cb
            out.append(rec)
    return out


def main():
    rng = random.Random(SEED)
    cands = collect(rng)
    recs = select(cands, rng)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "everyday.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = {}
    for r in recs:
        counts[r["kind"]] = counts.get(r["kind"], 0) + 1
    for k in KIND_ORDER:
        print("%-16s %4d  (candidates %d)" % (k, counts.get(k, 0), len(cands[k])))
    print("total", len(recs), "->", path)


# ---------------------------------------------------------------------------
# Scenarios: household
# ---------------------------------------------------------------------------
sc("household",
   B=["how do i get rid of fruit flies in my kitchen",
      "What's the best way to get rid of fruit flies in the kitchen?",
      "fruit flies all over my kitchen. how do I get rid of them?",
      "Any tips for getting rid of fruit flies in my kitchen?"],
   V=["hey so I've got fruit flies buzzing around my kitchen and it's driving me nuts. what's the best way to get rid of them? thanks in advance",
      "kitchen fruit flies - how to get rid of them?"],
   S=[(0, "get rid of", "eliminate"), (3, "tips", "advice")],
   R=[(0, "in my kitchen, how do i get rid of fruit flies"),
      (2, "how do I get rid of the fruit flies all over my kitchen?")],
   ent=["how do i get rid of drain flies in my kitchen",
        "how do i get rid of ants in my kitchen"],
   neg=["how do i get rid of fruit flies in my kitchen without using vinegar"],
   cond=["how do i get rid of fruit flies in my kitchen if I can't use any sprays because I have a pet parrot"],
   fmt=["give me 3 ways to get rid of fruit flies in my kitchen, one line each, nothing else"])

sc("household",
   B=["how do I get a red wine stain out of a beige carpet?",
      "red wine spilled on my beige carpet, how do i get the stain out",
      "What's the best way to remove a red wine stain from beige carpet?",
      "any tricks for getting a red wine stain out of beige carpet?"],
   V=["ugh, my friend knocked over her glass at dinner and now there's a red wine stain on my beige carpet. how do I get it out??",
      "red wine stain on beige carpet, how to remove"],
   S=[(1, "spilled", "spilt"), (3, "tricks", "tips"), (2, "remove", "get rid of")],
   R=[(1, "how do i get the stain out? red wine spilled on my beige carpet"),
      (0, "how do I get a red wine stain out of a carpet that's beige?")],
   ent=["how do I get a coffee stain out of a beige carpet?",
        "how do I get a red wine stain out of a white linen shirt?"],
   temp=["how do I get a red wine stain out of a beige carpet? it happened last year and has been there ever since"],
   neg=["how do I get a red wine stain out of a beige carpet without using any chemicals?"],
   cond=["how do I get a red wine stain out of a beige carpet if all I have at home is salt and club soda?"],
   fmt=["in two sentences max, how do I get a red wine stain out of a beige carpet?"])

sc("household",
   B=["how do I stop my front load washer from smelling like mildew?",
      "my front-loading washing machine smells musty like mildew, how do i fix that",
      "What can I do about a mildew smell in my front load washer?",
      "front loader washer smells like mildew - how do I get rid of the smell?"],
   V=["so our front load washer has started smelling kind of musty, like mildew, every time I open the door. what can I do to stop it smelling like that?",
      "front load washer mildew smell fix?"],
   S=[(1, "fix", "solve"), (0, "washer", "washing machine")],
   R=[(1, "how do i fix that? my front-loading washing machine smells musty like mildew"),
      (2, "What can I do about my front load washer's mildew smell?")],
   ent=["how do I stop my top load washer from smelling like mildew?",
        "how do I stop my dishwasher from smelling like mildew?"],
   cond=["how do I stop my front load washer from smelling like mildew if I only ever wash on cold?"],
   temp=["how do I keep my new front load washer from ever starting to smell like mildew?"])

sc("household",
   B=["my bathroom sink is draining really slowly, how can I unclog it without calling a plumber?",
      "How do I unclog a slow bathroom sink drain myself, without a plumber?",
      "bathroom sink drains super slow. how to unclog it myself so I don't have to call a plumber",
      "what's a DIY way to unclog a slow-draining bathroom sink instead of paying a plumber?"],
   V=["Hi! The sink in our bathroom has been draining really slowly for a few days now and I'd rather not get a plumber out. How can I unclog it myself?",
      "slow bathroom sink, DIY unclog?"],
   S=[(1, "unclog", "unblock"), (0, "really", "very")],
   R=[(0, "how can I unclog my bathroom sink without calling a plumber? it's draining really slowly"),
      (1, "How do I unclog a slow bathroom sink drain without a plumber, myself?")],
   ent=["my kitchen sink is draining really slowly, how can I unclog it without calling a plumber?",
        "my bathtub is draining really slowly, how can I unclog it without calling a plumber?"],
   scope=["every sink and drain in my house is draining really slowly, how can I unclog them without calling a plumber?"],
   cond=["my bathroom sink is draining really slowly, how can I unclog it without calling a plumber if the house has old galvanized pipes?"],
   temp=["my bathroom sink was draining really slowly last week but it's fine now, do I still need to unclog it?"])

sc("household",
   B=["how do I clean black mold off my shower grout?",
      "what's the best way to get black mold out of the grout in my shower",
      "there's black mold on the grout in my shower, how do i clean it off?",
      "Best method to remove black mold from shower grout?"],
   V=["I just noticed little black mold spots all along the grout lines in our shower and it's kind of gross. how do I clean it off?",
      "shower grout black mold, how to clean?"],
   S=[(3, "remove", "get rid of"), (1, "best", "most effective")],
   R=[(2, "how do i clean off the black mold on the grout in my shower?"),
      (0, "how do I clean my shower grout of black mold?")],
   ent=["how do I clean black mold off my shower caulk?",
        "how do I clean black mold off my bedroom wall?"],
   neg=["how do I clean black mold off my shower grout without bleach?"],
   cond=["how do I clean black mold off my shower grout if I'm pregnant?"],
   temp=["how do I keep black mold from coming back on my shower grout after I've cleaned it?"],
   fmt=["list the steps to clean black mold off shower grout as a numbered checklist, no explanations"])

sc("household",
   B=["can I put my cast iron skillet in the dishwasher?",
      "Is it ok to wash a cast iron skillet in the dishwasher?",
      "cast iron skillet in the dishwasher - is that ok?",
      "is it safe to run my cast iron skillet through the dishwasher"],
   V=["quick question, my roommate keeps wanting to throw my cast iron skillet in the dishwasher with everything else. is that actually ok to do?",
      "cast iron skillet dishwasher ok?"],
   S=[(1, "wash", "clean"), (0, "put", "place")],
   R=[(0, "my cast iron skillet, can I put it in the dishwasher?"),
      (2, "is that ok - cast iron skillet in the dishwasher?")],
   ent=["can I put my stainless steel skillet in the dishwasher?",
        "can I put my nonstick pan in the dishwasher?",
        "can I put my cast iron skillet in the oven?"],
   temp=["I already put my cast iron skillet through the dishwasher, is it ruined?"],
   fmt=["yes or no only, no explanation: can I put my cast iron skillet in the dishwasher?"])

sc("household",
   B=["what temperature should I set my thermostat to at night in winter to save money?",
      "In winter, what's a good thermostat setting for nighttime if I want to save on heating?",
      "best thermostat temp for winter nights to save money on heating?",
      "to cut my heating bill, what should I set the thermostat to overnight in the winter"],
   V=["my heating bill has been crazy high this winter, so I'm trying to save some money. what temperature should I set my thermostat to at night?",
      "winter night thermostat temp to save $?"],
   S=[(2, "best", "ideal"), (3, "cut", "reduce")],
   R=[(0, "to save money in winter, what temperature should I set my thermostat to at night?"),
      (3, "what should I set the thermostat to overnight in the winter to cut my heating bill")],
   temp=["what temperature should I set my thermostat to at night in summer to save money?",
         "what temperature should I set my thermostat to during the day in winter to save money?"],
   cond=["what temperature should I set my thermostat to at night in winter to save money if I have a newborn sleeping in the house?"],
   scope=["what temperature should I set my thermostat to in winter to save money while I'm away for a whole week?"],
   fmt=["answer with just a number in Fahrenheit: what should I set my thermostat to at night in winter to save money?"])

sc("household",
   B=["how do I clean my oven with baking soda and vinegar?",
      "What's the method for cleaning an oven using baking soda and vinegar?",
      "cleaning the oven with baking soda + vinegar, how do i do it",
      "can you walk me through cleaning my oven with baking soda and vinegar"],
   V=["I'd like to avoid those harsh oven cleaner sprays this time, so how exactly do I clean my oven using baking soda and vinegar?",
      "oven cleaning w/ baking soda & vinegar - steps?"],
   S=[(1, "method", "process"), (3, "walk me through", "guide me through")],
   R=[(0, "with baking soda and vinegar, how do I clean my oven?"),
      (1, "What's the method for cleaning an oven using vinegar and baking soda?")],
   ent=["how do I clean my microwave with baking soda and vinegar?",
        "how do I clean my oven with dish soap and lemon juice?"],
   cond=["how do I clean my oven with baking soda and vinegar if it has a self-cleaning enamel coating?"],
   fmt=["explain how to clean an oven with baking soda and vinegar in under 25 words"])

sc("household",
   B=["my neighbor's tree fell on my car during the storm last night. whose insurance pays for the damage?",
      "A tree from my neighbor's yard fell on my car in last night's storm - whose insurance covers it?",
      "neighbors tree fell on my car in the storm last night, whose insurance pays?",
      "Whose insurance pays for the damage when my neighbor's tree falls on my car during a storm, like it did last night?"],
   V=["what a night. the big oak in my neighbor's yard came down in the storm and landed right on my car. whose insurance is supposed to pay for the damage?",
      "neighbor's tree hit my car in storm, whose insurance?"],
   S=[(0, "damage", "repairs"), (1, "covers", "pays for")],
   R=[(0, "whose insurance pays for the damage? my neighbor's tree fell on my car during the storm last night.")],
   role=["my tree fell on my neighbor's car during the storm last night. whose insurance pays for the damage?",
         "a tree from my yard fell on my neighbor's car in last night's storm, whose insurance covers it?"],
   cond=["my neighbor's tree fell on my car during the storm last night, and I'd told him months ago the tree was dead. whose insurance pays for the damage?"],
   ent=["my neighbor's tree fell on my house during the storm last night. whose insurance pays for the damage?"])

sc("household",
   B=["how much paint do I need for a 12x14 bedroom with 8 foot ceilings?",
      "How many gallons of paint do I need for a 12 by 14 foot bedroom with 8 ft ceilings?",
      "12x14 bedroom, 8ft ceilings - how much paint?",
      "What quantity of paint should I buy for a 12x14 bedroom with eight-foot ceilings?"],
   V=["we're finally repainting our bedroom this weekend. it's 12x14 and the ceilings are 8 feet. how much paint do I need to buy?",
      "paint needed: 12x14 room, 8ft ceiling?"],
   S=[(3, "buy", "purchase"), (0, "need", "require")],
   R=[(0, "for a 12x14 bedroom with 8 foot ceilings, how much paint do I need?"),
      (2, "8ft ceilings, 12x14 bedroom - how much paint?")],
   num=["how much paint do I need for a 12x14 bedroom with 10 foot ceilings?",
        "how much paint do I need for a 20x24 bedroom with 8 foot ceilings?",
        "how much paint do I need for a 12x14 meter hall with 8 meter ceilings?"],
   ent=["how much wallpaper do I need for a 12x14 bedroom with 8 foot ceilings?"],
   scope=["how much paint do I need for just one accent wall in a 12x14 bedroom with 8 foot ceilings?"],
   cond=["how much paint do I need for a 12x14 bedroom with 8 foot ceilings if I'm covering dark red walls with white?"])

sc("household",
   B=["how do I hang a heavy mirror on drywall where there's no stud?",
      "What's the best way to hang a heavy mirror on drywall with no stud behind it?",
      "hanging a heavy mirror on drywall, no stud there - how?",
      "How can I mount a heavy mirror on drywall if there's no stud where I want it?"],
   V=["I bought a really heavy mirror for the hallway and of course there's no stud where I want to hang it. how do I hang it on just the drywall?",
      "heavy mirror, drywall, no stud - how to hang?"],
   S=[(3, "mount", "hang"), (0, "heavy", "hefty")],
   R=[(0, "where there's no stud, how do I hang a heavy mirror on drywall?")],
   neg=["how do I hang a heavy mirror on drywall right into a stud?"],
   ant=["how do I hang a lightweight mirror on drywall where there's no stud?"],
   ent=["how do I hang a heavy mirror on a brick wall?",
        "how do I hang a heavy mirror on plaster and lath walls where there's no stud?",
        "how do I hang a heavy TV on drywall where there's no stud?"],
   cond=["how do I hang a heavy mirror on drywall where there's no stud, if I'm renting and can't leave big holes?"])

sc("household",
   B=["can I recycle greasy pizza boxes?",
      "Are greasy pizza boxes recyclable?",
      "greasy pizza box - recycle or trash?",
      "Do greasy pizza boxes go in the recycling bin?"],
   V=["we order pizza way too often and the boxes pile up. can the greasy pizza boxes go in the recycling?",
      "greasy pizza box recyclable?"],
   S=[(2, "trash", "garbage"), (3, "bin", "container")],
   R=[(2, "greasy pizza box - trash or recycle?")],
   ant=["can I recycle clean pizza boxes?"],
   ent=["can I compost greasy pizza boxes?",
        "can I recycle greasy paper plates?"],
   cond=["can I recycle greasy pizza boxes if I tear off the greasy bottom half first?"],
   fmt=["one word answer: can I recycle greasy pizza boxes?"])

sc("household",
   B=["how often should I replace the air filter in my furnace?",
      "How frequently do I need to change my furnace air filter?",
      "furnace air filter - how often do i swap it out?",
      "What's the recommended interval for replacing a furnace filter?"],
   V=["I just realized I have no idea when I last changed the filter in our furnace. how often is it supposed to be replaced?",
      "furnace filter replacement frequency?"],
   S=[(0, "replace", "change"), (1, "frequently", "often")],
   R=[(0, "in my furnace, how often should I replace the air filter?")],
   cond=["how often should I replace the air filter in my furnace if I have two dogs and a cat that shed a lot?"],
   ent=["how often should I replace the filter in my refrigerator's water dispenser?",
        "how often should I replace the air filter in my car?"],
   temp=["how often should I replace the air filter in my furnace during summer when it's barely running?"])

sc("household",
   B=["is it safe to mix bleach and vinegar for cleaning?",
      "Can I combine bleach with vinegar to clean?",
      "bleach + vinegar for cleaning, safe or not?",
      "Is mixing vinegar and bleach together okay for cleaning the bathroom?"],
   V=["my grandma swears by her cleaning tricks and told me to mix bleach and vinegar to clean. is that actually safe?",
      "bleach & vinegar mix safe?"],
   S=[(1, "combine", "mix")],
   R=[(1, "Can I combine vinegar with bleach to clean?"),
      (0, "for cleaning, is it safe to mix bleach and vinegar?")],
   ent=["is it safe to mix baking soda and vinegar for cleaning?",
        "is it safe to mix bleach and dish soap for cleaning?"],
   temp=["I mixed bleach and vinegar while cleaning an hour ago and I have a headache, what should I do?"])

# ---------------------------------------------------------------------------
# parenting
# ---------------------------------------------------------------------------
sc("parenting",
   B=["my 4 year old has a fever of 38.5, should I give her ibuprofen or just let it run?",
      "My 4-year-old daughter's temperature is 38.5. Should I give her ibuprofen or let the fever run its course?",
      "4 yr old girl with a 38.5 fever - ibuprofen or just let the fever run?",
      "should i give ibuprofen to my 4 year old girl who has a 38.5 fever, or let it run?"],
   V=["hi, sorry if this is a silly question but my little girl is 4 and she has a fever of 38.5 right now. would you give her ibuprofen or just let the fever run its course? thanks",
      "4yo girl, fever 38.5: ibuprofen or let it run?"],
   S=[(0, "just", "simply"), (3, "give ibuprofen to", "administer ibuprofen to")],
   R=[(0, "should I give her ibuprofen or just let it run? my 4 year old has a fever of 38.5"),
      (1, "Should I let the fever run its course or give her ibuprofen? My 4-year-old daughter's temperature is 38.5.")],
   num=["my 4 year old has a fever of 40.5, should I give her ibuprofen or just let it run?",
        "my 4 month old has a fever of 38.5, should I give her ibuprofen or just let it run?"],
   ent=["my 4 year old has a fever of 38.5, should I give her aspirin or just let it run?"],
   cond=["my 4 year old has a fever of 38.5 and a stiff neck, should I give her ibuprofen or just let it run?"],
   scope=["my 4 year old has had a fever of 38.5 for a whole week now, should I give her ibuprofen or just let it run?"],
   temp=["my 4 year old had a fever of 38.5 yesterday but it's gone this morning, should I still give her ibuprofen?"])

sc("parenting",
   B=["my 2 year old keeps fighting her afternoon nap. is it time to drop it?",
      "My two-year-old keeps fighting her afternoon nap - should I drop the nap?",
      "2yo keeps resisting her afternoon nap, time to drop it?",
      "my daughter is 2 and keeps fighting her afternoon nap, should we drop it?"],
   V=["lately it's a battle every afternoon to get my 2 year old daughter to nap, she just fights it and fights it. is it time to drop the nap altogether?",
      "2yo fights afternoon nap - drop it?"],
   S=[(0, "keeps fighting", "keeps resisting"), (0, "drop it", "give it up")],
   R=[(0, "is it time to drop the afternoon nap? my 2 year old keeps fighting it."),
      (3, "should we drop my daughter's afternoon nap? she's 2 and keeps fighting it")],
   num=["my 4 year old keeps fighting her afternoon nap. is it time to drop it?",
        "my 13 month old keeps fighting her afternoon nap. is it time to drop it?"],
   temp=["my 2 year old keeps fighting her morning nap. is it time to drop it?"],
   scope=["my 2 year old fights her afternoon nap once in a while. is it time to drop it?"],
   cond=["my 2 year old keeps fighting her afternoon nap but she's a total meltdown by dinner without it. is it time to drop it?"],
   fmt=["in one sentence: is it time to drop the afternoon nap if my 2 year old keeps fighting it?"])

sc("parenting",
   B=["how much screen time is ok for a 6 year old on school days?",
      "What's a reasonable amount of screen time for a six-year-old on school days?",
      "screen time limit for my 6yo on school days?",
      "On school days, how much screen time should a 6 year old be allowed?"],
   V=["We're trying to set some rules at home. My son is 6 and I'm wondering how much screen time is reasonable for him on school days?",
      "6yo school-day screen time - how much?"],
   S=[(0, "ok", "acceptable"), (1, "reasonable", "sensible")],
   R=[(0, "on school days, how much screen time is ok for a 6 year old?"),
      (3, "How much screen time should a 6 year old be allowed on school days?")],
   num=["how much screen time is ok for a 16 year old on school days?",
        "how much screen time is ok for a 2 year old on weekdays?"],
   temp=["how much screen time is ok for a 6 year old during summer vacation?",
         "how much screen time is ok for a 6 year old on weekends?"],
   cond=["how much screen time is ok for a 6 year old on school days if it's all educational apps?"],
   scope=["how much total screen time is ok for a 6 year old over a whole school week?"])

sc("parenting",
   B=["my 3 year old only eats plain pasta and chicken nuggets. how do I get him to try vegetables?",
      "How can I get my 3-year-old son, who only eats plain pasta and chicken nuggets, to try vegetables?",
      "3 yo will only eat plain pasta + chicken nuggets, how to get him to try veggies",
      "my son is 3 and won't eat anything except plain pasta and chicken nuggets. any way to get him to try vegetables?"],
   V=["honestly at my wits' end here. my 3 year old boy will ONLY eat plain pasta and chicken nuggets, nothing else, every single meal. how do I get him to try some vegetables?",
      "3yo eats only pasta+nuggets, how to get him to try veg?"],
   S=[(1, "vegetables", "veggies"), (3, "any way", "is there a way")],
   R=[(0, "how do I get my 3 year old to try vegetables? he only eats plain pasta and chicken nuggets."),
      (2, "how to get him to try veggies? my 3 yo will only eat plain pasta + chicken nuggets")],
   ent=["my 3 year old only eats plain pasta and chicken nuggets. how do I get him to try fruit?",
        "my 3 year old only eats plain pasta and chicken nuggets. how do I get him to drink milk?"],
   num=["my 13 year old only eats plain pasta and chicken nuggets. how do I get him to try vegetables?"],
   cond=["my 3 year old only eats plain pasta and chicken nuggets and his pediatrician says he's underweight. how do I get him to try vegetables?"],
   fmt=["give me a 7-day meal plan for my 3 year old who only eats plain pasta and chicken nuggets, sneaking in vegetables"])

sc("parenting",
   B=["my 14 year old keeps lying to me about where she goes after school. how should I handle it?",
      "How do I handle my 14-year-old daughter lying to me about where she goes after school?",
      "14yo keeps lying about where she goes after school, how do i deal with this",
      "what's the right way to handle it when my 14 year old daughter keeps lying about where she is after school?"],
   V=["I found out my 14 year old daughter has been lying to me about where she goes after school, and it keeps happening. how should I handle this?",
      "14yo lying about after-school whereabouts, how to handle?"],
   S=[(0, "handle", "deal with"), (1, "handle", "address")],
   R=[(0, "how should I handle my 14 year old lying to me about where she goes after school? she keeps doing it.")],
   num=["my 17 year old keeps lying to me about where she goes after school. how should I handle it?"],
   scope=["my 14 year old lied to me once about where she went after school. how should I handle it?"],
   ent=["my 14 year old keeps lying to me about her grades. how should I handle it?"],
   fmt=["write a short script of what to say to my 14 year old who keeps lying about where she goes after school"])

sc("parenting",
   B=["my 5 year old keeps hitting his 2 year old sister. how do I get him to stop?",
      "How do I stop my 5-year-old son from hitting his 2-year-old sister?",
      "5yo keeps hitting his little sister (she's 2), how to make it stop",
      "What can I do about my five year old hitting his two year old sister all the time?"],
   V=["it's getting really stressful at home. my 5 year old boy keeps hitting his 2 year old sister whenever he gets frustrated with her. how do I get him to stop?",
      "5yo hits 2yo sister, how to stop it?"],
   S=[(0, "keeps hitting", "keeps striking")],
   R=[(0, "how do I get my 5 year old to stop hitting his 2 year old sister? he keeps doing it")],
   role=["my 2 year old keeps hitting her 5 year old brother. how do I get her to stop?",
         "my 5 year old keeps getting hit by his 2 year old sister, how do I get her to stop?"],
   ent=["my 5 year old keeps biting his 2 year old sister. how do I get him to stop?"],
   scope=["my 5 year old hit his 2 year old sister once today. how do I make sure it doesn't happen again?"])

sc("parenting",
   B=["my son got bitten by another kid at daycare today. what should I do?",
      "Another child bit my son at daycare today - what should I do?",
      "my boy was bitten by a kid at daycare today, what do i do",
      "What do I do now that my son got bit by another child at daycare today?"],
   V=["picked up my son from daycare and the teacher told me another kid bit him today. what should I be doing about it?",
      "son bitten at daycare today - next steps?"],
   S=[(1, "child", "kid")],
   R=[(0, "what should I do? my son got bitten by another kid at daycare today")],
   role=["my son bit another kid at daycare today. what should I do?",
         "my son bit a classmate at daycare today and the teacher called me, what do I do?"],
   cond=["my son got bitten by another kid at daycare today and it broke the skin. what should I do?"],
   scope=["my son has been bitten by other kids at daycare almost every day this month. what should I do?"])

sc("parenting",
   B=["my 4 month old used to sleep through the night but now wakes up every 2 hours. is that normal?",
      "Is it normal that my 4-month-old was sleeping through the night and now wakes every two hours?",
      "4 month old was sleeping thru the night, now up every 2 hrs - normal??",
      "My baby is 4 months and went from sleeping through the night to waking every 2 hours. Normal?"],
   V=["we had it so good, our 4 month old was sleeping through the night, and now all of a sudden she wakes up every 2 hours again. is that normal?",
      "4mo: slept through night, now wakes q2h - normal?"],
   S=[(0, "normal", "typical")],
   R=[(0, "is it normal that my 4 month old now wakes up every 2 hours when she used to sleep through the night?")],
   num=["my 14 month old used to sleep through the night but now wakes up every 2 hours. is that normal?",
        "my 4 month old used to sleep through the night but now wakes up every 20 minutes. is that normal?"],
   nocue=["my 4 month old used to wake up every 2 hours but now sleeps through the night. is that normal?"],
   cond=["my 4 month old used to sleep through the night but now wakes up every 2 hours and has a fever. is that normal?"])

sc("parenting",
   B=["my 7 year old is ahead of her class in reading. what should I do to keep her challenged?",
      "How do I keep my 7-year-old challenged when she's reading ahead of her class?",
      "7yo reads above grade level, how do i keep her challenged?",
      "What can I do to keep my 7 year old daughter challenged since she's ahead of her class in reading?"],
   V=["her teacher told us at conferences that our 7 year old is ahead of the rest of her class in reading. what should we be doing to keep her challenged?",
      "7yo ahead in reading - keep her challenged how?"],
   S=[(0, "challenged", "stimulated")],
   R=[(0, "what should I do to keep my 7 year old challenged? she's ahead of her class in reading.")],
   ant=["my 7 year old is behind her class in reading. what should I do to help her catch up?",
        "my 7 year old is behind her class in reading. what should I do to keep her challenged?"],
   num=["my 12 year old is ahead of her class in reading. what should I do to keep her challenged?"],
   ent=["my 7 year old is ahead of her class in math. what should I do to keep her challenged?"])

sc("parenting",
   B=["how do I get my kids to stop chasing the cat around the house?",
      "What can I do to make my kids stop chasing our cat around the house?",
      "kids keep chasing the cat around the house, how do i make them stop",
      "How can I stop my children from chasing the cat all over the house?"],
   V=["my two kids think it's hilarious to chase our poor cat around the house all day. how do I get them to stop?",
      "kids chasing cat - how to stop it?"],
   S=[(3, "children", "kids"), (0, "stop", "quit")],
   R=[(2, "how do i make them stop? kids keep chasing the cat around the house")],
   role=["how do I get my cat to stop chasing the kids around the house?",
         "our cat keeps chasing my kids around the house, how do I make it stop"],
   ent=["how do I get my kids to stop chasing the dog around the house?"])

sc("parenting",
   B=["my 16 year old has been respecting her curfew, should I extend it?",
      "My 16-year-old has stuck to her curfew every time. Should I make it later?",
      "16yo has been following her curfew, time to push it later?",
      "Should I extend my 16 year old's curfew now that she's been respecting it?"],
   V=["so far my 16 year old daughter has been really good about respecting her curfew, every weekend. should I give her a later curfew?",
      "16yo keeps curfew - extend it?"],
   S=[(0, "extend", "lengthen")],
   R=[(0, "should I extend my 16 year old's curfew? she has been respecting it")],
   nocue=["my 16 year old has been ignoring her curfew, should I extend it?",
          "my 16 year old keeps breaking her curfew, should I extend it?"],
   num=["my 12 year old has been respecting her curfew, should I extend it?"])

sc("parenting",
   B=["my kid finished all her homework early today, can she have extra screen time?",
      "Should I let my daughter have extra screen time since she finished her homework early today?",
      "kid got her homework done early today - ok to give her extra screen time?",
      "is it fine to reward my daughter with extra screen time for finishing her homework early today"],
   V=["my daughter came home and finished every bit of her homework early today without me even asking. can she have some extra screen time?",
      "homework done early, extra screen time ok?"],
   S=[(0, "early", "ahead of time")],
   R=[(0, "can my kid have extra screen time today? she finished all her homework early")],
   nocue=["my kid skipped her homework today, can she have extra screen time?",
          "my kid forgot to do her homework today, can she have extra screen time?"],
   temp=["my kid will finish her homework later tonight, can she have extra screen time now?"])

# ---------------------------------------------------------------------------
# pets
# ---------------------------------------------------------------------------
sc("pets",
   B=["can dogs eat grapes?",
      "Is it safe for dogs to eat grapes?",
      "are grapes ok for dogs to eat",
      "Can I give my dog grapes as a treat?"],
   V=["my kids keep sneaking grapes to our dog under the table. is it actually safe for dogs to eat grapes?",
      "dogs + grapes: safe?"],
   S=[(3, "treat", "snack"), (1, "safe", "okay")],
   R=[(3, "As a treat, can I give my dog grapes?"), (2, "for dogs to eat, are grapes ok")],
   ent=["can dogs eat blueberries?", "can cats eat grapes?", "can dogs eat bananas?"],
   temp=["my dog ate a handful of grapes 2 hours ago, what should I do?"],
   fmt=["yes or no only: can dogs eat grapes?"])

sc("pets",
   B=["can my dog catch a cold from me?",
      "Can dogs catch colds from humans?",
      "if I have a cold, can I give it to my dog?",
      "is it possible for my dog to get my cold"],
   V=["I've been sick in bed with a nasty cold all week and my dog won't leave my side. can he catch it from me?",
      "dog catch my cold?"],
   S=[(0, "catch", "get"), (1, "humans", "people")],
   R=[(2, "can I give my cold to my dog if I have one?")],
   role=["can I catch a cold from my dog?",
         "Can humans catch colds from dogs?",
         "if my dog has a cold, can he give it to me?"],
   ent=["can my cat catch a cold from me?", "can my dog catch covid from me?"])

sc("pets",
   B=["my cat suddenly stopped using her litter box, why?",
      "Why would my cat suddenly stop using the litter box?",
      "cat all of a sudden quit using her litter box. what's going on?",
      "what could cause my cat to suddenly stop using her litter box"],
   V=["my cat has always been perfect with her litter box, but she's suddenly stopped using it. why would that be?",
      "cat suddenly stopped using litter box - why?"],
   S=[(1, "suddenly", "abruptly"), (0, "why", "how come")],
   R=[(3, "what could cause my cat to stop using her litter box so suddenly")],
   nocue=["my cat suddenly started using her litter box again after months of going on the rug, why?"],
   scope=["my cat occasionally pees next to her litter box, why?"],
   ent=["my dog suddenly stopped using his potty pad, why?"],
   cond=["my cat suddenly stopped using her litter box right after we brought home a new kitten, why?"])

sc("pets",
   B=["how long should I walk my 12 week old puppy each day?",
      "How many minutes a day should I walk a 12-week-old puppy?",
      "12 week old puppy - how long should daily walks be?",
      "whats the right amount of walking per day for my puppy, she's 12 weeks old"],
   V=["We just brought home our first puppy, a sweet little girl who's 12 weeks old, and I'm not sure how long I should be walking her each day. any guidance?",
      "12wk puppy daily walk length?"],
   S=[(0, "each day", "daily"), (3, "right", "correct")],
   R=[(0, "each day, how long should I walk my 12 week old puppy?")],
   num=["how long should I walk my 12 month old puppy each day?",
        "how long should I walk my 7 week old puppy each day?"],
   scope=["how long should I walk my 12 week old puppy in total each week?"],
   cond=["how long should I walk my 12 week old puppy each day if she hasn't finished her vaccines yet?"],
   fmt=["just a number of minutes please: how long should I walk my 12 week old puppy each day?"])

sc("pets",
   B=["how do I introduce my new kitten to my older cat?",
      "What's the best way to introduce a new kitten to my older resident cat?",
      "got a new kitten, how should i introduce her to my older cat?",
      "tips for introducing a new kitten to the older cat I already have?"],
   V=["we just brought home a new kitten and I'm a bit nervous about how our older cat will react. how should I introduce them?",
      "new kitten + older cat intro tips?"],
   S=[(1, "best", "ideal"), (3, "tips", "advice")],
   R=[(0, "my new kitten and my older cat - how do I introduce them?")],
   ent=["how do I introduce my new puppy to my older cat?",
        "how do I introduce my new kitten to my older dog?"],
   role=["how do I introduce a new adult cat to the kitten I already have?"],
   temp=["I introduced my new kitten to my older cat way too fast and now they're fighting, what do I do?"],
   cond=["how do I introduce my new kitten to my older cat if my older cat is FIV positive?"])

sc("pets",
   B=["my older cat keeps hissing at the new kitten, is that normal?",
      "Is it normal for my older cat to keep hissing at our new kitten?",
      "older cat hissing at new kitten constantly - normal?",
      "our older cat won't stop hissing at the new kitten. is this normal?"],
   V=["we brought a new kitten home last weekend and our older cat keeps hissing at her every time she comes near. is that normal behaviour?",
      "old cat hisses at new kitten, normal?"],
   S=[(0, "normal", "typical")],
   R=[(0, "is that normal? my older cat keeps hissing at the new kitten")],
   role=["the new kitten keeps hissing at my older cat, is that normal?"],
   scope=["my older cat has been hissing at the new kitten nonstop for three months, is that normal?"],
   ent=["my older dog keeps growling at the new kitten, is that normal?"])

sc("pets",
   B=["my cat ate some of my hamster's food, is that dangerous?",
      "Is it dangerous if my cat ate some hamster food?",
      "cat got into the hamster's food and ate some, is that bad?",
      "Should I worry? My cat ate some of the hamster's food."],
   V=["I left the hamster food bag open on the counter and my cat helped himself to a bit of it. is that dangerous for him?",
      "cat ate hamster food - dangerous?"],
   S=[(0, "dangerous", "harmful")],
   R=[(0, "is it dangerous that my cat ate some of my hamster's food?")],
   role=["my hamster ate some of my cat's food, is that dangerous?"],
   ent=["my cat ate some of my dog's food, is that dangerous?"],
   scope=["my cat has been eating my hamster's food every day for a month, is that dangerous?"])

sc("pets",
   B=["my dog ate some of my toddler's gummy vitamins. is that dangerous?",
      "Is it dangerous that my dog got into my toddler's gummy vitamins and ate some?",
      "dog ate a few of my toddlers gummy vitamins - should I be worried?",
      "Should I worry if my dog ate some of my toddler's gummy vitamins?"],
   V=["the bottle of my toddler's gummy vitamins fell off the counter and my dog got to it before I did and ate some. is that dangerous?",
      "dog ate kid's gummy vitamins, dangerous?"],
   S=[(0, "dangerous", "harmful")],
   R=[(0, "is it dangerous that my dog ate some of my toddler's gummy vitamins?")],
   role=["my toddler ate some of my dog's chewable vitamins. is that dangerous?"],
   cond=["my dog ate some of my toddler's gummy vitamins and the label says they contain xylitol. is that dangerous?"],
   ent=["my cat ate some of my toddler's gummy vitamins. is that dangerous?"])

sc("pets",
   B=["my dog is scared of my new boyfriend. how can I help?",
      "How do I help my dog who's afraid of my new boyfriend?",
      "dog is scared of my new bf, what can i do to help",
      "What can I do to help my dog stop being scared of my new boyfriend?"],
   V=["I started dating someone a couple of months ago and my dog is really scared of him, hides whenever he comes over. how can I help?",
      "dog afraid of new boyfriend - help?"],
   S=[(1, "afraid", "scared")],
   R=[(0, "how can I help? my dog is scared of my new boyfriend")],
   role=["my new boyfriend is scared of my dog. how can I help?",
         "my new boyfriend is afraid of my dog, how do I help him get comfortable"],
   ent=["my dog is scared of my new baby. how can I help?"])

sc("pets",
   B=["my dog is overweight, how much should I feed him each day?",
      "How much food should my overweight dog get per day?",
      "dog is overweight - how much should he eat daily?",
      "What's the right daily amount of food for my dog who's overweight?"],
   V=["the vet told us at his checkup that our dog is overweight. how much should I be feeding him each day?",
      "overweight dog daily food amount?"],
   S=[(0, "each day", "per day")],
   R=[(0, "how much should I feed my overweight dog each day?")],
   ant=["my dog is underweight, how much should I feed him each day?"],
   scope=["my dog is overweight, how many treats can he have in a week?"],
   ent=["my cat is overweight, how much should I feed her each day?"],
   cond=["my dog is overweight and diabetic, how much should I feed him each day?"])

sc("pets",
   B=["what's the best age to spay a female dog?",
      "At what age should I get my female dog spayed?",
      "when should i spay my girl puppy",
      "What age is best for spaying a female dog?"],
   V=["we just adopted a female puppy from the shelter and I want to do things right. what's the best age to get her spayed?",
      "best spay age for female dog?"],
   S=[(0, "best", "ideal")],
   R=[(3, "For spaying a female dog, what age is best?")],
   ent=["what's the best age to neuter a male dog?", "what's the best age to spay a female cat?"],
   cond=["what's the best age to spay a female dog if she's a large breed like a great dane?"])

sc("pets",
   B=["can I leave my dog home alone for a few hours while I'm at work?",
      "Is it ok to leave my dog alone at home for a few hours while I work?",
      "leaving my dog home alone a few hours during work - ok?",
      "Is it alright if my dog stays home by himself for a few hours while I'm at work?"],
   V=["I just went back to the office after working from home for a long time. can I leave my dog home alone for a few hours while I'm at work?",
      "dog alone a few hrs while at work ok?"],
   S=[(1, "ok", "fine")],
   R=[(0, "while I'm at work, can I leave my dog home alone for a few hours?")],
   scope=["can I leave my dog home alone for a couple of days while I'm at a work conference?",
          "can I leave my dog home alone for 12 hours every day while I'm at work?"],
   ent=["can I leave my cat home alone for a few hours while I'm at work?",
        "can I leave my 8 week old puppy home alone for a few hours while I'm at work?"])

# ---------------------------------------------------------------------------
# cooking
# ---------------------------------------------------------------------------
sc("cooking",
   B=["how long do I boil eggs for a runny yolk?",
      "How many minutes should I boil an egg if I want the yolk runny?",
      "boiled egg with a runny yolk - how many minutes?",
      "for a boiled egg with a runny yolk, how long do i boil it"],
   V=["I'm trying to make the perfect boiled eggs for dipping toast in the morning, with the yolk nice and runny. how long should I boil them?",
      "runny yolk boil time?"],
   S=[(1, "minutes", "min")],
   R=[(0, "for a runny yolk, how long do I boil eggs?"),
      (1, "If I want the yolk runny, how many minutes should I boil an egg?")],
   ant=["how long do I boil eggs for a firm yolk?", "how long do I boil eggs for a fully hard yolk?"],
   ent=["how long do I boil quail eggs for a runny yolk?", "how long do I poach eggs for a runny yolk?"],
   cond=["how long do I boil eggs for a runny yolk if I live up in the mountains at 8,000 feet?",
         "how long do I boil eggs for a runny yolk if they're extra large and straight from the fridge?"],
   fmt=["just give me the number of minutes, nothing else: boiling eggs for a runny yolk"])

sc("cooking",
   B=["what can I use instead of buttermilk in pancakes?",
      "Is there a substitute for buttermilk in a pancake recipe?",
      "out of buttermilk, what can i use in my pancakes instead?",
      "buttermilk substitute for pancakes?"],
   V=["it's Sunday morning, I'm halfway through making pancakes and I just realized I'm out of buttermilk. what can I use instead?",
      "pancakes: buttermilk sub?"],
   S=[(0, "instead of", "in place of"), (1, "substitute", "replacement")],
   R=[(0, "in pancakes, what can I use instead of buttermilk?")],
   ent=["what can I use instead of buttermilk in fried chicken marinade?",
        "what can I use instead of eggs in pancakes?",
        "what can I use instead of baking powder in pancakes?"],
   cond=["what can I use instead of buttermilk in pancakes if I'm dairy free?"],
   neg=["what can I use instead of buttermilk in pancakes without any lemon or vinegar in the house?"])

sc("cooking",
   B=["how long is cooked chicken good for in the fridge?",
      "How many days does cooked chicken last in the refrigerator?",
      "cooked chicken in the fridge, how many days is it safe to eat?",
      "leftover cooked chicken - how long does it keep in the fridge?"],
   V=["I roasted a whole chicken and there's a ton left over. how long will the cooked chicken stay good in the fridge?",
      "cooked chicken fridge life?"],
   S=[(1, "refrigerator", "fridge"), (3, "keep", "last")],
   R=[(0, "in the fridge, how long is cooked chicken good for?")],
   ent=["how long is cooked chicken good for in the freezer?",
        "how long are hard boiled eggs good for in the fridge?"],
   ant=["how long is raw chicken good for in the fridge?"],
   cond=["how long is cooked chicken good for in the fridge if it sat out on the counter overnight first?"])

sc("cooking",
   B=["if I double a cake recipe, do I need to double the baking time too?",
      "When doubling a cake recipe, should the bake time also be doubled?",
      "doubling a cake recipe - do i double the baking time as well?",
      "Do I have to double the baking time when I make a double batch of cake batter?"],
   V=["I'm making my mom's chocolate cake for a big family party and need twice as much, so I'm doubling the recipe. do I also need to double the baking time?",
      "double cake recipe = double bake time?"],
   S=[(0, "baking time", "bake time"), (2, "as well", "too")],
   R=[(0, "do I need to double the baking time too if I double a cake recipe?")],
   num=["if I triple a cake recipe, do I need to triple the baking time too?",
        "if I halve a cake recipe, do I need to halve the baking time too?"],
   ent=["if I double a cookie recipe, do I need to double the baking time too?"],
   cond=["if I double a cake recipe and split it between two pans, do I need to double the baking time too?"])

sc("cooking",
   B=["what's the water to rice ratio for white rice on the stove?",
      "How much water do I need per cup of white rice when cooking it on the stovetop?",
      "stovetop white rice: what ratio of water to rice?",
      "ratio of water to white rice when cooking on the stove?"],
   V=["I always mess up rice and it comes out mushy. when I'm cooking white rice on the stove, what's the right water to rice ratio?",
      "white rice water ratio, stove?"],
   S=[(1, "stovetop", "stove"), (3, "cooking", "making")],
   R=[(0, "for white rice on the stove, what's the water to rice ratio?"),
      (3, "when cooking on the stove, what's the ratio of water to white rice?")],
   ent=["what's the water to rice ratio for brown rice on the stove?",
        "what's the water to rice ratio for white rice in an instant pot?",
        "what's the water to quinoa ratio on the stove?"],
   num=["how much water do I need for 3 cups of white rice when cooking it on the stovetop?"])

sc("cooking",
   B=["how often should I feed my sourdough starter if I keep it on the counter?",
      "If my sourdough starter lives on the counter, how often does it need feeding?",
      "sourdough starter kept on the counter at room temp - how often to feed it?",
      "How frequently do I feed a sourdough starter that's stored on the kitchen counter?"],
   V=["I finally made my own sourdough starter and I'm keeping it out on the counter. how often should I be feeding it?",
      "counter sourdough starter feeding frequency?"],
   S=[(0, "often", "frequently"), (1, "lives on", "sits on")],
   R=[(0, "if I keep my sourdough starter on the counter, how often should I feed it?")],
   ent=["how often should I feed my sourdough starter if I keep it in the fridge?"],
   temp=["how often should I feed my sourdough starter in the first week after I mix it?"],
   cond=["how often should I feed my sourdough starter if I keep it on the counter in a really hot kitchen, like 30 C?"])

sc("cooking",
   B=["my sourdough loaf rises way too much and then collapses in the oven. what am I doing wrong?",
      "Why does my sourdough rise too much and then collapse when I bake it?",
      "sourdough over-rises then collapses in the oven, what am i doing wrong",
      "What causes my sourdough bread to rise too much and collapse during baking?"],
   V=["every time I bake sourdough it puffs up way too much and then just collapses once it's in the oven. what am I doing wrong here?",
      "sourdough over-rises & collapses in oven - why?"],
   S=[(0, "collapses", "deflates")],
   R=[(0, "what am I doing wrong? my sourdough loaf rises way too much and then collapses in the oven")],
   nocue=["my sourdough loaf fails to rise at all and comes out flat. what am I doing wrong?"],
   ent=["my banana bread rises way too much and then collapses in the oven. what am I doing wrong?"])

sc("cooking",
   B=["my soup is way too salty, how do I fix it?",
      "How can I fix soup that's too salty?",
      "oversalted my soup, how to fix it",
      "What can I do to save a pot of soup that's too salty?"],
   V=["I got distracted and added way too much salt to a huge pot of soup for tonight. how do I fix it?",
      "too salty soup fix?"],
   S=[(1, "fix", "rescue"), (3, "save", "rescue")],
   R=[(0, "how do I fix my soup? it's way too salty")],
   ant=["my soup is way too bland, how do I fix it?"],
   ent=["my chili is way too spicy, how do I fix it?", "my gravy is way too salty, how do I fix it?"])

sc("cooking",
   B=["how do I make my chocolate chip cookies chewier?",
      "What's the trick to getting chewier chocolate chip cookies?",
      "want chewier choc chip cookies, what do i change?",
      "How can I make chocolate chip cookies that come out chewier?"],
   V=["my chocolate chip cookies always come out kind of crunchy and my family likes them chewy. how do I make them chewier?",
      "chewier choc chip cookies how?"],
   S=[(1, "trick", "secret")],
   R=[(0, "chocolate chip cookies - how do I make them chewier?")],
   ant=["how do I make my chocolate chip cookies crispier?", "how do I make my chocolate chip cookies thicker?"],
   ent=["how do I make my oatmeal cookies chewier?", "how do I make my brownies chewier?"],
   cond=["how do I make my chocolate chip cookies chewier if I'm using gluten-free flour?"])

sc("cooking",
   B=["how long does it take to thaw a 14 lb turkey in the fridge?",
      "How many days does a 14-pound turkey need to thaw in the refrigerator?",
      "14lb frozen turkey, how long to defrost in the fridge?",
      "What's the fridge thawing time for a 14 pound turkey?"],
   V=["hosting Thanksgiving for the first time and I just bought a frozen 14 lb turkey. how long will it take to thaw in the fridge?",
      "thaw time 14 lb turkey, fridge?"],
   S=[(2, "defrost", "thaw")],
   R=[(0, "in the fridge, how long does it take to thaw a 14 lb turkey?")],
   num=["how long does it take to thaw a 22 lb turkey in the fridge?",
        "how long does it take to thaw a 14 kg turkey in the fridge?"],
   ent=["how long does it take to thaw a 14 lb turkey in cold water?",
        "how long does it take to thaw a 14 lb ham in the fridge?"],
   temp=["how long can a 14 lb turkey stay in the fridge after it's fully thawed?"])

sc("cooking",
   B=["how many boxes of lasagna noodles do I need to feed 12 people?",
      "I'm making lasagna for 12 people. How many boxes of noodles should I buy?",
      "lasagna for 12 ppl - how many boxes of noodles?",
      "How many packs of lasagna noodles would I need for 12 people?"],
   V=["I'm making a big lasagna dinner for my son's soccer team party, 12 people in total. how many boxes of lasagna noodles do I need?",
      "boxes of lasagna noodles for 12?"],
   S=[(1, "buy", "get")],
   R=[(0, "to feed 12 people, how many boxes of lasagna noodles do I need?")],
   num=["how many boxes of lasagna noodles do I need to feed 40 people?",
        "how many boxes of lasagna noodles do I need to feed 4 people?"],
   ent=["how many boxes of spaghetti do I need to feed 12 people?"],
   cond=["how many boxes of lasagna noodles do I need to feed 12 people if half of them are hungry teenage boys?"])

sc("cooking",
   B=["can I freeze milk?", "Is it ok to freeze milk?", "can milk go in the freezer?", "Is freezing milk a good idea?"],
   V=["milk is on sale this week and I'd like to stock up. can I freeze it?", "freeze milk ok?"],
   S=[(1, "ok", "fine")],
   R=[(0, "milk - can I freeze it?")],
   ent=["can I freeze heavy cream?", "can I freeze eggs in the shell?", "can I freeze breast milk?"])

sc("cooking",
   B=["my steak came out overcooked and tough. how do I avoid that next time?",
      "How do I stop my steak from coming out overcooked and tough next time?",
      "steak ended up overcooked + tough, how do i prevent it next time",
      "What should I do differently so my steak isn't overcooked and tough next time?"],
   V=["I spent a lot on a nice ribeye for date night and it came out overcooked and tough. how do I avoid that next time?",
      "overcooked tough steak - avoid how next time?"],
   S=[(0, "avoid", "prevent")],
   R=[(0, "how do I avoid my steak coming out overcooked and tough next time?")],
   ant=["my steak came out undercooked and raw in the middle. how do I avoid that next time?"],
   ent=["my pork chops came out overcooked and tough. how do I avoid that next time?"])

sc("cooking",
   B=["how do I make my coffee less bitter?", "What's the trick to making coffee less bitter?", "coffee too bitter, how do i make it less bitter", "How can I make my coffee taste less bitter?"],
   V=["every morning my coffee tastes super bitter no matter what beans I buy. how do I make it less bitter?", "less bitter coffee how?"],
   S=[(1, "trick", "secret")],
   R=[(0, "my coffee - how do I make it less bitter?")],
   ant=["how do I make my coffee more bitter?", "how do I make my coffee stronger without it getting bitter?"],
   ent=["how do I make my tea less bitter?", "how do I make my cold brew less bitter?"])

sc("cooking",
   B=["what can I use instead of eggs in brownies?", "Egg substitute for brownies?", "out of eggs, what can i use in brownies instead", "What's a good replacement for eggs in a brownie recipe?"],
   V=["I'm baking brownies for my daughter's class and one kid is allergic to eggs. what can I use instead of eggs?",
      "brownies egg sub?"],
   S=[(3, "replacement", "substitute"), (0, "instead of", "in place of")],
   R=[(0, "in brownies, what can I use instead of eggs?")],
   ent=["what can I use instead of eggs in meatballs?", "what can I use instead of butter in brownies?"],
   cond=["what can I use instead of eggs in brownies if I'm also out of bananas and applesauce?"],
   neg=["what can I use instead of eggs in brownies that doesn't change the taste?"])

sc("cooking",
   B=["how do I keep guacamole from turning brown?", "What stops guacamole from going brown?", "guac keeps turning brown, how do i stop that", "Any way to prevent guacamole from browning?"],
   V=["I'm making guacamole a few hours before a party and it always goes brown on me. how do I keep it from turning brown?", "stop guac browning?"],
   S=[(1, "stops", "prevents"), (3, "Any way", "Is there a way")],
   R=[(0, "guacamole - how do I keep it from turning brown?")],
   ent=["how do I keep sliced apples from turning brown?", "how do I keep cut avocado halves from turning brown?"],
   scope=["how do I keep guacamole from turning brown for 3 days in the fridge?"])

# ---------------------------------------------------------------------------
# personal finance
# ---------------------------------------------------------------------------
sc("finance",
   B=["should I pay off my credit card debt first or build an emergency fund?",
      "Is it better to pay down credit card debt or save up an emergency fund first?",
      "credit card debt vs emergency fund - which should I do first?",
      "what should come first, paying off my credit cards or building an emergency fund?"],
   V=["I'm finally trying to get my finances in order and I'm stuck on one thing: should I pay off my credit card debt first, or build an emergency fund first?",
      "cc debt or emergency fund first?"],
   S=[(1, "pay down", "pay off"), (0, "build", "build up")],
   R=[(0, "should I build an emergency fund first or pay off my credit card debt?"),
      (2, "emergency fund vs credit card debt - which should I do first?")],
   cond=["should I pay off my credit card debt first or build an emergency fund if my job might get cut next month?",
         "should I pay off my credit card debt first or build an emergency fund if my card is at 0% APR for the next 18 months?"],
   ent=["should I pay off my student loans first or build an emergency fund?"],
   fmt=["one word answer, debt or fund: should I pay off my credit card debt first or build an emergency fund?"])

sc("finance",
   B=["my landlord still owes me my security deposit, it's been 45 days since I moved out. what can I do?",
      "It's been 45 days since I moved out and my landlord hasn't returned my security deposit. What are my options?",
      "landlord hasnt given back my security deposit 45 days after move out, what can i do",
      "What can I do if my former landlord still hasn't refunded my security deposit 45 days after I moved out?"],
   V=["so I moved out of my old apartment 45 days ago and my landlord still owes me my security deposit. what can I actually do about it?",
      "landlord owes deposit, 45 days after move-out, options?"],
   S=[(1, "options", "choices"), (3, "refunded", "returned")],
   R=[(0, "it's been 45 days since I moved out and my landlord still owes me my security deposit. what can I do?")],
   role=["I'm a landlord and I still owe my former tenant her security deposit, it's been 45 days since she moved out. what can I do?",
         "my tenant still owes me two months of rent, it's been 45 days since he moved out. what can I do?"],
   num=["my landlord still owes me my security deposit, it's been 5 days since I moved out. what can I do?"],
   cond=["my landlord still owes me my security deposit, it's been 45 days since I moved out, and I broke the lease early. what can I do?"])

sc("finance",
   B=["should I put money in a Roth IRA or my 401k first?",
      "Which should I prioritize, contributing to a Roth IRA or to my 401(k)?",
      "roth ira vs 401k, which one do i fund first",
      "Is it better to contribute to a Roth IRA first or to my 401k first?"],
   V=["I'm trying to figure out my retirement savings and can't decide: should I put money into a Roth IRA or my 401k first?",
      "Roth IRA or 401k first?"],
   S=[(2, "fund", "contribute to")],
   R=[(0, "should I put money in my 401k or a Roth IRA first?")],
   cond=["should I put money in a Roth IRA or my 401k first if my employer matches 5%?",
         "should I put money in a Roth IRA or my 401k first if I earn $250k a year?"],
   ent=["should I put money in a traditional IRA or my 401k first?",
        "should I put money in an HSA or my 401k first?"])

sc("finance",
   B=["how should I budget $3,000 a month after taxes?",
      "I take home $3000 a month. how should I split it up in a budget?",
      "monthly take-home is 3k, how do i budget it",
      "What's a good way to budget a take-home pay of $3,000 per month?"],
   V=["I just got my first salaried job and after taxes I take home $3,000 a month. I've never budgeted before, how should I split it up?",
      "budget for $3k/mo take-home?"],
   S=[(0, "budget", "allocate"), (1, "split it up", "divide it up")],
   R=[(1, "how should I split up my $3000 a month take home pay in a budget?")],
   num=["how should I budget $8,000 a month after taxes?", "how should I budget $1,200 a month after taxes?"],
   scope=["how should I budget $3,000 every two weeks after taxes?"],
   ant=["how should I budget $3,000 a month before taxes?"],
   cond=["how should I budget $3,000 a month after taxes if I have $20k in student loans?",
         "how should I budget $3,000 a month after taxes if rent alone is $1,800?"],
   fmt=["put it in a table with categories and dollar amounts: how should I budget $3,000 a month after taxes?"])

sc("finance",
   B=["I lent my best friend $500 three months ago and she hasn't paid me back. how do I bring it up without ruining the friendship?",
      "How do I ask my best friend to repay the $500 I lent her three months ago without damaging our friendship?",
      "best friend borrowed $500 from me 3 months ago, still hasn't paid it back. how can i bring it up without ruining things between us?",
      "What's a tactful way to remind my best friend about the $500 she borrowed from me 3 months ago, without hurting our friendship?"],
   V=["this is awkward... three months ago I lent my best friend $500 and she still hasn't paid me back. I really value our friendship, so how do I bring it up without ruining it?",
      "best friend owes me $500 from 3 months ago, how to bring it up w/o ruining friendship?"],
   S=[(1, "damaging", "hurting"), (0, "ruining", "wrecking")],
   R=[(0, "how do I bring it up without ruining the friendship? I lent my best friend $500 three months ago and she hasn't paid me back.")],
   role=["I borrowed $500 from my best friend three months ago and haven't paid her back. how do I bring it up without ruining the friendship?",
         "my best friend lent me $500 three months ago and I still haven't paid her back, how do I talk to her about it without ruining our friendship?"],
   num=["I lent my best friend $50 three months ago and she hasn't paid me back. how do I bring it up without ruining the friendship?",
        "I lent my best friend $500 three years ago and she hasn't paid me back. how do I bring it up without ruining the friendship?"],
   ent=["I lent my brother $500 three months ago and he hasn't paid me back. how do I bring it up without ruining our relationship?"],
   fmt=["write me a short, light text to send my best friend asking about the $500 she borrowed three months ago"])

sc("finance",
   B=["do I have to pay taxes on money I make selling stuff on eBay?",
      "Is money I earn from selling things on eBay taxable?",
      "selling stuff on ebay - do i owe taxes on that?",
      "Do I need to pay tax on what I make selling things on eBay?"],
   V=["quick tax question for you: if I make money selling stuff on eBay, do I have to pay taxes on it?",
      "ebay sales taxable?"],
   S=[(1, "earn", "make"), (0, "stuff", "things")],
   R=[(0, "on money I make selling stuff on eBay, do I have to pay taxes?")],
   cond=["do I have to pay taxes on money I make selling stuff on eBay if I sell it for less than I originally paid?"],
   ent=["do I have to pay taxes on money I make driving for Uber?",
        "do I have to pay taxes on money I make selling stuff on eBay if I live in the UK?"],
   scope=["do I have to pay taxes on all of the money I make selling stuff on eBay, or just the profit?"])

sc("finance",
   B=["my roommate owes me $300 for utilities and keeps dodging me. what can I do?",
      "What are my options if my roommate owes me $300 in utilities and keeps avoiding paying?",
      "roommate owes me 300 bucks for utilities and keeps dodging, what do i do",
      "How do I get the $300 my roommate owes me for utilities when he keeps dodging the subject?"],
   V=["I covered our utility bills for the last couple of months and now my roommate owes me $300, but every time I bring it up he dodges me. what can I do?",
      "roommate dodging $300 utilities debt - options?"],
   S=[(0, "dodging", "avoiding")],
   R=[(0, "what can I do? my roommate owes me $300 for utilities and keeps dodging me.")],
   role=["I owe my roommate $300 for utilities and I can't pay it yet. what can I do?"],
   num=["my roommate owes me $3,000 for utilities and keeps dodging me. what can I do?"],
   ent=["my ex owes me $300 for utilities and keeps dodging me. what can I do?"])

sc("finance",
   B=["how can I raise my credit score quickly?", "What's the fastest way to raise my credit score?", "need to boost my credit score fast, how?", "How do I improve my credit score as quickly as possible?"],
   V=["we're hoping to apply for a mortgage soon and my credit score could be better. how can I raise it quickly?", "raise credit score fast?"],
   S=[(0, "raise", "boost"), (3, "improve", "raise")],
   R=[(0, "quickly, how can I raise my credit score?")],
   ant=["what lowers my credit score quickly?", "what will drop my credit score the fastest?"],
   scope=["how can I raise my credit score over the next five years?"],
   cond=["how can I raise my credit score quickly if I've just had a bankruptcy?"])

sc("finance",
   B=["is it worth refinancing my mortgage from 7% to 6%?",
      "Does it make sense to refinance my mortgage if I can go from a 7% rate to 6%?",
      "refinancing from 7% to 6% - worth it?",
      "Should I refinance my home loan to drop the rate from 7 percent to 6 percent?"],
   V=["rates have come down a little and my lender says I could refinance my mortgage from 7% to 6%. is that worth it?",
      "refi 7% -> 6% worth it?"],
   S=[(0, "worth", "worthwhile")],
   R=[(0, "from 7% to 6%, is it worth refinancing my mortgage?")],
   num=["is it worth refinancing my mortgage from 7% to 6.75%?", "is it worth refinancing my mortgage from 4% to 6%?"],
   cond=["is it worth refinancing my mortgage from 7% to 6% if I'm planning to sell the house next year?"],
   ent=["is it worth refinancing my car loan from 7% to 6%?"])

sc("finance",
   B=["I kept all my receipts, can I deduct my home office expenses as a freelancer?",
      "As a freelancer who kept every receipt, can I deduct home office expenses?",
      "freelancer here, have all my receipts - can i deduct my home office costs?",
      "Can I write off my home office expenses as a freelancer? I've kept all the receipts."],
   V=["I started freelancing last year and I was really careful to keep all my receipts. can I deduct my home office expenses?",
      "freelancer w/ all receipts: deduct home office?"],
   S=[(0, "deduct", "write off")],
   R=[(0, "can I deduct my home office expenses as a freelancer? I kept all my receipts")],
   nocue=["I lost all my receipts, can I still deduct my home office expenses as a freelancer?"],
   ent=["I kept all my receipts, can I deduct my home office expenses as a W-2 employee?"])

sc("finance",
   B=["I paid my car insurance this month, am I covered if I crash today?",
      "My car insurance payment for this month went through. If I crash today, am I covered?",
      "paid car insurance this month - covered if i get in a crash today?",
      "Am I covered if I get into an accident today? I paid my car insurance this month."],
   V=["just making sure, I paid my car insurance bill for this month. if I crash the car today, am I covered?",
      "paid insurance this month, covered if crash today?"],
   S=[(0, "crash", "have an accident")],
   R=[(0, "am I covered if I crash today? I paid my car insurance this month")],
   nocue=["I forgot to pay my car insurance this month, am I covered if I crash today?",
          "my car insurance payment failed to go through this month, am I covered if I crash today?"],
   ent=["I paid my car insurance this month, am I covered if I crash my friend's car today?"])

# ---------------------------------------------------------------------------
# travel
# ---------------------------------------------------------------------------
sc("travel",
   B=["how long does my passport need to be valid to travel to Mexico?",
      "For a trip to Mexico, how long does my passport need to be valid for?",
      "passport validity requirement for mexico?",
      "does my passport need a certain amount of time left on it to go to Mexico? how long?"],
   V=["we're booking a family trip to Cancun for spring break and I just noticed my passport expires later this year. how long does it need to be valid to travel to Mexico?",
      "mexico passport validity?"],
   S=[(0, "valid", "good")],
   R=[(0, "to travel to Mexico, how long does my passport need to be valid?")],
   ent=["how long does my passport need to be valid to travel to Thailand?",
        "how long does my passport need to be valid to travel to the Schengen area?",
        "how long does my driver's license need to be valid to rent a car in Mexico?"])

sc("travel",
   B=["can I bring a 3 oz bottle of sunscreen in my carry-on on a US flight?",
      "Is a 3-ounce bottle of sunscreen allowed in carry-on bags on US flights?",
      "3oz sunscreen in carry on - allowed on flights in the US?",
      "am I allowed to pack a 3 ounce sunscreen bottle in my carry-on for a US flight"],
   V=["heading out on a US flight next week and trying not to check a bag. can I bring my 3 oz bottle of sunscreen in my carry-on?",
      "3oz sunscreen carry-on US ok?"],
   S=[(1, "allowed", "permitted"), (0, "bring", "take")],
   R=[(0, "on a US flight, can I bring a 3 oz bottle of sunscreen in my carry-on?")],
   num=["can I bring an 8 oz bottle of sunscreen in my carry-on on a US flight?",
        "can I bring a 300 ml bottle of sunscreen in my carry-on on a US flight?"],
   scope=["can I bring ten 3 oz bottles of sunscreen in my carry-on on a US flight?"],
   ent=["can I bring a 3 oz can of bear spray in my carry-on on a US flight?",
        "can I bring a 3 oz bottle of lighter fluid in my carry-on on a US flight?"])

sc("travel",
   B=["how do I get over jet lag after flying from New York to Tokyo?",
      "What's the best way to beat jet lag after a New York to Tokyo flight?",
      "flew NYC to tokyo, how do i get over the jet lag",
      "tips for recovering from jet lag after flying New York to Tokyo?"],
   V=["I'm flying from New York to Tokyo for a work trip, and once I get there I need to function. how do I get over the jet lag?",
      "jet lag NY->Tokyo, how to recover?"],
   S=[(1, "beat", "overcome"), (3, "recovering", "bouncing back")],
   R=[(0, "after flying from New York to Tokyo, how do I get over jet lag?")],
   role=["how do I get over jet lag after flying from Tokyo to New York?",
         "flew tokyo to NYC, how do i get over the jet lag"],
   temp=["how do I prepare for jet lag in the days before flying from New York to Tokyo?"],
   ent=["how do I get over jet lag after flying from New York to London?"])

sc("travel",
   B=["plan a 3 day itinerary for Rome for my first visit",
      "Can you put together a 3-day Rome itinerary for a first-time visitor?",
      "first time in rome, 3 days. give me an itinerary",
      "I'm visiting Rome for the first time for three days, can you make me an itinerary?"],
   V=["I'm so excited, I'm finally going to Rome for the first time! I'll be there for three days. could you plan out an itinerary for me?",
      "3-day Rome itinerary, first visit"],
   S=[(1, "put together", "create"), (3, "make", "create")],
   R=[(0, "for my first visit, plan a 3 day itinerary for Rome")],
   num=["plan a 7 day itinerary for Rome for my first visit", "plan a 3 hour itinerary for Rome during my layover, first visit"],
   ent=["plan a 3 day itinerary for Florence for my first visit"],
   cond=["plan a 3 day itinerary for Rome for my first visit, I use a wheelchair",
         "plan a 3 day itinerary for Rome for my first visit with two toddlers in tow"],
   neg=["plan a 3 day itinerary for Rome for my first visit, no museums or churches please"],
   temp=["plan a 3 day itinerary for Rome for my first visit over Christmas and New Year's Day"],
   fmt=["plan a 3 day itinerary for Rome for my first visit as a table with morning, afternoon and evening columns"])

sc("travel",
   B=["I'm 6 months pregnant, is it safe to fly?",
      "Is it safe to take a flight when I'm 6 months pregnant?",
      "6 months pregnant - ok to fly?",
      "Can I safely fly at six months pregnant?"],
   V=["we have a family wedding across the country and I'll be 6 months pregnant by then. is it safe for me to fly?",
      "flying at 6mo pregnant safe?"],
   S=[(1, "take a flight", "fly")],
   R=[(0, "is it safe to fly? I'm 6 months pregnant")],
   num=["I'm 8 and a half months pregnant, is it safe to fly?"],
   cond=["I'm 6 months pregnant with twins, is it safe to fly?",
         "I'm 6 months pregnant and have a history of blood clots, is it safe to fly?"],
   ent=["I'm 6 months pregnant, is it safe to go on a cruise?"])

sc("travel",
   B=["do I need a visa to visit Japan as a US citizen?", "As an American, do I need a visa for a trip to Japan?", "us citizen visiting japan, visa needed?", "Is a visa required for US citizens traveling to Japan?"],
   V=["planning my first big trip abroad! I'm a US citizen and I want to visit Japan for two weeks. do I need a visa?", "japan visa for americans?"],
   S=[(3, "traveling", "going")],
   R=[(0, "as a US citizen, do I need a visa to visit Japan?")],
   ent=["do I need a visa to visit China as a US citizen?", "do I need a visa to visit Japan as an Indian citizen?"],
   scope=["do I need a visa to live in Japan for two years as a US citizen?"],
   cond=["do I need a visa to visit Japan as a US citizen if I'm going there to work?"])

sc("travel",
   B=["what should I pack for a week in Iceland in October?",
      "Packing list for a week-long trip to Iceland in October?",
      "going to iceland for a week in october, what do i pack",
      "What do I need to bring for one week in Iceland in October?"],
   V=["my partner surprised me with a trip to Iceland! we'll be there for a week in October. what should I pack?",
      "iceland, 1 week, october - packing list?"],
   S=[(3, "bring", "take")],
   R=[(0, "for a week in Iceland in October, what should I pack?")],
   temp=["what should I pack for a week in Iceland in July?"],
   ent=["what should I pack for a week in Lisbon in October?"],
   neg=["what should I not bother packing for a week in Iceland in October?"],
   fmt=["give me a checklist I can print, no explanations: packing for a week in Iceland in October"])

sc("travel",
   B=["how do I send money from PayPal to my bank account?", "How can I transfer money from PayPal into my bank account?", "paypal to bank account transfer, how?", "What's the way to move money out of PayPal into my bank?"],
   V=["someone paid me through PayPal for some furniture I sold and I want the money in my checking account. how do I send money from PayPal to my bank?",
      "paypal -> bank transfer how?"],
   S=[(1, "transfer", "move")],
   R=[(0, "to my bank account, how do I send money from PayPal?")],
   role=["how do I send money from my bank account to PayPal?", "how can I add money to PayPal from my bank account?"],
   ent=["how do I send money from Venmo to my bank account?"])

# ---------------------------------------------------------------------------
# fitness & health
# ---------------------------------------------------------------------------
sc("fitness",
   B=["if I run 3 times a week for 30 minutes, how much weight can I lose in a month?",
      "How much weight could I lose in a month running 30 minutes three times a week?",
      "running 3x a week, 30 min each. how much weight will i lose in a month?",
      "What kind of weight loss can I expect in one month if I run for 30 minutes 3 times a week?"],
   V=["I'm finally getting back into shape and my plan is to go running three times a week, 30 minutes each time. realistically, how much weight can I lose in a month doing that?",
      "run 3x/wk 30min - weight loss per month?"],
   S=[(0, "lose", "drop"), (3, "expect", "anticipate")],
   R=[(0, "how much weight can I lose in a month if I run 3 times a week for 30 minutes?")],
   num=["if I run 5 times a week for 30 minutes, how much weight can I lose in a month?",
        "if I run 3 times a week for 90 minutes, how much weight can I lose in a month?"],
   scope=["if I run 3 times a week for 30 minutes, how much weight can I lose in a year?",
          "if I run every single day for 30 minutes, how much weight can I lose in a month?"],
   ent=["if I swim 3 times a week for 30 minutes, how much weight can I lose in a month?"],
   cond=["if I run 3 times a week for 30 minutes and also cut 500 calories a day, how much weight can I lose in a month?"])

sc("fitness",
   B=["should I stretch before or after running?",
      "Is it better to stretch before a run or after it?",
      "stretching: before or after a run?",
      "when should I stretch, before running or after?"],
   V=["I just started running again after a few years off and I keep hearing different things, so should I stretch before or after I run?",
      "stretch pre or post run?"],
   S=[(1, "better", "preferable")],
   R=[(0, "should I stretch after or before running?"), (3, "when should I stretch, after running or before?")],
   ent=["should I stretch before or after lifting weights?", "should I eat before or after running?"])

sc("fitness",
   B=["how much protein do I need per day? I'm 70 kg and lift weights 4 times a week",
      "I weigh 70kg and do weight training four times a week. How much protein should I eat daily?",
      "70 kg, lifting 4x a week, how much protein a day?",
      "How many grams of protein per day should I get if I'm 70 kg and lift 4 days a week?"],
   V=["hi! trying to get my nutrition sorted. I'm 70 kg and I lift weights 4 times a week. how much protein do I actually need per day?",
      "protein/day for 70kg lifter, 4x/wk?"],
   S=[(1, "daily", "per day")],
   R=[(0, "I'm 70 kg and lift weights 4 times a week. how much protein do I need per day?")],
   num=["how much protein do I need per day? I'm 70 lbs and lift weights 4 times a week",
        "how much protein do I need per day? I'm 110 kg and lift weights 4 times a week"],
   scope=["how much protein do I need per meal? I'm 70 kg and lift weights 4 times a week",
          "how much protein do I need per day? I'm 70 kg and lift weights once a month"],
   cond=["how much protein do I need per day? I'm 70 kg, lift weights 4 times a week and have chronic kidney disease"],
   ent=["how much creatine do I need per day? I'm 70 kg and lift weights 4 times a week"])

sc("fitness",
   B=["my knees hurt when I do squats, what am I doing wrong?",
      "Why do my knees hurt when I squat? What might I be doing wrong?",
      "knees hurt during squats, whats wrong with my form?",
      "what could I be doing wrong if my knees hurt every time I squat?"],
   V=["I started doing squats at the gym recently and my knees hurt when I do them. what am I doing wrong?",
      "knees hurt squatting - form mistake?"],
   S=[(1, "hurt", "ache")],
   R=[(0, "what am I doing wrong? my knees hurt when I do squats")],
   ent=["my lower back hurts when I do squats, what am I doing wrong?", "my knees hurt when I do lunges, what am I doing wrong?"],
   temp=["my knees hurt the day after I do squats, what am I doing wrong?"])

sc("health",
   B=["I can't fall asleep at night even though I'm tired. what can I do?",
      "What can I do when I'm tired but can't fall asleep at night?",
      "tired but cant fall asleep at night, any tips?",
      "How can I fall asleep at night when I'm tired but just can't?"],
   V=["lately it's the same every night: I'm exhausted when I go to bed but I just lie there and can't fall asleep. what can I do?",
      "tired, can't fall asleep at night - help?"],
   S=[(2, "tips", "suggestions")],
   R=[(0, "even though I'm tired, I can't fall asleep at night. what can I do?")],
   nocue=["I fall asleep way too easily, even at my desk during the day. what can I do?"],
   neg=["I can fall asleep at night but can't stay asleep. what can I do?"],
   cond=["I can't fall asleep at night even though I'm tired, and I'm 7 months pregnant. what can I do?"],
   ent=["my 8 year old can't fall asleep at night even though he's tired. what can I do?"],
   temp=["I can't fall asleep during the day after my night shifts even though I'm tired. what can I do?"])

sc("health",
   B=["how many hours before bed should I stop drinking coffee?",
      "How long before bedtime should I have my last coffee?",
      "coffee cutoff - how many hrs before bed?",
      "When should I have my last cup of coffee before going to sleep?"],
   V=["I love my afternoon coffee but I think it might be keeping me up. how many hours before bed should I stop drinking it?",
      "last coffee how many hrs before bed?"],
   S=[(1, "bedtime", "going to sleep")],
   R=[(3, "Before going to sleep, when should I have my last cup of coffee?")],
   ent=["how many hours before bed should I stop drinking alcohol?", "how many hours before bed should I stop eating?"],
   temp=["how many hours after waking up should I have my first coffee?"],
   cond=["how many hours before bed should I stop drinking coffee if I'm pregnant?"])

sc("health",
   B=["what SPF sunscreen should I use for a day at the beach?",
      "What SPF do I need for a beach day?",
      "beach day - what spf should i wear?",
      "Which SPF is best for spending the day at the beach?"],
   V=["we're heading to the beach this weekend for a whole day in the sun. what SPF sunscreen should I use?",
      "spf for beach day?"],
   S=[(3, "best", "ideal")],
   R=[(0, "for a day at the beach, what SPF sunscreen should I use?")],
   ent=["what SPF sunscreen should I use for my 4 month old at the beach?"],
   scope=["what SPF sunscreen should I use for a 10 minute walk to work?"],
   cond=["what SPF sunscreen should I use for a day at the beach if I'm taking doxycycline?"])

sc("health",
   B=["how much vitamin D should an adult take per day?",
      "What's the recommended daily vitamin D intake for adults?",
      "adult vitamin d dose per day?",
      "How many IU of vitamin D should a grown-up take daily?"],
   V=["I've been reading that lots of people are low in vitamin D. how much vitamin D should an adult take each day?",
      "vit D daily dose for adults?"],
   S=[(0, "per day", "daily"), (3, "grown-up", "grown adult")],
   R=[(0, "per day, how much vitamin D should an adult take?")],
   ent=["how much vitamin D should a newborn take per day?", "how much vitamin C should an adult take per day?",
        "how much vitamin D should my dog take per day?"],
   scope=["how much vitamin D should an adult take per week?"],
   cond=["how much vitamin D should an adult take per day if their blood test shows a severe deficiency?"])

sc("health",
   B=["can I take ibuprofen for a headache if I'm on blood pressure meds?",
      "Is ibuprofen safe for a headache when I take blood pressure medication?",
      "on bp meds - ok to take ibuprofen for a headache?",
      "I take medication for blood pressure. Can I use ibuprofen for a headache?"],
   V=["I've got a pounding headache and the only thing in the cabinet is ibuprofen, but I take blood pressure medication every day. can I take it?",
      "ibuprofen + blood pressure meds for headache ok?"],
   S=[(1, "safe", "okay")],
   R=[(0, "if I'm on blood pressure meds, can I take ibuprofen for a headache?")],
   ent=["can I take acetaminophen for a headache if I'm on blood pressure meds?",
        "can I take ibuprofen for a headache if I'm on blood thinners?"],
   neg=["can I take ibuprofen for a headache if I'm not on any medications?"])

sc("health",
   B=["I've had a headache for a few hours, should I see a doctor?",
      "Should I see a doctor for a headache that's lasted a few hours?",
      "headache for a few hours now - doctor or not?",
      "Is a headache that's been going for a few hours a reason to see a doctor?"],
   V=["I've had this dull headache since lunch, so a few hours now. should I go see a doctor about it?",
      "few-hour headache, see doctor?"],
   S=[(0, "see", "go to")],
   R=[(0, "should I see a doctor? I've had a headache for a few hours")],
   scope=["I've had a headache every day for two weeks, should I see a doctor?"],
   cond=["I've had a headache for a few hours and now my vision is blurry, should I see a doctor?"],
   ent=["my 6 year old has had a headache for a few hours, should I take him to a doctor?"])

sc("health",
   B=["is it ok to drink a glass of wine every night?",
      "Is having a glass of wine every night bad for you?",
      "glass of wine every night - ok or not?",
      "Is drinking one glass of wine each night okay for my health?"],
   V=["I've gotten into the habit of having a glass of wine with dinner every night to unwind. is that ok health-wise?",
      "1 glass wine nightly ok?"],
   S=[(3, "each", "every")],
   R=[(0, "every night, is it ok to drink a glass of wine?")],
   scope=["is it ok to drink a glass of wine once a month?", "is it ok to drink a whole bottle of wine every night?"],
   cond=["is it ok to drink a glass of wine every night if I'm on antidepressants?"])

sc("health",
   B=["what foods should I eat when I have the stomach flu?",
      "What's good to eat when I've got the stomach flu?",
      "stomach flu, what should i eat",
      "Which foods are best to eat during a stomach bug?"],
   V=["I came down with the stomach flu yesterday and I'm finally a bit hungry. what foods should I eat?",
      "stomach flu foods?"],
   S=[(3, "best", "ideal")],
   R=[(0, "when I have the stomach flu, what foods should I eat?")],
   neg=["what foods should I not eat when I have the stomach flu?"],
   nocue=["what foods should I avoid when I have the stomach flu?"],
   ent=["what foods should my 1 year old eat when she has the stomach flu?"])

sc("health",
   B=["what exercises are safe during pregnancy?",
      "Which exercises can I safely do while pregnant?",
      "safe workouts when pregnant?",
      "What kinds of exercise are safe to do when you're pregnant?"],
   V=["I just found out I'm pregnant and I really want to keep working out. what exercises are safe to do?",
      "pregnancy-safe exercises, which ones?"],
   S=[(2, "workouts", "exercises")],
   R=[(0, "during pregnancy, what exercises are safe?")],
   neg=["what exercises are not safe during pregnancy?"],
   nocue=["what exercises should I avoid during pregnancy?"],
   temp=["what exercises are safe in the first 6 weeks after giving birth?"])

# ---------------------------------------------------------------------------
# gardening
# ---------------------------------------------------------------------------
sc("gardening",
   B=["when should I plant tomatoes outside in zone 6?",
      "What's the right time to plant tomato plants outdoors in USDA zone 6?",
      "zone 6 - when can i put my tomatoes in the ground?",
      "when is it safe to plant tomatoes outdoors if I'm in zone 6"],
   V=["this is my first year growing a vegetable garden! I live in zone 6, when should I be planting my tomatoes outside?",
      "zone 6 tomato outdoor planting date?"],
   S=[(1, "right", "correct"), (0, "outside", "outdoors")],
   R=[(0, "in zone 6, when should I plant tomatoes outside?")],
   num=["when should I plant tomatoes outside in zone 9?", "when should I plant tomatoes outside in zone 4?"],
   ent=["when should I plant garlic outside in zone 6?", "when should I plant peppers outside in zone 6?"],
   temp=["when should I start tomato seeds indoors in zone 6?"],
   ant=["when should I pull out my tomato plants in zone 6?"])

sc("gardening",
   B=["how often should I water my succulents indoors?",
      "How frequently do indoor succulents need watering?",
      "indoor succulents - how often to water?",
      "what's a good watering schedule for succulents kept inside?"],
   V=["I keep killing my succulents and I think I'm watering them wrong. they live inside on a windowsill. how often should I water them?",
      "indoor succulent water frequency?"],
   S=[(0, "often", "frequently"), (3, "kept inside", "kept indoors")],
   R=[(0, "indoors, how often should I water my succulents?")],
   ent=["how often should I water my ferns indoors?", "how often should I water my succulents outdoors in Arizona?"],
   temp=["how often should I water my succulents indoors in winter?"])

sc("gardening",
   B=["why are the leaves on my basil plant turning yellow?",
      "My basil plant's leaves are turning yellow. Why?",
      "basil leaves going yellow, what's causing it?",
      "what's making the leaves on my basil turn yellow"],
   V=["I've got a basil plant on my kitchen windowsill and lately a bunch of its leaves are turning yellow. why is that happening?",
      "basil yellow leaves why?"],
   S=[(2, "causing", "behind"), (0, "turning", "going")],
   R=[(1, "Why are my basil plant's leaves turning yellow?")],
   ent=["why are the leaves on my mint plant turning yellow?", "why are the leaves on my basil plant getting black spots?"],
   temp=["why did the leaves on my basil plant turn yellow right after I repotted it?"],
   scope=["why are just the bottom few leaves on my basil plant turning yellow?"])

sc("gardening",
   B=["how short should I cut my grass in the summer?",
      "What height should I mow my lawn to during summer?",
      "summer lawn mowing height?",
      "how low should I set my mower for summer"],
   V=["our lawn always looks burnt by August. what height should I be mowing my grass to during the summer months?",
      "grass cut height in summer?"],
   S=[(0, "cut", "mow")],
   R=[(0, "in the summer, how short should I cut my grass?")],
   temp=["how short should I cut my grass for the last mow in the fall?", "how short should I cut my grass on the first mow of spring?"])

sc("gardening",
   B=["my tomato seeds haven't sprouted after 10 days, is that normal?",
      "Is it normal for tomato seeds to not sprout after 10 days?",
      "tomato seeds still not up after 10 days - normal?",
      "It's been 10 days and my tomato seeds haven't come up yet. Is that normal?"],
   V=["I planted tomato seeds indoors in little trays 10 days ago and nothing has sprouted yet. is that normal?",
      "no tomato sprouts after 10 days, normal?"],
   S=[(0, "normal", "typical")],
   R=[(0, "is it normal that my tomato seeds haven't sprouted after 10 days?")],
   num=["my tomato seeds haven't sprouted after 30 days, is that normal?"],
   neg=["my tomato seeds sprouted after 10 days, is that normal?"],
   ent=["my pepper seeds haven't sprouted after 10 days, is that normal?"])

sc("gardening",
   B=["what plants are safe for cats?",
      "Which houseplants are safe to have around cats?",
      "cat safe houseplants?",
      "What are some houseplants that are safe for cats?"],
   V=["I'm trying to add more greenery to my apartment but I have two curious cats. which plants are safe for them?",
      "plants safe for cats?"],
   S=[(3, "some", "a few")],
   R=[(0, "for cats, what plants are safe?")],
   neg=["what plants are not safe for cats?"],
   ant=["what plants are toxic to cats?"],
   ent=["what plants are safe for dogs?", "what plants are safe for rabbits?"])

sc("gardening",
   B=["my tomato plants are getting too much sun, what should I do?",
      "What can I do about my tomato plants getting too much sun?",
      "tomato plants getting way too much sun, help?",
      "How do I deal with tomato plants that are getting too much sun?"],
   V=["my tomato plants are in a spot that gets sun all day and the leaves look scorched, I think they're getting too much sun. what should I do?",
      "tomatoes too much sun - fix?"],
   S=[(3, "deal with", "handle")],
   R=[(0, "what should I do? my tomato plants are getting too much sun")],
   ant=["my tomato plants are getting too little sun, what should I do?"],
   neg=["my tomato plants are not getting enough sun, what should I do?"],
   ent=["my lettuce is getting too much sun, what should I do?"])

sc("gardening",
   B=["what can I put in my compost bin?",
      "What things can go in a compost bin?",
      "what's ok to compost?",
      "What am I allowed to put in my compost bin?"],
   V=["we just set up a compost bin in the backyard and the kids want to help. what can we put in it?",
      "compost bin - what goes in?"],
   S=[(1, "things", "items")],
   R=[(0, "in my compost bin, what can I put?")],
   neg=["what can't I put in my compost bin?", "what should never go in a compost bin?"],
   nocue=["what should I keep out of my compost bin?"])

# ---------------------------------------------------------------------------
# cars
# ---------------------------------------------------------------------------
sc("cars",
   B=["my check engine light just came on but the car drives fine. is it safe to keep driving?",
      "Check engine light came on, but the car seems to run normally. Can I keep driving it?",
      "check engine light on, car driving normally - ok to keep driving?",
      "is it ok to keep driving if my check engine light came on but everything feels normal"],
   V=["I was driving home from work today and my check engine light came on out of nowhere. the car feels totally fine though. is it safe to keep driving it?",
      "check engine light on, drives fine, safe to drive?"],
   S=[(0, "safe", "okay"), (1, "normally", "fine")],
   R=[(0, "is it safe to keep driving? my check engine light just came on but the car drives fine")],
   cond=["my check engine light just came on and it's flashing, but the car drives fine. is it safe to keep driving?"],
   ent=["my oil pressure light just came on but the car drives fine. is it safe to keep driving?",
        "my tire pressure light just came on but the car drives fine. is it safe to keep driving?"],
   scope=["my check engine light has been on for 6 months but the car drives fine. is it safe to keep driving?"],
   neg=["my check engine light just came on and the car doesn't drive right, it's shaking. is it safe to keep driving?"])

sc("cars",
   B=["how often should I change the oil in my 2018 Toyota Camry?",
      "What's the oil change interval for a 2018 Toyota Camry?",
      "2018 camry - how often do i need an oil change?",
      "How many miles should I go between oil changes on a 2018 Camry?"],
   V=["I bought a 2018 Toyota Camry a couple months ago and I'm not sure about maintenance. how often should I be changing the oil?",
      "2018 Camry oil change interval?"],
   S=[(1, "interval", "frequency")],
   R=[(0, "in my 2018 Toyota Camry, how often should I change the oil?")],
   num=["how often should I change the oil in my 2004 Toyota Camry?"],
   ent=["how often should I change the oil in my 2018 Harley-Davidson?",
        "how often should I change the transmission fluid in my 2018 Toyota Camry?"],
   cond=["how often should I change the oil in my 2018 Toyota Camry if I mostly do short trips and tow a trailer?"],
   fmt=["answer in kilometers only: how often should I change the oil in my 2018 Toyota Camry?"])

sc("cars",
   B=["what tire pressure should I use on my 2015 Honda CR-V?",
      "Recommended tire pressure for a 2015 Honda CR-V?",
      "2015 CR-V tire psi?",
      "How much air should I put in the tires of my 2015 Honda CR-V?"],
   V=["my tires look a little low and I'm at the gas station right now. what pressure should the tires be on my 2015 Honda CR-V?",
      "tire pressure 2015 crv"],
   S=[(1, "Recommended", "Suggested")],
   R=[(0, "on my 2015 Honda CR-V, what tire pressure should I use?")],
   ent=["what tire pressure should I use on my 2015 Honda Odyssey?",
        "what tire pressure should I use for the spare tire on my 2015 Honda CR-V?"],
   num=["what tire pressure should I use on my 1999 Honda CR-V?"],
   fmt=["in bar, not psi: what tire pressure should I use on my 2015 Honda CR-V?"])

sc("cars",
   B=["my car makes a clicking noise and won't start on cold mornings. is it the battery?",
      "On cold mornings my car just clicks and won't start - is that the battery?",
      "car clicking, wont start when its cold in the morning. battery?",
      "Could the battery be why my car clicks and won't start on cold mornings?"],
   V=["every time it gets cold out, my car just makes a clicking sound in the morning and won't start. is that the battery?",
      "clicks + no start on cold mornings = battery?"],
   S=[(0, "noise", "sound")],
   R=[(1, "My car just clicks and won't start on cold mornings - is that the battery?")],
   ant=["my car makes a clicking noise and won't start on hot afternoons. is it the battery?"],
   neg=["my car makes a clicking noise on cold mornings but starts fine. is it the battery?"],
   ent=["my car makes a clicking noise and won't start on cold mornings. is it the starter?"])

sc("cars",
   B=["someone rear-ended me while I was stopped at a red light. will my insurance go up?",
      "I was stopped at a red light and got rear-ended. Will my car insurance premium increase?",
      "got rear ended at a red light (i was stopped), will my insurance rates go up?",
      "Will my insurance rates rise if another driver hit me from behind while I was stopped at a red light?"],
   V=["ugh, bad day. I was sitting at a red light minding my own business and some guy rear-ended me. will my insurance go up because of this?",
      "rear-ended at red light, my rates go up?"],
   S=[(1, "increase", "go up"), (3, "rise", "increase")],
   R=[(0, "will my insurance go up? someone rear-ended me while I was stopped at a red light")],
   role=["I rear-ended someone while they were stopped at a red light. will my insurance go up?",
         "I hit the car in front of me while it was stopped at a red light, will my insurance rates go up?"],
   cond=["someone rear-ended me while I was stopped at a red light, but they had no insurance. will my insurance go up?"])

sc("cars",
   B=["is 120,000 miles too much for a used car?",
      "Is 120k miles too high mileage for a used car?",
      "used car with 120000 miles, too many?",
      "Would 120,000 miles be too much mileage on a used car?"],
   V=["I'm looking at a used car that's got 120,000 miles on it and it's in my price range. is that too much mileage?",
      "120k miles used car - too much?"],
   S=[(1, "high", "much")],
   R=[(0, "for a used car, is 120,000 miles too much?")],
   num=["is 40,000 miles too much for a used car?", "is 120,000 km too much for a used car?"],
   ent=["is 120,000 miles too much for a used motorcycle?"],
   cond=["is 120,000 miles too much for a used car if it has full service records and a new timing belt?"])

sc("cars",
   B=["my sister borrowed my car and got a parking ticket. who has to pay it?",
      "Who pays the parking ticket when my sister got it while borrowing my car?",
      "sister got a parking ticket in my car while borrowing it, who pays?",
      "My sister borrowed my car and got a parking ticket - who's responsible for paying it?"],
   V=["so my sister borrowed my car last weekend and came back with a parking ticket on the windshield. who actually has to pay it?",
      "sister borrowed car, got parking ticket - who pays?"],
   S=[(3, "responsible for paying", "on the hook for")],
   R=[(0, "who has to pay the parking ticket? my sister borrowed my car and got it")],
   role=["I borrowed my sister's car and got a parking ticket. who has to pay it?"],
   ent=["my sister borrowed my car and got a speeding ticket from a camera. who has to pay it?"])

sc("cars",
   B=["is it better to lease or buy a car if I drive a lot?",
      "If I put a lot of miles on my car, should I lease or buy?",
      "lease vs buy a car when you drive a ton?",
      "I drive a lot. Is leasing or buying a car the better choice?"],
   V=["my new job has a long commute so I'll be driving a lot. is it better to lease or buy a car?",
      "high mileage driver: lease or buy?"],
   S=[(3, "choice", "option")],
   R=[(0, "if I drive a lot, is it better to buy or lease a car?")],
   ant=["is it better to lease or buy a car if I barely drive?"],
   ent=["is it better to lease or buy a truck for my business if I drive a lot?"])

# ---------------------------------------------------------------------------
# homework
# ---------------------------------------------------------------------------
sc("homework",
   B=["explain photosynthesis for a 5th grade science project",
      "Can you explain photosynthesis at a 5th grade level for my science project?",
      "need photosynthesis explained for a 5th grade science project",
      "explain how photosynthesis works for a fifth grade science project"],
   V=["Hi, my son is working on his 5th grade science project tonight and he's stuck. could you explain photosynthesis in a way that fits a 5th grade project?",
      "photosynthesis, 5th grade level, science project"],
   S=[(0, "explain", "describe")],
   R=[(0, "for a 5th grade science project, explain photosynthesis")],
   num=["explain photosynthesis for a 2nd grade science project", "explain photosynthesis for a 12th grade AP biology project"],
   ent=["explain cellular respiration for a 5th grade science project"],
   fmt=["explain photosynthesis for a 5th grade science project in exactly 3 sentences",
        "write a short rhyming poem about photosynthesis for a 5th grade science project"])

sc("homework",
   B=["solve 3x + 5 = 20", "How do I solve 3x + 5 = 20?", "can u solve 3x+5=20", "what is x if 3x + 5 = 20"],
   V=["my daughter has this on her algebra homework and I can't remember how to do these anymore lol: 3x + 5 = 20. can you solve it?",
      "solve for x: 3x+5=20"],
   S=[(1, "solve", "work out")],
   R=[(3, "if 3x + 5 = 20, what is x")],
   num=["solve 3x + 5 = 26", "solve 3x - 5 = 20", "solve 5x + 3 = 20"],
   fmt=["solve 3x + 5 = 20, just the final answer, no steps"])

sc("homework",
   B=["write a 300 word essay on the causes of World War 1 for my 9th grade history class",
      "Can you write a 300-word essay about the causes of WWI for 9th grade history?",
      "need a 300 word essay on what caused world war 1, 9th grade history",
      "300-word essay for 9th grade history class: the causes of World War One"],
   V=["I have a 9th grade history assignment due tomorrow and I'm totally stuck. could you write a 300 word essay on the causes of World War 1 for me?",
      "300w essay, causes of WW1, 9th grade"],
   S=[(0, "write", "compose")],
   R=[(0, "for my 9th grade history class, write a 300 word essay on the causes of World War 1")],
   autofmt="lang",
   num=["write a 1000 word essay on the causes of World War 1 for my 9th grade history class",
        "write a 300 word essay on the causes of World War 1 for my 4th grade history class"],
   ent=["write a 300 word essay on the causes of World War 2 for my 9th grade history class"],
   ant=["write a 300 word essay on the effects of World War 1 for my 9th grade history class"],
   fmt=["give me a bullet point outline, not a full essay, on the causes of World War 1 for my 9th grade history class"])

sc("homework",
   B=["what's 3/4 of 24?", "What is three quarters of 24?", "3/4 of 24 = ?", "how much is three fourths of 24"],
   V=["helping with my kid's math homework and my brain is fried. what's 3/4 of 24?", "3/4 x 24?"],
   num=["what's 3/8 of 24?", "what's 3/4 of 36?"],
   role=["24 is 3/4 of what number?"])

sc("homework",
   B=["when do I use affect vs effect?", "What's the difference between affect and effect?", "affect or effect - which one when?", "how do I know whether to use affect or effect"],
   V=["I'm writing a cover letter and I always get mixed up between affect and effect. when do I use which?", "affect vs effect?"],
   R=[(0, "when do I use effect vs affect?")],
   ent=["what's the difference between then and than?", "when do I use fewer vs less?"],
   fmt=["explain affect vs effect with a silly mnemonic, 2 lines max"])

sc("homework",
   B=["how do I convert Celsius to Fahrenheit?", "What's the formula to convert Celsius into Fahrenheit?", "celsius to fahrenheit conversion?", "How do you change a temperature from Celsius to Fahrenheit?"],
   V=["my son's science worksheet wants all the temperatures in Fahrenheit but they're given in Celsius. how do I convert Celsius to Fahrenheit?",
      "C to F formula?"],
   S=[(1, "formula", "equation")],
   R=[(0, "how do I convert to Fahrenheit from Celsius?")],
   role=["how do I convert Fahrenheit to Celsius?", "f to c conversion?"],
   ent=["how do I convert Celsius to Kelvin?"],
   fmt=["how do I convert Celsius to Fahrenheit? reply with only the formula, nothing else"])

sc("homework",
   B=["can you help me write a thesis statement for an essay on social media and teen mental health?",
      "Help me come up with a thesis statement for my essay about social media's effect on teen mental health",
      "need a thesis statement, essay topic: social media + teen mental health",
      "I need a thesis statement for an essay about how social media affects teenagers' mental health. can you help?"],
   V=["I've been staring at a blank page for an hour. my essay is about social media and teen mental health and I can't come up with a thesis statement. can you help?",
      "thesis statement: social media & teen mental health"],
   S=[(1, "come up with", "develop")],
   R=[(0, "for an essay on social media and teen mental health, can you help me write a thesis statement?")],
   ent=["can you help me write a thesis statement for an essay on video games and teen mental health?",
        "can you help me write a conclusion for an essay on social media and teen mental health?"],
   cond=["can you help me write a thesis statement for an essay arguing that social media is good for teen mental health?"],
   num=["can you give me five different thesis statements for an essay on social media and teen mental health?"])

# ---------------------------------------------------------------------------
# office software
# ---------------------------------------------------------------------------
sc("office",
   B=["how do I use VLOOKUP in Excel to pull prices from another sheet?",
      "How can I use VLOOKUP to get prices from a different sheet in Excel?",
      "excel vlookup to grab prices from another sheet - how?",
      "In Excel, how do I do a VLOOKUP that pulls prices over from another worksheet?"],
   V=["I have a product list on one sheet and a price list on another sheet in the same Excel file. how do I use VLOOKUP to pull the prices across?",
      "vlookup prices from other sheet, excel"],
   S=[(1, "different", "separate"), (2, "grab", "pull")],
   R=[(0, "in Excel, how do I use VLOOKUP to pull prices from another sheet?")],
   ent=["how do I use VLOOKUP in Google Sheets to pull prices from another spreadsheet file?",
        "how do I use XLOOKUP in Excel to pull prices from another sheet?",
        "how do I use VLOOKUP in Excel to pull prices from a different workbook?"],
   neg=["why is my VLOOKUP in Excel not pulling prices from another sheet?"],
   cond=["how do I use VLOOKUP in Excel to pull prices from another sheet when the price column is to the left of the product names?"],
   fmt=["just the formula, no explanation: VLOOKUP in Excel pulling prices from another sheet"])

sc("office",
   B=["how do I start page numbers on page 3 in Word?",
      "In Microsoft Word, how can I make page numbering begin on page 3?",
      "word: start page numbers from page 3?",
      "How do I get page numbers to start on the third page of my Word document?"],
   V=["my report has a title page and a table of contents, and my professor wants page numbers to start on page 3. how do I do that in Word?",
      "word page numbers from p3?"],
   S=[(0, "start", "begin")],
   R=[(0, "in Word, how do I start page numbers on page 3?")],
   num=["how do I start page numbers on page 2 in Word?"],
   ent=["how do I start page numbers on page 3 in Google Docs?"],
   ant=["how do I remove all the page numbers in Word?"])

sc("office",
   B=["how do I set up an out of office reply in Outlook?",
      "How can I turn on automatic out-of-office replies in Outlook?",
      "outlook out of office message, how do i set it up",
      "Setting up an out-of-office auto reply in Outlook - how?"],
   V=["I'm going on vacation next week for the first time in ages and I need to set up an out of office reply in Outlook before I leave. how do I do that?",
      "outlook OOO setup?"],
   S=[(1, "turn on", "enable"), (0, "set up", "configure")],
   R=[(0, "in Outlook, how do I set up an out of office reply?")],
   ant=["how do I turn off the out of office reply in Outlook?"],
   ent=["how do I set up an out of office reply in Gmail?"],
   cond=["how do I set up an out of office reply in Outlook that only goes to people inside my company?"],
   temp=["how do I schedule an out of office reply in Outlook to start automatically next Friday?"])

sc("office",
   B=["how do I convert a PDF to a Word document for free?",
      "What's a free way to turn a PDF into a Word doc?",
      "convert pdf to word free?",
      "is there a free way to change a PDF into an editable Word file"],
   V=["my landlord sent me the lease as a PDF and I need to edit a couple of things. how do I convert the PDF to a Word document without paying for anything?",
      "pdf -> word, free, how?"],
   S=[(1, "turn", "convert")],
   R=[(0, "for free, how do I convert a PDF to a Word document?")],
   role=["how do I convert a Word document to a PDF for free?", "What's a free way to turn a Word doc into a PDF?"],
   ent=["how do I convert a PDF to an Excel spreadsheet for free?"],
   cond=["how do I convert a scanned PDF of handwritten notes to a Word document for free?"])

sc("office",
   B=["how do I make a dropdown list in Google Sheets?",
      "How can I add a drop-down menu to a cell in Google Sheets?",
      "google sheets dropdown list how to",
      "Creating a drop down list in a Google Sheets cell - how?"],
   V=["I'm making a chore chart for my kids in Google Sheets and want a dropdown in each cell. how do I make one?",
      "gsheets dropdown list, how?"],
   S=[(1, "drop-down menu", "drop-down list")],
   R=[(0, "in Google Sheets, how do I make a dropdown list?")],
   ent=["how do I make a dropdown list in Excel?"],
   ant=["how do I remove a dropdown list in Google Sheets?"],
   cond=["how do I make a dropdown list in Google Sheets that changes based on what's picked in another dropdown?"])

sc("office",
   B=["how do I move photos from my iPhone to my Windows laptop?",
      "What's the easiest way to transfer photos from an iPhone to a Windows laptop?",
      "iphone photos to windows laptop - how do i move them",
      "How can I get my iPhone photos onto my Windows laptop?"],
   V=["my iPhone storage is full, mostly photos of the kids, and I'd like them on my Windows laptop instead. how do I move them over?",
      "iphone -> windows laptop photo transfer?"],
   S=[(0, "move", "transfer")],
   R=[(0, "to my Windows laptop, how do I move photos from my iPhone?")],
   role=["how do I move photos from my Windows laptop to my iPhone?"],
   ent=["how do I move photos from my iPhone to my MacBook?", "how do I move photos from my Android phone to my Windows laptop?"])

sc("office",
   B=["can I transfer my Spotify playlists to Apple Music?",
      "Is there a way to move my playlists from Spotify over to Apple Music?",
      "spotify playlists -> apple music, possible?",
      "How do I get my Spotify playlists into Apple Music?"],
   V=["I'm finally switching from Spotify to Apple Music but I've got years of playlists. can I transfer them over?",
      "move spotify playlists to apple music?"],
   S=[(0, "transfer", "move")],
   R=[(0, "to Apple Music, can I transfer my Spotify playlists?")],
   role=["can I transfer my Apple Music playlists to Spotify?"],
   ent=["can I transfer my Spotify playlists to YouTube Music?"])

sc("office",
   B=["how do I recall an email I sent in Outlook?",
      "Is there a way to unsend an email in Outlook?",
      "sent an email in outlook by mistake, how do i recall it",
      "How can I take back an email I already sent in Outlook?"],
   V=["oh no, I just sent an email to the whole team in Outlook that was meant for one person. how do I recall it?",
      "outlook recall sent email?"],
   S=[(1, "unsend", "recall")],
   R=[(0, "in Outlook, how do I recall an email I sent?")],
   ent=["how do I recall an email I sent in Gmail?"],
   temp=["how do I delay emails in Outlook so I have time to cancel them before they go out?"])

# ---------------------------------------------------------------------------
# relationships
# ---------------------------------------------------------------------------
sc("relationships",
   B=["my boyfriend forgot my birthday, should I be upset?",
      "Is it reasonable to be upset that my boyfriend forgot my birthday?",
      "bf forgot my bday... am i allowed to be upset?",
      "Is it ok to feel upset that my boyfriend forgot my birthday?"],
   V=["so yesterday was my birthday and my boyfriend completely forgot about it. should I be upset?",
      "bf forgot bday, ok to be upset?"],
   S=[(1, "reasonable", "fair")],
   R=[(0, "should I be upset? my boyfriend forgot my birthday")],
   role=["I forgot my boyfriend's birthday, should he be upset?"],
   ent=["my boss forgot my birthday, should I be upset?"],
   scope=["my boyfriend forgets my birthday every single year, should I be upset?"])

sc("relationships",
   B=["my best friend didn't invite me to her wedding. how do I deal with it?",
      "How do I cope with my best friend not inviting me to her wedding?",
      "wasn't invited to my best friend's wedding, how do i deal",
      "My best friend left me off her wedding guest list. How should I handle it?"],
   V=["I'm honestly so hurt right now. my best friend since high school is getting married and didn't invite me to the wedding. how do I deal with this?",
      "best friend didn't invite me to wedding, how to cope?"],
   S=[(1, "cope with", "deal with"), (3, "handle", "deal with")],
   R=[(0, "how do I deal with it? my best friend didn't invite me to her wedding")],
   role=["I didn't invite my best friend to my wedding and she's hurt. how do I deal with it?",
         "I left my best friend off my wedding guest list, how should I handle it?"],
   ent=["my sister didn't invite me to her wedding. how do I deal with it?"],
   neg=["my best friend invited me to her wedding but I really can't go. how do I deal with it?"])

sc("relationships",
   B=["help me write a text apologizing to my sister for missing her birthday dinner",
      "Can you write a text message to my sister saying sorry for missing her birthday dinner?",
      "write an apology text to my sister, i missed her bday dinner",
      "I need a text to apologize to my sister because I missed her birthday dinner"],
   V=["I feel terrible, I completely missed my sister's birthday dinner. can you help me write a text to apologize to her?",
      "apology text to sister, missed her bday dinner"],
   S=[(3, "apologize", "say sorry")],
   R=[(0, "help me write a text to my sister apologizing for missing her birthday dinner")],
   role=["help me write a text to my sister telling her I was hurt she missed my birthday dinner"],
   ent=["help me write a text apologizing to my mom for missing her birthday dinner"],
   temp=["help me write a text apologizing to my sister in advance because I'm going to miss her birthday dinner"],
   fmt=["help me write a long heartfelt letter apologizing to my sister for missing her birthday dinner",
        "write a funny, jokey text apologizing to my sister for missing her birthday dinner"])

sc("relationships",
   B=["my coworker keeps taking credit for my work in meetings. how do I handle it?",
      "How should I deal with a coworker who keeps taking credit for my work in meetings?",
      "coworker always takes credit for my work in meetings, what do i do",
      "What do I do about a colleague who repeatedly takes credit for my work during meetings?"],
   V=["I do the work and then my coworker keeps presenting it in our meetings like it was hers. it's so frustrating. how do I handle this?",
      "coworker stealing credit for my work in meetings - what to do?"],
   S=[(0, "handle", "deal with"), (3, "colleague", "coworker")],
   R=[(0, "in meetings, my coworker keeps taking credit for my work. how do I handle it?")],
   role=["my coworker says I keep taking credit for her work in meetings. how do I handle it?"],
   ent=["my boss keeps taking credit for my work in meetings. how do I handle it?"],
   scope=["my coworker took credit for my work once in a meeting. how do I handle it?"])

sc("relationships",
   B=["my husband wants me to quit my job to stay home with the kids. how do I talk to him about it?",
      "How do I talk to my husband about him wanting me to quit my job and stay home with our kids?",
      "husband wants me to quit my job and be a stay at home mom, how do i talk to him about it",
      "My husband wants me to leave my job and stay home with the kids - how do I discuss it with him?"],
   V=["we've been going back and forth for weeks. my husband really wants me to quit my job so I can stay home with the kids. how do I talk to him about it?",
      "husband wants me to quit & stay home w/ kids, how to discuss?"],
   S=[(3, "discuss it", "talk about it")],
   R=[(0, "how do I talk to my husband about it? he wants me to quit my job to stay home with the kids")],
   role=["I want my husband to quit his job to stay home with the kids. how do I talk to him about it?"],
   ent=["my mother-in-law wants me to quit my job to stay home with the kids. how do I talk to her about it?"])

sc("relationships",
   B=["my boss keeps texting me on weekends. is that ok?",
      "Is it acceptable for my boss to keep texting me on the weekends?",
      "boss always texts me on weekends, is that normal/ok?",
      "Is it ok that my manager keeps sending me texts on weekends?"],
   V=["every Saturday and Sunday my phone buzzes with texts from my boss about work stuff. is that ok?",
      "boss texting me every weekend ok?"],
   S=[(1, "acceptable", "appropriate")],
   R=[(0, "is that ok? my boss keeps texting me on weekends")],
   role=["I keep texting my employees on weekends. is that ok?"],
   scope=["my boss texted me once on a weekend about an emergency. is that ok?"],
   temp=["my boss keeps texting me at 2am on weeknights. is that ok?"])

sc("relationships",
   B=["what should I say to a friend whose dad just died?",
      "What do I say to my friend after her father passed away?",
      "friend's dad just died, what do i say to her",
      "What are good things to say to a friend who just lost her dad?"],
   V=["my close friend texted me this morning that her dad died last night. I want to be there for her, what should I say?",
      "what to say to friend whose dad died?"],
   S=[(1, "passed away", "died")],
   R=[(0, "to a friend whose dad just died, what should I say?")],
   neg=["what should I not say to a friend whose dad just died?"],
   nocue=["what should I avoid saying to a friend whose dad just died?"],
   ent=["what should I say to a friend whose dog just died?"],
   temp=["what should I say to a friend whose dad died a year ago today?"],
   fmt=["write a short sympathy card message for a friend whose dad just died"])

sc("relationships",
   B=["my teenage son won't talk to me anymore, how do I reconnect with him?",
      "How can I reconnect with my teenage son who has stopped talking to me?",
      "teen son doesn't talk to me anymore, how to reconnect",
      "How do I rebuild my relationship with my teenage son now that he won't talk to me?"],
   V=["my son is 15 and for the last few months he barely says a word to me, just shuts himself in his room. how do I reconnect with him?",
      "teen son won't talk to me, reconnect how?"],
   S=[(0, "reconnect with", "get closer to")],
   R=[(0, "how do I reconnect with my teenage son? he won't talk to me anymore")],
   ent=["my teenage daughter won't talk to me anymore, how do I reconnect with her?",
        "my adult son won't talk to me anymore, how do I reconnect with him?"],
   role=["my teenage son says I won't talk to him anymore, how do I reconnect with him?"])

sc("relationships",
   B=["how do I tell my parents I'm dropping out of college?",
      "What's the best way to tell my parents I'm leaving college?",
      "dropping out of college, how do i break it to my parents",
      "How should I break the news to my parents that I'm dropping out of college?"],
   V=["I've thought about it for months and I've decided to drop out of college. now I have to tell my parents. how do I do that?",
      "telling parents I'm dropping out - how?"],
   S=[(2, "break it to", "tell")],
   R=[(0, "dropping out of college - how do I tell my parents?")],
   role=["how do I tell my son I want him to drop out of college?"],
   temp=["how do I tell my parents I dropped out of college last semester without telling them?"],
   ent=["how do I tell my parents I'm changing my major?"])

sc("relationships",
   B=["my daughter's friends keep excluding her at recess. what should I do?",
      "What can I do about my daughter being left out by her friends at recess?",
      "daughter's friends keep leaving her out at recess, what do i do",
      "How should I handle my daughter's friends excluding her at recess?"],
   V=["my 8 year old came home crying again today because her friends keep excluding her at recess. what should I do?",
      "daughter excluded at recess by friends - what to do?"],
   S=[(1, "left out", "excluded")],
   R=[(0, "what should I do? my daughter's friends keep excluding her at recess")],
   role=["my daughter keeps excluding her friends at recess. what should I do?"],
   scope=["my daughter's friends excluded her at recess once today. what should I do?"])

# ---------------------------------------------------------------------------
# small business
# ---------------------------------------------------------------------------
sc("business",
   B=["how should I price cupcakes for my home bakery?",
      "What's a good way to figure out pricing for cupcakes from my home bakery?",
      "home bakery cupcake pricing - how do i figure it out",
      "How do I set prices for the cupcakes I sell from my home bakery?"],
   V=["I've started selling baked goods out of my kitchen as a little home bakery and cupcakes are what people order most. how should I price them?",
      "pricing cupcakes, home bakery?"],
   S=[(3, "set prices for", "price")],
   R=[(0, "for my home bakery, how should I price cupcakes?")],
   ent=["how should I price wedding cakes for my home bakery?", "how should I price cupcakes for my food truck?"],
   scope=["how should I price a bulk order of 500 cupcakes for a corporate event from my home bakery?"],
   cond=["how should I price cupcakes for my home bakery if all my ingredients are organic and gluten free?"])

sc("business",
   B=["should I offer free shipping on my Etsy shop?",
      "Is it a good idea to offer free shipping in my Etsy store?",
      "free shipping on my etsy shop - worth it?",
      "Should my Etsy shop have free shipping?"],
   V=["I've been going back and forth on this for weeks: should I offer free shipping on my Etsy shop or not?",
      "etsy free shipping yes/no?"],
   S=[(1, "good idea", "smart move"), (1, "store", "shop")],
   R=[(0, "on my Etsy shop, should I offer free shipping?")],
   ent=["should I offer free shipping on my Shopify store?", "should I offer free returns on my Etsy shop?"],
   cond=["should I offer free shipping on my Etsy shop if most of what I sell is heavy furniture?"],
   scope=["should I offer free shipping on my Etsy shop to customers worldwide?"])

sc("business",
   B=["what do I need to do before hiring my first employee for my small business in the US?",
      "What steps do I need to take before I hire my first employee as a US small business owner?",
      "hiring my first employee (small biz, US) - what do i need to do first?",
      "Before I hire the first employee at my small US business, what do I need to set up?"],
   V=["my small business in the US is finally busy enough that I want to hire someone. what do I need to do before hiring my first employee?",
      "first employee checklist, US small biz"],
   S=[(0, "hiring", "taking on")],
   R=[(0, "before hiring my first employee for my small business in the US, what do I need to do?")],
   ent=["what do I need to do before hiring my first employee for my small business in the UK?",
        "what do I need to do before hiring my first independent contractor for my small business in the US?"],
   temp=["what do I need to do after hiring my first employee for my small business in the US?"])

sc("business",
   B=["a client hasn't paid my invoice and it's 30 days overdue. how do I ask for payment politely?",
      "How do I politely ask a client to pay an invoice that's 30 days overdue?",
      "client invoice 30 days overdue, how to politely ask for the money",
      "What's a polite way to chase a client for payment on an invoice that's 30 days past due?"],
   V=["I'm a freelancer and one of my clients still hasn't paid my invoice, it's now 30 days overdue. how do I ask for payment without sounding rude?",
      "30-day overdue invoice - polite payment reminder how?"],
   S=[(1, "politely", "courteously"), (3, "chase", "follow up with")],
   R=[(0, "how do I politely ask for payment? a client hasn't paid my invoice and it's 30 days overdue.")],
   role=["I haven't paid a supplier's invoice and it's 30 days overdue. how do I politely ask for more time?",
         "I'm the client and I haven't paid my freelancer's invoice, it's 30 days overdue. how do I politely explain the delay?"],
   num=["a client hasn't paid my invoice and it's 120 days overdue. how do I ask for payment politely?",
        "a client hasn't paid my invoice and it's 3 days overdue. how do I ask for payment politely?"],
   ant=["a client hasn't paid my invoice and it's 30 days overdue. how do I ask for payment firmly, no more mr nice guy?"],
   fmt=["write the actual email for me: a polite payment reminder to a client whose invoice is 30 days overdue"])

sc("business",
   B=["how often should my small bakery post on Instagram?",
      "How many times a week should a small bakery post on Instagram?",
      "instagram posting frequency for a small bakery?",
      "What's a good Instagram posting schedule for my small bakery?"],
   V=["we're a tiny family-run bakery trying to get more customers through social media. how often should we be posting on Instagram?",
      "bakery IG post frequency?"],
   S=[(0, "often", "frequently")],
   R=[(0, "on Instagram, how often should my small bakery post?")],
   ent=["how often should my small bakery post on TikTok?", "how often should my small law firm post on Instagram?"],
   temp=["how often should my small bakery post on Instagram during the two weeks before Christmas?"])

sc("business",
   B=["can I fire an employee for posting about work on social media?",
      "Is it legal to fire an employee over their social media posts about work?",
      "employee posted about work on social media - can i fire them?",
      "Am I allowed to fire someone for posting about their job on social media?"],
   V=["one of my employees went on a long rant about our company on Facebook last night. can I fire them for posting about work on social media?",
      "fire employee for work social media posts?"],
   S=[(2, "posted", "wrote")],
   R=[(0, "for posting about work on social media, can I fire an employee?")],
   role=["can my employer fire me for posting about work on social media?"],
   cond=["can I fire an employee for posting about work on social media if they were complaining about pay with coworkers?"],
   ent=["can I fire an employee for posting about work on social media in the UK?"])

sc("business",
   B=["how do I negotiate a higher salary for a job offer?",
      "How can I ask for more money when I get a job offer?",
      "got a job offer, how do i negotiate the salary up",
      "What's the best way to negotiate a better salary on a job offer?"],
   V=["I just got a job offer and I'd like more money than they're offering. how do I negotiate the salary up?",
      "negotiate job offer salary how?"],
   S=[(0, "higher", "bigger")],
   R=[(0, "for a job offer, how do I negotiate a higher salary?")],
   temp=["how do I negotiate a higher salary after I've already signed and accepted the job offer?"],
   role=["how do I negotiate salary with a candidate I'm making a job offer to?"],
   fmt=["write the email for me: negotiating a higher salary for a job offer"])

# ---------------------------------------------------------------------------
# shopping
# ---------------------------------------------------------------------------
sc("shopping",
   B=["what's the best laptop under $800 for a college student?",
      "Best laptop for a college student with a budget under $800?",
      "college student laptop, under 800 bucks - what should i get?",
      "Which laptop under $800 would you recommend for a college student?"],
   V=["my daughter is heading off to college in the fall and we want to spend under $800 on a laptop. what's the best one for a college student?",
      "best sub-$800 college laptop?"],
   S=[(3, "recommend", "suggest")],
   R=[(0, "for a college student, what's the best laptop under $800?")],
   num=["what's the best laptop under $400 for a college student?", "what's the best laptop under $1,500 for a college student?"],
   cond=["what's the best laptop under $800 for a college student studying architecture who needs to run CAD software?"],
   ent=["what's the best tablet under $800 for a college student?"],
   ant=["what's the best laptop over $800 for a college student?"],
   fmt=["compare the 3 best laptops under $800 for a college student in a table"])

sc("shopping",
   B=["can I return something to Target without a receipt?",
      "Does Target accept returns without a receipt?",
      "returning stuff to target w/o receipt - possible?",
      "Is it possible to return an item to Target if I don't have the receipt?"],
   V=["I bought a lamp at Target a couple weeks ago and lost the receipt. can I still return it without a receipt?",
      "target return no receipt?"],
   S=[(1, "accept", "take")],
   R=[(0, "without a receipt, can I return something to Target?")],
   ent=["can I return something to Costco without a receipt?", "can I return something to IKEA without a receipt?"],
   neg=["can I return something to Target with the receipt but without the original box?"],
   scope=["can I return something to Target without a receipt 6 months after I bought it?",
          "can I return a whole cart of stuff to Target without a receipt in one trip?"])

sc("shopping",
   B=["should I get a firm or soft mattress for lower back pain?",
      "Is a firm or a soft mattress better for lower back pain?",
      "lower back pain - firm mattress or soft?",
      "which mattress is better if you have lower back pain, firm or soft"],
   V=["I've been waking up with lower back pain and we're finally replacing our old mattress. should we get a firm one or a soft one?",
      "firm vs soft mattress, lower back pain?"],
   R=[(0, "should I get a soft or firm mattress for lower back pain?")],
   ent=["should I get a firm or soft mattress for shoulder pain?", "should I get a firm or soft pillow for neck pain?"],
   cond=["should I get a firm or soft mattress for lower back pain if I only sleep on my side?"])

sc("shopping",
   B=["when is the best time of year to buy a TV?",
      "What time of year are TVs cheapest?",
      "best time to buy a tv for a good deal?",
      "When during the year can I get the best price on a TV?"],
   V=["our old TV just died and I don't mind waiting a bit for a good deal. when is the best time of year to buy a new one?",
      "cheapest time of year for TVs?"],
   S=[(2, "deal", "price")],
   R=[(0, "when is the best time to buy a TV during the year?")],
   ent=["when is the best time of year to buy a mattress?", "when is the best time of year to buy a used car?"],
   ant=["when is the worst time of year to buy a TV?"])

sc("shopping",
   B=["is it worth buying an extended warranty on a new fridge?",
      "Should I get the extended warranty for a new refrigerator?",
      "extended warranty on a new fridge, worth it?",
      "Are extended warranties worth it when buying a new fridge?"],
   V=["the salesperson at the appliance store is really pushing the extended warranty on the new fridge we're buying. is it worth it?",
      "fridge extended warranty worth it?"],
   S=[(1, "refrigerator", "fridge")],
   R=[(0, "on a new fridge, is it worth buying an extended warranty?")],
   ent=["is it worth buying an extended warranty on a new laptop?", "is it worth buying an extended warranty on a used car?"],
   ant=["is it worth buying an extended warranty on a refurbished fridge?"])

sc("shopping",
   B=["my Amazon package arrived damaged, how do I get a refund?",
      "How do I get a refund from Amazon when my package showed up damaged?",
      "amazon package came damaged - how to get my money back?",
      "What's the process to get a refund for a damaged Amazon package?"],
   V=["my Amazon order finally arrived today but the box was crushed and the item inside is damaged. how do I get a refund?",
      "damaged amazon package refund how?"],
   S=[(2, "money back", "refund")],
   R=[(0, "how do I get a refund? my Amazon package arrived damaged")],
   nocue=["my Amazon package got lost in transit, how do I get a refund?"],
   neg=["my Amazon package never arrived, how do I get a refund?"],
   ent=["my eBay package arrived damaged, how do I get a refund?"])


# ---------------------------------------------------------------------------
# more everyday situations (inversions without a negation word)
# ---------------------------------------------------------------------------
sc("pets",
   B=["my cat is drinking a lot more water than usual lately, should I be worried?",
      "Should I worry that my cat has been drinking way more water than normal lately?",
      "cat drinking tons more water than usual recently, is that a concern?",
      "Is it something to worry about if my cat is suddenly drinking much more water than usual?"],
   V=["I keep having to refill my cat's water bowl, she's drinking a lot more than usual these days. should I be worried?",
      "cat drinking way more water - worry?"],
   S=[(0, "worried", "concerned")],
   R=[(0, "should I be worried? my cat is drinking a lot more water than usual lately")],
   nocue=["my cat has stopped drinking water lately, should I be worried?"],
   ent=["my dog is drinking a lot more water than usual lately, should I be worried?"],
   cond=["my cat is drinking a lot more water than usual lately, and she's 15 and losing weight. should I be worried?"])

sc("cars",
   B=["I passed my driving test! what do I do next to get my license?",
      "Just passed my driving test, what are the next steps to actually get my license?",
      "passed my road test, what now to get my license",
      "What do I need to do next to get my driver's license now that I've passed the test?"],
   V=["I finally passed my driving test this morning after months of practice! what do I need to do next to actually get my license?",
      "passed driving test - next steps for license?"],
   S=[(1, "steps", "stages")],
   R=[(0, "what do I do next to get my license? I passed my driving test!")],
   nocue=["I failed my driving test, what do I do next to get my license?"],
   temp=["I take my driving test next week, what do I do next to get my license?"])

sc("parenting",
   B=["my son made the school soccer team, how do I support him?",
      "How can I support my son now that he's made the school soccer team?",
      "son got onto the school soccer team, how do i support him",
      "What's the best way to support my son who just made his school's soccer team?"],
   V=["my son worked so hard all summer and he made the school soccer team today! how can I best support him?",
      "son made soccer team, how to support?"],
   S=[(0, "support", "encourage")],
   R=[(0, "how do I support my son? he made the school soccer team")],
   nocue=["my son failed to make the school soccer team, how do I support him?",
          "my son got cut from the school soccer team, how do I support him?"],
   ent=["my daughter made the school debate team, how do I support her?"])

sc("parenting",
   B=["my baby latches well but breastfeeding still hurts. what should I do?",
      "Breastfeeding still hurts even though my baby latches well - what can I do?",
      "baby has a good latch but nursing still hurts, what do i do",
      "What should I do if my baby's latch is good but breastfeeding is still painful?"],
   V=["the lactation nurse said my baby's latch looks good, but breastfeeding still really hurts. what should I do?",
      "good latch, still painful breastfeeding - help?"],
   S=[(1, "hurts", "is painful")],
   R=[(0, "what should I do? breastfeeding still hurts even though my baby latches well")],
   nocue=["my baby is unable to latch and breastfeeding hurts. what should I do?"],
   ent=["my baby latches well but pumping still hurts. what should I do?"])

sc("health",
   B=["I took my blood pressure pill this morning, is it ok to have a glass of wine tonight?",
      "Is it ok to have a glass of wine tonight if I took my blood pressure medication this morning?",
      "took my bp pill this morning, ok to have a glass of wine tonight?",
      "Can I have a glass of wine tonight? I took my blood pressure pill this morning."],
   V=["it's my friend's birthday dinner tonight. I took my blood pressure pill this morning like always. is it ok if I have a glass of wine?",
      "bp pill this AM, glass of wine tonight ok?"],
   S=[(1, "medication", "meds")],
   R=[(0, "is it ok to have a glass of wine tonight? I took my blood pressure pill this morning")],
   nocue=["I skipped my blood pressure pill this morning, is it ok to have a glass of wine tonight?",
          "I forgot to take my blood pressure pill this morning, is it ok to have a glass of wine tonight?"],
   scope=["I took my blood pressure pill this morning, is it ok to have four or five glasses of wine tonight?"],
   ent=["I took my antibiotic this morning, is it ok to have a glass of wine tonight?"])

sc("health",
   B=["I have health insurance through my job, do I need to buy a separate plan for my kids?",
      "My job gives me health insurance. Do I need a separate plan for my children?",
      "have health insurance thru work - do my kids need their own plan?",
      "Do my kids need a separate health plan if I'm covered through my employer?"],
   V=["I get health insurance through my job and I'm trying to figure out coverage for the family. do I need to buy a separate plan for my kids?",
      "work health insurance, separate plan for kids?"],
   S=[(1, "children", "kids")],
   R=[(0, "do I need to buy a separate plan for my kids? I have health insurance through my job")],
   nocue=["I lost my health insurance through my job, do I need to buy a separate plan for my kids?"],
   ent=["I have health insurance through my job, do I need to buy a separate plan for my husband?"])

sc("finance",
   B=["my credit card payment went through twice, what should I do?",
      "What do I do if my credit card payment was charged twice?",
      "cc payment went thru twice, what do i do",
      "My credit card payment got processed two times - what should I do?"],
   V=["I just checked my bank account and my credit card payment went through twice this month. what should I do?",
      "double credit card payment - what to do?"],
   S=[(2, "cc", "credit card")],
   R=[(0, "what should I do? my credit card payment went through twice")],
   nocue=["my credit card payment failed to go through, what should I do?"],
   ent=["my rent payment went through twice, what should I do?"])

sc("finance",
   B=["my paycheck was deposited by mobile check, can I spend the money now that it's cleared?",
      "Now that my mobile check deposit has cleared, can I spend the money?",
      "mobile deposited my paycheck and it cleared, ok to spend it now?",
      "Can I go ahead and spend my mobile-deposited paycheck now that the check cleared?"],
   V=["I deposited my paycheck through the bank app and it shows as cleared now. am I safe to spend that money?",
      "mobile check cleared, can I spend it?"],
   S=[(0, "spend", "use")],
   R=[(0, "now that it's cleared, can I spend the money from my paycheck I deposited by mobile check?")],
   nocue=["my paycheck was deposited by mobile check but it failed to clear, can I spend the money?"],
   num=["my paycheck was deposited by mobile check 10 minutes ago, can I spend the money?"])

sc("gardening",
   B=["my tomato plants are flowering like crazy, should I fertilize them more?",
      "Should I add more fertilizer now that my tomato plants are flowering a lot?",
      "tomatoes are covered in flowers, more fertilizer or no?",
      "My tomato plants have tons of flowers right now. Should I fertilize them more?"],
   V=["this year my tomato plants are absolutely covered in flowers, more than ever. should I be fertilizing them more?",
      "tomatoes flowering a lot - fertilize more?"],
   S=[(1, "add", "give")],
   R=[(0, "should I fertilize my tomato plants more? they're flowering like crazy")],
   nocue=["my tomato plants refuse to flower, should I fertilize them more?",
          "my tomato plants are failing to flower, should I fertilize them more?"],
   ent=["my zucchini plants are flowering like crazy, should I fertilize them more?"])

sc("pets",
   B=["my dog eats his food really fast, what should I do?",
      "What should I do about my dog eating his food way too fast?",
      "dog wolfs down his food super fast, what can i do",
      "How do I deal with my dog eating his meals really fast?"],
   V=["every single meal my dog inhales his food in like ten seconds flat. what should I do?",
      "dog eats too fast - fix?"],
   S=[(0, "really", "very")],
   R=[(0, "what should I do? my dog eats his food really fast")],
   nocue=["my dog refuses to eat his food, what should I do?"],
   ent=["my cat eats her food really fast, what should I do?"])

sc("business",
   B=["I accepted the job offer, how do I tell my current boss I'm leaving?",
      "How should I tell my current manager I'm leaving now that I've accepted a new job offer?",
      "accepted a new job offer, how do i tell my boss im leaving",
      "What's the best way to tell my boss I'm quitting since I accepted another offer?"],
   V=["after weeks of interviews I finally accepted the job offer at the new company. now I have to tell my current boss I'm leaving. how do I do that?",
      "accepted new offer, how to tell boss I'm leaving?"],
   S=[(1, "manager", "boss")],
   R=[(0, "how do I tell my current boss I'm leaving? I accepted the job offer")],
   nocue=["I turned down the job offer, how do I tell my current boss I was interviewing?"],
   fmt=["write my resignation letter: I accepted a job offer and need to tell my current boss I'm leaving"])

sc("household",
   B=["my landlord approved my request to get a dog, what should I do next?",
      "What should I do next now that my landlord approved my request for a dog?",
      "landlord said yes to me getting a dog, what's next?",
      "My landlord approved my pet request for a dog. What are my next steps?"],
   V=["I asked my landlord a while ago if I could get a dog and he just approved it! what should I do next?",
      "landlord approved dog - next steps?"],
   S=[(3, "next steps", "next moves")],
   R=[(0, "what should I do next? my landlord approved my request to get a dog")],
   nocue=["my landlord denied my request to get a dog, what should I do next?",
          "my landlord rejected my request to get a dog, what should I do next?"],
   ent=["my landlord approved my request to get a cat, what should I do next?"])

sc("travel",
   B=["my tourist visa for the UK got approved, what happens now?",
      "What happens next now that my UK tourist visa was approved?",
      "uk visitor visa approved, what now?",
      "My visa to visit the UK was approved - what are the next steps?"],
   V=["after waiting for almost two months I just got the email that my UK tourist visa was approved. what happens now?",
      "UK tourist visa approved, what next?"],
   S=[(1, "approved", "granted")],
   R=[(0, "what happens now? my tourist visa for the UK got approved")],
   nocue=["my tourist visa for the UK got refused, what happens now?"],
   ent=["my tourist visa for Canada got approved, what happens now?"])

sc("cars",
   B=["my car passed its emissions test, what do I do next to register it?",
      "What's the next step to register my car now that it passed the emissions test?",
      "car passed emissions, what's next for registration?",
      "Now that my car has passed the emissions test, how do I register it?"],
   V=["just took my car in this morning and it passed its emissions test. what do I need to do next to get it registered?",
      "emissions test passed - registration next steps?"],
   S=[(1, "step", "stage")],
   R=[(0, "what do I do next to register my car? it passed its emissions test")],
   nocue=["my car failed its emissions test, what do I do next to register it?"],
   ent=["my motorcycle passed its emissions test, what do I do next to register it?"])

sc("pets",
   B=["my dog comes back when I call him at the dog park, should I let him off leash more?",
      "Should I give my dog more off-leash time since he comes back when I call him at the dog park?",
      "dog comes when called at the dog park, ok to let him off leash more?",
      "My dog returns when I call him at the dog park. Should I let him off the leash more often?"],
   V=["I've been working on recall with my dog for months and now he comes back every time I call him at the dog park. should I let him off leash more?",
      "dog has good recall at park - more off leash?"],
   S=[(0, "comes back", "returns")],
   R=[(0, "should I let my dog off leash more? he comes back when I call him at the dog park")],
   nocue=["my dog refuses to come back when I call him at the dog park, should I let him off leash more?",
          "my dog ignores me when I call him at the dog park, should I let him off leash more?"])

sc("cooking",
   B=["I took the turkey out of the freezer 3 days ago and dinner is in 5 hours. how should I cook it?",
      "Dinner is in 5 hours and I took the turkey out of the freezer 3 days ago - how should I cook it?",
      "turkey came out of the freezer 3 days ago, dinner in 5 hrs, how do i cook it",
      "How should I cook my turkey? I took it out of the freezer 3 days ago and we eat in 5 hours."],
   V=["happy thanksgiving! I took the turkey out of the freezer 3 days ago and dinner is in 5 hours. how should I cook it?",
      "turkey out of freezer 3 days ago, dinner in 5h - cook how?"],
   S=[(1, "Dinner", "The meal")],
   R=[(0, "how should I cook the turkey? I took it out of the freezer 3 days ago and dinner is in 5 hours")],
   nocue=["I forgot to take the turkey out of the freezer and dinner is in 5 hours. how should I cook it?"],
   num=["I took the turkey out of the freezer 3 days ago and dinner is in 2 hours. how should I cook it?"])

sc("parenting",
   B=["my 18 month old says about 20 words, is that normal?",
      "Is it normal for an 18-month-old to say around 20 words?",
      "18mo saying around 20 words - normal?",
      "My toddler is 18 months and has about 20 words. Is that normal?"],
   V=["I'm a first time mom and I keep comparing. my 18 month old says about 20 words right now. is that normal for her age?",
      "18 months, ~20 words, normal?"],
   S=[(0, "normal", "typical")],
   R=[(0, "is it normal that my 18 month old says about 20 words?")],
   nocue=["my 18 month old has stopped saying the 20 words she used to say, is that normal?"],
   num=["my 3 year old says about 20 words, is that normal?", "my 18 month old says about 2 words, is that normal?"])

sc("parenting",
   B=["my 6 month old rolls over both ways, is she ready to start solids?",
      "Is my 6-month-old ready for solids? She rolls over both ways.",
      "6mo rolling both ways - ready for solid food?",
      "My baby is 6 months and rolls both directions. Is she ready to start solids?"],
   V=["my little one turned 6 months last week and she's rolling over both ways now. is she ready to start solids?",
      "6mo rolls both ways, start solids?"],
   S=[(0, "start", "begin")],
   R=[(0, "is my 6 month old ready to start solids? she rolls over both ways")],
   nocue=["my 6 month old is unable to roll over yet, is she ready to start solids?"],
   num=["my 3 month old rolls over both ways, is she ready to start solids?"])

sc("household",
   B=["my furnace keeps turning on and off every few minutes, what's wrong?",
      "What's wrong with my furnace if it keeps cycling on and off every few minutes?",
      "furnace turns on then off every couple minutes, whats the problem",
      "Why does my furnace keep turning on and off every few minutes?"],
   V=["since the weather got cold my furnace keeps turning on and off every few minutes all day long. what's wrong with it?",
      "furnace short cycling - why?"],
   S=[(3, "keep", "continue")],
   R=[(0, "what's wrong? my furnace keeps turning on and off every few minutes")],
   nocue=["my furnace fails to turn on at all, what's wrong?"],
   ent=["my AC keeps turning on and off every few minutes, what's wrong?"])

sc("household",
   B=["my garage door opens halfway and then reverses, what's wrong?",
      "Why does my garage door open partway and then go back down?",
      "garage door goes up halfway then reverses, why",
      "What's wrong when a garage door opens halfway and then reverses?"],
   V=["every time I hit the remote my garage door opens about halfway and then reverses back down. what's wrong with it?",
      "garage door reverses halfway up - why?"],
   S=[(0, "wrong", "the problem")],
   R=[(0, "what's wrong? my garage door opens halfway and then reverses")],
   nocue=["my garage door refuses to open at all, what's wrong?"],
   ant=["my garage door closes halfway and then reverses, what's wrong?"])

sc("business",
   B=["I got the promotion I applied for, how should I tell my team?",
      "How do I tell my team that I got the promotion I applied for?",
      "got the promotion i went for, how do i tell my team",
      "What's a good way to let my team know I got the promotion I applied for?"],
   V=["I just found out I got the promotion I applied for and I'm so excited. how should I tell my team?",
      "got promotion - how to tell team?"],
   S=[(3, "let my team know", "tell my team")],
   R=[(0, "how should I tell my team? I got the promotion I applied for")],
   nocue=["I missed out on the promotion I applied for, how should I tell my team?",
          "I lost the promotion I applied for to a coworker, how should I tell my team?"])

sc("household",
   B=["my tenant always pays rent on time, can I still evict her at the end of the lease?",
      "Can I evict a tenant at the end of the lease even though she always pays rent on time?",
      "tenant pays on time every month, can i still evict at lease end?",
      "Is it possible to evict my tenant when the lease ends if she has always paid rent on time?"],
   V=["my tenant has paid her rent on time every single month. can I still evict her when the lease is up?",
      "on-time tenant, evict at lease end?"],
   S=[(0, "evict", "kick out")],
   R=[(0, "can I still evict my tenant at the end of the lease? she always pays rent on time")],
   nocue=["my tenant stopped paying rent three months ago, can I evict her at the end of the lease?"],
   ent=["my tenant always pays rent on time, can I still evict her at the end of the lease in California?"])

sc("finance",
   B=["I locked my car and my laptop was stolen from it anyway. will insurance cover it?",
      "My laptop was stolen out of my locked car. Will my insurance cover it?",
      "laptop stolen from my car even though it was locked - covered by insurance?",
      "Does insurance cover a laptop stolen from my car if the car was locked?"],
   V=["someone broke into my car last night even though I had locked it, and they took my laptop. will my insurance cover it?",
      "laptop stolen from locked car - insurance?"],
   S=[(0, "cover", "pay for")],
   R=[(0, "will insurance cover it? my laptop was stolen from my car even though I locked it")],
   nocue=["I forgot to lock my car and my laptop was stolen from it. will insurance cover it?"],
   ent=["I locked my car and my bike was stolen from the rack on it. will insurance cover it?"])

sc("office",
   B=["I backed up my iPhone before the update, can I get my deleted photos back?",
      "Can I recover my deleted photos if I backed up my iPhone before updating?",
      "backed up my iphone before updating, can i get back deleted photos?",
      "I made a backup of my iPhone before the update. Is there a way to get my deleted photos back?"],
   V=["after the update a bunch of my photos are gone. luckily I backed up my iPhone right before updating. can I get my deleted photos back?",
      "iphone backed up pre-update, recover deleted photos?"],
   S=[(1, "recover", "restore")],
   R=[(0, "can I get my deleted photos back? I backed up my iPhone before the update")],
   nocue=["I failed to back up my iPhone before the update, can I get my deleted photos back?",
          "I skipped backing up my iPhone before the update, can I get my deleted photos back?"],
   ent=["I backed up my Android phone before the update, can I get my deleted photos back?"])

sc("finance",
   B=["I filed my taxes before the deadline, when will I get my refund?",
      "When should I expect my tax refund if I filed before the deadline?",
      "filed my taxes on time, when's my refund coming?",
      "I got my tax return in before the deadline - when will the refund arrive?"],
   V=["I e-filed my federal taxes well before the deadline this year. when will I get my refund?",
      "filed on time, refund when?"],
   S=[(0, "get", "receive")],
   R=[(0, "when will I get my refund? I filed my taxes before the deadline")],
   nocue=["I missed the deadline to file my taxes, when will I get my refund?"],
   cond=["I filed my taxes before the deadline and claimed the earned income credit, when will I get my refund?"])

sc("everyday",
   B=["I registered to vote last month, can I vote in Tuesday's election?",
      "Can I vote in the election on Tuesday? I registered last month.",
      "registered to vote last month - can i vote tuesday?",
      "If I registered to vote last month, am I able to vote in Tuesday's election?"],
   V=["I finally got around to registering to vote last month, and now there's an election on Tuesday. can I vote in it?",
      "registered last month, vote tuesday ok?"],
   S=[(0, "registered to vote", "signed up to vote")],
   R=[(0, "can I vote in Tuesday's election? I registered to vote last month")],
   nocue=["I forgot to register to vote, can I vote in Tuesday's election?"],
   temp=["I registered to vote this morning, can I vote in Tuesday's election?"])

sc("pets",
   B=["my hens are laying a lot more eggs lately, why?",
      "Why have my hens started laying a lot more eggs recently?",
      "chickens laying way more eggs than usual lately, why?",
      "What would cause my hens to lay more eggs lately?"],
   V=["I've got six backyard hens and lately they're laying a lot more eggs than they were a month ago. why would that be?",
      "hens laying more eggs - why?"],
   S=[(0, "lately", "recently")],
   R=[(0, "why are my hens laying a lot more eggs lately?")],
   nocue=["my hens stopped laying eggs lately, why?"],
   ent=["my ducks are laying a lot more eggs lately, why?"])

sc("finance",
   B=["I reported my Etsy income on my tax return, do I need to do anything else?",
      "Do I need to do anything else now that I've reported my Etsy income on my tax return?",
      "put my etsy income on my tax return, anything else i need to do?",
      "Is there anything else I need to do after reporting my Etsy income on my taxes?"],
   V=["this was my first year selling on Etsy and I reported all that income on my tax return. do I need to do anything else?",
      "etsy income reported on return - anything else?"],
   S=[(0, "reported", "declared")],
   R=[(0, "do I need to do anything else? I reported my Etsy income on my tax return")],
   nocue=["I left my Etsy income off my tax return, do I need to do anything else?",
          "I forgot to report my Etsy income on my tax return, do I need to do anything else?"])

sc("parenting",
   B=["I went to my son's parent-teacher conference, what should I follow up on?",
      "What should I follow up on after attending my son's parent-teacher conference?",
      "went to my sons parent teacher conference, what do i follow up on",
      "After my son's parent-teacher conference, which things should I follow up on?"],
   V=["I just got back from my son's parent-teacher conference and I have a page of notes. what should I follow up on?",
      "after parent-teacher conference, follow up on what?"],
   S=[(0, "follow up on", "check on")],
   R=[(0, "what should I follow up on? I went to my son's parent-teacher conference")],
   nocue=["I missed my son's parent-teacher conference, what should I follow up on?"])

sc("pets",
   B=["my cat is grooming herself way more than usual, why?",
      "Why is my cat suddenly grooming herself so much more than normal?",
      "cat overgrooming lately, way more than usual. why?",
      "What makes a cat start grooming herself way more than usual?"],
   V=["I've noticed my cat is constantly licking herself lately, way more than usual. why would she do that?",
      "cat grooming way more than usual, why?"],
   S=[(0, "usual", "normal")],
   R=[(0, "why is my cat grooming herself way more than usual?")],
   nocue=["my cat stopped grooming herself and her coat looks greasy, why?"],
   ent=["my dog is licking himself way more than usual, why?"])

sc("gardening",
   B=["my succulent is growing tall and stretched out, what's wrong?",
      "What's wrong with my succulent? It's getting tall and stretched out.",
      "succulent getting leggy and stretched, why?",
      "Why is my succulent growing tall and stretched?"],
   V=["I bought a cute little succulent in the spring and now it's growing tall and stretched out, it looks weird. what's wrong with it?",
      "stretched tall succulent - what's wrong?"],
   S=[(0, "wrong", "the problem")],
   R=[(0, "what's wrong? my succulent is growing tall and stretched out")],
   nocue=["my succulent stopped growing completely, what's wrong?"],
   ent=["my pothos is growing long and stretched out, what's wrong?"])

sc("parenting",
   B=["my 6 year old can swim, can he go in the deep end at the public pool?",
      "Can my 6-year-old who knows how to swim use the deep end of the public pool?",
      "6yo can swim - ok for him to go in the deep end at the pool?",
      "Is it ok for my 6 year old to swim in the deep end of the public pool since he can swim?"],
   V=["we're heading to the public pool this weekend. my 6 year old can swim pretty well now. can he go in the deep end?",
      "6yo swimmer, deep end ok?"],
   S=[(0, "public pool", "community pool")],
   R=[(0, "can my 6 year old go in the deep end at the public pool? he can swim")],
   nocue=["my 6 year old is unable to swim yet, can he go in the deep end at the public pool?"],
   num=["my 3 year old can swim, can he go in the deep end at the public pool?"])

sc("health",
   B=["I got my flu shot two weeks ago, can I visit my newborn niece?",
      "Can I visit my newborn niece? I got a flu shot two weeks ago.",
      "had my flu shot 2 weeks ago - ok to visit my newborn niece?",
      "Is it ok to visit my brand new niece if I got the flu vaccine two weeks ago?"],
   V=["my sister just had her baby and I can't wait to meet my niece. I got my flu shot two weeks ago. can I visit?",
      "flu shot 2 wks ago, visit newborn niece?"],
   S=[(1, "visit", "see")],
   R=[(0, "can I visit my newborn niece? I got my flu shot two weeks ago")],
   nocue=["I skipped my flu shot this year, can I visit my newborn niece?"],
   num=["I got my flu shot two days ago, can I visit my newborn niece?"],
   cond=["I got my flu shot two weeks ago but I have a runny nose, can I visit my newborn niece?"])

sc("pets",
   B=["my dog is up to date on his rabies shot and he bit a neighbor, what happens now?",
      "What happens now that my dog, who's current on his rabies vaccine, bit my neighbor?",
      "dog bit a neighbor, he's up to date on rabies shots. what happens next?",
      "My dog bit my neighbor. He's current on his rabies vaccination. What happens now?"],
   V=["my dog got spooked and bit our neighbor on the hand yesterday. he is up to date on his rabies shot. what happens now?",
      "vaccinated dog bit neighbor - what now?"],
   S=[(0, "bit", "nipped")],
   R=[(0, "what happens now? my dog bit a neighbor and he's up to date on his rabies shot")],
   nocue=["my dog missed his rabies booster and he bit a neighbor, what happens now?"],
   role=["my neighbor's dog bit me and he's up to date on his rabies shot, what happens now?"])

sc("relationships",
   B=["my partner supports my plan to go back to school, how do we handle the finances?",
      "How do my partner and I handle money now that they support me going back to school?",
      "partner is on board with me going back to school, how do we deal with money",
      "My partner backs my decision to go back to school. How should we manage our finances?"],
   V=["my partner is fully supportive of my plan to go back to school, which is great. how should we handle the finances?",
      "partner supports me returning to school - finances?"],
   S=[(1, "handle", "manage")],
   R=[(0, "how do we handle the finances? my partner supports my plan to go back to school")],
   nocue=["my partner opposes my plan to go back to school, how do we handle the finances?"])

# ---------------------------------------------------------------------------
# more everyday situations (negation with a cue word)
# ---------------------------------------------------------------------------
sc("cooking",
   B=["which fruits can I freeze?", "What fruits freeze well?", "fruits that are ok to freeze?", "Which kinds of fruit can go in the freezer?"],
   V=["I always end up with more fruit than we can eat before it goes bad. which fruits can I freeze?", "which fruits are freezable?"],
   S=[(1, "freeze well", "freeze nicely")],
   R=[(2, "ok to freeze - which fruits?")],
   neg=["which fruits shouldn't I freeze?", "what fruits don't freeze well?"],
   ent=["which vegetables can I freeze?"])

sc("business",
   B=["what are some good jobs that require a college degree?", "Which good jobs need a college degree?", "good jobs that need a college degree?", "Can you list some good careers that require a college degree?"],
   V=["my nephew is trying to decide whether college is worth it. what are some good jobs that require a college degree?", "good degree-required jobs?"],
   S=[(3, "careers", "jobs")],
   R=[(0, "some good jobs that require a college degree - what are they?")],
   neg=["what are some good jobs that don't require a college degree?", "what are some good jobs you can get without a college degree?"],
   ent=["what are some good jobs that require a two-year associate degree?"])

sc("travel",
   B=["which countries can I visit without a visa as a US citizen?", "What countries are visa-free for US citizens?", "visa free countries for americans?", "As an American, which countries can I go to without a visa?"],
   V=["I have a US passport and a free month this summer. which countries can I visit without needing a visa?", "visa-free destinations, US passport?"],
   S=[(0, "visit", "travel to")],
   R=[(0, "as a US citizen, which countries can I visit without a visa?")],
   neg=["which countries do I need a visa for as a US citizen?", "which countries can't I visit without a visa as a US citizen?"],
   ent=["which countries can I visit without a visa as a Canadian citizen?"])

sc("parenting",
   B=["what should I feed my 6 month old when starting solids?", "What foods are good for a 6-month-old starting solids?", "starting solids at 6 months, what should i feed her", "Which foods should I give my 6 month old when we start solids?"],
   V=["our pediatrician said we can start solids now that our daughter is 6 months old. what should I feed her?", "6mo first solids - what foods?"],
   S=[(1, "good", "suitable")],
   R=[(0, "when starting solids, what should I feed my 6 month old?")],
   neg=["what should I not feed my 6 month old when starting solids?", "which foods should I never give a 6 month old who's starting solids?"],
   num=["what should I feed my 10 month old?"])

sc("parenting",
   B=["my 18 month old is talking in full sentences, is that normal?", "Is it normal for an 18-month-old to talk in full sentences?", "18mo speaking in full sentences - normal?", "My toddler is 18 months and already talks in full sentences. Normal?"],
   V=["my mother-in-law says it's unusual, but my 18 month old is talking in full sentences. is that normal?", "18 months, full sentences, normal?"],
   S=[(0, "normal", "typical")],
   R=[(0, "is it normal that my 18 month old is talking in full sentences?")],
   neg=["my 18 month old isn't talking at all, is that normal?", "my 18 month old doesn't say any words yet, is that normal?"])

sc("travel",
   B=["what are good places to visit in Paris with kids?", "Where should we go in Paris with our kids?", "kid friendly things to do in paris?", "What spots in Paris are good to visit with children?"],
   V=["taking my two kids to Paris for the first time this spring! what are good places to visit with them?", "paris with kids - where to go?"],
   S=[(3, "children", "kids")],
   R=[(0, "with kids, what are good places to visit in Paris?")],
   neg=["what places in Paris are not good to visit with kids?", "what should we skip in Paris because it isn't kid friendly?"],
   ent=["what are good places to visit in London with kids?"])

sc("gardening",
   B=["which houseplants need direct sunlight?", "What houseplants need direct sun?", "houseplants that need direct sunlight?", "Which indoor plants require direct sunlight?"],
   V=["I've got a bright south facing window and want to use it. which houseplants need direct sunlight?", "direct sun houseplants?"],
   S=[(3, "require", "need")],
   R=[(0, "direct sunlight - which houseplants need it?")],
   neg=["which houseplants don't need direct sunlight?", "which houseplants can live with no direct sunlight?"],
   ant=["which houseplants need shade?"])

sc("cars",
   B=["what's included in a standard oil change?", "What does a standard oil change include?", "standard oil change - what's included?", "What do they do in a regular oil change?"],
   V=["I'm taking my car to the shop for an oil change tomorrow and want to know what I'm paying for. what's included in a standard oil change?", "what's in a basic oil change?"],
   S=[(1, "include", "cover")],
   R=[(0, "in a standard oil change, what's included?")],
   neg=["what's not included in a standard oil change?"],
   ent=["what's included in a standard tire rotation?"])

sc("pets",
   B=["what are signs that my dog is happy?", "How can I tell if my dog is happy?", "signs my dog is happy?", "What are the signs of a happy dog?"],
   V=["we adopted a rescue dog a couple months ago and I really want to know he's doing ok. what are signs that he's happy?", "happy dog signs?"],
   S=[(0, "signs", "indications")],
   R=[(0, "signs that my dog is happy - what are they?")],
   neg=["what are signs that my dog is not happy?", "how can I tell if my dog isn't happy?"],
   ent=["what are signs that my cat is happy?"],
   ant=["what are signs that my dog is stressed?"])

sc("relationships",
   B=["what gifts are appropriate for a coworker?", "What's an appropriate gift for a coworker?", "appropriate coworker gifts?", "What kind of gifts are ok to give a coworker?"],
   V=["our office is doing a little gift exchange and I drew a coworker I don't know well. what gifts are appropriate?", "coworker gift ideas, appropriate?"],
   S=[(3, "ok", "appropriate")],
   R=[(0, "for a coworker, what gifts are appropriate?")],
   neg=["what gifts are not appropriate for a coworker?", "what gifts should I never give a coworker?"],
   ent=["what gifts are appropriate for my boss?"],
   cond=["what gifts are appropriate for a coworker if the limit is $15?"])

sc("health",
   B=["which medications can I take while breastfeeding?", "What medicines are safe to take when breastfeeding?", "meds that are ok while breastfeeding?", "What medication can I safely take while I'm nursing?"],
   V=["I'm exclusively breastfeeding my 2 month old and I've come down with a bad cold. which medications can I take?", "which meds are breastfeeding-safe?"],
   S=[(1, "medicines", "medications")],
   R=[(0, "while breastfeeding, which medications can I take?")],
   neg=["which medications can't I take while breastfeeding?", "what medicines are not safe when breastfeeding?"],
   cond=["which medications can I take while pregnant?"])

sc("business",
   B=["what should I say in a job interview?", "What are good things to say in a job interview?", "things to say in a job interview?", "What should I talk about in a job interview?"],
   V=["I have my first big job interview on Monday and I'm nervous. what should I say?", "job interview - what to say?"],
   S=[(0, "say", "mention")],
   R=[(0, "in a job interview, what should I say?")],
   neg=["what should I never say in a job interview?", "what are things not to say in a job interview?"],
   temp=["what should I say in a thank-you email after a job interview?"])

sc("household",
   B=["what cleaning products are safe to mix together?", "Which cleaning products can be safely mixed?", "cleaning products that are safe to combine?", "What household cleaners can I mix safely?"],
   V=["I'm doing a big spring clean this weekend and don't want to poison myself. what cleaning products are safe to mix together?", "safe cleaner combos?"],
   S=[(2, "combine", "mix")],
   R=[(0, "safe to mix together - which cleaning products are?")],
   neg=["what cleaning products should never be mixed together?", "which cleaners are not safe to mix?"])

sc("finance",
   B=["what happens if I only pay the minimum on my credit card?", "What are the consequences of only paying the minimum on my credit card?", "only paying the minimum on my credit card, what happens?", "If I just pay the minimum payment on my credit card, what happens?"],
   V=["money is tight this month so I'm thinking about just paying the minimum on my credit card. what happens if I do that?", "minimum credit card payment only - consequences?"],
   S=[(1, "consequences", "results")],
   R=[(0, "if I only pay the minimum on my credit card, what happens?")],
   neg=["what happens if I don't pay the minimum on my credit card?", "what happens if I can't pay even the minimum on my credit card?"],
   ant=["what happens if I pay my credit card balance in full every month?"])

sc("household",
   B=["my smoke detector keeps chirping every minute, what does that mean?", "What does it mean when a smoke detector chirps every minute?", "smoke alarm chirping once a minute, why?", "Why is my smoke detector chirping every minute?"],
   V=["it's 3am and my smoke detector started chirping every minute and I can't sleep. what does that mean?", "smoke detector chirps every minute - meaning?"],
   S=[(0, "chirping", "beeping")],
   R=[(0, "what does it mean? my smoke detector keeps chirping every minute")],
   neg=["my smoke detector doesn't make any sound when I press the test button, what does that mean?"],
   ent=["my carbon monoxide detector keeps chirping every minute, what does that mean?"])

sc("parenting",
   B=["my baby has a low fever but is eating normally, should I take her to the ER?", "Should I go to the ER if my baby has a low fever but is still eating normally?", "baby with low fever, eating fine - ER or not?", "My baby's running a low fever but eating like usual. Do I need the ER?"],
   V=["my baby felt warm tonight and has a low fever, but she's eating normally and acting like herself. should I take her to the ER?", "low fever, eating normally, ER?"],
   S=[(0, "take her to", "bring her to")],
   R=[(0, "should I take my baby to the ER? she has a low fever but is eating normally")],
   neg=["my baby has a low fever and isn't eating at all, should I take her to the ER?"],
   num=["my 3 week old baby has a low fever but is eating normally, should I take her to the ER?"])

sc("cooking",
   B=["my sourdough starter is full of bubbles after 5 days, is it ready to use?", "Is my sourdough starter ready to use? It's full of bubbles after 5 days.", "starter is really bubbly at day 5, ready to bake with?", "After 5 days my sourdough starter is very bubbly - can I use it yet?"],
   V=["this is my first time making a sourdough starter and on day 5 it's full of bubbles. is it ready to use?", "bubbly starter day 5 - ready?"],
   S=[(0, "use", "bake with")],
   R=[(0, "is my sourdough starter ready to use? it's full of bubbles after 5 days")],
   neg=["my sourdough starter has no bubbles after 5 days, is it ready to use?"],
   num=["my sourdough starter is full of bubbles after 1 day, is it ready to use?"])

sc("business",
   B=["I have a college degree, can I become a substitute teacher?", "Can I be a substitute teacher if I have a college degree?", "got a college degree - can i be a substitute teacher?", "With a college degree, am I able to become a substitute teacher?"],
   V=["I'm looking for flexible work while my kids are in school. I have a college degree, can I become a substitute teacher?", "college degree -> substitute teacher possible?"],
   S=[(0, "become", "work as")],
   R=[(0, "can I become a substitute teacher? I have a college degree")],
   neg=["I don't have a college degree, can I become a substitute teacher?"],
   ent=["I have a college degree, can I become a substitute teacher in Texas?"])

sc("health",
   B=["I've had chickenpox, can I visit my friend who has shingles?", "Can I visit a friend with shingles if I've already had chickenpox?", "had chickenpox as a kid, ok to visit a friend with shingles?", "Is it safe to visit my friend with shingles since I've had chickenpox before?"],
   V=["my friend has shingles and is feeling really low, I'd like to drop by with soup. I had chickenpox as a kid. can I visit?", "had chickenpox, visit friend with shingles?"],
   S=[(0, "visit", "see")],
   R=[(0, "can I visit my friend who has shingles? I've had chickenpox")],
   neg=["I've never had chickenpox, can I visit my friend who has shingles?"],
   cond=["I've had chickenpox, can I visit my friend who has shingles if I'm 6 months pregnant?"])

sc("finance",
   B=["my employer offers a 401k match, should I contribute?", "Should I contribute to my 401k if my employer matches?", "job offers 401k matching, should i put money in?", "Is it worth contributing to my 401k when my employer gives a match?"],
   V=["just started a new job and HR says they offer a 401k match. should I contribute?", "401k with match - contribute?"],
   S=[(0, "contribute", "put money in")],
   R=[(0, "should I contribute? my employer offers a 401k match")],
   neg=["my employer doesn't offer a 401k match, should I still contribute?", "there's no employer match on my 401k, should I contribute?"],
   cond=["my employer offers a 401k match, should I contribute if I have $15k of credit card debt at 24%?"])

sc("household",
   B=["my house has central AC, how do I keep the baby cool during a heatwave?", "How do I keep my baby cool in a heatwave? We have central air.", "we have central ac - how to keep the baby cool in this heatwave", "How can I keep my baby comfortable during a heatwave in our house with central AC?"],
   V=["there's a big heatwave coming this week. we have central AC at home. how do I keep the baby cool?", "central AC, heatwave, keep baby cool?"],
   S=[(0, "cool", "comfortable")],
   R=[(0, "how do I keep the baby cool during a heatwave? my house has central AC")],
   neg=["my house has no AC at all, how do I keep the baby cool during a heatwave?"],
   ent=["my house has central AC, how do I keep my elderly dog cool during a heatwave?"])

sc("pets",
   B=["my dog is house trained, can I leave him loose in the apartment while I'm at work?", "Can I let my house-trained dog roam the apartment while I'm at work?", "dog is potty trained, ok to leave him loose in the apartment during work?", "Is it ok to leave my house trained dog free in the apartment while I work?"],
   V=["we've finished house training our dog and I'm tired of crating him. can I leave him loose in the apartment while I'm at work?", "housetrained dog loose while at work?"],
   S=[(0, "loose", "free")],
   R=[(0, "while I'm at work, can I leave my dog loose in the apartment? he's house trained")],
   neg=["my dog isn't house trained yet, can I leave him loose in the apartment while I'm at work?"],
   ent=["my rabbit is litter trained, can I leave him loose in the apartment while I'm at work?"])

sc("travel",
   B=["I'll have a car, what's the best way to see Iceland in a week?", "What's the best way to see Iceland in a week if I have a car?", "have a rental car, how should i see iceland in 1 week", "With a car, how do I best see Iceland in one week?"],
   V=["we booked a rental car for our trip. what's the best way to see Iceland in a week?", "iceland 1 week with car - best route?"],
   S=[(0, "see", "explore")],
   R=[(0, "what's the best way to see Iceland in a week? I'll have a car")],
   neg=["I won't have a car, what's the best way to see Iceland in a week?", "I don't drive, what's the best way to see Iceland in a week?"],
   num=["I'll have a car, what's the best way to see Iceland in 3 days?"])

sc("office",
   B=["my iPhone is still under warranty, will Apple fix the cracked screen for free?", "Will Apple fix my cracked iPhone screen for free since it's under warranty?", "iphone under warranty, cracked screen - free fix?", "Is a cracked screen repair free from Apple if my iPhone is still under warranty?"],
   V=["I dropped my phone this morning and the screen cracked. it's still under warranty. will Apple fix it for free?", "cracked screen, iphone in warranty, free?"],
   S=[(0, "fix", "repair")],
   R=[(0, "will Apple fix the cracked screen for free? my iPhone is still under warranty")],
   neg=["my iPhone is no longer under warranty, will Apple fix the cracked screen for free?"],
   cond=["my iPhone is still under warranty and I have AppleCare+, will Apple fix the cracked screen for free?"])

sc("gardening",
   B=["which vegetables grow well in shade?", "What vegetables can grow in the shade?", "veggies that grow ok in shade?", "What are some vegetables that do well in shady spots?"],
   V=["my backyard only gets a few hours of sun because of the big trees. which vegetables grow well in shade?", "which veggies are shade-tolerant?"],
   S=[(3, "shady", "shaded")],
   R=[(0, "in shade, which vegetables grow well?")],
   neg=["which vegetables don't grow well in shade?", "what vegetables won't grow in the shade?"],
   ant=["which vegetables grow well in full sun?"])

sc("travel",
   B=["what can I bring on a plane in my carry-on?", "What items am I allowed to bring in my carry-on bag?", "carry on - what can i bring on the plane?", "What's allowed in carry-on luggage on a plane?"],
   V=["first time flying in years and I only want a carry-on. what can I bring on the plane in it?", "carry-on allowed items?"],
   S=[(1, "allowed", "permitted")],
   R=[(0, "in my carry-on, what can I bring on a plane?")],
   neg=["what can't I bring on a plane in my carry-on?", "what items are not allowed in a carry-on bag?"],
   ent=["what can I put in my checked bag on a plane?"])

# ---------------------------------------------------------------------------
# more everyday situations (scope: quantifiers, frequency, time spans)
# ---------------------------------------------------------------------------
sc("health",
   B=["is it bad to skip breakfast once in a while?", "Is skipping breakfast occasionally bad for you?", "skipping breakfast every now and then - bad?", "Is it unhealthy to skip breakfast once in a while?"],
   V=["some mornings I'm just running late and don't eat anything until lunch. is it bad to skip breakfast once in a while?", "occasional skipped breakfast bad?"],
   S=[(1, "occasionally", "now and then")],
   R=[(0, "once in a while, is it bad to skip breakfast?")],
   scope=["is it bad to skip breakfast every single day?", "is it bad to skip breakfast most days of the week?"],
   ent=["is it bad for my 8 year old to skip breakfast once in a while?"])

sc("pets",
   B=["my dog threw up once this morning but seems fine, should I call the vet?", "Should I call the vet? My dog vomited once this morning but is acting normal.", "dog puked once this morning, acting fine - vet?", "My dog threw up one time this morning and seems ok. Do I need to call the vet?"],
   V=["my dog threw up once this morning right after breakfast but he's been playing and acting totally fine since. should I call the vet?", "dog vomited once, seems fine, call vet?"],
   S=[(0, "call", "phone")],
   R=[(0, "should I call the vet? my dog threw up once this morning but seems fine")],
   scope=["my dog has thrown up several times today but seems fine, should I call the vet?", "my dog has thrown up every morning for a week but seems fine, should I call the vet?"],
   ent=["my cat threw up once this morning but seems fine, should I call the vet?"],
   cond=["my dog threw up once this morning and there was blood in it, should I call the vet?"])

sc("parenting",
   B=["my baby cries for a few minutes before falling asleep, is that ok?", "Is it ok that my baby cries a few minutes before she falls asleep?", "baby fusses a few min before falling asleep, normal?", "My baby cries for a couple of minutes before falling asleep. Is that ok?"],
   V=["every night when I put my 5 month old down she cries for a few minutes and then falls asleep. is that ok?", "baby cries few min before sleep ok?"],
   S=[(0, "ok", "alright")],
   R=[(0, "is it ok that my baby cries for a few minutes before falling asleep?")],
   scope=["my baby cries for hours every night before falling asleep, is that ok?"],
   ant=["my baby laughs for a few minutes before falling asleep, is that ok?"])

sc("household",
   B=["how much does it cost to repaint one bedroom?", "What's the cost to repaint a single bedroom?", "cost to repaint 1 bedroom?", "How much would it cost to have one bedroom repainted?"],
   V=["we're getting our place ready to sell and I want to freshen up one bedroom. how much does it cost to repaint it?", "price to repaint one bedroom?"],
   S=[(2, "1 bedroom", "a single bedroom")],
   R=[(0, "to repaint one bedroom, how much does it cost?")],
   scope=["how much does it cost to repaint my whole house inside?", "how much does it cost to repaint every room in a 3 bedroom house?"],
   ent=["how much does it cost to re-carpet one bedroom?"])

sc("gardening",
   B=["a few of my houseplants have yellow leaves, what's going on?", "What's happening if some of my houseplants have yellow leaves?", "couple of my houseplants getting yellow leaves, why?", "Why do a few of my houseplants have yellow leaves?"],
   V=["I have a bunch of houseplants and I noticed a few of them have some yellow leaves. what's going on?", "few houseplants yellowing - why?"],
   S=[(0, "going on", "happening")],
   R=[(0, "what's going on? a few of my houseplants have yellow leaves")],
   scope=["all of my houseplants suddenly have yellow leaves at the same time, what's going on?"])

sc("cars",
   B=["does my car insurance cover me when I occasionally borrow a friend's car?", "Am I covered by my car insurance if I borrow a friend's car once in a while?", "borrowing a friends car now and then, does my insurance cover me?", "Will my auto insurance cover me when I drive a friend's car occasionally?"],
   V=["every so often I borrow my buddy's truck to pick up stuff from the hardware store. does my car insurance cover me when I do that?", "occasional friend's car, my insurance covers?"],
   S=[(3, "occasionally", "now and then")],
   R=[(0, "when I occasionally borrow a friend's car, does my car insurance cover me?")],
   scope=["does my car insurance cover me when I drive a friend's car every day to work?"],
   ent=["does my car insurance cover me when I rent a car on vacation?"])

sc("pets",
   B=["my dog has had diarrhea since this morning, should I be worried?", "Should I worry that my dog has had diarrhea since this morning?", "dog's had diarrhea since this morning, worry?", "Is it a concern that my dog has diarrhea since this morning?"],
   V=["my dog got into the trash last night I think, and he's had diarrhea since this morning. should I be worried?", "dog diarrhea since AM - worried?"],
   S=[(0, "worried", "concerned")],
   R=[(0, "should I be worried? my dog has had diarrhea since this morning")],
   scope=["my dog has had diarrhea for five days now, should I be worried?"],
   ent=["my puppy has had diarrhea since this morning, should I be worried?"],
   cond=["my dog has had diarrhea since this morning and it's black and tarry, should I be worried?"])

sc("fitness",
   B=["is it normal to be sore for a day after a workout?", "Is being sore for one day after working out normal?", "sore for a day after my workout, normal?", "Is one day of soreness after exercising normal?"],
   V=["I started lifting again this week and I'm sore the day after every workout. is that normal?", "day-after workout soreness normal?"],
   S=[(0, "normal", "typical")],
   R=[(0, "for a day after a workout, is it normal to be sore?")],
   scope=["is it normal to be sore for a whole week after a workout?"],
   cond=["is it normal to be sore for a day after a workout if my urine is dark brown?"])

sc("finance",
   B=["do I have to report a couple hundred dollars of babysitting money on my taxes?", "Is a couple hundred dollars from babysitting something I need to report on my taxes?", "made a couple hundred bucks babysitting, do i report it on taxes?", "Do I need to declare a few hundred dollars of babysitting income on my tax return?"],
   V=["I babysat for neighbors a few times this year and made a couple hundred dollars. do I have to report that on my taxes?", "couple hundred babysitting $, report on taxes?"],
   S=[(0, "report", "declare")],
   R=[(0, "on my taxes, do I have to report a couple hundred dollars of babysitting money?")],
   scope=["do I have to report $30,000 of babysitting money on my taxes?"],
   ent=["do I have to report a couple hundred dollars of birthday money on my taxes?"])

sc("health",
   B=["is it safe to eat a little raw cookie dough?", "Is eating a bit of raw cookie dough safe?", "couple bites of raw cookie dough - safe?", "Can I safely eat a little bit of raw cookie dough?"],
   V=["I always sneak a little taste of the cookie dough while baking with my kids. is it safe to eat a little raw cookie dough?", "small bit raw cookie dough safe?"],
   S=[(1, "a bit of", "a little")],
   R=[(0, "a little raw cookie dough - is it safe to eat?")],
   scope=["is it safe to eat a whole tub of raw cookie dough?"],
   cond=["is it safe to eat a little raw cookie dough if I'm pregnant?"],
   ent=["is it safe to eat a little raw brownie batter?"])

sc("pets",
   B=["my cat sneezes now and then, should I be concerned?", "Should I be concerned that my cat sneezes every now and then?", "cat sneezes occasionally - concern?", "My cat sneezes once in a while, is that a concern?"],
   V=["I've noticed my cat sneezes now and then, like a couple times a week, otherwise totally normal. should I be concerned?", "cat sneezing occasionally, worry?"],
   S=[(0, "concerned", "worried")],
   R=[(0, "should I be concerned? my cat sneezes now and then")],
   scope=["my cat sneezes constantly all day long, should I be concerned?"],
   cond=["my cat sneezes now and then and there's blood in it, should I be concerned?"])

sc("health",
   B=["how many calories are in a slice of pepperoni pizza?", "How many calories does one slice of pepperoni pizza have?", "calories in 1 slice pepperoni pizza?", "What's the calorie count for a slice of pepperoni pizza?"],
   V=["I'm trying to track my food and I had pizza for lunch. how many calories are in a slice of pepperoni pizza?", "pepperoni pizza slice calories?"],
   S=[(3, "count", "total")],
   R=[(0, "in a slice of pepperoni pizza, how many calories are there?")],
   scope=["how many calories are in a whole large pepperoni pizza?"],
   ent=["how many calories are in a slice of cheese pizza?", "how many carbs are in a slice of pepperoni pizza?"])

sc("finance",
   B=["how much does it cost to feed a family of four for a week?", "What's the weekly grocery cost for a family of four?", "family of 4, how much for groceries per week?", "How much should a family of four spend on food each week?"],
   V=["we're trying to make a realistic budget for our household. how much does it cost to feed a family of four for a week?", "weekly food cost for 4?"],
   S=[(0, "feed", "provide food for")],
   R=[(0, "for a week, how much does it cost to feed a family of four?")],
   scope=["how much does it cost to feed a family of four for a whole year?"],
   num=["how much does it cost to feed a family of seven for a week?"],
   ent=["how much does it cost to feed a family of four for a week in London?"])

sc("health",
   B=["I've been feeling down for a couple of days, is that normal?", "Is it normal to feel down for a couple of days?", "feeling low for a couple days now, normal?", "Is feeling down for two or three days normal?"],
   V=["nothing bad happened, but I've been feeling kind of down and flat for a couple of days. is that normal?", "down for a couple days, normal?"],
   S=[(1, "down", "low")],
   R=[(0, "is it normal? I've been feeling down for a couple of days")],
   scope=["I've been feeling down every day for a couple of months, is that normal?"],
   ent=["my teenage son has been feeling down for a couple of days, is that normal?"])

sc("travel",
   B=["can I bring a few bottles of wine back from France to the US?", "Am I allowed to bring a few bottles of French wine home to the US?", "bringing a couple bottles of wine from france back to the us, allowed?", "Can I carry a few bottles of wine back to the US from France?"],
   V=["we're visiting vineyards in Bordeaux next month and I'd love to bring home a few bottles. can I bring them back from France to the US?", "few bottles wine France -> US ok?"],
   S=[(1, "allowed", "permitted")],
   R=[(0, "from France to the US, can I bring back a few bottles of wine?")],
   scope=["can I bring several cases of wine back from France to the US?"],
   ent=["can I bring a few wheels of cheese back from France to the US?", "can I bring a few bottles of wine back from France to Canada?"])

sc("household",
   B=["should I water my lawn every day in the summer?", "Is watering my lawn daily in summer a good idea?", "water lawn every day in summer - yes?", "During summer should I be watering the lawn every day?"],
   V=["it's been really hot lately and the grass is looking tired. should I water my lawn every day during the summer?", "daily lawn watering in summer?"],
   S=[(1, "good idea", "smart idea")],
   R=[(0, "in the summer, should I water my lawn every day?")],
   scope=["should I water my lawn once a week in the summer?"],
   temp=["should I water my lawn every day in the winter?"])

sc("parenting",
   B=["my toddler wakes up once in a while at night, should I be doing something different?", "Should I change anything if my toddler occasionally wakes up at night?", "toddler wakes up at night now and then, should i do anything different?", "My toddler sometimes wakes during the night. Should I do something different?"],
   V=["my 2 year old usually sleeps well but once in a while she wakes up at night and calls for me. should I be doing something different?", "toddler occasional night waking - change anything?"],
   S=[(1, "change", "adjust")],
   R=[(0, "should I be doing something different? my toddler wakes up once in a while at night")],
   scope=["my toddler wakes up five or six times every single night, should I be doing something different?"])

sc("health",
   B=["is it ok to have one cup of coffee a day while pregnant?", "Can I have a single cup of coffee each day during pregnancy?", "1 coffee a day while pregnant - ok?", "Is one coffee per day safe when you're pregnant?"],
   V=["I'm 10 weeks pregnant and I really miss my morning coffee. is it ok to have one cup a day?", "one daily coffee, pregnant ok?"],
   S=[(1, "during pregnancy", "while pregnant")],
   R=[(0, "while pregnant, is it ok to have one cup of coffee a day?")],
   scope=["is it ok to have several cups of coffee a day while pregnant?"],
   ent=["is it ok to have one glass of wine a day while pregnant?"])

sc("cars",
   B=["my car makes a squeaking noise now and then when I brake, is it safe?", "Is it safe if my brakes squeak every now and then?", "brakes squeak once in a while, still safe to drive?", "My car squeaks occasionally when braking. Is it safe?"],
   V=["every now and then when I come to a stop my car makes a little squeaking noise from the brakes. is it safe?", "occasional brake squeak - safe?"],
   S=[(0, "noise", "sound")],
   R=[(0, "is it safe? my car makes a squeaking noise now and then when I brake")],
   scope=["my car makes a squeaking noise every single time I brake, is it safe?"],
   ent=["my bike makes a squeaking noise now and then when I brake, is it safe?"])

# ---------------------------------------------------------------------------
# more everyday situations (time, tense, order of events)
# ---------------------------------------------------------------------------
sc("fitness",
   B=["what should I eat before a morning run?", "What's a good thing to eat before running in the morning?", "pre morning run food?", "What should I have to eat before I go for a run in the morning?"],
   V=["I've started running at 6am before work and I'm never sure about food. what should I eat before a morning run?", "food before AM run?"],
   S=[(1, "good", "smart")],
   R=[(0, "before a morning run, what should I eat?")],
   temp=["what should I eat after a morning run?", "what should I eat the night before a morning run?"],
   ent=["what should I drink before a morning run?"])

sc("business",
   B=["what should I do the day before a job interview?", "How should I prepare the day before a job interview?", "day before a job interview - what should i do?", "What should I be doing the day before my job interview?"],
   V=["I have a big job interview on Thursday and I want to be ready. what should I do the day before?", "prep day before interview?"],
   S=[(0, "do", "get done")],
   R=[(0, "the day before a job interview, what should I do?")],
   temp=["what should I do the day after a job interview?", "what should I do in the first week after starting a new job?"])

sc("relationships",
   B=["I'm getting married next month, how do I change my last name?", "How do I go about changing my last name when I get married next month?", "getting married next month - how do i change my last name", "What's the process for changing my last name? I'm getting married next month."],
   V=["my wedding is coming up next month and I've decided to take my partner's last name. how do I change it?", "married next month, name change how?"],
   S=[(0, "change", "update")],
   R=[(0, "how do I change my last name? I'm getting married next month")],
   temp=["I got married ten years ago, how do I change my last name now?", "I got divorced last month, how do I change my last name back?"],
   ent=["I'm getting married next month in Canada, how do I change my last name?"])

sc("finance",
   B=["can I still contribute to my IRA for last year?", "Is it too late to make an IRA contribution for last year?", "ira contribution for last year - still possible?", "Am I still able to put money in my IRA for the previous tax year?"],
   V=["I just realized I didn't max out my IRA last year. can I still contribute for last year?", "IRA for prior year still ok?"],
   S=[(1, "too late", "past the deadline")],
   R=[(0, "for last year, can I still contribute to my IRA?")],
   temp=["can I contribute to my IRA for next year already?"],
   ent=["can I still contribute to my HSA for last year?"])

sc("gardening",
   B=["how do I get my vegetable garden ready for winter?", "How should I prepare my vegetable garden for winter?", "prepping the veggie garden for winter, how?", "What steps do I take to get my vegetable garden ready for the winter?"],
   V=["the tomatoes are done and the nights are getting cold. how do I get my vegetable garden ready for winter?", "winterize veggie garden how?"],
   S=[(3, "steps", "actions")],
   R=[(0, "for winter, how do I get my vegetable garden ready?")],
   temp=["how do I get my vegetable garden ready for spring planting?"],
   ent=["how do I get my rose bushes ready for winter?"])

sc("homework",
   B=["what should I do the night before a big exam?", "How should I spend the night before a big exam?", "night before a big test - what to do?", "What's the best thing to do the night before an important exam?"],
   V=["I have my chemistry final tomorrow morning and I'm stressed. what should I do the night before a big exam?", "night before exam tips?"],
   S=[(0, "big", "major")],
   R=[(0, "the night before a big exam, what should I do?")],
   temp=["what should I do the morning of a big exam?", "what should I do a month before a big exam?"])

sc("finance",
   B=["how much is the child tax credit for 2021?", "What was the child tax credit amount in 2021?", "2021 child tax credit - how much?", "How much could parents get from the child tax credit in 2021?"],
   V=["I'm going through old paperwork and trying to understand what we got. how much was the child tax credit for 2021?", "child tax credit amount 2021?"],
   S=[(3, "parents", "families")],
   R=[(0, "for 2021, how much is the child tax credit?")],
   temp=["how much is the child tax credit for 2024?"],
   ent=["how much is the earned income tax credit for 2021?"])

sc("parenting",
   B=["my son starts kindergarten next week and he's nervous. how do I help him?", "How do I help my nervous son who starts kindergarten next week?", "son starting kindergarten next week, he's anxious, how can i help", "What can I do to help my son who's nervous about starting kindergarten next week?"],
   V=["my little boy is starting kindergarten next week and he keeps saying he's scared. how do I help him feel better?", "nervous kid starting K next week - help?"],
   S=[(1, "nervous", "anxious")],
   R=[(0, "how do I help my son? he starts kindergarten next week and he's nervous")],
   temp=["my son started kindergarten two months ago and he's still nervous every morning. how do I help him?"],
   ent=["my son starts middle school next week and he's nervous. how do I help him?"])

sc("pets",
   B=["what should I do before bringing home a new kitten?", "How should I prepare before I bring home a new kitten?", "getting a kitten soon, what should i do beforehand?", "What do I need to do to get ready before bringing a new kitten home?"],
   V=["we're picking up our new kitten from the shelter on Saturday! what should I do before bringing her home?", "prep before new kitten arrives?"],
   S=[(1, "prepare", "get ready")],
   R=[(0, "before bringing home a new kitten, what should I do?")],
   temp=["what should I do in the first week after bringing home a new kitten?"],
   ent=["what should I do before bringing home a new rescue dog?"])

sc("household",
   B=["I'm moving out next month, what should I do about my utilities?", "What do I need to do about my utilities since I'm moving out next month?", "moving out next month, what do i do about utilities", "How should I handle my utilities when I move out next month?"],
   V=["my lease is up and I'm moving out next month. I've never done this before. what should I do about my utilities?", "moving next month - utilities to-do?"],
   S=[(3, "handle", "deal with")],
   R=[(0, "what should I do about my utilities? I'm moving out next month")],
   temp=["I moved out last month and never did anything about my utilities, what should I do now?"])

sc("health",
   B=["is it too late to get a flu shot in March?", "Can I still get a flu shot in March, or is it too late?", "flu shot in march - too late?", "Is March too late in the season for a flu shot?"],
   V=["I kept putting it off all winter and now it's March. is it too late to get a flu shot?", "flu shot march too late?"],
   S=[(0, "get", "have")],
   R=[(0, "in March, is it too late to get a flu shot?")],
   temp=["is it too early to get a flu shot in August?"],
   ent=["is it too late to get a COVID booster in March?"])

sc("pets",
   B=["how do I stop my dog from barking when I leave the house?", "What can I do to stop my dog barking after I leave?", "dog barks when i leave the house, how to stop it", "How do I get my dog to quit barking whenever I leave?"],
   V=["my neighbors told me my dog barks nonstop when I leave the house for work. how do I stop it?", "dog barks when I leave - fix?"],
   S=[(0, "stop", "prevent")],
   R=[(0, "when I leave the house, how do I stop my dog from barking?")],
   temp=["how do I stop my dog from barking and jumping when I come home?"],
   ent=["how do I stop my dog from barking when the doorbell rings?"])

sc("household",
   B=["my rent is due tomorrow and I'm short, can I pay it a few days late?", "Rent is due tomorrow and I don't have all of it - can I pay a few days late?", "rent due tomorrow, im short, ok to pay a few days late?", "Can I pay my rent a few days late? It's due tomorrow and I'm short."],
   V=["I had an unexpected car repair this month and now my rent is due tomorrow and I'm a bit short. can I pay it a few days late?", "rent due tomorrow, short - pay late?"],
   S=[(0, "short", "short on money")],
   R=[(0, "can I pay my rent a few days late? it's due tomorrow and I'm short")],
   temp=["my rent was due two weeks ago and I still haven't paid, what happens now?"],
   num=["my rent is due tomorrow and I'm short, can I pay it a month late?"])

sc("health",
   B=["I had a tooth pulled two days ago, can I drink through a straw?", "Is it ok to use a straw two days after a tooth extraction?", "tooth pulled 2 days ago - straw ok?", "Can I drink with a straw two days after getting a tooth pulled?"],
   V=["I had a molar pulled on Monday, so two days ago now, and I'm craving a smoothie. can I drink through a straw?", "straw 2 days after extraction?"],
   S=[(0, "pulled", "extracted")],
   R=[(0, "can I drink through a straw? I had a tooth pulled two days ago")],
   temp=["I'm getting a tooth pulled in two days, can I drink through a straw until then?"],
   num=["I had a tooth pulled two weeks ago, can I drink through a straw?"])

sc("health",
   B=["I got my covid booster yesterday, can I work out today?", "Is it ok to exercise the day after getting my covid booster?", "had my booster yesterday, ok to work out today?", "Can I go to the gym today if I got my covid booster yesterday?"],
   V=["I got my covid booster yesterday afternoon and my arm's a bit sore but I feel ok. can I work out today?", "booster yesterday, workout today ok?"],
   S=[(1, "exercise", "work out")],
   R=[(0, "can I work out today? I got my covid booster yesterday")],
   temp=["I'm getting my covid booster tomorrow, can I work out today?"],
   ent=["I got my shingles vaccine yesterday, can I work out today?"])

sc("household",
   B=["how much did a gallon of gas cost in 2008?", "What was the average price of a gallon of gas in 2008?", "gas price per gallon in 2008?", "How much was gas per gallon back in 2008?"],
   V=["my dad keeps talking about how expensive gas was back then. how much did a gallon of gas cost in 2008?", "2008 gas price/gallon?"],
   S=[(1, "average", "typical")],
   R=[(0, "in 2008, how much did a gallon of gas cost?")],
   temp=["how much did a gallon of gas cost in 1998?"],
   ent=["how much did a gallon of milk cost in 2008?"])

sc("parenting",
   B=["my daughter's braces come off next week, what should we expect?", "What should we expect when my daughter gets her braces off next week?", "daughter getting braces off next week, what to expect", "Next week my daughter's braces are coming off - what should we expect?"],
   V=["after two and a half years my daughter's braces finally come off next week! what should we expect?", "braces off next week - expect what?"],
   S=[(0, "expect", "anticipate")],
   R=[(0, "what should we expect? my daughter's braces come off next week")],
   temp=["my daughter's braces came off last week, what should we expect now?"],
   ant=["my daughter gets her braces put on next week, what should we expect?"])

sc("pets",
   B=["what should I feed my dog the night before his surgery?", "What can my dog eat the night before he has surgery?", "dog has surgery tomorrow, what do i feed him tonight?", "What's ok to feed my dog the evening before his operation?"],
   V=["my dog is getting neutered tomorrow morning. what should I feed him the night before?", "food night before dog surgery?"],
   S=[(3, "operation", "surgery")],
   R=[(0, "the night before his surgery, what should I feed my dog?")],
   temp=["what should I feed my dog the night after his surgery?"],
   ent=["what should I feed my cat the night before her surgery?"])

sc("travel",
   B=["can I get a refund if I cancel my flight a week before departure?", "If I cancel my flight a week before it leaves, do I get a refund?", "cancel flight 1 week before - refund?", "Will I get my money back if I cancel my flight a week ahead of departure?"],
   V=["something came up and I might not be able to travel. can I get a refund if I cancel my flight a week before departure?", "refund if cancel a week before flight?"],
   S=[(0, "refund", "reimbursement")],
   R=[(0, "if I cancel my flight a week before departure, can I get a refund?")],
   temp=["can I get a refund if I didn't show up and the flight already left?"],
   num=["can I get a refund if I cancel my flight within 24 hours of booking?"],
   cond=["can I get a refund if I cancel my flight a week before departure and it was a basic economy ticket?"])

sc("business",
   B=["I was laid off last week, can I get unemployment?", "Can I collect unemployment after being laid off last week?", "got laid off last week - can i get unemployment?", "Am I eligible for unemployment benefits? I was laid off last week."],
   V=["my company did a round of cuts and I was laid off last week. can I get unemployment?", "laid off last wk, unemployment?"],
   S=[(1, "collect", "receive")],
   R=[(0, "can I get unemployment? I was laid off last week")],
   temp=["I'm going to be laid off at the end of next month, can I get unemployment now?"],
   ent=["I was laid off last week from a job in Canada, can I get EI?"])

# ---------------------------------------------------------------------------
# more everyday situations (opposites and comparatives)
# ---------------------------------------------------------------------------
sc("cooking",
   B=["how do I make my rice less sticky?", "How can I keep my rice from being so sticky?", "rice always too sticky, how to fix", "What's the trick to making rice less sticky?"],
   V=["every time I cook rice it turns into a sticky clump. how do I make it less sticky?", "less sticky rice how?"],
   S=[(3, "trick", "secret")],
   R=[(0, "my rice - how do I make it less sticky?")],
   ant=["how do I make my rice more sticky, like for sushi?", "how do I make my rice stickier?"],
   ent=["how do I make my pasta less sticky?"])

sc("pets",
   B=["my cat is way too clingy, how do I make her more independent?", "How can I make my overly clingy cat more independent?", "cat is super clingy, how do i get her more independent", "What can I do about my cat being too clingy?"],
   V=["my cat follows me everywhere, cries when I close the bathroom door, she's way too clingy. how do I make her more independent?", "clingy cat - more independent how?"],
   S=[(0, "way too", "far too")],
   R=[(0, "how do I make my cat more independent? she's way too clingy")],
   ant=["my cat is way too aloof, how do I make her more affectionate?"],
   ent=["my dog is way too clingy, how do I make him more independent?"])

sc("health",
   B=["my scalp is really oily, what shampoo should I use?", "What shampoo is good for a really oily scalp?", "super oily scalp - which shampoo?", "Which shampoo should I use if my scalp gets really oily?"],
   V=["by the end of the day my hair looks greasy because my scalp is really oily. what shampoo should I use?", "oily scalp shampoo?"],
   S=[(0, "really", "very")],
   R=[(0, "what shampoo should I use? my scalp is really oily")],
   ant=["my scalp is really dry and flaky, what shampoo should I use?"],
   ent=["my scalp is really oily, what conditioner should I use?"])

sc("cooking",
   B=["my sourdough bread tastes too sour, how do I make it milder?", "How can I make my sourdough less sour?", "sourdough too sour - how to make it milder", "What can I change to make my sourdough bread taste less sour?"],
   V=["my family likes my sourdough but says it tastes too sour. how do I make it milder?", "less sour sourdough how?"],
   S=[(3, "change", "adjust")],
   R=[(0, "how do I make my sourdough bread milder? it tastes too sour")],
   ant=["my sourdough bread isn't sour enough, how do I make it more tangy?", "my sourdough bread tastes too mild, how do I make it more sour?"])

sc("household",
   B=["the water pressure in my shower is too high, how do I lower it?", "How can I reduce the water pressure in my shower? It's too high.", "shower water pressure way too high, how to turn it down", "How do I lower my shower's water pressure because it's too strong?"],
   V=["the water in our shower comes out so hard it almost hurts, the pressure is too high. how do I lower it?", "shower pressure too high - lower it how?"],
   S=[(1, "reduce", "lower")],
   R=[(0, "how do I lower the water pressure in my shower? it's too high")],
   ant=["the water pressure in my shower is too low, how do I raise it?"],
   ent=["the water pressure in my kitchen sink is too high, how do I lower it?"])

sc("household",
   B=["my pool water is too acidic, how do I fix it?", "How do I fix pool water that's too acidic?", "pool ph too low / too acidic - fix?", "What should I add to my pool if the water is too acidic?"],
   V=["tested the pool this morning and the water is too acidic according to the strip. how do I fix it?", "acidic pool water fix?"],
   S=[(0, "fix", "correct")],
   R=[(0, "how do I fix my pool water? it's too acidic")],
   ant=["my pool water is too alkaline, how do I fix it?"],
   ent=["my hot tub water is too acidic, how do I fix it?"])

sc("health",
   B=["how can I lighten my hair naturally?", "What are natural ways to lighten my hair?", "natural ways to lighten hair?", "How do I make my hair lighter without chemicals?"],
   V=["I want a bit of a sun-kissed look this summer but I don't want to use bleach. how can I lighten my hair naturally?", "lighten hair naturally how?"],
   S=[(1, "ways", "methods")],
   R=[(0, "naturally, how can I lighten my hair?")],
   ant=["how can I darken my hair naturally?"],
   ent=["how can I lighten my skin's dark spots naturally?"])

sc("cars",
   B=["what are the advantages of leasing a car?", "What are the benefits of leasing a car?", "pros of leasing a car?", "What's good about leasing a car?"],
   V=["I'm getting a new car soon and the dealer keeps pushing a lease. what are the advantages of leasing?", "car lease advantages?"],
   S=[(1, "benefits", "upsides")],
   R=[(0, "leasing a car - what are the advantages?")],
   ant=["what are the disadvantages of leasing a car?", "what are the cons of leasing a car?"],
   ent=["what are the advantages of financing a car?"])

sc("parenting",
   B=["what are the pros of homeschooling?", "What are the benefits of homeschooling my kids?", "pros of homeschooling?", "What are the upsides of homeschooling?"],
   V=["my husband and I are seriously considering homeschooling our two kids next year. what are the pros?", "homeschool pros list?"],
   S=[(1, "benefits", "advantages")],
   R=[(0, "homeschooling - what are the pros?")],
   ant=["what are the cons of homeschooling?", "what are the downsides of homeschooling my kids?"],
   ent=["what are the pros of private school?"])

sc("household",
   B=["how do I keep my upstairs bedroom cooler at night?", "What can I do to make my upstairs bedroom cooler at night?", "upstairs bedroom too hot at night, how to keep it cooler", "How can I cool down my upstairs bedroom at night?"],
   V=["heat rises and our upstairs bedroom is always stuffy at night. how do I keep it cooler?", "cooler upstairs bedroom at night?"],
   S=[(1, "make", "keep")],
   R=[(0, "at night, how do I keep my upstairs bedroom cooler?")],
   ant=["how do I keep my upstairs bedroom warmer at night?"],
   ent=["how do I keep my basement bedroom cooler at night?"])

sc("parenting",
   B=["how do I get my toddler to nap longer?", "How can I make my toddler's naps longer?", "toddler naps too short - how to get her to nap longer", "What can I do to get my toddler to take longer naps?"],
   V=["my toddler's naps are way too short and then she's cranky all afternoon. how do I get her to nap longer?", "longer toddler naps how?"],
   S=[(3, "take longer naps", "nap for longer")],
   R=[(0, "my toddler - how do I get her to nap longer?")],
   ant=["how do I get my toddler to nap shorter so she sleeps at night?"],
   ent=["how do I get my newborn to nap longer?"])

sc("business",
   B=["how do I make my resume shorter?", "How can I cut my resume down?", "resume too long, how to shorten it", "What's the best way to make my resume shorter?"],
   V=["my resume is three pages and everyone says that's too much. how do I make it shorter?", "shorten resume how?"],
   S=[(2, "shorten", "trim")],
   R=[(0, "my resume - how do I make it shorter?")],
   ant=["how do I make my resume longer? I only have a few things to put on it"],
   ent=["how do I make my cover letter shorter?"])

sc("health",
   B=["how can I increase my breast milk supply?", "What can I do to boost my milk supply?", "need to increase breast milk supply, how?", "How do I make more breast milk?"],
   V=["I feel like I'm not making enough milk for my baby. how can I increase my breast milk supply?", "increase milk supply tips?"],
   S=[(0, "increase", "boost")],
   R=[(0, "my breast milk supply - how can I increase it?")],
   ant=["how can I decrease my breast milk supply? I have an oversupply", "how can I dry up my breast milk supply?"])

sc("health",
   B=["how can I lower my blood pressure naturally?", "What are natural ways to lower blood pressure?", "lower blood pressure naturally, how?", "How do I bring down my blood pressure without meds?"],
   V=["my doctor says my blood pressure is creeping up and wants me to try lifestyle changes first. how can I lower it naturally?", "natural ways to lower BP?"],
   S=[(3, "bring down", "reduce")],
   R=[(0, "naturally, how can I lower my blood pressure?")],
   ant=["how can I raise my blood pressure naturally? it's always low and I get dizzy"],
   ent=["how can I lower my cholesterol naturally?"])

sc("cooking",
   B=["how do I make my bread crust softer?", "How can I get a softer crust on my homemade bread?", "bread crust too hard, how to make it softer", "What makes a bread crust softer?"],
   V=["my homemade sandwich bread tastes great but the crust is too hard for my kids. how do I make it softer?", "softer bread crust how?"],
   S=[(1, "get", "achieve")],
   R=[(0, "my bread crust - how do I make it softer?")],
   ant=["how do I make my bread crust crispier?", "how do I get a crunchier crust on my homemade bread?"])

sc("household",
   B=["how do I tighten a loose kitchen faucet handle?", "How can I fix a kitchen faucet handle that's loose?", "kitchen faucet handle is loose - how to tighten", "What's the way to tighten a wobbly kitchen faucet handle?"],
   V=["the handle on our kitchen faucet has gotten really loose and wobbly. how do I tighten it?", "tighten loose faucet handle?"],
   S=[(3, "wobbly", "loose")],
   R=[(0, "a loose kitchen faucet handle - how do I tighten it?")],
   ant=["how do I loosen a stuck kitchen faucet handle?"],
   ent=["how do I tighten a loose toilet handle?"])

sc("health",
   B=["my teenager sleeps too much, should I be worried?", "Should I be concerned that my teen sleeps so much?", "teen sleeps way too much, worry?", "Is it a concern if my teenager sleeps too much?"],
   V=["I feel like my teenager sleeps way too much, like all the time. should I be worried?", "teenager oversleeping - worry?"],
   S=[(0, "worried", "concerned")],
   R=[(0, "should I be worried? my teenager sleeps too much")],
   ant=["my teenager sleeps too little, should I be worried?", "my teenager barely sleeps, should I be worried?"])

sc("parenting",
   B=["my newborn is eating too much formula, what should I do?", "What should I do if my newborn is drinking too much formula?", "newborn taking too much formula, what do i do", "My newborn eats too much formula - what should I do?"],
   V=["my newborn keeps finishing bottles and crying for more, I think she's eating too much formula. what should I do?", "newborn overeating formula?"],
   S=[(1, "drinking", "taking")],
   R=[(0, "what should I do? my newborn is eating too much formula")],
   ant=["my newborn is eating too little formula, what should I do?"],
   ent=["my newborn is eating too much breast milk, what should I do?"])

sc("health",
   B=["how do I make my hair curlier?", "How can I get curlier hair?", "want curlier hair, how?", "What can I do to make my hair more curly?"],
   V=["I have kind of wavy hair but I love the look of curls. how do I make my hair curlier?", "curlier hair tips?"],
   S=[(1, "get", "achieve")],
   R=[(0, "my hair - how do I make it curlier?")],
   ant=["how do I make my hair straighter?", "how can I get straighter hair?"])

sc("travel",
   B=["what's the warmest month to visit Lisbon?", "Which month is the warmest in Lisbon?", "warmest month in lisbon?", "When is Lisbon at its warmest during the year?"],
   V=["I'm planning a trip to Portugal and I want beach weather. what's the warmest month to visit Lisbon?", "lisbon warmest month?"],
   S=[(2, "warmest", "hottest")],
   R=[(0, "to visit Lisbon, what's the warmest month?")],
   ant=["what's the coldest month to visit Lisbon?"],
   ent=["what's the warmest month to visit Dublin?"])

sc("travel",
   B=["what's the cheapest day of the week to fly?", "Which day of the week are flights cheapest?", "cheapest day to fly?", "What day of the week has the cheapest airfare?"],
   V=["I'm flexible on dates for our family trip and want to save money. what's the cheapest day of the week to fly?", "cheapest weekday to fly?"],
   S=[(3, "airfare", "flights")],
   R=[(0, "to fly, what's the cheapest day of the week?")],
   ant=["what's the most expensive day of the week to fly?"],
   ent=["what's the cheapest day of the week to book a hotel?"])

sc("pets",
   B=["my dog is too aggressive with other dogs at the park, what should I do?", "What should I do about my dog being too aggressive with other dogs at the park?", "dog too aggressive w/ other dogs at the park, what do i do", "How do I handle my dog being aggressive toward other dogs at the park?"],
   V=["every time we go to the park my dog lunges and snaps at other dogs, he's way too aggressive. what should I do?", "dog aggressive at park - what to do?"],
   S=[(3, "handle", "deal with")],
   R=[(0, "what should I do? my dog is too aggressive with other dogs at the park")],
   ant=["my dog is too timid with other dogs at the park, what should I do?"],
   ent=["my dog is too aggressive with kids at the park, what should I do?"])

sc("household",
   B=["how do I make a small living room look bigger?", "How can I make my small living room feel bigger?", "small living room, how to make it look bigger", "What tricks make a small living room look larger?"],
   V=["our apartment's living room is tiny and feels cramped. how do I make it look bigger?", "make small living room look bigger?"],
   S=[(3, "larger", "bigger")],
   R=[(0, "a small living room - how do I make it look bigger?")],
   ant=["how do I make a big living room feel cozier and smaller?"],
   ent=["how do I make a small bathroom look bigger?"])

sc("health",
   B=["the humidity in my house is too high in the winter, how do I lower it?", "How do I reduce high humidity in my house in winter?", "house too humid in winter, how to lower it", "What can I do about too much humidity in my home during winter?"],
   V=["our windows are covered in condensation every morning, the humidity in the house is too high this winter. how do I lower it?", "high winter humidity fix?"],
   S=[(1, "reduce", "lower")],
   R=[(0, "how do I lower the humidity in my house? it's too high in the winter")],
   ant=["the humidity in my house is too low in the winter, how do I raise it?"],
   temp=["the humidity in my house is too high in the summer, how do I lower it?"])

sc("cooking",
   B=["how do I make my smoothie thicker?", "How can I get a thicker smoothie?", "smoothie too runny, how to make it thicker", "What can I add to make my smoothie thicker?"],
   V=["my morning smoothies always come out kind of watery. how do I make them thicker?", "thicker smoothie how?"],
   S=[(1, "get", "make")],
   R=[(0, "my smoothie - how do I make it thicker?")],
   ant=["how do I make my smoothie thinner?"],
   ent=["how do I make my soup thicker?"])

sc("gardening",
   B=["my lawn soil is too acidic, how do I fix it?", "How do I fix acidic soil in my lawn?", "lawn soil too acidic, what do i add", "What should I do about my lawn's soil being too acidic?"],
   V=["I did a soil test on my lawn and it came back too acidic. how do I fix it?", "acidic lawn soil fix?"],
   S=[(0, "fix", "correct")],
   R=[(0, "how do I fix my lawn soil? it's too acidic")],
   ant=["my lawn soil is too alkaline, how do I fix it?"],
   ent=["my blueberry bed soil is too acidic, how do I fix it?"])

# ---------------------------------------------------------------------------
# more everyday situations (who does what to whom)
# ---------------------------------------------------------------------------
sc("pets",
   B=["my cat keeps attacking my dog, how do I stop it?", "How do I get my cat to stop attacking my dog?", "cat keeps going after my dog, how to stop it", "What can I do about my cat constantly attacking our dog?"],
   V=["ever since we moved, my cat keeps ambushing and attacking my dog out of nowhere. how do I stop it?", "cat attacks dog - stop how?"],
   S=[(0, "stop", "end")],
   R=[(0, "how do I stop my cat from attacking my dog? it keeps happening")],
   role=["my dog keeps attacking my cat, how do I stop it?", "How do I get my dog to stop attacking my cat?"],
   ent=["my cat keeps attacking my other cat, how do I stop it?"])

sc("pets",
   B=["my neighbor's dog bit my son, who pays the medical bills?", "Who has to pay my son's medical bills after my neighbor's dog bit him?", "neighbors dog bit my kid - who pays for the doctor?", "My neighbor's dog bit my son. Who's responsible for the medical bills?"],
   V=["my son was playing outside and my neighbor's dog bit him on the leg, we had to go to urgent care. who pays the medical bills?", "neighbor's dog bit son, who pays?"],
   S=[(3, "responsible for", "on the hook for")],
   R=[(0, "who pays the medical bills? my neighbor's dog bit my son")],
   role=["my dog bit my neighbor's son, who pays the medical bills?", "my dog bit the neighbor's kid - who pays for the doctor?"],
   cond=["my neighbor's dog bit my son while he was in their yard without permission, who pays the medical bills?"])

sc("relationships",
   B=["my ex owes me three months of child support, how do I collect it?", "How do I collect three months of unpaid child support from my ex?", "ex is 3 months behind on child support, how do i get it", "What can I do to collect the three months of child support my ex owes me?"],
   V=["my ex has been ignoring my messages and now owes me three months of child support. how do I collect it?", "ex owes 3 months child support, collect how?"],
   S=[(0, "collect", "recover")],
   R=[(0, "how do I collect it? my ex owes me three months of child support")],
   role=["I owe my ex three months of child support, what should I do?", "I'm three months behind on child support to my ex, how do I catch up?"],
   num=["my ex owes me three years of child support, how do I collect it?"])

sc("relationships",
   B=["my mother-in-law keeps criticizing my parenting, how do I respond?", "How should I respond when my mother-in-law criticizes my parenting?", "mother in law always criticizes how i parent, how to respond", "What do I say when my mother-in-law keeps criticizing my parenting?"],
   V=["every time she visits, my mother-in-law finds something to criticize about how I'm raising the kids. how do I respond?", "MIL criticizes my parenting - respond how?"],
   S=[(0, "respond", "react")],
   R=[(0, "how do I respond? my mother-in-law keeps criticizing my parenting")],
   role=["I keep criticizing my daughter-in-law's parenting and she's upset, how do I fix things?"],
   ent=["my own mother keeps criticizing my parenting, how do I respond?"])

sc("business",
   B=["my manager keeps interrupting me in meetings, how do I handle it?", "How do I handle a manager who keeps interrupting me during meetings?", "boss keeps cutting me off in meetings, what do i do", "What should I do about my manager interrupting me in meetings all the time?"],
   V=["I can barely finish a sentence in our team meetings because my manager keeps interrupting me. how do I handle it?", "manager interrupts me in meetings - handle?"],
   S=[(0, "handle", "deal with")],
   R=[(0, "in meetings, my manager keeps interrupting me. how do I handle it?")],
   role=["I keep interrupting my manager in meetings, how do I stop?", "my manager says I keep interrupting her in meetings, how do I handle it?"],
   ent=["my coworker keeps interrupting me in meetings, how do I handle it?"])

sc("household",
   B=["my roommate keeps eating my food without asking, how do I bring it up?", "How do I bring up my roommate eating my food without asking?", "roommate keeps eating my food w/o asking - how to bring it up", "How should I talk to my roommate about eating my food without asking?"],
   V=["I keep buying groceries and my roommate keeps eating my food without even asking. how do I bring it up without a fight?", "roommate eats my food - bring it up how?"],
   S=[(0, "bring it up", "raise it")],
   R=[(0, "how do I bring it up? my roommate keeps eating my food without asking")],
   role=["I keep eating my roommate's food without asking, how do I bring it up?", "my roommate says I keep eating her food without asking, how should I talk to her about it?"])

sc("parenting",
   B=["my son's teacher yelled at him in front of the class, what should I do?", "What should I do about my son's teacher yelling at him in front of everyone?", "teacher yelled at my son in front of the class, what do i do", "How should I handle my son's teacher yelling at him in front of the whole class?"],
   V=["my son came home really upset because his teacher yelled at him in front of the whole class today. what should I do?", "teacher yelled at son in class - what to do?"],
   S=[(0, "yelled at", "shouted at")],
   R=[(0, "what should I do? my son's teacher yelled at him in front of the class")],
   role=["my son yelled at his teacher in front of the class, what should I do?"],
   ent=["my son's coach yelled at him in front of the team, what should I do?"])

sc("relationships",
   B=["my wife wants to adopt a dog but I don't, how do we decide?", "How do we decide when my wife wants a dog and I don't?", "wife wants a dog, i dont. how do we work it out", "My wife wants to adopt a dog and I'm against it - how do we decide?"],
   V=["we've been going around in circles: my wife really wants to adopt a dog and I really don't. how do we decide?", "wife wants dog, I don't - decide how?"],
   S=[(0, "decide", "settle it")],
   R=[(0, "how do we decide? my wife wants to adopt a dog but I don't")],
   role=["I want to adopt a dog but my wife doesn't, how do we decide?"],
   ent=["my wife wants to adopt a cat but I don't, how do we decide?"])

sc("relationships",
   B=["my friend owes me an apology, should I wait for her to reach out?", "Should I wait for my friend to reach out since she's the one who owes me an apology?", "friend owes me an apology - do i wait for her to contact me?", "My friend owes me an apology. Should I wait until she reaches out?"],
   V=["we had a fight last week and honestly my friend is the one who owes me an apology. should I wait for her to reach out?", "friend owes me apology, wait for her?"],
   S=[(0, "reach out", "get in touch")],
   R=[(0, "should I wait for my friend to reach out? she owes me an apology")],
   role=["I owe my friend an apology, should I wait for her to reach out?"])

sc("pets",
   B=["my puppy keeps nipping at my toddler, how do I stop it?", "How do I stop my puppy from nipping my toddler?", "puppy keeps biting at my toddler, how to stop", "What can I do about my puppy nipping at my toddler?"],
   V=["we got a puppy last month and she keeps nipping at my 2 year old whenever he runs around. how do I stop it?", "puppy nips toddler - stop it how?"],
   S=[(0, "nipping at", "biting at")],
   R=[(0, "how do I stop my puppy from nipping at my toddler?")],
   role=["my toddler keeps hitting my puppy, how do I stop it?"],
   ent=["my kitten keeps nipping at my toddler, how do I stop it?"])

sc("household",
   B=["the seller backed out of our home purchase after the inspection, do we get our earnest money back?", "Do we get our earnest money back if the seller backed out after the inspection?", "seller pulled out after inspection - do we get the earnest money back?", "After the inspection the seller backed out of the sale. Is our earnest money refunded?"],
   V=["we were so close to closing on our first house, but the seller backed out after the inspection. do we get our earnest money back?", "seller backed out post-inspection, earnest money back?"],
   S=[(0, "backed out of", "pulled out of")],
   R=[(0, "do we get our earnest money back? the seller backed out of our home purchase after the inspection")],
   role=["we backed out of our home purchase after the inspection, do we get our earnest money back?"],
   temp=["the seller backed out of our home purchase the day before closing, do we get our earnest money back?"])

sc("relationships",
   B=["my girlfriend cheated on me, should I forgive her?", "Should I forgive my girlfriend for cheating on me?", "gf cheated on me. do i forgive her?", "My girlfriend was unfaithful. Should I forgive her?"],
   V=["I found out last week that my girlfriend of three years cheated on me and I'm a mess. should I forgive her?", "gf cheated, forgive?"],
   S=[(2, "gf", "girlfriend")],
   R=[(0, "should I forgive my girlfriend? she cheated on me")],
   role=["I cheated on my girlfriend, should she forgive me?", "I was unfaithful to my girlfriend. will she forgive me?"],
   scope=["my girlfriend has cheated on me several times, should I forgive her?"])

sc("household",
   B=["my upstairs neighbor is really loud at night, how do I ask them to be quieter?", "How do I ask my upstairs neighbor to be quieter at night?", "upstairs neighbor super loud at night, how to ask them to keep it down", "What's a good way to ask my loud upstairs neighbor to keep the noise down at night?"],
   V=["I can hear every footstep and the TV at midnight, my upstairs neighbor is really loud at night. how do I ask them to be quieter?", "loud upstairs neighbor - ask nicely how?"],
   S=[(0, "quieter", "less noisy")],
   R=[(0, "how do I ask my upstairs neighbor to be quieter? they're really loud at night")],
   role=["my downstairs neighbor says I'm really loud at night, how do I respond?"],
   temp=["my upstairs neighbor is really loud early in the morning, how do I ask them to be quieter?"])

sc("business",
   B=["my company owes me for unused vacation days after I quit, how do I get paid?", "How do I get paid for unused vacation days my company owes me after I quit?", "quit my job and they owe me for unused PTO, how do i get it", "My former employer owes me for unused vacation days. How do I get that money?"],
   V=["I left my job two weeks ago and they never paid out the unused vacation days they owe me. how do I get paid?", "employer owes unused PTO after I quit - how to get it?"],
   S=[(0, "get paid", "collect")],
   R=[(0, "how do I get paid? my company owes me for unused vacation days after I quit")],
   role=["I owe my company money for vacation days I used before I quit, do I have to pay it back?"],
   ent=["my company owes me for unpaid overtime after I quit, how do I get paid?"])

sc("cars",
   B=["my cousin hit my parked car in my driveway, whose insurance pays?", "Whose insurance covers it when my cousin hits my parked car in my own driveway?", "cousin backed into my parked car in my driveway, whose insurance?", "My cousin hit my car while it was parked in my driveway - whose insurance pays?"],
   V=["my cousin was visiting and backed right into my parked car in my driveway. whose insurance pays for this?", "cousin hit my parked car, whose insurance?"],
   S=[(0, "pays", "covers it")],
   R=[(0, "whose insurance pays? my cousin hit my parked car in my driveway")],
   role=["I hit my cousin's parked car in her driveway, whose insurance pays?"],
   ent=["a delivery driver hit my parked car in my driveway, whose insurance pays?"])

sc("parenting",
   B=["my son is being bullied at school, what should I do?", "What should I do if my son is getting bullied at school?", "son getting bullied at school, what do i do", "How should I handle my son being bullied at school?"],
   V=["my son finally told me that some kids have been bullying him at school for weeks. what should I do?", "son bullied at school - what to do?"],
   S=[(0, "bullied", "picked on")],
   R=[(0, "what should I do? my son is being bullied at school")],
   role=["my son is bullying another kid at school, what should I do?", "the school says my son has been bullying a classmate, what should I do?"],
   ent=["my son is being bullied online, what should I do?"])

sc("business",
   B=["how do I ask my boss for feedback on my work?", "How can I ask my manager for feedback on my performance?", "want to ask my boss for feedback, how do i do it", "What's a good way to ask my boss to give me feedback?"],
   V=["I've been at this job six months and never really heard how I'm doing. how do I ask my boss for feedback on my work?", "ask boss for feedback how?"],
   S=[(1, "manager", "supervisor")],
   R=[(0, "on my work, how do I ask my boss for feedback?")],
   role=["how do I give my boss feedback on her work?", "how do I give feedback to my manager without getting in trouble?"],
   ent=["how do I ask my coworkers for feedback on my work?"])

sc("finance",
   B=["can my parents claim me as a dependent if I'm 20 and in college?", "If I'm 20 and a college student, can my parents claim me as a dependent?", "im 20 and in college - can my parents claim me as a dependent?", "Can my parents still list me as a dependent at 20 while I'm in college?"],
   V=["I'm 20 and in college right now. can my parents still claim me as a dependent on their taxes?", "20 y/o college student, parents claim me?"],
   S=[(0, "claim", "list")],
   R=[(0, "if I'm 20 and in college, can my parents claim me as a dependent?")],
   role=["can I claim my parents as dependents if I'm 20 and in college?"],
   num=["can my parents claim me as a dependent if I'm 26 and in college?"])

sc("health",
   B=["can I put my mom on my health insurance?", "Is it possible to add my mother to my health insurance plan?", "can i add my mom to my health insurance", "Am I allowed to put my mother on my health insurance?"],
   V=["my mom lost her coverage and I have good insurance through my job. can I put her on my health insurance?", "add mom to my health insurance?"],
   S=[(1, "add my mother to", "add my mom to")],
   R=[(0, "my mom - can I put her on my health insurance?")],
   role=["can my mom put me on her health insurance?", "can I get on my mom's health insurance plan?"],
   ent=["can I put my girlfriend on my health insurance?"])

sc("relationships",
   B=["I want to meet my boyfriend's parents but he keeps putting it off, what should I do?", "My boyfriend keeps putting off introducing me to his parents. What should I do?", "bf keeps avoiding having me meet his parents, what do i do", "What should I do if my boyfriend keeps delaying me meeting his parents?"],
   V=["we've been together for a year and I really want to meet my boyfriend's parents, but he keeps putting it off. what should I do?", "bf delays me meeting his parents - what to do?"],
   S=[(0, "putting it off", "delaying it")],
   R=[(0, "what should I do? I want to meet my boyfriend's parents but he keeps putting it off")],
   role=["my boyfriend wants to meet my parents but I keep putting it off, what should I do?"])

sc("pets",
   B=["my rabbit keeps chasing my cat around the house, is that normal?", "Is it normal for my rabbit to chase my cat around the house?", "rabbit keeps chasing the cat around, normal?", "My bunny chases our cat all over the house. Is that normal?"],
   V=["I thought it would be the other way around, but my rabbit keeps chasing my cat all over the house. is that normal?", "rabbit chases cat - normal?"],
   S=[(0, "normal", "typical")],
   R=[(0, "is it normal that my rabbit keeps chasing my cat around the house?")],
   role=["my cat keeps chasing my rabbit around the house, is that normal?"])
# ---------------------------------------------------------------------------
# more everyday situations (mixed)
# ---------------------------------------------------------------------------
sc("household",
   B=["my washing machine keeps filling with water even when it's turned off, what's wrong?", "Why does my washer keep filling with water when it's off?", "washer fills with water by itself when off, whats wrong", "What's causing my washing machine to fill with water while it's switched off?"],
   V=["I came home and found my washing machine had filled with water again even though it was turned off. what's wrong with it?", "washer fills with water while off - cause?"],
   S=[(0, "wrong", "the problem")],
   R=[(0, "what's wrong? my washing machine keeps filling with water even when it's turned off")],
   nocue=["my washing machine fails to fill with water at all, what's wrong?"],
   ent=["my dishwasher keeps filling with water even when it's turned off, what's wrong?"])

sc("parenting",
   B=["my baby is gaining weight quickly on formula, should I be worried?", "Should I worry that my formula-fed baby is gaining weight fast?", "baby gaining weight fast on formula, worry?", "Is it a concern that my baby is putting on weight quickly with formula?"],
   V=["at her checkup the nurse mentioned my baby is gaining weight quickly on formula. should I be worried?", "formula baby fast weight gain - worry?"],
   S=[(0, "worried", "concerned")],
   R=[(0, "should I be worried? my baby is gaining weight quickly on formula")],
   nocue=["my baby is failing to gain weight on formula, should I be worried?"],
   ant=["my baby is losing weight on formula, should I be worried?"])

sc("parenting",
   B=["my toddler eats lots of vegetables, does she still need a multivitamin?", "Does my toddler need a multivitamin if she eats plenty of vegetables?", "toddler eats tons of veggies - multivitamin still needed?", "My toddler eats a lot of vegetables. Does she still need a daily multivitamin?"],
   V=["I'm lucky, my toddler actually loves her vegetables and eats lots of them. does she still need a multivitamin?", "veggie-loving toddler, multivitamin needed?"],
   S=[(1, "plenty of", "lots of")],
   R=[(0, "does my toddler still need a multivitamin? she eats lots of vegetables")],
   nocue=["my toddler refuses all vegetables, does she still need a multivitamin?"],
   ent=["my toddler eats lots of vegetables, does she still need a vitamin D supplement?"])

sc("finance",
   B=["I cancelled my free trial on time but still got charged, can I get a refund?", "Can I get a refund? I cancelled my free trial in time and was still charged.", "cancelled the free trial on time, still got charged - refund?", "I got charged even though I cancelled my free trial before it ended. Can I get my money back?"],
   V=["I set a reminder and cancelled my streaming free trial on time, but they still charged my card. can I get a refund?", "charged after cancelling trial on time - refund?"],
   S=[(0, "refund", "reimbursement")],
   R=[(0, "can I get a refund? I cancelled my free trial on time but still got charged")],
   nocue=["I forgot to cancel my free trial and got charged, can I get a refund?"])

sc("business",
   B=["I kept my job after the merger, what happens to my 401k?", "What happens to my 401k now that I kept my job through the merger?", "survived the merger at work, what happens to my 401k", "My job was kept after our company merger. What happens to my 401k?"],
   V=["our company just merged with a competitor and luckily I kept my job. what happens to my 401k?", "kept job post-merger - 401k?"],
   S=[(0, "kept", "held onto")],
   R=[(0, "what happens to my 401k? I kept my job after the merger")],
   nocue=["I lost my job after the merger, what happens to my 401k?"],
   ent=["I kept my job after the merger, what happens to my stock options?"])

sc("household",
   B=["our offer on the house was accepted, what happens next?", "What are the next steps now that our offer on the house got accepted?", "house offer accepted! what's next", "Our offer on a house was accepted - what happens now?"],
   V=["we've been house hunting for a year and our offer on the house was finally accepted today! what happens next?", "offer accepted - next steps?"],
   S=[(0, "accepted", "approved")],
   R=[(0, "what happens next? our offer on the house was accepted")],
   nocue=["our offer on the house was rejected, what happens next?"],
   ent=["our offer on the apartment rental was accepted, what happens next?"])

sc("parenting",
   B=["my son took all his antibiotics and feels better, is that ok?", "Is it ok that my son finished all his antibiotics and now feels better?", "son finished the whole antibiotic course and feels better - fine?", "My son completed his antibiotics and he's feeling better. Is that ok?"],
   V=["my son had an ear infection and he took every dose of his antibiotics, and now he feels a lot better. is that ok?", "finished antibiotics, feels better, ok?"],
   S=[(0, "feels better", "is feeling better")],
   R=[(0, "is that ok? my son took all his antibiotics and feels better")],
   nocue=["my son quit taking his antibiotics halfway because he feels better, is that ok?", "my son stopped his antibiotics early because he feels better, is that ok?"])

sc("finance",
   B=["my tax return got accepted by the IRS, what happens now?", "What happens now that the IRS accepted my tax return?", "irs accepted my return, whats next?", "The IRS accepted my e-filed return. What happens now?"],
   V=["I got an email saying my tax return was accepted by the IRS. what happens now?", "return accepted by IRS - now what?"],
   S=[(0, "accepted", "approved")],
   R=[(0, "what happens now? the IRS accepted my tax return")],
   nocue=["my tax return got rejected by the IRS, what happens now?"],
   ent=["my tax return got accepted by the state, what happens now?"])

sc("finance",
   B=["my bank approved my mortgage pre-approval, what should I do next?", "What should I do next now that I'm pre-approved for a mortgage?", "got mortgage pre approval from the bank, what now", "The bank approved my mortgage pre-approval. What are my next steps?"],
   V=["good news, my bank approved my mortgage pre-approval this morning. what should I do next?", "mortgage pre-approved - next?"],
   S=[(3, "next steps", "next moves")],
   R=[(0, "what should I do next? my bank approved my mortgage pre-approval")],
   nocue=["my bank denied my mortgage pre-approval, what should I do next?"],
   ent=["my bank approved my car loan pre-approval, what should I do next?"])

sc("household",
   B=["my home insurance claim for roof damage was approved, what happens next?", "What happens next now that my insurance claim for the roof was approved?", "roof damage claim approved by insurance, what's next?", "The insurance approved my claim for roof damage. What happens next?"],
   V=["after the hailstorm I filed a home insurance claim for roof damage and it just got approved. what happens next?", "roof claim approved - next?"],
   S=[(0, "damage", "repairs")],
   R=[(0, "what happens next? my home insurance claim for roof damage was approved")],
   nocue=["my home insurance claim for roof damage was denied, what happens next?"],
   ent=["my home insurance claim for water damage was approved, what happens next?"])

sc("office",
   B=["my phone keeps connecting to my car's bluetooth automatically, how do I stop it?", "How do I stop my phone from automatically connecting to my car's Bluetooth?", "phone auto-connects to car bluetooth, how to stop that", "How can I keep my phone from connecting to my car's bluetooth on its own?"],
   V=["every time I sit in the car my phone connects to the bluetooth and starts playing music. how do I stop it?", "stop phone auto-connecting to car BT?"],
   S=[(0, "stop", "prevent")],
   R=[(0, "how do I stop my phone from connecting to my car's bluetooth automatically?")],
   nocue=["my phone refuses to connect to my car's bluetooth, how do I fix it?", "my phone is unable to connect to my car's bluetooth, how do I fix it?"])

sc("health",
   B=["my cut has healed well after two weeks, do I still need to keep it covered?", "Do I still need to cover my cut now that it's healed well after two weeks?", "cut healed nicely after 2 weeks, still keep it covered?", "After two weeks my cut has healed well. Should I still keep it covered?"],
   V=["I cut my hand pretty badly two weeks ago but it has healed well. do I still need to keep it covered?", "healed cut, 2 wks - cover still?"],
   S=[(0, "covered", "bandaged")],
   R=[(0, "do I still need to keep my cut covered? it has healed well after two weeks")],
   nocue=["my cut has failed to heal after two weeks, do I still need to keep it covered?"],
   num=["my cut has healed well after two days, do I still need to keep it covered?"])

sc("parenting",
   B=["the daycare accepted my daughter off the waitlist, what should I do to get ready?", "My daughter got accepted off the daycare waitlist. How should we get ready?", "daughter got off the daycare waitlist and accepted! how do we prepare", "What should I do to prepare now that the daycare accepted my daughter from the waitlist?"],
   V=["after eight months of waiting the daycare finally accepted my daughter off the waitlist. what should I do to get ready?", "daycare accepted daughter - prep?"],
   S=[(3, "prepare", "get ready")],
   R=[(0, "what should I do to get ready? the daycare accepted my daughter off the waitlist")],
   nocue=["the daycare turned down my daughter and removed her from the waitlist, what should I do?"])

sc("health",
   B=["is it ok to use my phone for a few minutes before bed?", "Is a few minutes on my phone before bed ok?", "phone for a few min before sleep - ok?", "Can I look at my phone for a few minutes before going to bed?"],
   V=["I usually check my messages for a few minutes right before bed. is that ok for my sleep?", "few min phone before bed ok?"],
   S=[(0, "ok", "fine")],
   R=[(0, "before bed, is it ok to use my phone for a few minutes?")],
   scope=["is it ok to use my phone for hours in bed every night?"],
   ent=["is it ok for my 4 year old to use a tablet for a few minutes before bed?"])

sc("household",
   B=["should I clean my dryer lint trap after every load?", "Do I need to clean the lint trap after each load of laundry?", "clean dryer lint trap every load?", "Is it necessary to empty the dryer lint screen after every load?"],
   V=["I'm new to having my own dryer. should I really be cleaning the lint trap after every single load?", "lint trap every load?"],
   S=[(1, "each", "every")],
   R=[(0, "after every load, should I clean my dryer lint trap?")],
   scope=["should I clean my dryer lint trap once a month?"],
   ent=["should I clean my dryer vent after every load?"])

sc("health",
   B=["is it ok to take ibuprofen once in a while for headaches?", "Can I take ibuprofen occasionally for headaches?", "ibuprofen now and then for headaches - ok?", "Is occasional ibuprofen for a headache ok?"],
   V=["I get a headache maybe once or twice a month and usually take ibuprofen. is it ok to take it once in a while like that?", "occasional ibuprofen for headache ok?"],
   S=[(1, "occasionally", "now and then")],
   R=[(0, "for headaches, is it ok to take ibuprofen once in a while?")],
   scope=["is it ok to take ibuprofen every day for months for headaches?"],
   ent=["is it ok to take excedrin once in a while for headaches?"])

sc("household",
   B=["do I need to tell my landlord if a friend stays over for a couple of nights?", "Does my landlord need to know if a friend sleeps over a couple of nights?", "friend staying a couple nights, do i have to tell my landlord?", "Should I tell my landlord when a friend stays at my place for a couple of nights?"],
   V=["my college friend is visiting and will crash on my couch for a couple of nights. do I need to tell my landlord?", "friend staying 2 nights - tell landlord?"],
   S=[(0, "stays over", "sleeps over")],
   R=[(0, "if a friend stays over for a couple of nights, do I need to tell my landlord?")],
   scope=["do I need to tell my landlord if a friend stays with me for several months?"],
   ent=["do I need to tell my landlord if my boyfriend stays over for a couple of nights?"])

sc("cooking",
   B=["can I freeze bread for a few weeks?", "Is it ok to freeze bread for a few weeks?", "freezing bread for a couple weeks, ok?", "Can bread be frozen for a few weeks?"],
   V=["I bought a bunch of bread on sale and we won't get through it. can I freeze it for a few weeks?", "freeze bread few weeks?"],
   S=[(1, "ok", "fine")],
   R=[(0, "for a few weeks, can I freeze bread?")],
   scope=["can I freeze bread for a whole year?"],
   ent=["can I freeze tortillas for a few weeks?"])

sc("cooking",
   B=["is it ok to eat salmon every day?", "Is eating salmon daily healthy?", "salmon every day - ok?", "Can I safely eat salmon every day?"],
   V=["I've gotten really into meal prepping and I've been having salmon for lunch. is it ok to eat salmon every day?", "daily salmon ok?"],
   S=[(1, "healthy", "good for you")],
   R=[(0, "every day, is it ok to eat salmon?")],
   scope=["is it ok to eat salmon once a week?"],
   ent=["is it ok to eat tuna every day?", "is it ok for my toddler to eat salmon every day?"])

sc("cars",
   B=["can I leave my car parked on the street for a few hours?", "Is it ok to leave my car on the street for a few hours?", "parking on the street for a few hrs ok?", "Can I park my car on the street for a few hours?"],
   V=["I'm visiting a friend in her neighborhood this afternoon. can I leave my car parked on the street for a few hours?", "street parking a few hours ok?"],
   S=[(2, "hrs", "hours")],
   R=[(0, "for a few hours, can I leave my car parked on the street?")],
   scope=["can I leave my car parked on the street for a few weeks while I travel?"],
   ent=["can I leave my RV parked on the street for a few hours?"])

sc("household",
   B=["one outlet in my kitchen stopped working, what should I check?", "What should I check if a single kitchen outlet stopped working?", "one kitchen outlet suddenly dead, what do i check", "A kitchen outlet stopped working. What should I check first?"],
   V=["I plugged in the kettle this morning and one outlet in my kitchen just stopped working. what should I check?", "one dead kitchen outlet - check what?"],
   S=[(0, "check", "look at")],
   R=[(0, "what should I check? one outlet in my kitchen stopped working")],
   scope=["all the outlets in my house stopped working at once, what should I check?"],
   ent=["one light in my kitchen stopped working, what should I check?"])

sc("office",
   B=["my laptop says it's plugged in and charging but the battery percentage keeps going down. why?", "Why is my laptop battery going down even though it says it's plugged in and charging?", "laptop says charging but battery % dropping, why", "My laptop shows plugged in, charging, yet the battery keeps dropping. Why?"],
   V=["this is so weird, my laptop says it's plugged in and charging but the battery percentage keeps going down while I work. why?", "charging but battery dropping - why?"],
   S=[(0, "keeps going down", "keeps dropping")],
   R=[(0, "why does the battery percentage keep going down? my laptop says it's plugged in and charging")],
   neg=["my laptop says plugged in, not charging. why?", "my laptop won't charge even though it's plugged in. why?"])

sc("pets",
   B=["why does my cat purr when I pet her?", "Why does my cat purr while I'm petting her?", "cat purrs when i pet her, why?", "What makes my cat purr when I pet her?"],
   V=["every time I sit down and pet my cat she starts purring like a little motor. why does she do that?", "why cat purrs when petted?"],
   S=[(0, "pet", "stroke")],
   R=[(0, "when I pet her, why does my cat purr?")],
   neg=["why doesn't my cat purr when I pet her?", "why does my cat never purr?"],
   ent=["why does my cat knead when I pet her?"])

sc("cars",
   B=["my car's AC blows cold air but smells musty, what's wrong?", "What's wrong if my car AC is cold but has a musty smell?", "car ac cold but smells musty, why", "Why does my car's AC smell musty even though it blows cold?"],
   V=["the AC in my car works great, nice and cold, but it smells musty like an old basement. what's wrong?", "cold but musty car AC - cause?"],
   S=[(0, "wrong", "the problem")],
   R=[(0, "what's wrong? my car's AC smells musty but blows cold air")],
   neg=["my car's AC doesn't blow cold air anymore, what's wrong?"],
   ent=["my car's heater blows hot air but smells musty, what's wrong?"])

sc("finance",
   B=["I have renters insurance, is my stolen bike covered?", "Does my renters insurance cover my stolen bike?", "bike got stolen, i have renters insurance - covered?", "My bike was stolen. Will my renters insurance cover it?"],
   V=["someone cut the lock and stole my bike from outside my building. I have renters insurance, is it covered?", "stolen bike, renters insurance covers?"],
   S=[(0, "covered", "insured")],
   R=[(0, "is my stolen bike covered? I have renters insurance")],
   neg=["I don't have renters insurance, is my stolen bike covered by my landlord?"],
   ent=["I have renters insurance, is my stolen laptop covered?"])

sc("health",
   B=["what foods help with constipation?", "Which foods help relieve constipation?", "foods that help constipation?", "What should I eat to help with constipation?"],
   V=["I've been really backed up the last few days. what foods help with constipation?", "foods for constipation?"],
   S=[(1, "relieve", "ease")],
   R=[(0, "with constipation, what foods help?")],
   neg=["what foods should I not eat when I'm constipated?"],
   nocue=["what foods should I avoid when I'm constipated?"],
   ent=["what foods help my toddler with constipation?"])

sc("fitness",
   B=["how can I speed up my metabolism?", "What are ways to speed up my metabolism?", "speed up metabolism how?", "How do I make my metabolism faster?"],
   V=["I'm in my 40s and I feel like everything I eat sticks. how can I speed up my metabolism?", "boost metabolism tips?"],
   S=[(0, "speed up", "boost")],
   R=[(0, "my metabolism - how can I speed it up?")],
   ant=["how can I slow down my metabolism to gain weight?"])

sc("health",
   B=["how can I make my voice deeper?", "What can I do to get a deeper voice?", "ways to make my voice deeper?", "How do I get my voice to sound deeper?"],
   V=["I'm always told I sound young on the phone. how can I make my voice deeper?", "deeper voice how?"],
   S=[(1, "get", "develop")],
   R=[(0, "my voice - how can I make it deeper?")],
   ant=["how can I make my voice higher?"])

sc("travel",
   B=["what's the best month to visit Bali?", "When is the best time of year to go to Bali?", "best month for bali?", "Which month is ideal for a trip to Bali?"],
   V=["my husband and I are planning our 10th anniversary trip to Bali. what's the best month to visit?", "bali best month?"],
   S=[(3, "ideal", "best")],
   R=[(0, "to visit Bali, what's the best month?")],
   ant=["what's the worst month to visit Bali?"],
   ent=["what's the best month to visit Vietnam?"])

sc("cars",
   B=["my car's idle is too high when I'm stopped, what causes that?", "What causes my car to idle too high at stops?", "car idling high when stopped, why?", "Why is my car's idle so high when I'm at a stop?"],
   V=["when I'm at a red light my car's RPM sits way higher than it used to, the idle is too high. what causes that?", "high idle at stops - cause?"],
   S=[(0, "causes", "leads to")],
   R=[(0, "what causes my car's idle to be too high when I'm stopped?")],
   ant=["my car's idle is too low when I'm stopped, what causes that?"])

sc("parenting",
   B=["my baby's formula seems too thick, did I mix it wrong?", "Did I make my baby's formula wrong? It seems too thick.", "formula looks too thick, did i mix it wrong?", "My baby's formula is coming out too thick - did I mix it incorrectly?"],
   V=["I made a bottle the way I always do but tonight my baby's formula seems too thick. did I mix it wrong?", "too thick formula - mixed wrong?"],
   S=[(3, "incorrectly", "wrong")],
   R=[(0, "did I mix it wrong? my baby's formula seems too thick")],
   ant=["my baby's formula seems too watery, did I mix it wrong?"])

sc("health",
   B=["what should I do before a colonoscopy?", "How should I prepare before a colonoscopy?", "colonoscopy prep - what do i do before?", "What do I need to do ahead of a colonoscopy?"],
   V=["I'm 45 and just booked my first colonoscopy for next month. what should I do before it?", "before colonoscopy to-do?"],
   S=[(1, "prepare", "get ready")],
   R=[(0, "before a colonoscopy, what should I do?")],
   temp=["what should I do after a colonoscopy?"])

sc("parenting",
   B=["what were the most popular baby names in the 1990s?", "Which baby names were most popular in the 90s?", "top baby names of the 1990s?", "What were the most common baby names back in the 1990s?"],
   V=["my husband and I are arguing about whether our name choice sounds dated. what were the most popular baby names in the 1990s?", "popular 90s baby names?"],
   S=[(3, "common", "popular")],
   R=[(0, "in the 1990s, what were the most popular baby names?")],
   temp=["what are the most popular baby names this year?"],
   ent=["what were the most popular dog names in the 1990s?"])

sc("fitness",
   B=["is it ok to exercise right after eating?", "Can I work out right after a meal?", "exercise right after eating - ok?", "Is working out immediately after eating a bad idea?"],
   V=["my only free time to work out is right after dinner. is it ok to exercise right after eating?", "exercise right after meal ok?"],
   S=[(3, "bad idea", "poor idea")],
   R=[(0, "right after eating, is it ok to exercise?")],
   temp=["is it ok to exercise first thing in the morning before eating?"])

sc("health",
   B=["my son turned 18 last month, can I still see his medical records?", "Can I still access my son's medical records now that he turned 18 last month?", "son just turned 18 last month, can i still look at his medical records", "My son is now 18 as of last month. Am I still allowed to see his medical records?"],
   V=["I've always handled my son's doctor stuff, but he turned 18 last month. can I still see his medical records?", "son turned 18, access his records?"],
   S=[(0, "see", "view")],
   R=[(0, "can I still see my son's medical records? he turned 18 last month")],
   temp=["my son turns 18 next month, can I still see his medical records?"])

sc("finance",
   B=["I'm retiring next year, should I move my 401k into bonds?", "Should I shift my 401k into bonds since I'm retiring next year?", "retiring next year - move 401k to bonds?", "With retirement next year, is it time to move my 401k into bonds?"],
   V=["after 35 years of work I'm finally retiring next year. should I move my 401k into bonds?", "retire next yr, 401k to bonds?"],
   S=[(0, "move", "shift")],
   R=[(0, "should I move my 401k into bonds? I'm retiring next year")],
   temp=["I retired ten years ago, should I move my 401k into bonds?", "I'm retiring in 30 years, should I move my 401k into bonds?"])

sc("health",
   B=["is it normal for my baby to be constipated for a day or two?", "Is a day or two of constipation normal for a baby?", "baby constipated for a day or 2, normal?", "My baby hasn't pooped in a day or two - is that normal?"],
   V=["my baby usually poops every day but it's been a day or two now. is that normal?", "baby no poop 1-2 days ok?"],
   S=[(0, "normal", "typical")],
   R=[(0, "for a day or two, is it normal for my baby to be constipated?")],
   scope=["is it normal for my baby to be constipated for two whole weeks?"],
   cond=["is it normal for my baby to be constipated for a day or two if there's blood in her stool?"])

sc("household",
   B=["how often should I wash my bath towels?", "How frequently should bath towels be washed?", "bath towels, how often to wash?", "How often do I need to wash my bath towels?"],
   V=["I never know if I'm washing our bath towels too much or too little. how often should I wash them?", "towel washing frequency?"],
   S=[(1, "frequently", "often")],
   R=[(0, "my bath towels - how often should I wash them?")],
   scope=["how often should I wash all the towels, sheets and blankets in my house?"],
   ent=["how often should I wash my bed sheets?", "how often should I wash my kitchen dish towels?"])

sc("pets",
   B=["can I give my dog a little bit of cooked chicken?", "Is it ok to give my dog a small amount of cooked chicken?", "little cooked chicken for my dog, ok?", "Can my dog have a bit of cooked chicken?"],
   V=["I made roast chicken for dinner and my dog is giving me the eyes. can I give him a little bit of the cooked chicken?", "dog + bit of cooked chicken ok?"],
   S=[(1, "small amount", "little bit")],
   R=[(0, "a little bit of cooked chicken - can I give it to my dog?")],
   scope=["can I feed my dog nothing but cooked chicken every day for all his meals?"],
   ent=["can I give my dog a little bit of cooked ham?"])

sc("household",
   B=["what can I clean with vinegar?", "What things can I clean using vinegar?", "stuff i can clean with vinegar?", "Which things in my house can I safely clean with vinegar?"],
   V=["I bought a giant jug of white vinegar for cleaning. what can I clean with it?", "cleaning with vinegar - what works?"],
   S=[(1, "using", "with")],
   R=[(0, "with vinegar, what can I clean?")],
   neg=["what should I never clean with vinegar?", "what can't I clean with vinegar?"],
   nocue=["what surfaces should I avoid cleaning with vinegar?"])

# ---------------------------------------------------------------------------
# Multi-turn threads: alternative earlier contexts x paraphrased follow-ups.
# Every context in a thread gives the follow-up a different answer.
# ---------------------------------------------------------------------------
thread([[U("how much vitamin D should an adult take per day?"), A("Most adults need about 600-800 IU a day; many doctors are fine with up to 1,000-2,000 IU.")],
        [U("how much caffeine is safe per day?"), A("For most healthy adults, up to about 400 mg a day, roughly four cups of brewed coffee.")],
        [U("how much sleep does an adult need?"), A("Most adults need 7 to 9 hours a night.")]],
       ["what about for kids?", "and for children?", "how about kids though?"])

thread([[U("how long should I boil an egg for a soft, runny yolk?"), A("About 6 minutes from when you lower it into boiling water.")],
        [U("how long should I boil an egg for a fully hard yolk?"), A("About 10 to 12 minutes in boiling water, then cool it in ice water.")]],
       ["what if the eggs are straight from the fridge?", "does that change if they're cold from the fridge?", "and if the eggs come right out of the fridge?"])

thread([[U("my dog just turned 2"), A("Happy birthday to him! Two is a great age. Anything you'd like to know?")],
        [U("my dog just turned 13"), A("Happy birthday to him! Thirteen is a good age for a dog. Anything you'd like to know?")]],
       ["how often should I take him to the vet?", "how frequently should he have vet checkups?", "how often does he need a vet visit?"])

thread([[U("how do I freeze the top row in Excel?"), A("Go to View > Freeze Panes > Freeze Top Row.")],
        [U("how do I freeze the top row in Google Sheets?"), A("Go to View > Freeze > 1 row.")],
        [U("how do I hide a column in Excel?"), A("Right-click the column letter and choose Hide.")]],
       ["and how do I undo that?", "how do I reverse it later?", "ok and how do I undo it?"])

thread([[U("I'm going to Paris in March for a week"), A("Lovely! March in Paris is usually cool, around 5-13 C, with some rain.")],
        [U("I'm going to Bangkok in March for a week"), A("Great choice! March in Bangkok is hot and humid, often 33-35 C.")],
        [U("I'm going to Reykjavik in March for a week"), A("Exciting! March in Reykjavik is cold and windy, around -2 to 4 C, with snow possible.")]],
       ["what should I pack?", "what clothes should I bring?", "what should I put in my suitcase?"])

thread([[U("I'm making a chocolate cake that calls for 2 cups of sugar"), A("Sounds delicious! Let me know if you need help with it.")],
        [U("I'm making a chocolate cake that calls for 2 cups of flour"), A("Sounds delicious! Let me know if you need help with it.")],
        [U("I'm making a chocolate cake that calls for 2 eggs"), A("Sounds delicious! Let me know if you need help with it.")]],
       ["what can I substitute for it?", "what could I use instead of that?", "is there a substitute I can use for it?"])

thread([[U("my son is 16 and wants to get a part-time job"), A("That's a great way for him to earn money and build experience.")],
        [U("my son is 12 and wants to get a part-time job"), A("Good for him for wanting to earn some money!")]],
       ["where could he work?", "what kind of places would hire him?", "what jobs could he get?"])

thread([[U("I drive a 2009 Honda Civic"), A("A reliable car! What would you like to know about it?")],
        [U("I drive a Tesla Model 3"), A("Nice! What would you like to know about it?")]],
       ["how often should I change the oil?", "how often does it need an oil change?", "what's the oil change interval?"])

thread([[U("what's a good stretch for lower back pain?"), A("Try the knees-to-chest stretch: lie on your back and hug both knees gently.")],
        [U("what's a good stretch for neck pain?"), A("Try a gentle chin tuck: sit tall and draw your chin straight back.")]],
       ["can you give me another one?", "what's another one I could try?", "any other stretch?"])

thread([[U("how do you say 'thank you' in Japanese?"), A("Arigatou gozaimasu (or just arigatou casually).")],
        [U("how do you say 'thank you' in Korean?"), A("Gamsahamnida.")],
        [U("how do you say 'thank you' in Italian?"), A("Grazie.")]],
       ["and how do I say good morning?", "what about 'good morning'?", "how would I say good morning then?"])

thread([[U("how much is 100 US dollars in euros?"), A("Roughly 90-95 euros, depending on today's exchange rate.")],
        [U("how much is 100 US dollars in Japanese yen?"), A("Roughly 14,000-15,000 yen, depending on today's exchange rate.")]],
       ["and for 500?", "what about 500 dollars?", "how much would 500 be?"])

thread([[U("I'm lactose intolerant."), A("Got it, I'll keep that in mind.")],
        [U("I have celiac disease."), A("Got it, I'll keep that in mind.")],
        [U("I'm vegan."), A("Got it, I'll keep that in mind.")]],
       ["what can I eat for breakfast?", "any breakfast ideas for me?", "what should I have for breakfast?"])

thread([[U("what's the area of a circle with radius 3?"), A("Area = pi x r^2 = 9 pi, about 28.27.")],
        [U("what's the circumference of a circle with radius 3?"), A("Circumference = 2 x pi x r = 6 pi, about 18.85.")]],
       ["what if the radius is 5?", "and with radius 5?", "how about a radius of 5?"])

thread([[U("my cat threw up twice today"), A("Occasional vomiting can happen. Is she otherwise acting normally?")],
        [U("my cat hasn't eaten anything in three days"), A("That can be serious for cats. Is she drinking water?")]],
       ["should I take her to the vet?", "does she need to see a vet?", "do I need to bring her to the vet?"])

thread([[U("my landlord wants to raise my rent by 10% in the middle of my lease"), A("That's a big jump. Do you have a fixed-term lease?")],
        [U("my landlord wants to enter my apartment whenever he likes without notice"), A("That sounds stressful. Do you know what your lease says about entry?")],
        [U("my landlord wants to sell the building I'm renting in"), A("That can feel unsettling. Do you have a lease in place?")]],
       ["can he do that?", "is he allowed to do that?", "is that even legal?"])

thread([[U("I want to learn guitar as an adult"), A("It's never too late! Guitar is a great instrument to start with.")],
        [U("I want to learn piano as an adult"), A("It's never too late! Piano is a great instrument to start with.")]],
       ["what should I buy first?", "what do I need to get to start?", "what should my first purchase be?"])

thread([[U("I want to run my first 5k"), A("Great goal! Are you running at all right now?")],
        [U("I want to run my first marathon"), A("Great goal! Are you running at all right now?")]],
       ["how many weeks should I train?", "how long of a training plan do I need?", "how many weeks of training should I plan for?"])

thread([[U("I have a snake plant in my living room"), A("Snake plants are great, very low maintenance.")],
        [U("I have a fiddle leaf fig in my living room"), A("Fiddle leaf figs are beautiful but can be a bit fussy.")],
        [U("I have a Boston fern in my living room"), A("Boston ferns are lovely and love humidity.")]],
       ["how often should I water it?", "how frequently does it need water?", "what's a good watering schedule for it?"])

thread([[U("can you write a short email to my boss asking for Friday off?"), A("Sure: 'Hi Mark, would it be possible for me to take this Friday off? I'll make sure my work is covered. Thanks, Sam'")],
        [U("can you write a short email to my boss saying I'll be late tomorrow?"), A("Sure: 'Hi Mark, just a heads-up that I'll be in late tomorrow morning. Thanks, Sam'")]],
       ["make it more formal", "can you make it sound more formal?", "could you rewrite it in a more formal tone?"])

thread([[U("can you suggest a name for my bakery?"), A("How about 'Rise & Shine Bakery'?")],
        [U("can you suggest a name for my dog grooming business?"), A("How about 'Pampered Paws'?")]],
       ["give me five more", "can you give me 5 more options?", "5 more ideas please"])

thread([[U("what's a good gift for my dad who loves fishing?"), A("A quality tackle box or a new fishing reel would be great.")],
        [U("what's a good gift for my dad who loves cooking?"), A("A good chef's knife or a cast iron skillet would be great.")]],
       ["anything under $30?", "any ideas under 30 bucks?", "something cheaper, under $30?"])

thread([[U("how many calories are in a banana?"), A("A medium banana has about 105 calories.")],
        [U("how many calories are in an avocado?"), A("A medium avocado has about 240 calories.")],
        [U("how many calories are in a cup of whole milk?"), A("About 150 calories.")]],
       ["and how much protein?", "what about protein?", "how much protein does it have?"])

thread([[U("I got a parking ticket in New York City"), A("Sorry to hear that. What would you like to know?")],
        [U("I got a speeding ticket in New York City"), A("Sorry to hear that. What would you like to know?")]],
       ["how do I contest it?", "how can I fight it?", "what's the process to dispute it?"])

thread([[U("I'm flying Delta next week"), A("Great, anything I can help with for your trip?")],
        [U("I'm flying Ryanair next week"), A("Great, anything I can help with for your trip?")]],
       ["how big can my carry-on be?", "what are the carry-on size limits?", "what size carry-on am I allowed?"])

thread([[U("my daughter is 3"), A("Three is such a fun age! What would you like to know?")],
        [U("my daughter is 13"), A("Thirteen is a big year! What would you like to know?")]],
       ["how much sleep does she need?", "how many hours of sleep should she get?", "how much should she be sleeping?"])

thread([[U("I'm 25 and just started contributing to my 401k"), A("Great time to start, you have decades of growth ahead.")],
        [U("I'm 60 and just started contributing to my 401k"), A("It's never too late to start saving.")]],
       ["how should I invest it?", "how should my 401k be allocated?", "what should I put it in?"])

thread([[U("I just adopted a kitten"), A("Congratulations on your new kitten!")],
        [U("I just adopted a 14 year old cat"), A("Congratulations, adopting a senior cat is wonderful!")]],
       ["what food should I buy?", "what should I feed her?", "which food is best for her?"])

thread([[U("my tomato plants have yellow leaves at the bottom"), A("That's common and can have a few causes.")],
        [U("my tomatoes have black leathery spots on the bottom of the fruit"), A("That sounds like blossom end rot.")]],
       ["how do I fix it?", "what should I do about it?", "how can I fix that?"])

thread([[U("how do I add page numbers in Word?"), A("Go to Insert > Page Number and pick a position.")],
        [U("how do I add a table of contents in Word?"), A("Go to References > Table of Contents and pick a style.")],
        [U("how do I add a watermark in Word?"), A("Go to Design > Watermark and pick or customize one.")]],
       ["how do I remove it?", "and how do I delete it?", "how can I get rid of it again?"])

thread([[U("I'm making lasagna for 4 people"), A("Sounds great! A standard 9x13 pan will be plenty.")],
        [U("I'm making lasagna for 20 people"), A("That's a big crowd! You'll need several pans.")]],
       ["how many boxes of noodles do I need?", "how many packs of lasagna sheets should I buy?", "how much pasta should I get?"])

thread([[U("my friend forgot my birthday"), A("That can really hurt. How are you feeling about it?")],
        [U("I forgot my friend's birthday"), A("It happens to everyone. How do you feel about it?")]],
       ["what should I say to her?", "what do I text her?", "how should I bring it up with her?"])

thread([[U("I'm driving from Chicago to Denver"), A("That's about 1,000 miles, roughly 15 hours of driving.")],
        [U("I'm driving from Chicago to Nashville"), A("That's about 470 miles, roughly 7 hours of driving.")]],
       ["where should I stop for the night?", "where's a good place to stay overnight on the way?", "which town should I spend the night in?"])

thread([[U("what's the best time to visit Japan?"), A("Spring (late March to April) for cherry blossoms or autumn (October-November).")],
        [U("what's the best time to visit Iceland?"), A("June to August for the midnight sun, or September to March for the northern lights.")]],
       ["and when is it cheapest?", "what's the cheapest time to go?", "when are prices lowest?"])

thread([[U("how do I cook salmon in the oven?"), A("Bake at 400 F (200 C) for about 12-15 minutes.")],
        [U("how do I cook chicken breast in the oven?"), A("Bake at 425 F (220 C) for about 20-25 minutes, until it reaches 165 F inside.")]],
       ["can I do it in an air fryer instead?", "what about in the air fryer?", "how would I do that in an air fryer?"])

thread([[U("I earn $40k a year"), A("Thanks, that helps me give you more relevant advice.")],
        [U("I earn $200k a year"), A("Thanks, that helps me give you more relevant advice.")]],
       ["how much should I be saving each month?", "what should my monthly savings be?", "how much should I put away every month?"])

thread([[U("my son is in 2nd grade and struggling with reading"), A("That's common and very fixable with some support.")],
        [U("my son is in 2nd grade and struggling with math"), A("That's common and very fixable with some support.")]],
       ["what can I do at home to help?", "how can I help him at home?", "what could we work on at home?"])

thread([[U("I have a MacBook Air"), A("Great, what do you need help with?")],
        [U("I have a Windows 11 laptop"), A("Great, what do you need help with?")],
        [U("I have a Chromebook"), A("Great, what do you need help with?")]],
       ["how do I take a screenshot?", "how can I screenshot?", "what's the way to take a screenshot?"])

thread([[U("my boss asked me to work this Saturday"), A("Ah, that can be frustrating. What's your situation?")],
        [U("my boss asked me to relocate to Dallas"), A("That's a big ask. What's your situation?")]],
       ["can I say no?", "am I allowed to refuse?", "is it ok to turn it down?"])

thread([[U("I just got stung by a bee"), A("Ouch! Are you having any trouble breathing or swelling in your face?")],
        [U("I just found a tick attached to my leg"), A("Don't panic, this is common. Is it still attached?")]],
       ["what should I do now?", "what do I do?", "what are my next steps?"])

thread([[U("I'm hosting a birthday party for my 5 year old"), A("How fun! How many kids are coming?")],
        [U("I'm hosting a birthday party for my 15 year old"), A("How fun! How many friends are coming?")]],
       ["any activity ideas?", "what activities should we do?", "what could they do at the party?"])

thread([[U("how long does cooked rice last in the fridge?"), A("About 3 to 4 days if refrigerated promptly.")],
        [U("how long does cooked chicken last in the fridge?"), A("About 3 to 4 days in the fridge.")],
        [U("how long does homemade soup last in the fridge?"), A("About 3 to 4 days in the fridge.")]],
       ["and in the freezer?", "what about in the freezer?", "how long in the freezer?"])

thread([[U("I'm planning a trip to Italy"), A("Wonderful! Who's going?"), U("we'll have a toddler with us"), A("Got it, I'll keep kid-friendly options in mind.")],
        [U("I'm planning a trip to Italy"), A("Wonderful! Who's going?"), U("just me and my husband, and we're on a tight budget"), A("Got it, I'll keep budget options in mind.")]],
       ["where should we stay in Rome?", "which area of Rome should we stay in?", "what neighborhood in Rome is best for us?"])

thread([[U("I'm studying for the SAT"), A("Good luck! How's the studying going?")],
        [U("I'm studying for the GRE"), A("Good luck! How's the studying going?")]],
       ["what's a good score?", "what score should I aim for?", "what counts as a good score?"])

thread([[U("I'm 6 weeks pregnant"), A("Congratulations! How are you feeling?")],
        [U("I'm breastfeeding my 3 month old"), A("That's wonderful. How are you feeling?")]],
       ["how much coffee can I have?", "is coffee ok for me, and how much?", "how much caffeine is safe for me?"])

thread([[U("I live in a small studio apartment and work long hours"), A("Good to know, that helps narrow things down.")],
        [U("I have a big fenced backyard and work from home"), A("Good to know, that helps narrow things down.")]],
       ["what dog breed would suit me?", "which breed of dog should I get?", "what kind of dog would be a good fit?"])

thread([[U("I got a job offer in Seattle"), A("Congratulations! That's exciting.")],
        [U("I got a job offer in Austin"), A("Congratulations! That's exciting.")]],
       ["is $85k enough to live there?", "can I live comfortably there on 85k?", "would $85,000 be enough to live on there?"])

thread([[U("my 10 year old wants a phone"), A("That's a common request at that age.")],
        [U("my 16 year old wants a phone"), A("That's a common request at that age.")]],
       ["should I get her one?", "is it a good idea to get her one?", "should I say yes?"])

thread([[U("I have a gas stove"), A("Ok, what would you like to know?")],
        [U("I have an induction cooktop"), A("Ok, what would you like to know?")]],
       ["what kind of pans can I use on it?", "which cookware works on it?", "what pots and pans are ok to use on it?"])

thread([[U("I'm flying from New York to London next month"), A("Great trip! How can I help?")],
        [U("I'm flying from New York to Los Angeles next month"), A("Great trip! How can I help?")]],
       ["do I need a passport?", "will I need my passport?", "is a passport required?"])

thread([[U("my 7 year old has a loose tooth"), A("That's an exciting milestone!")],
        [U("my 30 year old husband has a loose tooth"), A("That's worth paying attention to.")]],
       ["should we see a dentist?", "do we need to go to the dentist?", "is a dentist visit needed?"])

thread([[U("I'm repainting my bathroom"), A("Nice project! Any questions?")],
        [U("I'm repainting my kids' bedroom"), A("Nice project! Any questions?")]],
       ["what kind of paint finish should I use?", "which paint sheen should I pick?", "what finish is best?"])

thread([[U("I'm visiting Tokyo in July"), A("July in Tokyo is hot and humid.")],
        [U("I'm visiting Tokyo in January"), A("January in Tokyo is cold but usually dry and sunny.")]],
       ["what should I wear?", "what clothes should I bring?", "how should I dress?"])

thread([[U("I'm making cookies for a bake sale"), A("Fun! What kind are you making?")],
        [U("I'm making cookies for my diabetic dad"), A("That's thoughtful. What kind are you thinking?")]],
       ["what recipe would you suggest?", "can you recommend a recipe?", "which recipe should I use?"])
# ---------------------------------------------------------------------------
# Long, chatty restatements (verbosity) that add no constraint to the request
# ---------------------------------------------------------------------------
LONG_V = {
    "how do i get rid of fruit flies in my kitchen":
        "ok so this is driving me absolutely crazy. for about a week now there have been these tiny little fruit flies buzzing around my kitchen every time I walk in there, and I've honestly had enough of them. what's the best way to get rid of fruit flies in my kitchen?",
    "how do I get a red wine stain out of a beige carpet?":
        "so we had some friends over for dinner last night and of course someone knocked over a full glass of red wine right onto our beige carpet in the living room, and now there's a big pinkish stain I can't stop staring at. how do I get a red wine stain out of a beige carpet?",
    "my 4 year old has a fever of 38.5, should I give her ibuprofen or just let it run?":
        "hi, I'm a bit of a nervous parent so sorry if this is a silly question. my 4 year old daughter felt warm after her nap, so I just took her temperature and it's 38.5. should I give her ibuprofen, or is it better to just let the fever run its course?",
    "how much screen time is ok for a 6 year old on school days?":
        "my husband and I keep going back and forth about this and we can't agree, so I figured I'd just ask. our son is 6. on school days, how much screen time is actually ok for a 6 year old? we just want a reasonable number we can both stick to.",
    "can dogs eat grapes?":
        "quick question before our picnic this weekend. my kids love sharing their snacks with our dog and grapes are their favorite fruit, so I want to know ahead of time whether that's ok. can dogs eat grapes, or should I keep them away from him?",
    "can I put my cast iron skillet in the dishwasher?":
        "so I just moved in with a new roommate and we're figuring out how to share the kitchen. she keeps loading my cast iron skillet into the dishwasher along with everything else because she says it's faster. before I say anything to her, I want to check: can I put a cast iron skillet in the dishwasher?",
    "how should I budget $3,000 a month after taxes?":
        "I just graduated and started my first full time job, and after taxes my take-home pay is $3,000 a month. I've never had to manage this much money on my own before and I really want to be responsible with it from the start. how should I budget $3,000 a month after taxes?",
    "plan a 3 day itinerary for Rome for my first visit":
        "I've wanted to go to Rome my whole life and I'm finally doing it! it will be my first time there and I'll have three full days in the city. I'm so excited I can barely sleep. could you plan a 3 day itinerary for Rome for my first visit?",
    "what's the best laptop under $800 for a college student?":
        "my daughter is starting college in the fall and she really needs a new laptop, her old one from high school barely turns on anymore. we've set aside some money but we really want to stay under $800. what's the best laptop under $800 for a college student?",
    "my check engine light just came on but the car drives fine. is it safe to keep driving?":
        "I was on my way home from work today when my check engine light suddenly came on. I pulled over to check, and honestly the car seems to be driving completely fine, no weird noises, no shaking, nothing unusual at all. is it safe to keep driving it?",
    "my coworker keeps taking credit for my work in meetings. how do I handle it?":
        "this has been going on for a few months now and I'm getting really frustrated. I do the work on a project, and then in our team meetings my coworker presents it like it was her idea and takes all the credit. how do I handle a coworker who keeps taking credit for my work in meetings?",
    "how much protein do I need per day? I'm 70 kg and lift weights 4 times a week":
        "I've been going to the gym pretty consistently and I'm trying to get my diet right so I actually see some progress. I weigh 70 kg and I lift weights 4 times a week. how much protein do I need per day? I keep seeing different numbers online and it's confusing.",
    "when should I plant tomatoes outside in zone 6?":
        "this is my very first year trying to grow vegetables and I'm really excited about it. I picked up a few tomato plants from the garden center and they're sitting on my porch right now. I live in zone 6. when should I plant tomatoes outside so I don't kill them?",
    "my landlord still owes me my security deposit, it's been 45 days since I moved out. what can I do?":
        "I moved out of my old apartment exactly 45 days ago and my landlord still owes me my security deposit. I've been patient about it, but it's starting to feel like I'm never going to see that money again. what can I do?",
    "how do I use VLOOKUP in Excel to pull prices from another sheet?":
        "I'm putting together an inventory spreadsheet for our little shop. I have one sheet with all the product names and a second sheet in the same workbook with the prices, and I want the prices to show up next to each product automatically. how do I use VLOOKUP in Excel to pull prices from another sheet?",
    "my 4 month old used to sleep through the night but now wakes up every 2 hours. is that normal?":
        "I'm so exhausted. my 4 month old daughter was sleeping through the night for a few weeks and we thought we'd made it, but for the last several nights she's been waking up every 2 hours like a newborn again. is that normal?",
    "what do I need to do before hiring my first employee for my small business in the US?":
        "my small business in the US has grown a lot this year and I just can't keep doing everything myself anymore, so I'm ready to hire my first real employee. I want to do it properly and legally from day one. what do I need to do before hiring my first employee?",
    "how long does my passport need to be valid to travel to Mexico?":
        "we're planning a family trip to Mexico for next spring and I was just looking through all our documents. my passport doesn't expire until later next year, but I've heard some countries want extra time left on it. how long does my passport need to be valid to travel to Mexico?",
    "my boyfriend forgot my birthday, should I be upset?":
        "yesterday was my birthday and I was really looking forward to spending it with my boyfriend, but he completely forgot about it. no text, no call, nothing until I brought it up tonight. I don't want to overreact, so I'm asking honestly: should I be upset that my boyfriend forgot my birthday?",
    "my bathroom sink is draining really slowly, how can I unclog it without calling a plumber?":
        "our bathroom sink has been draining really slowly for about a week now, the water just sits there after I brush my teeth. money is tight this month so I'd really rather not call a plumber if I can fix it myself. how can I unclog it without calling a plumber?",
    "if I run 3 times a week for 30 minutes, how much weight can I lose in a month?":
        "I'm trying to lose some weight before my sister's wedding and I've decided to start running. my plan is to go three times a week for 30 minutes each time. I know everyone is different, but realistically, how much weight can I lose in a month doing that?",
    "my son got bitten by another kid at daycare today. what should I do?":
        "I just picked my son up from daycare and the teacher pulled me aside to tell me another kid bit him today during playtime. he seems fine now and is playing at home, but I'm honestly not sure what I'm supposed to do next. what should I do?",
}
for _s in SCENARIOS:
    if _s["B"][0] in LONG_V:
        _s["V"].append(LONG_V.pop(_s["B"][0]))
assert not LONG_V, LONG_V

# === END OF DATA ===
if __name__ == "__main__":
    main()
