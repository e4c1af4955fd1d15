#!/usr/bin/env python3
"""Deterministic generator for the "forms" evaluation set of a semantic
response cache.

Each output line is a JSON object
    {"kind": ..., "a": <cached prompt>, "b": <later prompt>, "hit": bool}
optionally with "context_a"/"context_b" (earlier chat turns).

hit=true  -> a complete, correct answer to `a` is an equally correct,
             complete answer to `b`.
hit=false -> serving a's answer to `b` would be wrong or inappropriate.

The set is template driven: every kind has many sentence frames (questions,
imperatives, statements-with-request) filled from slot vocabularies spanning
programming, cooking, health, finance, travel, history, science, sports, law
and home repair.  Orientation (which side is `a`) is randomised so that no
kind can be recognised from a fixed position of the change.

Python 3 standard library only; fixed seeds; writes forms.jsonl next to
this file.  Run:  python3 forms.py
"""
import json
import os
import random
import re
import sys

SEED = 20250611
TARGET = 200
HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "forms.jsonl")

# ---------------------------------------------------------------------------
# small text helpers
# ---------------------------------------------------------------------------
KEEP_CASE = {"iPhone", "iOS", "macOS", "pandas", "npm", "eBay", "iPad"}
LOWERABLE = set(
    "what what's how who which can could explain tell give help is are do "
    "does in when where why define name should at for before during if "
    "without compare walk show describe summarize break please on under "
    "with list write teach would will did was were a an the one my "
    "whats hows".split())


def cap(s):
    if not s:
        return s
    first = s.split(" ", 1)[0].strip("'\"")
    if first in KEEP_CASE:
        return s
    return s[0].upper() + s[1:]


def decap(s):
    first = s.split(" ", 1)[0].lower().strip(",:")
    if first in LOWERABLE:
        return s[0].lower() + s[1:]
    return s


def strip_q(s):
    return s.rstrip("?.! ")


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def words(s):
    return sorted(re.findall(r"[a-z0-9°$%']+", s.lower()))


def fmt(t, d):
    return cap(norm(t.format(**d)))


# ---------------------------------------------------------------------------
# shared vocabularies
# ---------------------------------------------------------------------------
TOPICS = [
    # programming
    "recursion", "Python decorators", "garbage collection in Java",
    "the CAP theorem", "database indexing", "Rust's borrow checker",
    "JavaScript closures", "Git rebasing", "Big-O notation",
    "Docker containers", "REST APIs", "dependency injection",
    "the event loop in Node.js",
    # cooking
    "the Maillard reaction", "sourdough fermentation", "sous vide cooking",
    "tempering chocolate", "dry brining",
    # health
    "the glycemic index", "high blood pressure", "REM sleep",
    "LDL cholesterol", "insulin resistance", "herd immunity",
    "the placebo effect",
    # finance
    "compound interest", "index funds", "dollar-cost averaging", "inflation",
    "bond yields", "capital gains tax", "credit scores", "escrow accounts",
    # travel
    "jet lag", "travel insurance", "the Schengen visa rules",
    "airline overbooking",
    # history
    "the fall of the Western Roman Empire", "the causes of World War I",
    "the Marshall Plan", "the Magna Carta", "the Industrial Revolution",
    "the Cold War", "the Meiji Restoration",
    # science
    "photosynthesis", "plate tectonics", "quantum entanglement",
    "natural selection", "the greenhouse effect", "black holes",
    "CRISPR gene editing", "entropy",
    # sports
    "the offside rule in soccer", "the infield fly rule",
    "tiebreaks in tennis", "the LBW rule in cricket",
    # law
    "adverse possession", "non-compete clauses",
    "fair use in copyright law", "habeas corpus", "small claims court",
    # home repair
    "GFCI outlets", "the P-trap under a sink", "drywall anchors",
    "sump pumps",
]

TASKS = [
    "reverse a linked list in Python", "undo my last Git commit",
    "center a div with CSS", "read a CSV file with pandas",
    "set up a Python virtual environment", "squash commits in Git",
    "make a roux", "poach an egg", "sharpen a chef's knife",
    "caramelize onions", "make fresh pasta dough",
    "keep guacamole from browning", "lower my resting heart rate",
    "treat a minor kitchen burn", "get rid of hiccups",
    "build an emergency fund", "pay off credit card debt faster",
    "dispute an error on my credit report", "recover from jet lag",
    "renew a US passport", "pack a carry-on for a week-long trip",
    "improve my running endurance", "hit a topspin forehand",
    "file a small claims lawsuit", "register a trademark",
    "fix a running toilet", "patch a hole in drywall",
    "unclog a bathroom sink", "bleed a radiator", "replace a light switch",
    "remove rust from a cast iron pan", "stop a door from squeaking",
    "calculate the area of a circle", "measure my blood pressure at home",
    "write a cover letter",
]

BOOKS = [
    "Pride and Prejudice", "One Hundred Years of Solitude",
    "The Brothers Karamazov", "Moby-Dick", "Things Fall Apart",
    "The Great Gatsby", "Beloved", "Don Quixote", "On the Origin of Species",
    "A Brief History of Time", "The Wealth of Nations", "The Art of War",
    "Dune", "The Hobbit", "Frankenstein", "The Pragmatic Programmer",
    "Salt, Fat, Acid, Heat", "The Intelligent Investor", "Kitchen Confidential",
    "Middlemarch", "War and Peace", "The Road",
]

COUNTRIES = [
    "Australia", "Canada", "Brazil", "Turkey", "Nigeria", "Kenya",
    "Switzerland", "New Zealand", "Morocco", "Vietnam", "Peru", "Norway",
    "Egypt", "Mongolia", "Chile", "Argentina", "South Korea", "Pakistan",
    "Poland", "Portugal", "Kazakhstan", "Ghana", "Finland", "Cuba", "Iceland",
]

DEFINE_WORDS = [
    "ephemeral", "ubiquitous", "idempotent", "amortization", "umami",
    "mise en place", "tachycardia", "escrow", "jurisprudence", "serendipity",
    "gerrymandering", "laissez-faire", "schadenfreude", "polymorphism",
    "fiduciary", "bokeh", "gaslighting", "hubris",
]

UNITS = [
    ("ounces", "a pound"), ("cups", "a gallon"), ("feet", "a mile"),
    ("milliliters", "a liter"), ("teaspoons", "a tablespoon"),
    ("seconds", "a day"), ("centimeters", "an inch"), ("grams", "a kilogram"),
    ("tablespoons", "a cup"), ("yards", "a mile"), ("quarts", "a gallon"),
    ("minutes", "a week"), ("acres", "a square mile"),
]

EVENTS = [
    ("the Berlin Wall fall", "the Berlin Wall fell"),
    ("the Titanic sink", "the Titanic sank"),
    ("Apollo 11 land on the Moon", "Apollo 11 landed on the Moon"),
    ("the Battle of Hastings take place", "the Battle of Hastings took place"),
    ("World War II end", "World War II ended"),
    ("the French Revolution begin", "the French Revolution began"),
    ("the Chernobyl disaster happen", "the Chernobyl disaster happened"),
    ("the Great Fire of London break out", "the Great Fire of London broke out"),
    ("the Wright brothers make their first flight",
     "the Wright brothers made their first flight"),
    ("the first iPhone come out", "the first iPhone came out"),
    ("the euro enter circulation", "the euro entered circulation"),
    ("Nelson Mandela become president of South Africa",
     "Nelson Mandela became president of South Africa"),
]

CAUSE_TOPICS = [
    "hiccups", "inflation", "ocean tides", "migraines", "muscle cramps",
    "jet lag", "the northern lights", "acid reflux", "earthquakes",
    "mold in bathrooms", "rust on iron", "squeaky brakes",
    "condensation on windows", "the Great Depression", "tennis elbow",
    "sourdough starter going flat", "memory leaks in Java programs",
]

BENEFIT_TOPICS = [
    "index funds", "strength training", "a standing desk", "meal prepping",
    "static typing", "unit testing", "learning a second language",
    "travel insurance", "a heat pump", "a Roth IRA", "cast-iron pans",
    "containerization with Docker", "solar panels", "a home warranty",
    "intermittent fasting", "a credit union",
]

COMPARE_PAIRS = [
    ("TCP", "UDP"), ("baking soda", "baking powder"),
    ("a Roth IRA", "a traditional IRA"), ("a virus", "a bacterium"),
    ("weather", "climate"), ("a misdemeanor", "a felony"),
    ("stocks", "bonds"), ("latitude", "longitude"),
    ("a process", "a thread"), ("an alligator", "a crocodile"),
    ("a stroke", "a heart attack"), ("a will", "a trust"),
    ("mitosis", "meiosis"), ("HTTP", "HTTPS"), ("a latte", "a cappuccino"),
    ("a circuit breaker", "a fuse"), ("a stock split", "a dividend"),
    ("a sprain", "a strain"),
]

INVENTIONS = [
    "the telephone", "the printing press", "the World Wide Web",
    "the light bulb", "dynamite", "the lightning rod", "the cotton gin",
    "the steam engine", "the diesel engine", "the jet engine",
    "the electric battery", "the Rubik's Cube", "the QWERTY keyboard",
]

BOIL_ITEMS = [
    "fresh pasta", "corn on the cob", "broccoli florets", "baby potatoes",
    "frozen dumplings", "brown rice", "dried lentils", "soft-boiled eggs",
    "lobster tails",
]

# ---------------------------------------------------------------------------
# paraphrase classes (also used by verbosity and typo)
# ---------------------------------------------------------------------------
PARA = {
    "explain": {
        "slots": TOPICS,
        "forms": [
            "Explain {x}.", "Can you explain {x}?",
            "Could you explain {x} to me?", "Give me an explanation of {x}.",
            "Help me understand {x}.", "I'd like an explanation of {x}.",
            "Tell me about {x}.", "I want to understand {x}.",
            "What's {x} all about?", "Break down {x} for me.",
            "I need {x} explained.",
        ],
        "terse": ["Explain {x}.", "{x}, explained?"],
        "wordy": [
            "I've been trying to wrap my head around {x} for a while and I'm still confused. Could you explain it to me?",
            "Hi! I was hoping you could help me out. Could you explain {x} to me? Thanks so much.",
            "So I keep running into {x} and honestly I don't get it. Can you explain it?",
            "Would you mind explaining {x}? I'd be really grateful for your help.",
            "Hi there! I'm preparing for a meeting tomorrow and {x} keeps coming up in the documents I'm reading, but I've never really understood it properly. Could you explain it to me, please?",
        ],
    },
    "task": {
        "slots": TASKS,
        "forms": [
            "How do I {x}?", "How can I {x}?", "What's the best way to {x}?",
            "Walk me through how to {x}.", "Tell me how to {x}.",
            "Explain how to {x}.", "Show me how to {x}.",
            "I need to know how to {x}.", "What do I need to do to {x}?",
            "What steps should I take to {x}?", "What's the right way to {x}?",
        ],
        "terse": ["How to {x}?", "Steps to {x}?"],
        "wordy": [
            "I've been struggling with this for a while, so I'm hoping you can help: how do I {x}?",
            "Could you please tell me how I can {x}? I'd really appreciate it.",
            "Hey, hope you're well! I was wondering how I would {x}.",
            "I've tried looking this up but keep getting confused, so let me ask you directly: what's the way to {x}?",
            "So I've watched a couple of videos and read a few forum threads, but I'm still not confident about it, so I'd love a clear answer from you: how do I {x}?",
        ],
    },
    "capital": {
        "slots": COUNTRIES,
        "forms": [
            "What is the capital of {x}?", "What's the capital city of {x}?",
            "Which city is the capital of {x}?", "Name the capital of {x}.",
            "Tell me the capital of {x}.", "What city serves as {x}'s capital?",
            "{x}'s capital is what city?", "Which city is {x}'s capital?",
            "I need to know the capital of {x}.",
        ],
        "terse": ["Capital of {x}?", "{x} capital?"],
        "wordy": [
            "I was wondering if you could tell me what the capital city of {x} is.",
            "Sorry to bother you, but do you happen to know what the capital of {x} is?",
            "My geography is a little rusty, so could you remind me which city is the capital of {x}?",
            "My daughter has a geography quiz tomorrow and we got into a friendly argument about it at dinner tonight, so I'd love to settle it once and for all: what is the capital of {x}?",
        ],
    },
    "author": {
        "slots": BOOKS,
        "forms": [
            "Who wrote {x}?", "Who is the author of {x}?",
            "Who was {x} written by?", "Tell me who wrote {x}.",
            "Name the author of {x}.", "{x} was written by whom?",
            "Who's the author behind {x}?", "Which writer wrote {x}?",
        ],
        "terse": ["Author of {x}?", "{x} author?"],
        "wordy": [
            "I was just thinking about {x} and realized I can't remember who wrote it. Could you remind me?",
            "Would you happen to know who the author of {x} is? It's been bugging me all afternoon.",
            "Hi there, quick favor: could you tell me who wrote the book {x}?",
        ],
    },
    "define": {
        "slots": DEFINE_WORDS,
        "forms": [
            "What does '{x}' mean?", "What is the meaning of '{x}'?",
            "Define '{x}'.", "Give me the definition of '{x}'.",
            "What's the definition of the word '{x}'?",
            "Tell me what '{x}' means.", "I need the meaning of '{x}'.",
            "What is meant by the word '{x}'?",
        ],
        "terse": ["'{x}' meaning?", "Define '{x}'."],
        "wordy": [
            "I came across the word '{x}' earlier today and I'm not sure what it means. Could you tell me?",
            "Could you kindly tell me what the word '{x}' means? I keep seeing it everywhere.",
            "Sorry if this is basic, but what exactly does '{x}' mean?",
        ],
    },
    "unit": {
        "slots": UNITS,
        "forms": [
            "How many {x[0]} are in {x[1]}?", "How many {x[0]} are there in {x[1]}?",
            "How many {x[0]} make up {x[1]}?", "What's the number of {x[0]} in {x[1]}?",
            "Tell me how many {x[0]} are in {x[1]}.", "{x[1]} is how many {x[0]}?",
            "How many {x[0]} does {x[1]} contain?",
        ],
        "terse": ["{x[0]} in {x[1]}?", "How many {x[0]} in {x[1]}?"],
        "wordy": [
            "I'm in the middle of something and need a quick conversion: how many {x[0]} are in {x[1]}?",
            "Could you please remind me how many {x[0]} there are in {x[1]}? I always forget.",
        ],
    },
    "year": {
        "slots": EVENTS,
        "forms": [
            "In what year did {x[0]}?", "What year did {x[0]}?",
            "Which year did {x[0]}?", "In which year did {x[0]}?",
            "Tell me the year {x[1]}.", "What year was it when {x[1]}?",
            "I need to know what year {x[1]}.",
        ],
        "terse": ["What year did {x[0]}?"],
        "wordy": [
            "I'm trying to remember something from history class and it's driving me crazy: in what year did {x[0]}?",
            "Could you help me out with a date? I'd like to know which year {x[1]}.",
        ],
    },
    "cause": {
        "slots": CAUSE_TOPICS,
        "forms": [
            "What causes {x}?", "What is the cause of {x}?",
            "What are the causes of {x}?", "What leads to {x}?",
            "Tell me what causes {x}.", "Explain what causes {x}.",
            "What's behind {x}?", "What's responsible for {x}?",
        ],
        "terse": ["Cause of {x}?", "{x}: what causes it?"],
        "wordy": [
            "I've always wondered about this, so I'd love to know: what actually causes {x}?",
            "Could you tell me what causes {x}? I've been curious about it for ages.",
        ],
    },
    "benefit": {
        "slots": BENEFIT_TOPICS,
        "forms": [
            "What are the benefits of {x}?", "What benefits does {x} offer?",
            "What are the upsides of {x}?", "What's good about {x}?",
            "Tell me the benefits of {x}.", "What advantages come with {x}?",
        ],
        "terse": ["Benefits of {x}?", "{x}: benefits?"],
        "wordy": [
            "I've been hearing a lot about {x} lately, so I'm curious: what are the benefits?",
            "Would you be able to tell me what the benefits of {x} are? I'd appreciate it.",
        ],
    },
    "compare": {
        "slots": COMPARE_PAIRS,
        "forms": [
            "What's the difference between {x[0]} and {x[1]}?",
            "How does {x[0]} differ from {x[1]}?",
            "How are {x[0]} and {x[1]} different?",
            "Explain how {x[0]} and {x[1]} differ.",
            "What distinguishes {x[0]} from {x[1]}?",
            "In what ways are {x[0]} and {x[1]} different?",
            "What sets {x[0]} apart from {x[1]}?",
        ],
        "terse": ["{x[0]} vs {x[1]}: what's the difference?", "{x[0]} vs. {x[1]} difference?"],
        "wordy": [
            "I always get these two mixed up, so could you explain the difference between {x[0]} and {x[1]}?",
            "People around me keep using {x[0]} and {x[1]} interchangeably. What is actually the difference between them?",
            "Okay, this is probably a basic question and I'm a little embarrassed to ask it, but I've never been sure and it keeps coming up: what's the difference between {x[0]} and {x[1]}?",
        ],
    },
    "invent": {
        "slots": INVENTIONS,
        "forms": [
            "Who invented {x}?", "Who was the inventor of {x}?",
            "Who came up with {x}?", "Tell me who invented {x}.",
            "Which person invented {x}?", "Who is credited with inventing {x}?",
        ],
        "terse": ["Inventor of {x}?", "Who invented {x}?"],
        "wordy": [
            "I was having a debate with a friend and we couldn't agree, so maybe you can settle it: who invented {x}?",
            "Just out of curiosity, could you tell me who invented {x}? Thanks!",
        ],
    },
    "boil": {
        "slots": BOIL_ITEMS,
        "forms": [
            "How long should I boil {x}?", "For how long should I boil {x}?",
            "How many minutes should I boil {x} for?",
            "What's the right boiling time for {x}?",
            "Tell me how long to boil {x}.", "I need the boiling time for {x}.",
        ],
        "terse": ["Boiling time for {x}?", "{x}: how long to boil?"],
        "wordy": [
            "I'm making dinner right now and I'm not totally sure: how long should I boil {x}?",
            "Could you please let me know how long I should boil {x}? I don't want to overcook it.",
        ],
    },
}

PREFIX_SENT = [
    "Hi!", "Hello there.", "Good morning!", "Hey, hope you're having a good day.",
    "I have a question for you.", "I've always wondered about this.",
    "This came up in a conversation with a friend earlier.",
    "Okay, here's something I've been meaning to ask.",
    "Hope you can help me out with this one.", "Sorry to bother you again.",
    "I've been going back and forth on this all day.",
    "Hi, I'm hoping you can clear something up for me.",
    "Here's one that's been bugging me.", "Let me ask you something.",
    "Good evening.", "Hey there!",
]
PREFIX_INLINE = [
    "Quick question:", "Random question, but", "So, I'm curious,",
    "Sorry if this is a silly question, but", "This might be obvious, but",
    "Just wondering,", "Out of curiosity,", "Hey, real quick,",
    "I was wondering,", "Okay so,",
]
SUFFIXES = [
    "Thanks!", "Thanks in advance.", "Thank you so much!", "Much appreciated.",
    "I'd really appreciate it.", "Any help would be great.", "Cheers!",
    "Thanks a lot for your help.", "Appreciate it!",
    "Thank you in advance for your time.", "You're a lifesaver.",
    "Thanks, I owe you one.",
]

# ---------------------------------------------------------------------------
# reorder frames: each variant has the same words in a different order
# ---------------------------------------------------------------------------
PROG_TASKS = [
    "read a file line by line", "sort a list of records by a field",
    "reverse a string", "make an HTTP GET request", "parse a JSON string",
    "get the current date and time", "remove duplicates from a list",
    "convert a string to an integer", "write to a text file",
    "generate a random number",
]
PROG_LANGS = ["Python", "JavaScript", "Go", "Rust", "Java", "Ruby", "C#",
              "Kotlin", "PHP", "Swift"]

SPORT_Q = [
    ("soccer", "When is a player offside"),
    ("basketball", "What counts as traveling"),
    ("tennis", "How does scoring work"),
    ("cricket", "When is a batter out LBW"),
    ("baseball", "When does the infield fly rule apply"),
    ("chess", "When is castling allowed"),
    ("golf", "What happens if my ball lands in a water hazard"),
    ("volleyball", "How many touches does a team get"),
]

REORDER = [
    (["How do I {t} in {l}?", "In {l}, how do I {t}?"],
     {"t": PROG_TASKS, "l": PROG_LANGS}),
    (["How long should I bake {f} at {d}?", "At {d}, how long should I bake {f}?"],
     {"f": ["chicken thighs", "a sweet potato", "salmon fillets",
            "chocolate chip cookies", "a whole cauliflower", "pork chops",
            "a frozen pizza"],
      "d": ["350°F", "375°F", "400°F", "425°F", "180°C", "200°C"]}),
    (["What should I eat before {e}?", "Before {e}, what should I eat?"],
     {"e": ["a marathon", "a long hike", "a morning swim", "a job interview",
            "a final exam", "a heavy leg day", "a long-haul flight"]}),
    (["What documents do I need when traveling to {p}?",
      "When traveling to {p}, what documents do I need?"],
     {"p": ["Mexico", "Japan", "the UK", "Brazil", "Thailand", "Canada",
            "South Africa"]}),
    (["Which is healthier for breakfast, {x[0]} or {x[1]}?",
      "Which is healthier for breakfast, {x[1]} or {x[0]}?",
      "For breakfast, which is healthier, {x[0]} or {x[1]}?"],
     {"x": [("oatmeal", "granola"), ("eggs", "yogurt"),
            ("whole-wheat toast", "a bagel"), ("a smoothie", "a bowl of cereal"),
            ("fruit", "pancakes")]}),
    (["What is the best way for a beginner to learn {s}?",
      "For a beginner, what is the best way to learn {s}?"],
     {"s": ["the guitar", "Python", "Spanish", "chess", "touch typing",
            "woodworking", "personal finance", "sourdough baking"]}),
    (["What was daily life like in {x[0]} during {x[1]}?",
      "During {x[1]}, what was daily life like in {x[0]}?"],
     {"x": [("ancient Rome", "the reign of Augustus"),
            ("England", "the Industrial Revolution"), ("Japan", "the Edo period"),
            ("France", "the Middle Ages"), ("Egypt", "the New Kingdom"),
            ("Russia", "the Soviet era"), ("the American colonies", "the 1700s")]}),
    (["Can I still {x[0]} if I {x[1]}?", "If I {x[1]}, can I still {x[0]}?"],
     {"x": [("travel to Canada", "have a DUI on my record"),
            ("donate blood", "got a tattoo last month"),
            ("eat sushi", "am pregnant"), ("run a marathon", "have flat feet"),
            ("get a mortgage", "am self-employed"),
            ("sue my landlord", "already moved out"),
            ("file my taxes", "missed the deadline")]}),
    (["How can I {x[0]} without a {x[1]}?", "Without a {x[1]}, how can I {x[0]}?"],
     {"x": [("open a wine bottle", "corkscrew"), ("cut a tile", "tile saw"),
            ("whip cream", "stand mixer"), ("measure flour", "kitchen scale"),
            ("debug my code", "debugger"), ("find north", "compass"),
            ("hang a picture", "drill"), ("book a flight", "credit card"),
            ("roll out dough", "rolling pin")]}),
    (["Is it legal to {x[0]} in {x[1]}?", "In {x[1]}, is it legal to {x[0]}?"],
     {"x": [("record a phone call without consent", "California"),
            ("drive barefoot", "Texas"), ("collect rainwater", "Colorado"),
            ("sell homemade food", "New York"), ("own a kangaroo", "Australia"),
            ("drink alcohol in public", "Japan"),
            ("fly a drone over a national park", "the United States")]}),
    (["Explain how {x} works in simple terms.",
      "In simple terms, explain how {x} works.",
      "Explain in simple terms how {x} works."],
     {"x": ["a hash table", "a vaccine", "a mortgage", "a heat pump",
            "the stock market", "a jet engine", "public-key encryption",
            "a bicycle derailleur", "a nuclear reactor", "a credit score"]}),
    (["What are the health benefits of {x[0]} and {x[1]}?",
      "What are the health benefits of {x[1]} and {x[0]}?"],
     {"x": [("green tea", "coffee"), ("walking", "swimming"), ("oats", "barley"),
            ("spinach", "kale"), ("yoga", "pilates"),
            ("blueberries", "strawberries")]}),
    (["Compare {x[0]} and {x[1]} for {x[2]}.", "Compare {x[1]} and {x[0]} for {x[2]}.",
      "For {x[2]}, compare {x[0]} and {x[1]}."],
     {"x": [("PostgreSQL", "MySQL", "a small web app"),
            ("React", "Vue", "an internal dashboard"),
            ("index funds", "bonds", "retirement savings"),
            ("a heat pump", "a gas furnace", "a cold climate"),
            ("Airbnb", "hotels", "a family trip to Rome"),
            ("running", "cycling", "weight loss"),
            ("cast iron", "stainless steel", "searing steak")]}),
    ([lambda d: "%s in %s?" % (d["x"][1], d["x"][0]),
      lambda d: "In %s, %s?" % (d["x"][0], decap(d["x"][1]))],
     {"x": SPORT_Q}),
    (["Tell me briefly about {t}.", "Briefly, tell me about {t}.",
      "Tell me about {t} briefly."],
     {"t": TOPICS}),
    (["What happened in {x[0]} in {x[1]}?", "In {x[1]}, what happened in {x[0]}?"],
     {"x": [("Berlin", "1989"), ("Chernobyl", "1986"), ("Pompeii", "79 AD"),
            ("Boston", "1773"), ("Paris", "1789"), ("Hong Kong", "1997"),
            ("Philadelphia", "1776"), ("Beijing", "2008")]}),
    (["How much should I save each month for retirement at age {n}?",
      "At age {n}, how much should I save each month for retirement?",
      "How much should I save for retirement each month at age {n}?"],
     {"n": ["25", "30", "35", "40", "45", "50"]}),
    (["Why do my {p} leaves turn yellow in winter?",
      "In winter, why do my {p} leaves turn yellow?"],
     {"p": ["pothos", "monstera", "fiddle leaf fig", "snake plant",
            "peace lily", "basil"]}),
    (["What should I do if my {d} gets wet?", "If my {d} gets wet, what should I do?"],
     {"d": ["phone", "laptop", "car key fob", "hearing aid", "camera",
            "passport", "e-reader"]}),
    (["Does {x[0]} or {x[1]} have more {x[2]}?", "Does {x[1]} or {x[0]} have more {x[2]}?"],
     {"x": [("chicken breast", "tofu", "protein"), ("lentils", "chickpeas", "fiber"),
            ("Greek yogurt", "cottage cheese", "protein"),
            ("espresso", "drip coffee", "caffeine"), ("brown rice", "quinoa", "fiber"),
            ("almonds", "peanuts", "calories")]}),
    (["Which is bigger, {x[0]} or {x[1]}?", "Which is bigger, {x[1]} or {x[0]}?"],
     {"x": [("Jupiter", "Saturn"), ("Texas", "France"),
            ("a blue whale", "a whale shark"), ("Lake Superior", "Lake Victoria"),
            ("Greenland", "Australia"), ("the Sahara", "the Gobi Desert")]}),
    (["Should I fix {x} myself or hire someone?", "Should I hire someone or fix {x} myself?"],
     {"x": ["a leaking roof", "my home's wiring", "a cracked windshield",
            "my garage door opener", "a running toilet", "my car's brakes"]}),
    (["How many {x[0]} are in a {x[1]} in the US?", "In the US, how many {x[0]} are in a {x[1]}?"],
     {"x": [("cups", "gallon"), ("ounces", "pint"), ("tablespoons", "cup"),
            ("quarts", "gallon"), ("teaspoons", "tablespoon")]}),
    (["When can I {x[0]} after {x[1]}?", "After {x[1]}, when can I {x[0]}?"],
     {"x": [("drive", "knee surgery"), ("shower", "getting a tattoo"),
            ("exercise", "a C-section"), ("eat solid food", "wisdom tooth removal"),
            ("fly", "a concussion"), ("drink alcohol", "a colonoscopy")]}),
    (["Which {c} should I visit in {m} for good weather?",
      "For good weather, which {c} should I visit in {m}?",
      "In {m}, which {c} should I visit for good weather?"],
     {"c": ["European city", "Caribbean island", "national park", "Asian country"],
      "m": ["March", "October", "December", "July"]}),
    (["When my kids are home sick from school and bored out of their minds, what are some quiet {a} we can do together?",
      "What are some quiet {a} we can do together when my kids are home sick from school and bored out of their minds?"],
     {"a": ["indoor activities", "crafts", "board games", "science experiments"]}),
    (["Before I sign the lease on my first apartment next week, what should I check carefully in the {c}?",
      "What should I check carefully in the {c} before I sign the lease on my first apartment next week?"],
     {"c": ["kitchen", "bathroom", "contract", "electrical panel"]}),
    (["Why does bread go stale faster in the fridge?",
      "In the fridge, why does bread go stale faster?",
      "Why does bread go stale in the fridge faster?"], {}),
    (["How do I get red wine out of {c} quickly?",
      "How do I quickly get red wine out of {c}?",
      "Quickly, how do I get red wine out of {c}?"],
     {"c": ["a carpet", "a white shirt", "a couch cushion", "a tablecloth"]}),
]

# ---------------------------------------------------------------------------
# synonym frames: {S} is replaced by two true synonyms (in context)
# ---------------------------------------------------------------------------
SYNONYM = [
    ("How do I {S} a {x}?", [("fix", "repair")],
     ["leaky faucet", "cracked phone screen", "flat bicycle tire",
      "squeaky door hinge", "broken zipper", "torn window screen",
      "wobbly chair leg"]),
    ("What is the {S} way to {x}?", [("quickest", "fastest")],
     ["thaw frozen chicken", "learn basic Spanish", "cool down a hot room",
      "ripen an avocado", "clear a clogged drain", "pay off a car loan"]),
    ("How can I {S} my {x}?", [("lower", "reduce")],
     ["cholesterol", "blood pressure", "monthly electricity bill",
      "credit card interest", "stress levels", "cloud computing costs"]),
    ("What are the {S} of {x}?",
     [("benefits", "advantages"), ("drawbacks", "downsides"),
      ("disadvantages", "drawbacks")], BENEFIT_TOPICS),
    ("How do I {S} investing in {x}?", [("start", "begin"), ("get started", "begin")],
     ["index funds", "real estate", "bonds", "dividend stocks", "gold"]),
    ("What is the {S} {x}?", [("largest", "biggest")],
     ["planet in the solar system", "desert in the world", "ocean on Earth",
      "organ in the human body", "lake in Africa", "country in South America",
      "city in Canada"]),
    ("Can you {S} me with a {x}?", [("help", "assist")],
     ["cover letter", "wedding toast", "complaint letter to my landlord",
      "SQL query for monthly sales", "resignation email", "budget spreadsheet"]),
    ("What should I do if my {S} has {x}?", [("child", "kid")],
     ["a fever and a stiff neck", "a rash that won't go away",
      "a bad cough at night", "a nosebleed that won't stop", "an ear infection"]),
    ("When should I see a {S} about {x}?", [("doctor", "physician")],
     ["persistent headaches", "a mole that changed shape",
      "chest pain during exercise", "heartburn that won't go away",
      "sudden hearing loss"]),
    ("Do I need {S} to {x}?", [("a lawyer", "an attorney")],
     ["write a will", "file for divorce", "form an LLC",
      "fight a speeding ticket", "sell my house", "set up a trust"]),
    ("What is the checked {S} allowance on {x}?", [("luggage", "baggage")],
     ["Ryanair", "Delta domestic flights", "Emirates economy class",
      "Lufthansa long-haul flights", "Southwest"]),
    ("Is it {S} to learn {x}?", [("hard", "difficult")],
     ["Japanese", "Rust", "the piano as an adult", "organic chemistry",
      "to code at 40", "Arabic", "to swim as an adult"]),
    ("How do I {S} a good {x}?",
     [("choose", "pick"), ("pick", "select"), ("choose", "select")],
     ["avocado at the store", "financial advisor", "pair of running shoes",
      "watermelon", "password manager", "contractor for a kitchen remodel"]),
    ("What is the {S} way to {x}?",
     [("correct", "right"), ("right", "proper"), ("correct", "proper")],
     ["hold a chef's knife", "lift a heavy box", "store fresh herbs",
      "cite a website in APA style", "jump-start a car", "dispose of old paint"]),
    ("How long can I keep {x} in the {S}?", [("fridge", "refrigerator")],
     ["cooked rice", "raw chicken", "an opened jar of pesto", "homemade soup",
      "hard-boiled eggs", "leftover pizza"]),
    ("My {S} hurts after {x}. What helps?", [("stomach", "tummy"), ("belly", "stomach")],
     ["eating spicy food", "taking antibiotics", "drinking coffee",
      "a long run"]),
    ("How do I {S} a branch in {x}?", [("delete", "remove")],
     ["Git", "GitHub", "GitLab", "Bitbucket"]),
    ("What's the proper way to {S} my {x}?", [("shut down", "turn off")],
     ["MacBook", "Windows laptop", "Raspberry Pi", "Android phone", "desktop PC"]),
    ("How do I {S} {x}?", [("get rid of", "eliminate")],
     ["fruit flies in my kitchen", "ants in my bathroom",
      "a musty smell in my basement", "mold on my shower caulk",
      "moles in my lawn"]),
    ("Where can I {S} {x}?", [("buy", "purchase")],
     ["a used car in good condition", "cheap train tickets in Italy",
      "bare-root fruit trees", "an international SIM card", "US Treasury bonds"]),
    ("What is the {S} of {x}?", [("price", "cost")],
     ["renewing a US passport", "a Eurail pass", "replacing a water heater",
      "a root canal", "a monthly ski pass in Colorado"]),
    ("How do I {S} money to {x}?", [("send", "transfer")],
     ["a bank account in Mexico", "a friend in the UK",
      "my daughter's account at another bank", "a PayPal user"]),
    ("What is the {S} cause of {x}?",
     [("main", "primary"), ("main", "leading"), ("primary", "leading")],
     ["lower back pain", "house fires", "coral bleaching", "car accidents",
      "hair loss in men"]),
    ("How can I make my {x} run {S}?", [("faster", "quicker"), ("faster", "more quickly")],
     ["Python script", "SQL query", "old laptop", "React app",
      "Excel spreadsheet"]),
    ("How do I clean a {x} {S}?", [("couch", "sofa")],
     ["fabric", "leather", "velvet", "microfiber"]),
    ("What {S} should I take for {x}?", [("medicine", "medication")],
     ["a tension headache", "seasonal allergies", "heartburn",
      "a sore throat", "motion sickness"]),
    ("I want to {S} a {x}. Where do I start?", [("build", "construct")],
     ["raised garden bed", "backyard deck", "simple bookshelf",
      "retaining wall", "treehouse"]),
    ("What are some {S} ways to {x}?",
     [("cheap", "inexpensive"), ("inexpensive", "affordable"), ("cheap", "affordable")],
     ["insulate an attic", "eat healthy", "travel around Japan",
      "entertain kids on a rainy day", "soundproof a room"]),
    ("{S} ways to keep {x} fresh?", [("Easy", "Simple")],
     ["cut apples", "bread", "herbs", "avocados", "lettuce"]),
    ("Explain the {S} rules of {x}.", [("basic", "fundamental")],
     ["chess", "poker", "cricket", "rugby", "mahjong"]),
    ("I'm {S} about {x}. What should I do?", [("worried", "concerned")],
     ["a lump on my neck", "my credit score dropping",
      "a crack in my foundation", "my dog not eating"]),
    ("How {S} does a {x} need to be?", [("big", "large")],
     ["chicken coop for six hens", "fish tank for a goldfish",
      "home office", "vegetable garden for a family of four"]),
    ("I just moved into an old house and a lot of things need work, so I'm tackling them one at a time. How do I {S} a {x}?",
     [("fix", "repair")],
     ["sagging gate", "cracked tile", "leaky shower valve", "sticking window", "loose banister"]),
    ("Tell me how to {S} a stripped screw from {x}.", [("remove", "take out")],
     ["a laptop case", "a deck board", "a door hinge", "drywall"]),
]

# ---------------------------------------------------------------------------
# role swap frames (asymmetric relations)
# ---------------------------------------------------------------------------
ROLE = [
    ("Did {A} conquer {B}?",
     [("Rome", "Carthage"), ("the Normans", "England"), ("Spain", "the Aztec Empire"),
      ("the Ottoman Empire", "the Byzantine Empire"), ("the Mongols", "China"),
      ("Macedon", "Persia")]),
    ("My partner and I were arguing about this during a long road trip and neither of us could remember, so please help us settle it: did {A} conquer {B}?",
     [("Rome", "Carthage"), ("the Normans", "England"), ("Spain", "the Aztec Empire"),
      ("the Mongols", "China")]),
    ("I need to know whether {A} ever conquered {B}.",
     [("Rome", "Carthage"), ("the Ottoman Empire", "the Byzantine Empire"),
      ("the Mongols", "China"), ("the Normans", "England"), ("Britain", "India")]),
    ("Did {A} beat {B} in the {E}?",
     [("Argentina", "France", "2022 World Cup final"),
      ("Spain", "the Netherlands", "2010 World Cup final"),
      ("Germany", "Argentina", "2014 World Cup final"),
      ("Novak Djokovic", "Roger Federer", "2019 Wimbledon final"),
      ("Rafael Nadal", "Roger Federer", "2008 Wimbledon final"),
      ("the Cleveland Cavaliers", "the Golden State Warriors", "2016 NBA Finals")]),
    ("Explain how {A} beat {B} in the {E}.",
     [("Argentina", "France", "2022 World Cup final"),
      ("Spain", "the Netherlands", "2010 World Cup final"),
      ("Rafael Nadal", "Roger Federer", "2008 Wimbledon final"),
      ("the Cleveland Cavaliers", "the Golden State Warriors", "2016 NBA Finals")]),
    ("Is {A} older than {B}?",
     [("Harvard", "Oxford"), ("the Great Pyramid of Giza", "Stonehenge"),
      ("Python", "Java"), ("Linux", "Windows"), ("the Colosseum", "the Parthenon"),
      ("Coca-Cola", "Pepsi"), ("Mozart", "Beethoven"),
      ("the University of Bologna", "the University of Paris"), ("Amazon", "Google"),
      ("the Louvre", "the British Museum")]),
    ("Tell me whether {A} is bigger than {B}.",
     [("a blue whale", "a whale shark"), ("Jupiter", "Saturn"), ("Texas", "France"),
      ("Australia", "Greenland"), ("the Pacific Ocean", "the Atlantic Ocean"),
      ("Canada", "the United States"), ("an African elephant", "an Asian elephant")]),
    ("Do {A} eat {B}?",
     [("owls", "snakes"), ("sharks", "dolphins"), ("foxes", "rabbits"),
      ("spiders", "wasps"), ("seals", "penguins"), ("cats", "mice"),
      ("frogs", "dragonflies")]),
    ("Should {A} inherit from {B} in my class hierarchy?",
     [("Square", "Rectangle"), ("Manager", "Employee"), ("Circle", "Ellipse"),
      ("SavingsAccount", "BankAccount"), ("Stack", "List"), ("ElectricCar", "Car")]),
    ("Does {A} depend on {B}?",
     [("pandas", "NumPy"), ("Flask", "Werkzeug"), ("scikit-learn", "SciPy"),
      ("seaborn", "matplotlib"), ("Django REST Framework", "Django"),
      ("requests", "urllib3")]),
    ("How do I convert {A} to {B} in {E}?",
     [("a string", "an integer", "Java"), ("a list", "a set", "Python"),
      ("a dictionary", "a JSON string", "Python"),
      ("a Unix timestamp", "a date object", "JavaScript"),
      ("bytes", "a string", "Python"), ("an array", "a slice", "Go")]),
    ("What's the formula to convert {A} to {B}?",
     [("Celsius", "Fahrenheit"), ("miles", "kilometers"), ("pounds", "kilograms"),
      ("inches", "centimeters"), ("radians", "degrees")]),
    ("Can {A} sue {B} for breach of contract?",
     [("a tenant", "a landlord"), ("a contractor", "a homeowner"),
      ("a franchisee", "a franchisor"), ("an author", "a publisher"),
      ("a supplier", "a retailer"), ("an employee", "an employer")]),
    ("Why did {A} declare war on {B} in {E}?",
     [("Britain", "Germany", "1939"), ("France", "Prussia", "1870"),
      ("Austria-Hungary", "Serbia", "1914"), ("Germany", "the United States", "1941"),
      ("the United States", "Spain", "1898")]),
    ("Is every {A} also a {B}?",
     [("square", "rectangle"), ("rhombus", "parallelogram"), ("sedan", "car"),
      ("latte", "coffee drink"), ("Roth IRA", "retirement account"),
      ("tangerine", "citrus fruit")]),
    ("Should I move money from my {A} to my {B}?",
     [("savings account", "checking account"), ("401(k)", "IRA"),
      ("brokerage account", "high-yield savings account"),
      ("HSA", "checking account"), ("emergency fund", "index funds")]),
    ("How do I call {A} code from {B}?",
     [("C", "Python"), ("Java", "Kotlin"), ("Rust", "C"), ("C++", "C#"),
      ("Python", "JavaScript"), ("Swift", "Objective-C")]),
    ("Is {A} north of {B}?",
     [("London", "Paris"), ("Rome", "New York"), ("Toronto", "Seattle"),
      ("Madrid", "Washington, D.C."), ("Tokyo", "Los Angeles"), ("Berlin", "Moscow")]),
    ("Did {A} influence {B}?",
     [("Plato", "Aristotle"), ("Socrates", "Plato"), ("Haydn", "Beethoven"),
      ("Kant", "Hegel"), ("the Beatles", "Oasis"), ("Smalltalk", "Ruby"),
      ("Hemingway", "Raymond Carver"), ("Bach", "Mozart")]),
    ("Did {A} sue {B}?",
     [("Oracle", "Google"), ("Apple", "Samsung"), ("Epic Games", "Apple"),
      ("Getty Images", "Stability AI"), ("The New York Times", "OpenAI")]),
    ("Can someone with blood type {A} donate to someone with type {B}?",
     [("O negative", "A positive"), ("A positive", "AB positive"),
      ("B negative", "O negative"), ("AB positive", "O positive"),
      ("A negative", "B positive")]),
    ("Is the {A} longer than the {B}?",
     [("Nile", "Amazon"), ("Mississippi", "Danube"), ("Thames", "Seine"),
      ("Yangtze", "Mekong"), ("Rhine", "Elbe")]),
    ("Can I use {A} instead of {B} in {E}?",
     [("butter", "oil", "brownies"), ("baking soda", "baking powder", "pancakes"),
      ("honey", "sugar", "cookies"), ("Greek yogurt", "sour cream", "a dip"),
      ("almond flour", "wheat flour", "bread"), ("maple syrup", "honey", "granola")]),
    ("Does {A} import {E} from {B}?",
     [("the US", "Canada", "oil"), ("Germany", "Norway", "natural gas"),
      ("Japan", "Australia", "beef"), ("China", "Brazil", "soybeans"),
      ("the UK", "France", "wine")]),
    ("Does a {A} outrank a {B} in the US Army?",
     [("colonel", "major"), ("captain", "lieutenant"), ("general", "colonel"),
      ("sergeant", "corporal")]),
    ("Is {A} a subsidiary of {B}?",
     [("Instagram", "Meta"), ("YouTube", "Google"), ("LinkedIn", "Microsoft"),
      ("Whole Foods", "Amazon")]),
    ("What's the easiest way to transfer photos from {A} to {B}?",
     [("my iPhone", "my Windows PC"), ("an Android phone", "a Mac"),
      ("Google Photos", "iCloud"), ("my old laptop", "my new laptop")]),
    ("How much faster is {A} than {B}?",
     [("a cheetah", "a greyhound"), ("C", "Python"), ("light", "sound"),
      ("fiber internet", "DSL")]),
    ("Is {A} a prerequisite for {B}?",
     [("calculus", "linear algebra"), ("Algebra II", "precalculus"),
      ("organic chemistry", "biochemistry"), ("statistics", "machine learning")]),
    ("Why do {A} chase {B}?", [("cats", "mice"), ("dogs", "cats"), ("lions", "zebras")]),
    ("Was {A} a student of {B}?",
     [("Aristotle", "Plato"), ("Alexander the Great", "Aristotle"), ("Beethoven", "Haydn"),
      ("Plato", "Socrates")]),
    ("Did {A} come before {B}?",
     [("the Bronze Age", "the Iron Age"), ("the Renaissance", "the Enlightenment"),
      ("Windows 95", "Windows XP"), ("the Jurassic period", "the Cretaceous period")]),
    ("{A} rear-ended {B} at a red light. Who is at fault?",
     [("a delivery van", "my car"), ("a city bus", "a cyclist"),
      ("my rental car", "a taxi")]),
]

ROLE_CUSTOM = [
    ("My {R} owes me {M}. What are my options?", "I owe my {R} {M}. What are my options?",
     {"R": ["brother", "landlord", "former roommate", "business partner",
            "best friend", "ex-boyfriend"],
      "M": ["$500", "$2,000", "money", "$12,000"]}),
    ("What happens if I sue my {R}?", "What happens if my {R} sues me?",
     {"R": ["landlord", "employer", "contractor", "neighbor",
            "former business partner", "HOA"]}),
    ("My dog bit my neighbor's {P}. Who is liable?",
     "My neighbor's {P} bit my dog. Who is liable?",
     {"P": ["dog", "puppy", "German shepherd"]}),
    ("Should I report my {R} to HR?", "Should my {R} report me to HR?",
     {"R": ["manager", "coworker", "team lead", "intern"]}),
    ("How do I get my {R} to stop interrupting me in meetings?",
     "How do I stop interrupting my {R} in meetings?",
     {"R": ["boss", "coworker", "manager", "client"]}),
]

# ---------------------------------------------------------------------------
# scope frames
# ---------------------------------------------------------------------------
QP1 = [("all", "some"), ("all", "any"), ("all", "most"), ("most", "some"),
       ("most", "any")]
SCOPE = [
    ("Are {Q} {x[0]} {x[1]}?", QP1,
     [("snakes", "venomous"), ("mushrooms", "poisonous"), ("prime numbers", "odd"),
      ("bacteria", "harmful to humans"), ("sharks", "dangerous to humans"),
      ("spiders", "venomous"), ("cats", "lactose intolerant"),
      ("open-source licenses", "compatible with commercial use")]),
    ("Do {Q} {x[0]} {x[1]}?", QP1,
     [("mammals", "give birth to live young"), ("plants", "need sunlight to survive"),
      ("fish", "have scales"), ("airlines", "charge for checked bags"),
      ("EU countries", "use the euro"), ("US states", "have a sales tax"),
      ("credit cards", "charge an annual fee"), ("dinosaurs", "have feathers")]),
    ("Is it {Q} safe to {x}?", [("always", "ever"), ("always", "usually"), ("usually", "ever")],
     ["eat raw cookie dough", "take ibuprofen on an empty stomach",
      "leave cooked rice out overnight", "refreeze thawed chicken",
      "swim right after eating", "drive on a spare tire on the highway"]),
    ("Is {x[0]} {Q} a sign of {x[1]}?", [("always", "sometimes"), ("always", "usually")],
     [("chest pain", "a heart attack"), ("a fever", "an infection"),
      ("a check engine light", "a serious problem"),
      ("back pain", "a kidney problem"), ("a headache", "dehydration")]),
    ("Do I {Q} need to {x}?", [("always", "ever")],
     ["file a tax return", "preheat the oven", "rinse rice before cooking it",
      "show ID on domestic flights in the US", "tip at restaurants in Japan",
      "use a primer before painting"]),
    ("What were the biggest tech news stories {Q}?",
     [("this week", "this year"), ("today", "this month"), ("this week", "this month"),
      ("today", "this year")], [""]),
    ("Which stocks gained the most {Q}?",
     [("today", "this year"), ("this week", "this quarter"), ("this month", "this year")],
     [""]),
    ("Summarize the major political news from {x} {Q}.",
     [("this week", "this year"), ("today", "this month")],
     ["the UK", "Brazil", "India", "Germany"]),
    ("How much has the {x} gained {Q}?",
     [("over the past year", "over the past decade"),
      ("since January", "over the past five years"),
      ("this week", "over the past year")],
     ["S&P 500", "Nasdaq Composite", "price of gold", "FTSE 100"]),
    ("How much {x[0]} should I {x[1]} {Q}?", [("per day", "per week"), ("per meal", "per day")],
     [("protein", "eat"), ("fiber", "eat"), ("water", "drink"),
      ("caffeine", "have"), ("added sugar", "have")]),
    ("What's the average rainfall in {x} {Q}?",
     [("per year", "per month"), ("in a year", "in a typical week")],
     ["Seattle", "London", "Mumbai", "Singapore", "Cape Town"]),
    ("Do I have to pay tax on {Q} my {x}?", [("all of", "any of"), ("all of", "part of")],
     ["crypto gains", "Social Security benefits", "tips", "lottery winnings",
      "side-hustle income", "scholarship money"]),
    ("Can {Q} {x} be recycled?", [("all", "any"), ("all", "most")],
     ["plastics", "types of glass", "batteries", "paper products", "electronics"]),
    ("Does {Q} {x[0]} need {x[1]}?", [("every", "any")],
     [("house in the US", "a smoke detector"), ("car in California", "a smog check"),
      ("website", "a privacy policy"), ("Python class", "an __init__ method"),
      ("rental property", "a landlord license")]),
    ("What are {Q} {x}?", [("some", "all the")],
     ["symptoms of anemia", "uses for baking soda", "keyboard shortcuts in VS Code",
      "deductions a freelancer can claim", "exceptions to the hearsay rule",
      "Git commands for undoing changes", "ways to cook eggs"]),
    ("Have {Q} {x[0]} {x[1]}?", [("any", "most"), ("all", "any")],
     [("US presidents", "been left-handed"), ("Olympic marathons", "been run in under two hours"),
      ("Nobel laureates", "won twice"), ("Supreme Court justices", "been impeached")]),
    ("I'm putting together a study guide for my biology class and want to get this detail right before the exam on Friday: do {Q} {x[0]} {x[1]}?",
     [("all", "most"), ("all", "any")],
     [("mammals", "give birth to live young"), ("reptiles", "lay eggs"),
      ("insects", "have six legs"), ("fungi", "reproduce with spores")]),
    ("Is {Q} {x} bad for you?", [("a little", "a lot of"), ("any", "a lot of")],
     ["alcohol", "caffeine", "salt", "sugar", "screen time", "sun exposure", "red meat"]),
    ("How many hours of sleep did people average {Q} in the US?",
     [("per night", "per week")], [""]),
]
SCOPE_CUSTOM = [
    ("Name one {x[0]}.", "Name all the {x[1]}.",
     [("planet with rings", "planets with rings"),
      ("country that borders Brazil", "countries that border Brazil"),
      ("noble gas", "noble gases"), ("US state that starts with M", "US states that start with M"),
      ("bone in the human arm", "bones in the human arm"),
      ("Shakespeare tragedy", "Shakespeare tragedies"),
      ("Grand Slam tennis tournament", "Grand Slam tennis tournaments")]),
    ("Can you name a {x[0]}?", "Can you name every {x[0]}?",
     [("planet with rings", ""), ("country that borders Brazil", ""), ("noble gas", ""),
      ("Beatles album", ""), ("EU member state that doesn't use the euro", ""),
      ("HTTP status code in the 400s", "")]),
    ("What are all the side effects of {x}?", "What is the most common side effect of {x}?",
     ["ibuprofen", "metformin", "amoxicillin", "lisinopril", "sertraline", "prednisone"]),
    ("Give me a few examples of {x}.", "Give me every example of {x} you know.",
     ["logical fallacies", "French mother sauces", "design patterns in Java",
      "legal defenses to breach of contract", "compound exercises"]),
]

# ---------------------------------------------------------------------------
# negation (explicit cue words)
# ---------------------------------------------------------------------------
PETS = ["dogs", "cats", "rabbits", "parrots", "guinea pigs", "hamsters", "chickens"]
NEG_CATS = [
    ("houseplants", "need direct sunlight", "don't need direct sunlight"),
    ("vitamins", "are fat-soluble", "are not fat-soluble"),
    ("countries", "require a visa for US citizens", "do not require a visa for US citizens"),
    ("EU countries", "use the euro", "don't use the euro"),
    ("planets", "have rings", "have no rings"),
    ("animals", "can swim", "cannot swim"),
    ("exercises", "are safe during pregnancy", "are not safe during pregnancy"),
    ("grains", "contain gluten", "contain no gluten"),
    ("Python data types", "are mutable", "are not mutable"),
    ("US states", "have a state income tax", "have no state income tax"),
    ("metals", "are magnetic", "are not magnetic"),
    ("birds", "can fly", "can't fly"),
    ("HTTP methods", "are idempotent", "are not idempotent"),
    ("mushrooms", "are safe to eat raw", "are not safe to eat raw"),
    ("cheeses", "are pasteurized", "are not pasteurized"),
    ("Linux distributions", "use systemd", "don't use systemd"),
    ("credit cards", "charge foreign transaction fees", "don't charge foreign transaction fees"),
    ("airlines", "allow pets in the cabin", "do not allow pets in the cabin"),
    ("JavaScript array methods", "mutate the original array", "don't mutate the original array"),
    ("houseplants", "are toxic to cats", "are not toxic to cats"),
    ("SQL joins", "return unmatched rows", "do not return unmatched rows"),
]
HAPPEN = ["pay my parking ticket", "change my car's oil regularly",
          "take the full course of antibiotics", "update my phone's software",
          "file a tax extension", "sign the lease renewal", "water my cactus in winter",
          "seal my grout"]
RECIPES = [("brownies", "eggs"), ("pancakes", "milk"), ("banana bread", "sugar"),
           ("pizza dough", "yeast"), ("chili", "beans"), ("pesto", "pine nuts"),
           ("carbonara", "cream"), ("mayonnaise", "eggs")]
SQL_ENT = [("customers", "placed an order"), ("employees", "taken a vacation day"),
           ("users", "logged in"), ("students", "submitted an assignment"),
           ("products", "been sold"), ("members", "paid their dues")]
PERMIT = ["build a deck", "fly a drone in a national park", "sell food from home",
          "cut down a tree in my yard", "busk in the subway", "rent out my basement",
          "install a fence"]
SITU = ["during a job interview", "on a first date", "if a bear approaches me",
        "after a car accident", "when a grease fire starts",
        "when visiting a Japanese home", "in my first week at a new job"]
WITH_ = [("rent a car", "a credit card"), ("travel to Mexico", "a passport"),
         ("open a bank account", "a Social Security number"),
         ("get a mortgage", "a down payment"), ("run Docker", "root access"),
         ("board a domestic flight", "a REAL ID")]
RECUR = ["computes the factorial of n", "reverses a linked list",
         "traverses a binary tree in order", "computes Fibonacci numbers",
         "flattens a nested list", "solves the Tower of Hanoi"]
NOHAVE = [("car", "get to the airport at 5 a.m."), ("oven", "bake a cake"),
          ("printer", "print my boarding pass"), ("microwave", "reheat leftovers"),
          ("credit history", "get an apartment"), ("degree", "get a job in tech")]

NEGATION = [
    ("What foods can {x} eat?", "What foods can {x} not eat?", {"x": PETS}),
    ("Tell me which human foods are okay for {x}.",
     "Tell me which human foods are never okay for {x}.", {"x": PETS}),
    ("Which {x[0]} {x[1]}?", "Which {x[0]} {x[2]}?", {"x": NEG_CATS}),
    ("List the {x[0]} that {x[1]}.", "List the {x[0]} that {x[2]}.", {"x": NEG_CATS}),
    ("I need to know which {x[0]} {x[1]}.", "I need to know which {x[0]} {x[2]}.", {"x": NEG_CATS}),
    ("What happens if I {x}?", "What happens if I don't {x}?", {"x": HAPPEN}),
    ("What are the consequences if I {x}?", "What are the consequences if I never {x}?", {"x": HAPPEN}),
    ("Give me a recipe for {x[0]} with {x[1]}.", "Give me a recipe for {x[0]} without {x[1]}.", {"x": RECIPES}),
    ("How do I make {x[0]} without {x[1]}?", "How do I make {x[0]} with {x[1]}?", {"x": RECIPES}),
    ("Write a SQL query that finds {x[0]} who have {x[1]}.",
     "Write a SQL query that finds {x[0]} who have never {x[1]}.", {"x": SQL_ENT}),
    ("How do I find files in Linux that contain the word '{x}'?",
     "How do I find files in Linux that don't contain the word '{x}'?",
     {"x": ["error", "TODO", "password", "import", "deprecated"]}),
    ("Is it legal to {x} with a permit?", "Is it legal to {x} without a permit?", {"x": PERMIT}),
    ("Without a permit, can I {x}?", "With a permit, can I {x}?", {"x": PERMIT}),
    ("What should I do {x}?", "What should I never do {x}?", {"x": SITU}),
    ("Can I {x[0]} with {x[1]}?", "Can I {x[0]} without {x[1]}?", {"x": WITH_}),
    ("Show me Python code that {x} with recursion.",
     "Show me Python code that {x} without recursion.", {"x": RECUR}),
    ("Plan a three-day trip to {x} with a car.", "Plan a three-day trip to {x} without a car.",
     {"x": ["Tuscany", "Iceland", "the Scottish Highlands", "Provence", "Yosemite",
            "the Amalfi Coast"]}),
    ("I have no {x[0]}. How can I {x[1]}?", "I have a {x[0]}. How can I {x[1]}?", {"x": NOHAVE}),
    ("Which medications can I take with {x}?", "Which medications can't I take with {x}?",
     {"x": ["warfarin", "grapefruit juice", "alcohol", "lithium", "St. John's wort"]}),
    ("Which of my {x} are deductible?", "Which of my {x} are not deductible?",
     {"x": ["medical expenses", "home office costs", "moving expenses",
            "business meals", "education costs"]}),
    ("Name countries where {x} is legal.", "Name countries where {x} is not legal.",
     {"x": ["cannabis", "gambling", "euthanasia", "homeschooling", "surrogacy"]}),
    ("Which side dishes go with {x}?", "Which side dishes don't go with {x}?",
     {"x": ["salmon", "steak", "roast chicken", "lasagna", "pulled pork"]}),
    ("What are signs that {x} is ripe?", "What are signs that {x} is not ripe?",
     {"x": ["an avocado", "a watermelon", "a mango", "a pineapple", "a cantaloupe"]}),
    ("Give me a {x} recipe that uses an oven.", "Give me a {x} recipe that doesn't use an oven.",
     {"x": ["dessert", "chicken", "bread", "breakfast", "casserole"]}),
    ("How do I get from London to {x} by plane?", "How do I get from London to {x} without flying?",
     {"x": ["Rome", "Edinburgh", "Barcelona", "Amsterdam", "Berlin"]}),
    ("Why do I feel tired after I {x}?", "Why do I feel tired when I don't {x}?",
     {"x": ["drink coffee", "eat breakfast", "exercise", "take a nap"]}),
    ("What {x} jobs require a college degree?", "What {x} jobs don't require a college degree?",
     {"x": ["healthcare", "tech", "finance", "engineering", "government"]}),
    ("Why do people say you should {x}?", "Why do people say you should never {x}?",
     {"x": ["rinse pasta after cooking", "wake a sleepwalker", "pay off your mortgage early",
            "rinse rice before cooking", "sear meat before slow cooking", "stretch before running"]}),
    ("I'm hosting a dinner party this weekend and one of my guests has a severe allergy, so I'm planning the menu carefully. Which {x} contain nuts?",
     "I'm hosting a dinner party this weekend and one of my guests has a severe allergy, so I'm planning the menu carefully. Which {x} contain no nuts?",
     {"x": ["classic desserts", "Thai dishes", "store-bought pestos", "breakfast cereals"]}),
    ("Our team is adding automatic retries to a legacy payment service and we want to avoid double charges. Which HTTP methods are safe to retry?",
     "Our team is adding automatic retries to a legacy payment service and we want to avoid double charges. Which HTTP methods are not safe to retry?", {}),
    ("Which countries have a {x}?", "Which countries have no {x}?",
     {"x": ["minimum wage", "standing army", "personal income tax", "capital gains tax",
            "national speed limit"]}),
]

# ---------------------------------------------------------------------------
# negation without a cue word
# ---------------------------------------------------------------------------
NOCUE = [
    ("What happens if I {x}?", "What happens if I fail to {x}?",
     {"x": ["pay my credit card bill on time", "file my tax return by the deadline",
            "renew my driver's license", "show up for jury duty",
            "appear in court on my hearing date", "return the rental car on time",
            "register my car", "make my student loan payments", "pay my property taxes",
            "disclose a defect when selling my house", "report a car accident to my insurer",
            "pay my quarterly estimated taxes", "renew my passport before it expires",
            "pay my HOA dues", "update my address with the DMV"]}),
    ("What foods contain {x}?", "What foods lack {x}?",
     {"x": ["gluten", "lactose", "vitamin B12", "fiber", "iron", "omega-3 fatty acids",
            "caffeine", "soy", "vitamin C", "calcium", "added sugar", "sodium"]}),
    ("Which foods should I eat with {x}?", "Which foods should I avoid with {x}?",
     {"x": ["gout", "high blood pressure", "acid reflux", "IBS", "kidney stones",
            "type 2 diabetes", "celiac disease", "high cholesterol", "gallstones",
            "a stomach ulcer", "PCOS"]}),
    ("Which exercises should I prioritize with {x}?", "Which exercises should I avoid with {x}?",
     {"x": ["knee pain", "a herniated disc", "shoulder impingement", "plantar fasciitis",
            "osteoporosis", "asthma", "lower back pain", "arthritis in my hands",
            "a recent C-section"]}),
    ("How do I make {x[0]} with {x[1]}?", "How do I make {x[0]} with {x[2]} instead of {x[1]}?",
     {"x": [("a roux", "butter", "oil"), ("mashed potatoes", "milk", "broth"),
            ("brownies", "eggs", "applesauce"), ("pesto", "pine nuts", "walnuts"),
            ("a vinaigrette", "vinegar", "lemon juice"), ("pancakes", "milk", "water"),
            ("banana bread", "sugar", "honey"), ("chili", "beef", "lentils"),
            ("a cheesecake", "cream cheese", "ricotta"), ("cornbread", "buttermilk", "yogurt"),
            ("fried rice", "white rice", "cauliflower rice"),
            ("a smoothie", "yogurt", "silken tofu")]}),
    ("My {x[0]} agreed to {x[1]}. What are my next steps?",
     "My {x[0]} refused to {x[1]}. What are my next steps?",
     {"x": [("landlord", "fix the heating"), ("insurance company", "cover the repair"),
            ("employer", "pay my overtime"), ("contractor", "refund my deposit"),
            ("airline", "rebook my flight"), ("ex", "sign the custody agreement"),
            ("HOA", "approve my fence"), ("seller", "make the repairs"),
            ("bank", "waive the overdraft fee"), ("school", "accommodate my child's allergy"),
            ("neighbor", "split the cost of the fence")]}),
    ("What does the presence of {x[0]} in {x[1]} indicate?",
     "What does the absence of {x[0]} in {x[1]} indicate?",
     {"x": [("protein", "urine"), ("white blood cells", "urine"),
            ("antibodies", "a blood test"), ("fossils", "a rock layer"),
            ("a heartbeat", "a six-week ultrasound"), ("a robots.txt file", "a website"),
            ("ketones", "urine"), ("blood", "stool"), ("a license file", "an open-source repo"),
            ("mold spores", "an air sample"), ("lead", "tap water")]}),
    ("Why do some people {x}?", "Why do some people fail to {x}?",
     {"x": ["remember their dreams", "respond to antidepressants",
            "lose weight on a low-carb diet", "save money for retirement",
            "finish online courses", "build muscle quickly", "sleep through the night",
            "learn languages easily", "tan in the sun", "recover quickly from jet lag",
            "quit smoking on the first try", "stick to a budget"]}),
    ("What happens if I {x[0]}?", "What happens if I {x[1]}?",
     {"x": [("eat breakfast", "skip breakfast"),
            ("take my medication on time", "forget to take my medication"),
            ("stretch before running", "skip stretching before running"),
            ("attend my court hearing", "miss my court hearing"),
            ("back up my laptop", "neglect to back up my laptop"),
            ("declare my cash at customs", "omit my cash from the customs declaration"),
            ("pay the highway toll", "evade the highway toll"),
            ("wear my retainer", "stop wearing my retainer"),
            ("get my dog vaccinated", "skip my dog's vaccinations"),
            ("include my side income on my tax return", "leave my side income off my tax return"),
            ("respond to a jury summons", "ignore a jury summons"),
            ("answer the lawsuit", "ignore the lawsuit")]}),
    ("What is the effect of {x[0]} on {x[1]}?", "What is the effect of a lack of {x[0]} on {x[1]}?",
     {"x": [("sunlight", "plant growth"), ("sleep", "memory"), ("exercise", "mood"),
            ("iodine", "the thyroid"), ("rain", "crop yields"), ("competition", "prices"),
            ("vitamin D", "bone health"), ("fluoride", "teeth"),
            ("oxygen", "fish in an aquarium"), ("regulation", "the housing market"),
            ("daylight", "egg production in hens"), ("magnesium", "muscle cramps")]}),
    ("Which countries recognize {x}?", "Which countries refuse to recognize {x}?",
     {"x": ["Kosovo", "same-sex marriage", "dual citizenship",
            "international driving permits"]}),
    ("How should my API respond when the {x} header is present?",
     "How should my API respond when the {x} header is missing?",
     {"x": ["Authorization", "Content-Type", "If-None-Match", "Accept-Language",
            "X-Request-ID", "Range"]}),
    ("I passed my {x}. What should I do next?", "I failed my {x}. What should I do next?",
     {"x": ["driving test", "bar exam", "CPA exam", "car's emissions inspection",
            "PhD qualifying exam", "background check", "home inspection", "drug test",
            "code review"]}),
    ("What happens when you include {x} in your diet?",
     "What happens when you cut {x} out of your diet?",
     {"x": ["dairy", "red meat", "gluten", "added sugar", "carbohydrates", "caffeine",
            "alcohol", "processed food"]}),
    ("How does the body respond to {x}?", "How does the body respond to a shortage of {x}?",
     {"x": ["sodium", "oxygen", "water", "glucose", "potassium", "vitamin C", "calcium"]}),
    ("My tenant keeps {x}. What can I do?", "My tenant keeps refusing to {y}. What can I do?",
     None),  # handled via NOCUE_TENANT below
    ("Explain why my code compiles when {x} is included.",
     "Explain why my code compiles when {x} is left out.",
     {"x": ["the semicolon", "the return type", "the import statement",
            "the type annotation"]}),
    ("What should I do if the {x} accepts my offer?", "What should I do if the {x} rejects my offer?",
     {"x": ["seller", "buyer", "landlord", "hiring manager"]}),
    ("What happens if the defendant {x[0]}?", "What happens if the defendant {x[1]}?",
     {"x": [("testifies", "refuses to testify"), ("takes the plea deal", "refuses the plea deal"),
            ("pays the judgment", "refuses to pay the judgment"),
            ("appears for the deposition", "fails to appear for the deposition")]}),
    ("What happens to a startup that manages to {x}?", "What happens to a startup that fails to {x}?",
     {"x": ["raise a Series A", "find product-market fit", "hit its revenue targets"]}),
    ("How does {x} affect sleep?", "How does the absence of {x} affect sleep?",
     {"x": ["light", "noise", "a bedtime routine", "exercise", "a regular schedule"]}),
    ("What happens when a bill manages to {x}?", "What happens when a bill fails to {x}?",
     {"x": ["pass the Senate", "get a majority in the House",
            "receive the president's signature"]}),
    ("What are the risks of including {x} in a contract?",
     "What are the risks of leaving {x} out of a contract?",
     {"x": ["an arbitration clause", "a non-compete clause", "a termination clause",
            "an indemnity clause", "a force majeure clause"]}),
    ("What happens if my employer {x[0]}?", "What happens if my employer {x[1]}?",
     {"x": [("withholds taxes from my paycheck", "neglects to withhold taxes from my paycheck"),
            ("sends me a W-2", "fails to send me a W-2"),
            ("offers health insurance", "fails to offer health insurance"),
            ("pays into my pension", "stops paying into my pension")]}),
    ("What are the consequences of getting a permit for {x}?",
     "What are the consequences of skipping the permit for {x}?",
     {"x": ["a kitchen renovation", "a new deck", "a backyard shed", "finishing my basement"]}),
    ("Which features are included in {x}?", "Which features are missing from {x}?",
     {"x": ["the free version of Slack", "Windows 11 Home", "the basic Spotify plan",
            "the Community edition of IntelliJ IDEA"]}),
    ("How should I respond when a client {x[0]}?", "How should I respond when a client refuses to {x[1]}?",
     {"x": [("pays an invoice early", "pay an invoice"), ("signs the contract", "sign the contract"),
            ("approves the design", "approve the design")]}),
]
NOCUE_TENANT = [("paying rent on time", "pay rent on time"),
                ("letting me in for inspections", "let me in for inspections"),
                ("following the pet policy", "follow the pet policy")]

# ---------------------------------------------------------------------------
# number
# ---------------------------------------------------------------------------
PRIMES = ["7", "13", "29", "41", "97", "101", "113"]
COMPOSITES = ["9", "15", "27", "51", "91", "111", "119"]
NUMBER = [
    ("How long does it take to walk {n} {u}?",
     {"n": ["3", "5", "10", "15"], "u": ["km", "miles"]}, ["n", "u"]),
    ("Convert {n} {u[0]} to {u[1]}.",
     {"n": ["12", "20", "75", "150"],
      "u": [("pounds", "kilograms"), ("miles", "kilometers"), ("cups", "milliliters"),
            ("ounces", "grams"), ("feet", "meters")]}, ["n", "u"]),
    ("How many calories does running {n} miles burn?",
     {"n": ["2", "3", "5", "6", "10"]}, ["n"]),
    ("What is {a} times {b}?",
     {"a": ["17", "23", "48", "125", "36"], "b": ["6", "12", "14", "9", "25"]}, ["a", "b"]),
    ("How much flour do I need for {n} dozen cookies?", {"n": ["2", "3", "4", "6"]}, ["n"]),
    ("How much will ${p} grow in {y} years at {r}% interest?",
     {"p": ["1,000", "5,000", "10,000", "25,000"], "y": ["5", "10", "20", "30"],
      "r": ["3", "5", "7", "8"]}, ["p", "y", "r"]),
    ("Calculate a tip of {p}% on a ${b} bill.",
     {"p": ["15", "18", "20", "25"], "b": ["45", "60", "84", "120"]}, ["p", "b"]),
    ("Is {n} a prime number?", {"n": (PRIMES, COMPOSITES)}, ["n"]),
    ("Tell me whether {n} is prime.", {"n": (PRIMES, COMPOSITES)}, ["n"]),
    ("What is the square root of {n}?", {"n": ["144", "169", "200", "256", "50", "90"]}, ["n"]),
    ("What is the {n} Fibonacci number?",
     {"n": ["10th", "12th", "15th", "20th", "25th"]}, ["n"]),
    ("How many hours should a {n}-month-old baby sleep?", {"n": ["2", "9", "20"]}, ["n"]),
    ("Plan a {n}-day itinerary for {c}.",
     {"n": ["two", "three", "five", "seven"],
      "c": ["Rome", "Tokyo", "Lisbon", "New York", "Mexico City"]}, ["n"]),
    ("What gauge wire do I need for a {n}-amp circuit?",
     {"n": ["15", "20", "30", "40", "50"]}, ["n"]),
    ("What are the {n} largest countries by area?", {"n": ["three", "five", "ten"]}, ["n"]),
    ("How do I train to run a 5K in under {n} minutes?",
     {"n": ["20", "25", "30", "35"]}, ["n"]),
    ("How much water should I drink per day if I weigh {n} {u}?",
     {"n": ["60", "80", "100"], "u": ["kg", "pounds"]}, ["n", "u"]),
    ("What is {p}% of {m}?",
     {"p": ["15", "20", "35", "12"], "m": ["80", "240", "1,500", "64"]}, ["p", "m"]),
    ("How many {u[0]} are in {n} {u[1]}?",
     {"n": ["2", "3", "5", "1.5"],
      "u": [("cups", "quarts"), ("ounces", "pounds"), ("feet", "miles"),
            ("milliliters", "liters"), ("teaspoons", "tablespoons")]}, ["n", "u"]),
    ("How long should I cook a {n}-pound turkey?",
     {"n": ["10", "13", "16", "19", "22"]}, ["n"]),
    ("How far can I drive on {n} gallons of gas if my car gets {m} mpg?",
     {"n": ["5", "8", "12"], "m": ["25", "30", "40"]}, ["n", "m"]),
    ("What is the monthly payment on a ${p} loan at {r}% for {y} years?",
     {"p": ["200,000", "350,000", "20,000"], "r": ["4", "6.5", "7"],
      "y": ["5", "15", "30"]}, ["p", "r", "y"]),
    ("Can I bring a {n} ml bottle of shampoo in my carry-on?",
     {"n": (["50", "90", "100"], ["150", "250", "500"])}, ["n"]),
    ("What size TV should I get for a {n}-foot viewing distance?",
     {"n": ["6", "10", "12", "15"]}, ["n"]),
    ("Is it safe to drive {n} miles on a donut spare tire?",
     {"n": (["10", "30"], ["200", "500"])}, ["n"]),
    ("How many 12-inch tiles do I need for a {n} by {m} foot floor?",
     {"n": ["9", "10", "12"], "m": ["10", "14", "16"]}, ["n", "m"]),
    ("What's {n} degrees Fahrenheit in Celsius?",
     {"n": ["350", "400", "425", "450", "375"]}, ["n"]),
    ("I need {n} servings of risotto. How much rice should I use?",
     {"n": ["2", "4", "6", "10"]}, ["n"]),
    ("I'm planning a road trip with my family next month and want to budget for fuel. How much will gas cost for a {n}-mile trip if my car gets {m} mpg?",
     {"n": ["300", "500", "900", "1,200"], "m": ["22", "30", "38"]}, ["n", "m"]),
    ("Calculate the area of a circle with a radius of {n} {u}.",
     {"n": ["3", "4", "7", "10"], "u": ["cm", "inches", "meters"]}, ["n", "u"]),
    ("How much do I need to save each month to have ${p} in {y} years?",
     {"p": ["10,000", "50,000", "1 million"], "y": ["2", "5", "20"]}, ["p", "y"]),
]

# ---------------------------------------------------------------------------
# entity
# ---------------------------------------------------------------------------
PLACES = ["Japan", "Iceland", "Peru", "Morocco", "New Zealand", "Croatia",
          "Vietnam", "Costa Rica", "Scotland", "Patagonia", "Bali", "Greece"]
PEOPLE_DEAD = ["Marie Curie", "Nikola Tesla", "Frida Kahlo", "Charles Darwin",
               "Jane Austen", "Abraham Lincoln", "Isaac Newton", "Ada Lovelace",
               "Wolfgang Amadeus Mozart", "Florence Nightingale"]
ENTITY = [
    ("How do I read a CSV file in {x}?", {"x": PROG_LANGS}),
    ("What is the capital of {x}?", {"x": COUNTRIES}),
    ("Who wrote {x}?", {"x": BOOKS}),
    ("What's the best time of year to visit {x}?",
     {"x": ["Japan", "Iceland", "New Zealand", "Bali", "Dubai"]}),
    ("How do I install {x} on Windows?",
     {"x": ["NumPy", "TensorFlow", "PostgreSQL", "Docker", "Node.js", "Redis", "Git",
            "the AWS CLI"]}),
    ("In what year did {x} die?", {"x": PEOPLE_DEAD}),
    ("How many calories are in a medium {x}?",
     {"x": ["banana", "apple", "avocado", "baked potato", "orange", "mango"]}),
    ("Translate 'thank you very much' into {x}.",
     {"x": ["French", "Japanese", "German", "Portuguese", "Korean", "Italian", "Swahili"]}),
    ("What are the common side effects of {x}?",
     {"x": ["ibuprofen", "metformin", "amoxicillin", "lisinopril", "sertraline",
            "prednisone", "atorvastatin"]}),
    ("How do I sort an array of objects by a field in {x}?",
     {"x": ["JavaScript", "Java", "C#", "Go", "Swift", "Ruby", "PHP"]}),
    ("Explain the rules of {x}.",
     {"x": ["cricket", "rugby union", "ice hockey", "water polo", "curling",
            "handball", "Australian rules football"]}),
    ("Who won the {x} in 2018?",
     {"x": ["FIFA World Cup", "Tour de France", "NBA Finals", "Eurovision Song Contest",
            "Stanley Cup", "Champions League"]}),
    ("How do I replace the battery in {x}?",
     {"x": ["an iPhone 12", "a Kindle Paperwhite", "a Honda Civic key fob",
            "a Nest thermostat", "a Fitbit Charge 5", "a Logitech MX Master mouse"]}),
    ("What's the statute of limitations for breach of contract in {x}?",
     {"x": ["California", "New York", "Texas", "Florida", "Illinois"]}),
    ("How do I get from {x} to {y} by train?",
     {"x": ["Paris", "Amsterdam", "Berlin", "Munich", "Zurich"],
      "y": ["London", "Brussels", "Vienna", "Milan", "Prague"]}),
    ("What is the main export of {x}?",
     {"x": ["Australia", "Chile", "Ghana", "Saudi Arabia", "New Zealand", "Kenya",
            "Bangladesh", "Taiwan"]}),
    ("Is it safe for dogs to eat {x}?",
     {"x": (["grapes", "chocolate", "garlic", "onions", "macadamia nuts"],
            ["peanut butter", "watermelon", "blueberries", "carrots", "plain rice"])}),
    ("How long should I roast {x}?",
     {"x": ["a whole chicken", "a leg of lamb", "a pork shoulder", "a beef tenderloin",
            "a turkey breast", "a whole duck"]}),
    ("How does {x} manage component state?",
     {"x": ["React", "Vue", "Svelte", "Angular", "SolidJS"]}),
    ("Who is the current head of government of {x}?",
     {"x": ["Canada", "the UK", "Japan", "India", "Australia", "Italy", "Germany"]}),
    ("I'm visiting {x} next month. What are the must-see sights?", {"x": PLACES}),
    ("Tell me about the history of {x}.",
     {"x": ["Istanbul", "Kyoto", "Mexico City", "Jerusalem", "Venice", "Cairo", "Athens"]}),
    ("How do I open a bank account in {x} as a foreigner?",
     {"x": ["Germany", "Japan", "Switzerland", "Singapore", "the United States", "Spain"]}),
    ("What does the {x} library do in Python?",
     {"x": ["NumPy", "pandas", "requests", "Flask", "BeautifulSoup", "SQLAlchemy", "pytest"]}),
    ("What are the main ingredients in {x}?",
     {"x": ["paella", "moussaka", "pad thai", "goulash", "shakshuka", "biryani",
            "ratatouille", "tiramisu"]}),
    ("Where was {x} born?", {"x": PEOPLE_DEAD}),
    ("I'm starting a new job next month where the whole backend is written in {x}, and I only have about two weeks to get comfortable with it. What's the fastest way to learn {x}?",
     {"x": ["Go", "Rust", "Elixir", "Scala", "Kotlin", "C#"]}),
]

# ---------------------------------------------------------------------------
# antonym: items are (template, list of (S_a, S_b), slot spec)
# ---------------------------------------------------------------------------
ANTONYM = [
    ("Is {x[0]} {S} than {x[1]}?", [("cheaper", "more expensive")],
     {"x": [("leasing a car", "buying one"), ("a Costco membership", "a Sam's Club membership"),
            ("living in Lisbon", "living in Madrid"),
            ("an electric car", "a gas car to maintain"),
            ("AWS", "Google Cloud for a small startup"),
            ("a heat pump", "a gas furnace to run")]}),
    ("How do I {S} my {x}?", [("increase", "decrease")],
     {"x": ["credit limit", "car insurance deductible", "screen brightness on Ubuntu",
            "Python recursion limit", "font size in VS Code", "daily step count"]}),
    ("Is {x[0]} {S} than {x[1]} for {x[2]}?", [("better", "worse")],
     {"x": [("cast iron", "stainless steel", "searing steak"),
            ("PostgreSQL", "MongoDB", "relational data"),
            ("running", "cycling", "bad knees"),
            ("a Roth IRA", "a traditional IRA", "young workers"),
            ("tile", "hardwood", "a bathroom floor"),
            ("TypeScript", "JavaScript", "large codebases")]}),
    ("What foods {S} {x}?", [("raise", "lower")],
     {"x": ["blood pressure", "blood sugar", "LDL cholesterol", "triglycerides",
            "uric acid levels"]}),
    ("How can I {S} {x}?", [("speed up", "slow down")],
     {"x": ["the ripening of bananas", "dough fermentation",
            "a video clip in Premiere Pro", "my metabolism", "the rise of my sourdough"]}),
    ("Why is my {x} too {S}?", [("hot", "cold")],
     {"x": ["shower water", "upstairs bedroom", "refrigerator",
            "coffee from the machine", "basement"]}),
    ("What are the {S} of {x}?",
     [("advantages", "disadvantages"), ("pros", "cons"), ("benefits", "drawbacks")],
     {"x": BENEFIT_TOPICS}),
    ("What is the {S} {x}?", [("maximum", "minimum")],
     {"x": ["daily dose of acetaminophen for adults", "401(k) contribution this year",
            "age to run for US president", "speed limit on US interstates",
            "number of players on the field for a soccer team"]}),
    ("What is the {S} {x}?", [("hottest", "coldest"), ("largest", "smallest")],
     {"x": ["planet in the solar system", "country in Europe", "US state"]}),
    ("Who was the {S} US president at inauguration?", [("youngest", "oldest")], {}),
    ("What's the {S} month of the year in {x}?", [("hottest", "coldest"), ("wettest", "driest")],
     {"x": ["Tokyo", "Sydney", "Chicago", "Delhi", "Cape Town"]}),
    ("How do I {S} a {x}?", [("tighten", "loosen")],
     {"x": ["rusted bolt", "bike chain", "guitar string", "kitchen faucet handle",
            "lug nut", "drum head", "watch strap"]}),
    ("What is the {S} language for English speakers to learn?", [("easiest", "hardest")], {}),
    ("Which {x} is the {S} to learn for beginners?", [("easiest", "hardest")],
     {"x": ["musical instrument", "programming language", "martial art", "card game"]}),
    ("How can I {S} weight {x}?", [("gain", "lose")],
     {"x": ["in a healthy way", "on a vegetarian diet", "after 50",
            "while breastfeeding"]}),
    ("When is the best time to {S} {x}?", [("buy", "sell")],
     {"x": ["a house", "a used car", "gold", "airline stocks", "a timeshare"]}),
    ("How do I {S} a file with GPG?", [("encrypt", "decrypt")], {}),
    ("How do I {S} a folder on Windows?", [("zip", "unzip"), ("compress", "decompress")], {}),
    ("How do I {S} dark mode in {x}?", [("enable", "disable")],
     {"x": ["Chrome", "Outlook", "Slack", "Windows 11"]}),
    ("How do I {S[0]} a user {S[1]} the sudo group on Ubuntu?",
     [(("add", "to"), ("remove", "from"))], {}),
    ("How do I {S[0]} my contacts {S[1]} {x}?",
     [(("import", "into"), ("export", "from"))],
     {"x": ["Outlook", "Gmail", "an iPhone", "a CSV file"]}),
    ("What happens to bond prices when interest rates {S}?", [("rise", "fall")], {}),
    ("What makes the stock market {S}?", [("go up", "go down")], {}),
    ("Which foods are {S} in {x}?", [("high", "low")],
     {"x": ["fiber", "sodium", "potassium", "oxalates", "saturated fat", "vitamin K"]}),
    ("Is {x[0]} {S} than {x[1]} in winter?", [("warmer", "colder")],
     {"x": [("Seattle", "Boston"), ("London", "Paris"), ("Tokyo", "Seoul"),
            ("Denver", "Chicago"), ("Madrid", "Rome")]}),
    ("How do I make my {x} {S}?", [("crispier", "softer")],
     {"x": ["cookies", "roast potatoes", "pizza crust", "bread crust"]}),
    ("Why is my {x} growing so {S}?", [("quickly", "slowly")],
     {"x": ["hair", "lawn", "tomato seedlings", "credit card debt", "puppy"]}),
    ("What causes a {S} {x}?", [("high", "low")],
     {"x": ["resting heart rate", "white blood cell count", "blood pressure reading",
            "body temperature"]}),
    ("Should I {S} the thermostat at night in winter?", [("raise", "lower")], {}),
    ("Why did the {x} {S} after {y}?", [("rise", "fall")],
     {"x": ["stock price", "dollar", "oil price"],
      "y": ["the earnings report", "the Fed meeting", "the election"]}),
    ("Explain why {x} can be {S} for the environment.", [("good", "bad")],
     {"x": ["nuclear power", "eating less beef", "buying used clothing",
            "hydroelectric dams"]}),
    ("We're renovating our kitchen and trying hard to keep the budget under control, so I want to understand the tradeoffs first: is {x} {S} than granite for countertops?",
     [("cheaper", "more expensive")], {"x": ["quartz", "marble", "butcher block", "laminate"]}),
    ("How do I {S} a photo in {x}?", [("brighten", "darken")],
     {"x": ["Lightroom", "GIMP", "Photoshop", "Snapseed"]}),
    ("What makes a cake {S}?", [("dense", "light"), ("moist", "dry")], {}),
    ("How do I {S} the volume on my {x}?", [("turn up", "turn down")],
     {"x": ["Sonos speaker", "AirPods", "smart TV", "Android phone"]}),
    ("Which {x} {S} in value the most last year?", [("rose", "fell")],
     {"x": ["currency", "cryptocurrency", "commodity", "US housing market"]}),
    ("Should I {S} my tire pressure in winter?", [("increase", "decrease")], {}),
    ("What are the {S} ways to store {x}?", [("best", "worst")],
     {"x": ["potatoes", "coffee beans", "bread", "wine"]}),
]

# ---------------------------------------------------------------------------
# temporal
# ---------------------------------------------------------------------------
TEMPORAL = [
    # (template, time-slot name, list of alternatives, other slots)
    ("What should I eat {T} a {x}?", ["before", "after"],
     {"x": ["long run", "strength training session", "morning swim", "yoga class",
            "soccer match"]}),
    ("What stretches should I do {T} {x}?", ["before", "after"],
     {"x": ["running", "lifting weights", "a bike ride", "a tennis match"]}),
    ("Who was the president of {x} in {T}?", ["1975", "1990", "2005", "2015"],
     {"x": ["the United States", "France", "Brazil", "Mexico", "South Korea", "Argentina"]}),
    ("Who won the FIFA World Cup in {T}?", ["2002", "2006", "2010", "2014", "2018", "2022"], {}),
    ("Who won the Eurovision Song Contest in {T}?", ["2015", "2016", "2017", "2018", "2019"], {}),
    ("Who won the Nobel Prize in Literature in {T}?", ["2016", "2017", "2019", "2020", "2021"], {}),
    ("Which team won the NBA championship in {T}?", ["2014", "2015", "2016", "2019", "2020", "2021"], {}),
    ("What was daily life like in {x} {T} World War II?", ["before", "during", "after"],
     {"x": ["Germany", "Britain", "Japan", "Poland", "France"]}),
    ("How did people {x} {T} the invention of the {y}?", ["before", "after"],
     {"x": ["communicate over long distances"], "y": ["telephone", "telegraph"]}),
    ("Should I take {x} {T} meals?", ["before", "after"],
     {"x": ["metformin", "omeprazole", "ibuprofen", "levothyroxine", "iron supplements"]}),
    ("What was the exchange rate between the euro and the US dollar in {T}?",
     ["2002", "2008", "2015", "2022"], {}),
    ("What were the US federal income tax brackets in {T}?", ["2000", "2010", "2018", "2024"], {}),
    ("What time does the sun set in {x} in {T}?", ["June", "December"],
     {"x": ["Stockholm", "London", "Seattle", "Sydney", "Anchorage"]}),
    ("What should I know about planting {x} in {T}?", ["spring", "autumn"],
     {"x": ["tulip bulbs", "garlic", "tomatoes", "grass seed", "apple trees"]}),
    ("What should I do the day {T} a {x}?", ["before", "after"],
     {"x": ["marathon", "surgery", "colonoscopy", "big exam", "job interview"]}),
    ("What happened in Berlin in {T}?", ["1945", "1961", "1989"], {}),
    ("What happened in Paris in {T}?", ["1789", "1871", "1968"], {}),
    ("How much did a gallon of gas cost in the US in {T}?", ["1970", "1990", "2008", "2020"], {}),
    ("Which countries were members of the EU in {T}?", ["1986", "1995", "2005", "2013"], {}),
    ("What were the biggest tech companies in {T}?", ["1985", "2000", "2010"], {}),
    ("What was the minimum wage in {x} in {T}?", ["2000", "2010", "2020"],
     {"x": ["California", "New York", "Washington state"]}),
    ("For a history presentation I'm giving to my class next week, I need a clear and accurate summary: what was the political situation in Germany {T} the fall of the Berlin Wall?",
     ["before", "after"], {}),
    ("Tell me what the stock market did {T}.", ["yesterday", "last week", "in 2008", "in 1929"], {}),
    ("What did people in Europe eat for breakfast {T}?",
     ["in the Middle Ages", "in the 1950s", "in Roman times"], {}),
    ("I need a summary of Apple's product launches in {T}.", ["2007", "2010", "2015", "2020"], {}),
]
TEMPORAL_PAIRS = [
    ("What was the weather like in {x} yesterday?", "What will the weather be like in {x} tomorrow?",
     {"x": ["Chicago", "Paris", "Tokyo", "Denver", "Madrid"]}),
    ("Who is the CEO of {x[0]}?", "Who was the CEO of {x[0]} in {x[1]}?",
     {"x": [("Apple", "2005"), ("Microsoft", "2005"), ("Google", "2005"),
            ("Disney", "2000"), ("IBM", "2000"), ("Amazon", "2015")]}),
    ("What programming languages were popular in the {x}?",
     "What programming languages are popular today?", {"x": ["1970s", "1980s", "1990s"]}),
    ("Who won the last {x}?", "Who will win the next {x}?",
     {"x": ["French presidential election", "US presidential election",
            "UK general election", "German federal election", "Brazilian presidential election"]}),
    ("Is the {x[0]} open on {x[1]}?", "Is the {x[0]} open on {x[2]}?",
     {"x": [("Louvre", "Tuesdays", "Mondays"), ("Metropolitan Museum of Art", "Wednesdays", "Fridays"),
            ("Musée d'Orsay", "Mondays", "Sundays")]}),
    ("What was the population of {x} in 1950?", "What is the population of {x} today?",
     {"x": ["Lagos", "Shanghai", "Dubai", "Phoenix", "Istanbul"]}),
    ("How did {x} change in 2020?", "How is {x} changing this year?",
     {"x": ["the airline industry", "restaurant owners", "remote work"]}),
    ("What did the Federal Reserve decide at its last meeting?",
     "What will the Federal Reserve decide at its next meeting?", {}),
]

# ---------------------------------------------------------------------------
# conditional
# ---------------------------------------------------------------------------
CONDITIONAL = [
    ("What should I eat for breakfast?", True,
     ["I'm diabetic", "I'm vegan", "I have celiac disease", "I'm training for a marathon",
      "I'm allergic to eggs", "I'm on a low-sodium diet"]),
    ("Can I take ibuprofen for a headache?", True,
     ["I'm pregnant", "I have kidney disease", "I'm taking blood thinners",
      "I have a stomach ulcer", "I've had a few drinks tonight"]),
    ("Should I pay off my mortgage early?", True,
     ["my rate is only 2.5%", "my rate is 8%", "I don't have an emergency fund yet",
      "I'm retiring in two years", "I haven't maxed out my 401(k)"]),
    ("How should I invest $10,000?", True,
     ["I'm retiring next year", "I'm 22 years old",
      "I need the money for a down payment in two years", "I can't tolerate any losses"]),
    ("What documents do I need to fly to Canada?", True,
     ["I'm a US permanent resident", "I have a DUI conviction",
      "I'm traveling alone with my child", "I'm bringing my dog"]),
    ("Can I break my apartment lease early?", True,
     ["my landlord won't fix the heating", "I'm being deployed with the military",
      "I got a job in another state", "the unit has a mold problem"]),
    ("How long should I roast a 14-pound turkey?", True,
     ["it's still partially frozen", "it's stuffed", "I'm using a convection oven",
      "I live at high altitude"]),
    ("Which database should I use for my app?", True,
     ["I need strong consistency across regions", "my data is mostly JSON documents",
      "I expect millions of writes per second", "it has to run on a phone"]),
    ("Is a Roth IRA a good choice for me?", True,
     ["my income is above $250,000", "I expect a higher tax bracket in retirement",
      "I'm 60 years old", "I might need the money in three years"]),
    ("What should I pack for a week in Iceland?", True,
     ["I'm going in January", "I'm going in July", "I plan to hike on glaciers",
      "I'm only bringing a carry-on"]),
    ("Is it safe to go running outside today?", True,
     ["it's below -10°C", "the air quality index is over 200",
      "there's a thunderstorm", "I have asthma"]),
    ("How much water should I drink per day?", True,
     ["I'm pregnant", "I have heart failure", "I exercise two hours a day",
      "I live in a hot climate"]),
    ("Should I get a flu shot this year?", True,
     ["I'm allergic to eggs", "I'm pregnant", "I'm over 65",
      "I already had the flu this season"]),
    ("Can I deduct my home office on my taxes?", True,
     ["I'm a W-2 employee", "I'm self-employed", "I only use the room part of the time",
      "I rent my apartment"]),
    ("What's the best way to heat my house?", True,
     ["I live in Minnesota", "electricity is cheap where I live",
      "the house has no ductwork", "I'm on a tight budget"]),
    ("How do I deploy my web app?", True,
     ["the server has no internet access", "I'm limited to the AWS free tier",
      "I need zero downtime", "the app is a static site"]),
    ("How long does it take to drive from Boston to New York?", True,
     ["I leave during Friday rush hour", "there's a snowstorm", "I stop for lunch",
      "I leave at 3 a.m."]),
    ("Can my landlord enter my apartment?", True,
     ["I wasn't given any notice", "there's a burst pipe", "I'm not home",
      "I've withheld rent"]),
    ("Do I need a visa to visit Japan?", True,
     ["I'm a US citizen", "I'm staying longer than 90 days", "I'm going there to work",
      "I hold an Indian passport"]),
    ("How should I treat a sprained ankle?", True,
     ["I can't put any weight on it", "it happened three weeks ago",
      "I have a soccer match tomorrow", "the swelling is severe"]),
    ("How much house can I afford?", True,
     ["I earn $80,000 a year", "I have $40,000 in student loans",
      "I'm buying with a partner", "my credit score is 650"]),
    ("I finally have some savings set aside. Should I pay off my student loans first or start investing?", True,
     ["my loans charge 7% interest", "my loans charge 2% interest",
      "my employer matches 401(k) contributions", "I'm pursuing Public Service Loan Forgiveness"]),
    ("What would happen to the seasons?", False,
     ["Earth's axis had no tilt", "Earth's axis were tilted 90 degrees",
      "Earth's orbit were perfectly circular"]),
    ("What would happen to the tides?", False,
     ["the Moon disappeared", "the Moon were twice as far away", "Earth had two moons"]),
    ("Who would have won World War II?", False,
     ["the US had stayed neutral", "Germany had not invaded the Soviet Union",
      "Japan had not attacked Pearl Harbor"]),
]
ATTACH = [
    lambda q, c: "If %s, %s" % (c, decap(q)),
    lambda q, c: "%s if %s?" % (strip_q(q), c),
    lambda q, c: "Assuming %s, %s" % (c, decap(q)),
    lambda q, c: "Suppose %s. %s" % (c, q),
    lambda q, c: "%s, given that %s?" % (strip_q(q), c),
    lambda q, c: "Given that %s, %s" % (c, decap(q)),
    lambda q, c: "%s For context, %s." % (q, c),
    lambda q, c: "%s Keep in mind that %s." % (q, c),
    lambda q, c: "In my case %s. %s" % (c, q),
]
HYPO_ATTACH = [0, 1, 2, 3]

# ---------------------------------------------------------------------------
# format
# ---------------------------------------------------------------------------
FORMATS = [
    (" in French", "lang-fr"), (" in Spanish", "lang-es"), (" in German", "lang-de"),
    (" in Italian", "lang-it"), (" in Portuguese", "lang-pt"), (" in Japanese", "lang-ja"),
    (" in one sentence", "short"), (" in under 30 words", "short"), (" as a tweet", "short"),
    (" in three paragraphs", "long"), (" in about 500 words", "long"),
    (" as a haiku", "poem"), (" as a rhyming poem", "poem"),
    (" as a JSON object", "json"), (" in YAML", "yaml"), (" as a Markdown table", "table"),
    (" as CSV", "csv"),
    (" as a bulleted list", "list"), (" as a numbered list", "list"),
]
STRUCTURED = {"json", "yaml", "table", "csv"}
BASE_OK = {"short", "poem", "json", "yaml", "table", "csv"}  # + every lang-*
NO_PAIR = {frozenset(["poem", "short"])}

FMT_CARRIERS = [
    # (with-format template, base template, slot, listy)
    ("Explain {x}{F}.", "Explain {x}.", TOPICS, False),
    ("Can you explain {x}{F}?", "Can you explain {x}?", TOPICS, False),
    ("Summarize {x}{F}.", "Summarize {x}.", TOPICS, False),
    ("Give me an overview of {x}{F}.", "Give me an overview of {x}.", TOPICS, False),
    ("Tell me about {x}{F}.", "Tell me about {x}.", TOPICS, False),
    ("Describe how to {x}{F}.", "Describe how to {x}.", TASKS, False),
    ("Tell me how to {x}{F}.", "Tell me how to {x}.", TASKS, False),
    ("What are the benefits of {x}? Answer{F}.", "What are the benefits of {x}?",
     BENEFIT_TOPICS, True),
    ("List the main causes of {x}{F}.", "List the main causes of {x}.", CAUSE_TOPICS, True),
    ("Compare {x[0]} and {x[1]}{F}.", "Compare {x[0]} and {x[1]}.", COMPARE_PAIRS, True),
    ("Give me the key facts about {x}{F}.", "Give me the key facts about {x}.", TOPICS, True),
    ("{FC}, explain {x}.", "Explain {x}.", TOPICS, False),
    ("{FC}, tell me how to {x}.", "Tell me how to {x}.", TASKS, False),
    ("Respond{F}: what causes {x}?", "What causes {x}?", CAUSE_TOPICS, False),
    ("Break down {x} for me{F}.", "Break down {x} for me.", TOPICS, False),
    ("I'd like you to explain {x}{F}.", "I'd like you to explain {x}.", TOPICS, False),
    ("What's the difference between {x[0]} and {x[1]}? Reply{F}.",
     "What's the difference between {x[0]} and {x[1]}?", COMPARE_PAIRS, True),
    ("Walk me through how to {x}{F}.", "Walk me through how to {x}.", TASKS, False),
    ("Who invented {x}? Please answer{F}.", "Who invented {x}?", INVENTIONS, False),
    ("My grandmother keeps asking me about this and I want to explain it clearly when I visit her this weekend, so please explain {x}{F}.",
     "My grandmother keeps asking me about this and I want to explain it clearly when I visit her this weekend, so please explain {x}.",
     TOPICS, False),
    ("Write a product description for {x}{F}.", "Write a product description for {x}.",
     ["a stainless steel water bottle", "noise-cancelling headphones",
      "a cast-iron skillet", "a standing desk", "a smart thermostat"], False),
]

# ---------------------------------------------------------------------------
# multi-turn material
# ---------------------------------------------------------------------------
PRON = {
    "it": {"p": "it", "pp": "its", "o": "it"},
    "she": {"p": "she", "pp": "her", "o": "her"},
    "he": {"p": "he", "pp": "his", "o": "him"},
}

CTX_TYPES = {
    "landmark": {
        "ents": [
            ("the Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris and one of the most recognizable structures in the world."),
            ("the Statue of Liberty", "The Statue of Liberty is a colossal copper statue on Liberty Island in New York Harbor, given to the United States by the people of France."),
            ("the Burj Khalifa", "The Burj Khalifa is a skyscraper in Dubai, United Arab Emirates, and currently the tallest building in the world."),
            ("the Golden Gate Bridge", "The Golden Gate Bridge is a suspension bridge spanning the strait that connects San Francisco Bay to the Pacific Ocean."),
            ("the Leaning Tower of Pisa", "The Leaning Tower of Pisa is the freestanding bell tower of Pisa Cathedral in Italy, famous for its unintended tilt."),
            ("the CN Tower", "The CN Tower is a concrete communications and observation tower in downtown Toronto."),
            ("the Space Needle", "The Space Needle is an observation tower in Seattle that opened for the 1962 World's Fair."),
            ("the Sydney Opera House", "The Sydney Opera House is a multi-venue performing arts centre on Sydney Harbour, known for its sail-like shells."),
            ("the Empire State Building", "The Empire State Building is an Art Deco skyscraper in Midtown Manhattan, New York City."),
            ("the Taj Mahal", "The Taj Mahal is an ivory-white marble mausoleum in Agra, India, commissioned by the Mughal emperor Shah Jahan."),
        ],
        "pron": lambda e: "it",
        "groups": [
            ["How tall is it?", "What is its height?", "How high is it?"],
            ["When was it built?", "When was it constructed?", "When did they build it?"],
            ["Who designed it?", "Who was its designer?", "Who came up with its design?"],
            ["How many people visit it each year?", "How many visitors does it get annually?",
             "What's its yearly number of visitors?"],
        ],
    },
    "person": {
        "ents": [
            ("Marie Curie", "Marie Curie was a Polish-born physicist and chemist who conducted pioneering research on radioactivity.", "she"),
            ("Ada Lovelace", "Ada Lovelace was an English mathematician who wrote about Charles Babbage's proposed Analytical Engine.", "she"),
            ("Frida Kahlo", "Frida Kahlo was a Mexican painter known for her many self-portraits and vivid use of color.", "she"),
            ("Florence Nightingale", "Florence Nightingale was an English social reformer and statistician who shaped modern nursing.", "she"),
            ("Jane Austen", "Jane Austen was an English novelist whose books include Pride and Prejudice and Emma.", "she"),
            ("Cleopatra", "Cleopatra VII was the last active ruler of the Ptolemaic Kingdom of Egypt.", "she"),
            ("Albert Einstein", "Albert Einstein was a German-born theoretical physicist whose work transformed modern physics.", "he"),
            ("Nikola Tesla", "Nikola Tesla was a Serbian-American inventor and electrical engineer.", "he"),
            ("Charles Darwin", "Charles Darwin was an English naturalist, geologist and biologist.", "he"),
            ("Wolfgang Amadeus Mozart", "Wolfgang Amadeus Mozart was a prolific and influential composer of the Classical period.", "he"),
            ("Abraham Lincoln", "Abraham Lincoln was the 16th president of the United States.", "he"),
            ("Isaac Newton", "Isaac Newton was an English mathematician, physicist and astronomer.", "he"),
        ],
        "groups": [
            ["When was {p} born?", "What's {pp} date of birth?", "On what date was {p} born?"],
            ["What is {p} best known for?", "What is {p} most famous for?",
             "What's {p} chiefly remembered for?"],
            ["How did {p} die?", "What was the cause of {pp} death?", "What caused {pp} death?"],
            ["Where was {p} born?", "What was {pp} birthplace?", "In which place was {p} born?"],
            ["Did {p} have any children?", "Did {p} have kids?"],
        ],
        "changed_ok": [0, 1, 2, 3],
    },
    "language": {
        "ents": [
            ("Python", "Python is a high-level, general-purpose programming language that emphasizes code readability."),
            ("Rust", "Rust is a systems programming language focused on memory safety and performance."),
            ("Go", "Go is a statically typed programming language known for its simplicity and built-in concurrency."),
            ("Haskell", "Haskell is a purely functional programming language with lazy evaluation and a strong static type system."),
            ("Kotlin", "Kotlin is a statically typed language that runs on the JVM and interoperates with Java."),
            ("Ruby", "Ruby is a dynamic, object-oriented scripting language known for its expressive syntax."),
            ("Julia", "Julia is a high-level language aimed at high-performance numerical and scientific computing."),
            ("Elixir", "Elixir is a functional language that runs on the Erlang virtual machine."),
            ("Lua", "Lua is a lightweight, embeddable scripting language."),
            ("Swift", "Swift is a general-purpose compiled language with a focus on safety and speed."),
        ],
        "groups": [
            ["Who created it?", "Who invented it?", "Who is its creator?", "Who made it?"],
            ["What is it mainly used for?", "What is it primarily used for?",
             "What do people mostly use it for?"],
            ["Is it hard to learn?", "Is it difficult to learn?", "Is it tough to pick up?"],
            ["Is it compiled or interpreted?", "Is it a compiled language or an interpreted one?",
             "Does it get compiled or interpreted?"],
            ["How do I install it on Ubuntu?", "How can I install it on Ubuntu?",
             "What's the way to install it on Ubuntu?"],
        ],
        "changed_ok": [0, 1, 4],
    },
    "dish": {
        "ents": [
            ("paella", "Paella is a rice dish cooked in a wide, shallow pan, often flavored with saffron."),
            ("ramen", "Ramen is a noodle soup made with wheat noodles served in a savory broth."),
            ("risotto", "Risotto is a creamy rice dish cooked slowly by adding broth a little at a time."),
            ("moussaka", "Moussaka is a layered baked dish made with eggplant or potato and a spiced meat sauce."),
            ("pad thai", "Pad thai is a stir-fried rice noodle dish with a sweet, sour and savory sauce."),
            ("goulash", "Goulash is a hearty stew of meat and vegetables seasoned with paprika."),
            ("shakshuka", "Shakshuka is a dish of eggs poached in a spiced tomato and pepper sauce."),
            ("biryani", "Biryani is a layered, spiced rice dish usually made with meat or vegetables."),
            ("ratatouille", "Ratatouille is a stewed vegetable dish of eggplant, zucchini, peppers and tomatoes."),
            ("pho", "Pho is a noodle soup with rice noodles, herbs and a fragrant broth."),
        ],
        "groups": [
            ["What ingredients do I need for it?", "What ingredients does it require?",
             "What goes into it?"],
            ["Where does it come from?", "Where does it originate?", "What's its country of origin?"],
            ["How long does it take to make?", "How much time does it take to prepare?",
             "How long will it take me to make it?"],
            ["Can I freeze it?", "Is it okay to freeze it?", "Can it be frozen?"],
            ["What wine goes well with it?", "Which wine pairs well with it?",
             "What wine should I serve with it?"],
        ],
        "changed_ok": [0, 1, 4],
    },
    "city": {
        "ents": [
            ("Lisbon", "Lisbon is the hilly, coastal capital of Portugal."),
            ("Kyoto", "Kyoto is a city in Japan that served as the imperial capital for over a thousand years."),
            ("Reykjavik", "Reykjavik is the capital and largest city of Iceland."),
            ("Buenos Aires", "Buenos Aires is the capital of Argentina, on the western shore of the Rio de la Plata."),
            ("Cape Town", "Cape Town is a port city on South Africa's southwest coast, beneath Table Mountain."),
            ("Vancouver", "Vancouver is a coastal seaport city in British Columbia, Canada."),
            ("Prague", "Prague is the capital of the Czech Republic, crossed by the Vltava River."),
            ("Marrakech", "Marrakech is a city in western Morocco known for its medina and souks."),
            ("Singapore", "Singapore is a city-state in Southeast Asia at the southern tip of the Malay Peninsula."),
            ("Edinburgh", "Edinburgh is the capital of Scotland, known for its castle and old town."),
        ],
        "groups": [
            ["What's its population?", "How many people live there?",
             "How many inhabitants does it have?"],
            ["What's the best time of year to visit?", "When is the ideal time of year to go there?",
             "What time of year is best for a visit?"],
            ["What currency do they use there?", "What's the local currency?",
             "Which currency is used there?"],
            ["What language do people speak there?", "What's the main language spoken there?",
             "Which language do the locals speak?"],
            ["What are the must-see sights?", "Which sights shouldn't I miss there?",
             "What attractions are must-sees there?"],
        ],
        "changed_ok": [0, 2, 4],
    },
    "condition": {
        "ents": [
            ("shingles", "Shingles is a viral infection that causes a painful rash, caused by reactivation of the chickenpox virus."),
            ("gout", "Gout is a form of inflammatory arthritis linked to high levels of uric acid."),
            ("strep throat", "Strep throat is a bacterial infection of the throat and tonsils."),
            ("Lyme disease", "Lyme disease is an illness caused by Borrelia bacteria, usually spread by tick bites."),
            ("asthma", "Asthma is a chronic condition in which the airways become inflamed and narrow."),
            ("psoriasis", "Psoriasis is a chronic skin condition that causes scaly, itchy patches."),
            ("anemia", "Anemia is a condition in which the blood lacks enough healthy red blood cells."),
            ("sciatica", "Sciatica is pain that radiates along the path of the sciatic nerve."),
            ("celiac disease", "Celiac disease is an immune reaction to eating gluten."),
            ("tinnitus", "Tinnitus is the perception of ringing or other noises in the ears."),
        ],
        "groups": [
            ["What are the symptoms?", "What symptoms does it cause?", "What are its symptoms?"],
            ["How is it treated?", "What's the treatment for it?", "How do doctors treat it?"],
            ["Is it contagious?", "Can it spread from person to person?", "Is it catching?"],
            ["Is it hereditary?", "Can it be inherited?", "Is it passed down genetically?"],
            ["Can it be prevented?", "Is it preventable?", "Is there a way to prevent it?"],
        ],
        "changed_ok": [0, 1],
    },
}

OPENERS = [
    "Tell me about {n}.", "What do you know about {n}?", "I'm reading about {n} for a class.",
    "Give me a quick overview of {n}.", "I've been curious about {n} lately.",
    "Can you give me some background on {n}?", "My friend mentioned {n} today.",
    "I'm writing a short report on {n}.", "Can you introduce me to {n}?",
    "I keep hearing about {n}.", "What can you tell me about {n}?",
]
OFFERS = ["", "Want to know more about any part of it?", "Happy to go into more detail.",
          "Let me know if you'd like specifics.",
          "Is there anything in particular you'd like to know?",
          "I can go deeper on any of this."]
GREETINGS = [("Hi! I have a few questions for you.", "Sure, go ahead."),
             ("Hey, can you help me with something?", "Of course. What do you need?"),
             ("Hello!", "Hello! How can I help you today?")]

ACKS = ["Got it.", "Thanks for the context.", "Okay, noted.",
        "Understood. What would you like to know?", "Sure, happy to help with that.",
        "Okay! What's your question?"]

SETUPS = [
    {"q": ["How do I take a screenshot?", "What's the way to take a screenshot?",
           "How can I capture a screenshot?"],
     "s": ["I'm on a Mac running macOS Sonoma.", "I use a Windows 11 laptop.",
           "I have an iPhone 15.", "I'm using a Samsung Galaxy S23.",
           "I'm on Ubuntu with the GNOME desktop.", "I have a Chromebook."]},
    {"q": ["What should I eat for breakfast?", "What's a good breakfast for me?",
           "Any breakfast ideas for me?"],
     "s": ["I'm vegan.", "I have type 2 diabetes.", "I'm training for a marathon.",
           "I have celiac disease.", "I'm allergic to eggs and dairy.",
           "I'm trying to lose weight."]},
    {"q": ["How do I install a package?", "How can I install a package?",
           "What's the way to install a package?"],
     "s": ["I'm working in Python.", "I'm using Node.js.", "I'm writing Rust.",
           "I'm on Debian Linux.", "I'm using R.", "I'm on macOS with Homebrew installed."]},
    {"q": ["How long should I cook it?", "How long does it need to cook?",
           "What's the cooking time for it?", "How long do I cook it for?"],
     "s": ["I'm roasting a whole chicken at 425°F.", "I'm grilling salmon fillets.",
           "I'm boiling dried spaghetti.", "I'm baking a loaf of sourdough at 450°F.",
           "I'm pan-searing a one-inch ribeye."]},
    {"q": ["What's the weather usually like there in July?",
           "What kind of weather can I expect there in July?",
           "How's the weather there in July, typically?"],
     "s": ["I'm planning a trip to Iceland.", "I'm planning a trip to Dubai.",
           "I'm planning a trip to Buenos Aires.", "I'm planning a trip to Mumbai.",
           "I'm planning a trip to Singapore."]},
    {"q": ["Which one should I choose?", "Which should I go with?", "Which option should I pick?"],
     "s": ["I'm deciding between a Roth IRA and a traditional IRA.",
           "I'm deciding between a 15-year and a 30-year mortgage.",
           "I'm deciding between PostgreSQL and MongoDB for my project.",
           "I'm deciding between a gas and an induction cooktop.",
           "I'm deciding between learning Spanish and learning Mandarin."]},
    {"q": ["How do I fix it?", "How can I fix this?", "What should I do to fix it?"],
     "s": ["My kitchen faucet keeps dripping.", "My toilet keeps running after I flush.",
           "My laptop won't turn on.",
           "I get a 'permission denied' error when I run my shell script.",
           "My car battery keeps dying overnight.",
           "There's a fist-sized hole in my drywall."]},
    {"q": ["Is it safe to drink alcohol while taking it?",
           "Can I drink alcohol while I'm on it?",
           "Is it OK to have a drink while taking it?"],
     "s": ["My doctor prescribed metronidazole.", "I'm taking ibuprofen for a sprained ankle.",
           "I was just put on sertraline.", "I'm taking acetaminophen for a fever.",
           "I'm on a course of amoxicillin."]},
    {"q": ["How do I reverse it?", "What's the way to reverse it?", "How can I reverse it?"],
     "s": ["I have a string in Python.", "I have a singly linked list in C.",
           "I have an array in JavaScript.", "I have a vector in C++.",
           "I have a list in Haskell."]},
    {"q": ["What's the capital?", "What is its capital city?", "Which city is the capital?"],
     "s": ["I'm learning about Kenya.", "I'm learning about Peru.",
           "I'm learning about Vietnam.", "I'm learning about Canada.",
           "I'm learning about Morocco.", "I'm learning about Australia."]},
    {"q": ["What documents do I need?", "Which documents will I need?",
           "What paperwork do I need?"],
     "s": ["I'm a US citizen flying to Japan for a one-week vacation.",
           "I'm a UK citizen moving to Canada for work.",
           "I'm selling my car privately in California.",
           "I'm applying for a mortgage as a self-employed person.",
           "I'm registering my newborn's birth in New York."]},
    {"q": ["How much should I tip?", "What's a normal tip?", "How much is customary to tip?"],
     "s": ["I'm eating at a sit-down restaurant in New York.", "I'm taking a taxi in Tokyo.",
           "I'm at a restaurant in Paris.", "I'm at a pub in Dublin.",
           "I'm getting food delivered in Toronto."]},
]

NOTES = [
    ("Write a one-sentence thank-you note to my teacher.",
     "Thank you so much for your patience and encouragement this year; you made learning a joy."),
    ("Write a one-sentence thank-you note to my landlord.",
     "Thank you for fixing the heating so quickly; I really appreciate your prompt help."),
    ("Write a one-sentence thank-you note to my coach.",
     "Thanks for pushing me at every practice and believing in me all season."),
    ("Write a one-sentence thank-you note to my neighbor.",
     "Thank you for watering my plants while I was away; it meant a lot to me."),
    ("Write a one-sentence thank-you note to my nurse.",
     "Thank you for your kindness and care during my hospital stay."),
    ("Write a one-sentence apology to my coworker for missing our meeting.",
     "I'm sorry I missed our meeting this morning; I'd love to reschedule at a time that works for you."),
]
NOTE_FOLLOW = [
    ["Translate that into Spanish.", "Can you translate that into Spanish?",
     "Put that into Spanish, please."],
    ["Make it more formal.", "Can you make it more formal?", "Rewrite it in a more formal tone."],
    ["Translate it into German.", "Could you translate it into German?",
     "Give me that in German."],
]
CODES = [
    ("Write a Python function that checks whether a string is a palindrome.",
     "```python\ndef is_palindrome(s):\n    cleaned = ''.join(c.lower() for c in s if c.isalnum())\n    return cleaned == cleaned[::-1]\n```"),
    ("Write a Python function that computes the factorial of n.",
     "```python\ndef factorial(n):\n    result = 1\n    for i in range(2, n + 1):\n        result *= i\n    return result\n```"),
    ("Write a Python function that converts Celsius to Fahrenheit.",
     "```python\ndef celsius_to_fahrenheit(c):\n    return c * 9 / 5 + 32\n```"),
    ("Write a Python function that counts the vowels in a string.",
     "```python\ndef count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n```"),
    ("Write a Python function that flattens a list of lists.",
     "```python\ndef flatten(lists):\n    return [item for sub in lists for item in sub]\n```"),
]
CODE_FOLLOW = [
    ["Add type hints to it.", "Can you add type hints to it?",
     "Please add type annotations to that function."],
    ["Write unit tests for it.", "Can you write unit tests for it?",
     "Give me some unit tests for that function."],
    ["Add a docstring.", "Can you add a docstring to it?", "Please give that function a docstring."],
]

# ---------------------------------------------------------------------------
# typo machinery
# ---------------------------------------------------------------------------
PROTECT = {"not", "no", "never", "all", "some", "any", "most", "before", "after",
           "without", "more", "less", "than", "from", "into", "with", "and", "or", "if",
           "every", "always", "sometimes", "ever", "don't", "doesn't", "can't", "won't"}
APOS = {"what's": "whats", "What's": "Whats", "I'm": "Im", "I'd": "Id", "it's": "its",
        "I've": "Ive", "that's": "thats", "there's": "theres", "Who's": "Whos",
        "who's": "whos", "you're": "youre", "isn't": "isnt"}
EXTRA_WORDS = set("""
a about above after again against am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from
further had has have having he her here hers him his how i if in into is it its itself
just me more most my no nor not now of off on once only or other our out over own same
she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why
will with would you your bread bred bead read reed diary dairy form from fro thee there
three then than plant planet plan clam calm angel angle trial trail quiet quite quit
united untied causal casual marital martial sacred scared tried tired dessert desert
later latter lose loose chose chosen board broad bare bear beard fried fired filed field
cloth clothe breath breathe adapt adopt affect effect accept except advice advise
loan lone lean line lien lion loin sing sign sting string strip stripe trip tripe
rise ruse rinse rein rain ran run ruin main man mane mean moan mania media
meat mate meta team tame teem stem step steep sleep slep spot stop post pots tops opts
bothers bother brother brothers bowl bone cots tow tons tone wit wait waist west best bets
sing sign singe hose house horse coarse course curse cure sure surf suit suite site sit
pint pit pin tin tint tine tile till tall tail fail fall fill file fine fire fore four
""".split())


def collect_vocab():
    vocab = set(EXTRA_WORDS)

    def walk(o):
        if isinstance(o, str):
            for w in re.findall(r"[A-Za-z]+", o):
                vocab.add(w.lower())
        elif isinstance(o, dict):
            for k, v in o.items():
                walk(k)
                walk(v)
        elif isinstance(o, (list, tuple, set)):
            for v in o:
                walk(v)
    for name, val in list(globals().items()):
        if name.isupper():
            walk(val)
    return vocab


VOCAB = None


def _letter_op(word, op, rng):
    n = len(word)
    if op == "transpose":
        if n < 5:
            return None
        i = rng.randint(1, n - 2)
        if word[i] == word[i + 1]:
            return None
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if op == "drop":
        if n < 5:
            return None
        i = rng.randint(1, n - 2)
        return word[:i] + word[i + 1:]
    if op == "double":
        if n < 4:
            return None
        i = rng.randint(1, n - 2)
        return word[:i + 1] + word[i] + word[i + 1:]
    return None


def make_typos(s, rng):
    """Apply 1-3 realistic typos; return None if nothing could be applied."""
    global VOCAB
    if VOCAB is None:
        VOCAB = collect_vocab()
    toks = s.split(" ")
    n_ops = rng.choice([1, 1, 2, 2, 2, 3])
    used = set()
    done = 0
    case_done = punct_done = False
    for _ in range(12):
        if done >= n_ops:
            break
        op = rng.choice(["transpose", "transpose", "drop", "drop", "double",
                         "case", "punct", "apos", "merge"])
        if op in ("transpose", "drop", "double"):
            cands = []
            for i, t in enumerate(toks):
                m = re.match(r"^([A-Za-z]+)([?.!,:]*)$", t)
                if not m or i in used:
                    continue
                core = m.group(1)
                if core.lower() in PROTECT or len(core) < 4:
                    continue
                cands.append((i, core, m.group(2)))
            if not cands:
                continue
            i, core, tail = rng.choice(cands)
            new = _letter_op(core, op, rng)
            if not new or new == core or new.lower() in VOCAB:
                continue
            toks[i] = new + tail
            used.add(i)
            done += 1
        elif op == "case" and not case_done:
            mode = rng.choice(["lower_all", "lower_first", "shift"])
            if mode == "lower_all":
                new = [t.lower() if not t.isupper() or len(t) > 1 else t for t in toks]
                new = [t if t != "i" else "i" for t in new]
                if new == toks:
                    continue
                toks = new
            elif mode == "lower_first":
                if not toks[0][:1].isupper() or toks[0] in KEEP_CASE or 0 in used:
                    continue
                toks[0] = toks[0][0].lower() + toks[0][1:]
            else:
                t = toks[0]
                if len(t) < 3 or not t[:2].isalpha() or not t[0].isupper() or 0 in used:
                    continue
                toks[0] = t[:2].upper() + t[2:]
            used.add(0)
            case_done = True
            done += 1
        elif op == "punct" and not punct_done:
            if toks[-1][-1:] in "?.":
                toks[-1] = toks[-1][:-1]
                punct_done = True
                done += 1
        elif op == "apos":
            cands = [i for i, t in enumerate(toks) if t.rstrip("?.,") in APOS and i not in used]
            if not cands:
                continue
            i = rng.choice(cands)
            core = toks[i].rstrip("?.,")
            toks[i] = APOS[core] + toks[i][len(core):]
            used.add(i)
            done += 1
        elif op == "merge":
            cands = [i for i in range(len(toks) - 1)
                     if toks[i].isalpha() and toks[i + 1].isalpha()
                     and i not in used and i + 1 not in used
                     and toks[i].lower() not in PROTECT and toks[i + 1].lower() not in PROTECT
                     and len(toks[i]) <= 4 and len(toks[i + 1]) <= 5]
            if not cands:
                continue
            i = rng.choice(cands)
            toks[i:i + 2] = [toks[i] + toks[i + 1]]
            used = {j if j < i else j - 1 for j in used if j != i + 1}
            used.add(i)
            done += 1
    out = " ".join(toks)
    if done == 0 or out == s:
        return None
    return out


# ---------------------------------------------------------------------------
# builder
# ---------------------------------------------------------------------------
GLOBAL_SEEN = set()


class Kind:
    def __init__(self, name, hit):
        self.name = name
        self.hit = hit
        self.items = []
        self.frames = set()
        self.orient = random.Random("%d-orient-%s" % (SEED, name))

    def add(self, a, b, frame, ca=None, cb=None):
        fixed = isinstance(frame, tuple) and frame[-1] == "FIXED"
        a, b = norm(a), norm(b)
        if not a or not b:
            return False
        if a == b and ca == cb:
            return False
        key = frozenset([(a, json.dumps(ca)), (b, json.dumps(cb))])
        if key in GLOBAL_SEEN:
            return False
        GLOBAL_SEEN.add(key)
        if self.orient.random() < 0.5 and not fixed:
            a, b, ca, cb = b, a, cb, ca
        rec = {"kind": self.name, "a": a, "b": b, "hit": self.hit}
        if ca is not None or cb is not None:
            rec["context_a"] = ca
            rec["context_b"] = cb
        self.items.append(rec)
        self.frames.add(frame)
        return True


def run_kind(name, hit, gen, target=TARGET, max_tries=60000):
    k = Kind(name, hit)
    rng = random.Random("%d-%s" % (SEED, name))
    tries = 0
    while len(k.items) < target and tries < max_tries:
        tries += 1
        res = gen(rng)
        if res is None:
            continue
        k.add(*res)
    return k


def pick(rng, spec):
    return {key: rng.choice(vals) for key, vals in spec.items()}


def render(t, d):
    if callable(t):
        return cap(norm(t(d)))
    return fmt(t, d)


# ---------------------------------------------------------------------------
# generators (one per kind); each returns (a, b, frame_id[, ctx_a, ctx_b])
# ---------------------------------------------------------------------------
def gen_paraphrase(rng):
    cname = rng.choice(sorted(PARA))
    c = PARA[cname]
    x = rng.choice(c["slots"])
    fa, fb = rng.sample(c["forms"], 2)
    return fmt(fa, {"x": x}), fmt(fb, {"x": x}), ("para", cname, fa, fb)


def _filler(rng, q):
    mode = rng.choice(["pre", "pre", "suf", "both", "both", "inline", "inline_suf"])
    out = q
    if mode in ("pre", "both"):
        out = rng.choice(PREFIX_SENT) + " " + out
    if mode in ("inline", "inline_suf"):
        out = rng.choice(PREFIX_INLINE) + " " + decap(out)
    if mode in ("suf", "both", "inline_suf"):
        out = out + " " + rng.choice(SUFFIXES)
    return out, mode


def gen_verbosity(rng):
    cname = rng.choice(sorted(PARA))
    c = PARA[cname]
    x = rng.choice(c["slots"])
    d = {"x": x}
    short_kind = rng.choice(["terse", "plain"])
    short_t = rng.choice(c["terse"] if short_kind == "terse" else c["forms"])
    short = fmt(short_t, d)
    long_kind = rng.choice(["wordy", "filler"])
    if long_kind == "wordy":
        lt = rng.choice(c["wordy"])
        long_ = fmt(lt, d)
        fid = ("verb", cname, short_t, lt)
    else:
        base_t = rng.choice(c["forms"]) if rng.random() < 0.5 else short_t
        if base_t in c["terse"]:
            base_t = rng.choice(c["forms"])
        long_, mode = _filler(rng, fmt(base_t, d))
        fid = ("verb", cname, short_t, base_t, mode)
    if len(long_.split()) <= len(short.split()):
        return None
    return short, long_, fid


def gen_reorder(rng):
    variants, spec = rng.choice(REORDER)
    d = pick(rng, spec)
    va, vb = rng.sample(variants, 2)
    a, b = render(va, d), render(vb, d)
    if words(a) != words(b):
        raise AssertionError("reorder word mismatch: %r / %r" % (a, b))
    return a, b, ("reorder", str(va), str(vb))


def gen_synonym(rng):
    t, pairs, slots = rng.choice(SYNONYM)
    s1, s2 = rng.choice(pairs)
    x = rng.choice(slots)
    a = fmt(t, {"S": s1, "x": x})
    b = fmt(t, {"S": s2, "x": x})
    return a, b, ("syn", t, s1, s2)


def _typo_source(rng):
    r = rng.random()
    if r < 0.55:
        cname = rng.choice(sorted(PARA))
        c = PARA[cname]
        f = rng.choice(c["forms"])
        return fmt(f, {"x": rng.choice(c["slots"])}), ("para", cname, f)
    if r < 0.75:
        t, pairs, slots = rng.choice(SYNONYM)
        return fmt(t, {"S": rng.choice(pairs)[0], "x": rng.choice(slots)}), ("syn", t)
    if r < 0.9:
        variants, spec = rng.choice(REORDER)
        v = rng.choice(variants)
        return render(v, pick(rng, spec)), ("reorder", str(v))
    t, spec = rng.choice(ENTITY)
    return fmt(t, pick(rng, spec)), ("entity", t)


def gen_typo(rng):
    base, src = _typo_source(rng)
    t = make_typos(base, rng)
    if t is None:
        return None
    return base, t, ("typo",) + src


def gen_role_swap(rng):
    if rng.random() < 0.22:
        ta, tb, spec = rng.choice(ROLE_CUSTOM)
        d = pick(rng, spec)
        return fmt(ta, d), fmt(tb, d), ("role", ta)
    t, pairs = rng.choice(ROLE)
    p = rng.choice(pairs)
    e = p[2] if len(p) > 2 else ""
    a = fmt(t, {"A": p[0], "B": p[1], "E": e})
    b = fmt(t, {"A": p[1], "B": p[0], "E": e})
    if words(a) != words(b):
        raise AssertionError("role word mismatch: %r / %r" % (a, b))
    return a, b, ("role", t)


def gen_scope(rng):
    if rng.random() < 0.25:
        ta, tb, slots = rng.choice(SCOPE_CUSTOM)
        x = rng.choice(slots)
        # the narrower request is always the cached one: serving a full list
        # for "name one"/"some" would be over-answering, but serving "one"
        # for "all" is clearly wrong; keeping the narrow side as `a` makes
        # the label unambiguous.
        fixed = "side effect" not in ta
        fid = ("scope", ta, "FIXED") if fixed else ("scope", ta)
        return fmt(ta, {"x": x}), fmt(tb, {"x": x}), fid
    t, qpairs, slots = rng.choice(SCOPE)
    q1, q2 = rng.choice(qpairs)
    x = rng.choice(slots)
    fid = ("scope", t, "FIXED") if (q1, q2) == ("some", "all the") else ("scope", t)
    return fmt(t, {"Q": q1, "x": x}), fmt(t, {"Q": q2, "x": x}), fid


def gen_negation(rng):
    ta, tb, spec = rng.choice(NEGATION)
    d = pick(rng, spec)
    if "{x[0]}" in tb and "I have a {x[0]}" in tb:
        art = "an" if d["x"][0][0] in "aeiou" else "a"
        tb = tb.replace("I have a ", "I have %s " % art)
    return fmt(ta, d), fmt(tb, d), ("neg", ta)


def gen_negation_nocue(rng):
    ta, tb, spec = rng.choice(NOCUE)
    if spec is None:
        pos, inf = rng.choice(NOCUE_TENANT)
        return ("My tenant keeps %s. What can I do?" % pos,
                "My tenant keeps refusing to %s. What can I do?" % inf, ("nocue", ta))
    d = pick(rng, spec)
    return fmt(ta, d), fmt(tb, d), ("nocue", ta)


def gen_number(rng):
    t, spec, keys = rng.choice(NUMBER)
    da, db = {}, {}
    contrast = [k for k, v in spec.items() if isinstance(v, tuple)]
    for k, v in spec.items():
        if isinstance(v, tuple):
            da[k] = rng.choice(v[0])
            db[k] = rng.choice(v[1])
        else:
            da[k] = db[k] = rng.choice(v)
    if not contrast:
        k = rng.choice(keys)
        alts = [v for v in spec[k] if v != da[k]]
        db[k] = rng.choice(alts)
    return fmt(t, da), fmt(t, db), ("num", t)


def gen_entity(rng):
    t, spec = rng.choice(ENTITY)
    if any(isinstance(v, tuple) for v in spec.values()):
        # contrast lists: one entity from each side (e.g. toxic vs safe food)
        (k, (l1, l2)), = spec.items()
        return (fmt(t, {k: rng.choice(l1)}), fmt(t, {k: rng.choice(l2)}), ("entity", t))
    da = pick(rng, spec)
    db = dict(da)
    k = rng.choice(sorted(spec))
    db[k] = rng.choice([v for v in spec[k] if v != da[k]])
    if "{y}" in t and (da.get("x") == da.get("y") or db.get("x") == db.get("y")):
        return None
    return fmt(t, da), fmt(t, db), ("entity", t)


def gen_antonym(rng):
    t, pairs, spec = rng.choice(ANTONYM)
    s1, s2 = rng.choice(pairs)
    d = pick(rng, spec)
    da = dict(d, S=s1)
    db = dict(d, S=s2)
    return fmt(t, da), fmt(t, db), ("ant", t)


def gen_temporal(rng):
    if rng.random() < 0.25:
        ta, tb, spec = rng.choice(TEMPORAL_PAIRS)
        d = pick(rng, spec)
        return fmt(ta, d), fmt(tb, d), ("temp", ta)
    t, alts, spec = rng.choice(TEMPORAL)
    d = pick(rng, spec)
    t1, t2 = rng.sample(alts, 2)
    return fmt(t, dict(d, T=t1)), fmt(t, dict(d, T=t2)), ("temp", t)


def gen_conditional(rng):
    q, base_ok, conds = rng.choice(CONDITIONAL)
    idxs = list(range(len(ATTACH))) if base_ok else HYPO_ATTACH
    if base_ok and rng.random() < 0.5:
        ai = rng.choice(idxs)
        c = rng.choice(conds)
        return q, cap(ATTACH[ai](q, c)), ("cond", ai)
    c1, c2 = rng.sample(conds, 2)
    a1, a2 = rng.choice(idxs), rng.choice(idxs)
    return cap(ATTACH[a1](q, c1)), cap(ATTACH[a2](q, c2)), ("cond", a1, a2)


def _fmt_text(t, x, f):
    if f is None:
        return None
    phrase, _fam = f
    fc = phrase.strip()
    fc = fc[0].upper() + fc[1:]
    return fmt(t, {"x": x, "F": phrase, "FC": fc})


def gen_format(rng):
    ft, bt, slots, listy = rng.choice(FMT_CARRIERS)
    x = rng.choice(slots)
    allowed = [f for f in FORMATS if listy or f[1] not in STRUCTURED]
    if rng.random() < 0.4:
        cands = [f for f in allowed if f[1] in BASE_OK or f[1].startswith("lang-")]
        f = rng.choice(cands)
        return fmt(bt, {"x": x}), _fmt_text(ft, x, f), ("fmt", ft, "base")
    f1, f2 = rng.sample(allowed, 2)
    if f1[1] == f2[1] or frozenset([f1[1], f2[1]]) in NO_PAIR:
        return None
    if rng.random() < 0.3:
        # two different carriers of the same slot type, different formats
        others = [c for c in FMT_CARRIERS if c[2] is slots and c[3] == listy and c[0] != ft]
        if others:
            ft2 = rng.choice(others)[0]
            return _fmt_text(ft, x, f1), _fmt_text(ft2, x, f2), ("fmt", ft, ft2)
    return _fmt_text(ft, x, f1), _fmt_text(ft, x, f2), ("fmt", ft)


# --- multi-turn -------------------------------------------------------------
def _ent_ctx(rng, tname, ent, opener, offer, greet):
    name, blurb = ent[0], ent[1]
    msgs = []
    if greet is not None:
        g = GREETINGS[greet]
        msgs += [{"role": "user", "content": g[0]}, {"role": "assistant", "content": g[1]}]
    msgs.append({"role": "user", "content": cap(opener.format(n=name))})
    reply = blurb if not offer else blurb + " " + offer
    msgs.append({"role": "assistant", "content": reply})
    return msgs


def _pron(tname, ent):
    if tname == "person":
        return PRON[ent[2]]
    return PRON["it"]


def _ctx_shape(rng):
    opener = rng.choice(OPENERS)
    offer = rng.choice(OFFERS)
    greet = rng.randrange(len(GREETINGS)) if rng.random() < 0.25 else None
    return opener, offer, greet


def _setup_ctx(setup, ack, greet):
    msgs = []
    if greet is not None:
        g = GREETINGS[greet]
        msgs += [{"role": "user", "content": g[0]}, {"role": "assistant", "content": g[1]}]
    msgs += [{"role": "user", "content": setup}, {"role": "assistant", "content": ack}]
    return msgs


def _pair_ctx(u, a):
    return [{"role": "user", "content": u}, {"role": "assistant", "content": a}]


def gen_context_same(rng):
    r = rng.random()
    if r < 0.55:
        tname = rng.choice(sorted(CTX_TYPES))
        T = CTX_TYPES[tname]
        ent = rng.choice(T["ents"])
        g = rng.choice(T["groups"])
        f1, f2 = rng.sample(g, 2)
        pr = _pron(tname, ent)
        opener, offer, greet = _ctx_shape(rng)
        ctx = _ent_ctx(rng, tname, ent, opener, offer, greet)
        return (cap(f1.format(**pr)), cap(f2.format(**pr)), ("ctxs", tname, f1, f2),
                ctx, json.loads(json.dumps(ctx)))
    if r < 0.85:
        S = rng.choice(SETUPS)
        s = rng.choice(S["s"])
        f1, f2 = rng.sample(S["q"], 2)
        greet = rng.randrange(len(GREETINGS)) if rng.random() < 0.2 else None
        ctx = _setup_ctx(s, rng.choice(ACKS), greet)
        return f1, f2, ("ctxs", "setup", f1, f2), ctx, json.loads(json.dumps(ctx))
    if rng.random() < 0.5:
        u, a = rng.choice(NOTES)
        g = rng.choice(NOTE_FOLLOW)
    else:
        u, a = rng.choice(CODES)
        g = rng.choice(CODE_FOLLOW)
    f1, f2 = rng.sample(g, 2)
    ctx = _pair_ctx(u, a)
    return f1, f2, ("ctxs", "followup", f1, f2), ctx, json.loads(json.dumps(ctx))


def gen_context_changed(rng):
    r = rng.random()
    if r < 0.55:
        tname = rng.choice(sorted(CTX_TYPES))
        T = CTX_TYPES[tname]
        e1 = rng.choice(T["ents"])
        pr = _pron(tname, e1)
        same = [e for e in T["ents"] if e[0] != e1[0] and _pron(tname, e) == pr]
        e2 = rng.choice(same)
        ok = T.get("changed_ok", range(len(T["groups"])))
        f = rng.choice(T["groups"][rng.choice(list(ok))])
        opener, offer, greet = _ctx_shape(rng)
        c1 = _ent_ctx(rng, tname, e1, opener, offer, greet)
        if rng.random() < 0.3:
            opener, offer, greet = _ctx_shape(rng)
        c2 = _ent_ctx(rng, tname, e2, opener, offer, greet)
        q = cap(f.format(**pr))
        return q, q, ("ctxc", tname, f), c1, c2
    if r < 0.85:
        S = rng.choice(SETUPS)
        s1, s2 = rng.sample(S["s"], 2)
        f = rng.choice(S["q"])
        ack = rng.choice(ACKS)
        greet = rng.randrange(len(GREETINGS)) if rng.random() < 0.2 else None
        ack2 = ack if rng.random() < 0.7 else rng.choice(ACKS)
        return f, f, ("ctxc", "setup", f), _setup_ctx(s1, ack, greet), _setup_ctx(s2, ack2, greet)
    if rng.random() < 0.5:
        (u1, a1), (u2, a2) = rng.sample(NOTES, 2)
        f = rng.choice(rng.choice(NOTE_FOLLOW))
    else:
        (u1, a1), (u2, a2) = rng.sample(CODES, 2)
        f = rng.choice(rng.choice(CODE_FOLLOW))
    return f, f, ("ctxc", "followup", f), _pair_ctx(u1, a1), _pair_ctx(u2, a2)


KINDS = [
    ("paraphrase", True, gen_paraphrase),
    ("reorder", True, gen_reorder),
    ("verbosity", True, gen_verbosity),
    ("synonym", True, gen_synonym),
    ("typo", True, gen_typo),
    ("context_same", True, gen_context_same),
    ("role_swap", False, gen_role_swap),
    ("scope", False, gen_scope),
    ("negation", False, gen_negation),
    ("negation_nocue", False, gen_negation_nocue),
    ("number", False, gen_number),
    ("entity", False, gen_entity),
    ("antonym", False, gen_antonym),
    ("temporal", False, gen_temporal),
    ("conditional", False, gen_conditional),
    ("format", False, gen_format),
    ("context_changed", False, gen_context_changed),
]


def main():
    all_items = []
    report = []
    for name, hit, gen in KINDS:
        k = run_kind(name, hit, gen)
        all_items.extend(k.items)
        report.append((name, len(k.items), len(k.frames)))
    random.Random("%d-shuffle" % SEED).shuffle(all_items)
    with open(OUT_PATH, "w", encoding="utf-8") as fh:
        for rec in all_items:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    if "-q" not in sys.argv:
        for name, n, nf in report:
            print("%-16s %4d pairs  %4d distinct frames" % (name, n, nf))
        print("total %d -> %s" % (len(all_items), OUT_PATH))


if __name__ == "__main__":
    main()
