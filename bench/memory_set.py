"""A labelled memory set written for bonsai, generated deterministically.

Three kinds of questions over markdown memory entries (front matter
``created``/``updated``):

* **single-hop** — one entry answers (a person's employer, a component's tool);
* **multi-hop** — two entries answer together: a person's job and the city
  they moved to (the move note names them by first name only), a decision and
  the constraint behind it (the constraint note never names the component).
  Asked two ways: as one question naming only the first entry ("bridge") and
  as two clauses each naming one ("conjunction");
* **temporal** — three entries on the same subject at different dates; the
  question picks one by "last month", "before <date>" or "in <Month Year>"
  (dates in front matter and in the bodies).

Each kind is asked in the set's first templates (``form`` fact, bridge,
conjunction, last-month, before, in-month) and, since the fourth round, in
more templates worded the way a user would ask rather than the way the entry
is written (``form`` starting with ``v:``: "Where is Ana Costa employed?",
"What storage backs the ingest service?", "What company does the person who
moved to Porto in May 2026 work for?", "What was the latest change to …?").
They are added *after* the first questions from a separate hash-based choice,
so the first questions and every entry stay exactly as they were.

Hard distractors share names, companies, cities and components with the
answers; :func:`padding` adds generic entries up to any size. Everything comes
from word banks below and a seeded ``random.Random``: the same seed gives the
same files and questions on every machine.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from datetime import date, timedelta

TODAY = date(2026, 7, 1)

FIRST = [
    "Priya",
    "Tomas",
    "Ingrid",
    "Kwame",
    "Mei",
    "Rafael",
    "Olga",
    "Desmond",
    "Yuki",
    "Amara",
    "Lars",
    "Beatriz",
    "Chidi",
    "Hanna",
    "Mateo",
    "Saoirse",
    "Viktor",
    "Leilani",
    "Omar",
    "Freya",
    "Dmitri",
    "Nadia",
    "Emeka",
    "Sofia",
    "Arjun",
    "Greta",
    "Kenji",
    "Lucia",
    "Bram",
    "Zainab",
    "Teodor",
    "Ines",
    "Malik",
    "Astrid",
    "Ruben",
    "Noor",
    "Ilse",
    "Joaquin",
    "Marit",
    "Farid",
    "Elif",
    "Soren",
    "Ayla",
    "Cosmin",
    "Daria",
    "Hugo",
    "Ottilie",
    "Ravi",
    "Selma",
    "Tariq",
]
LAST = [
    "Natarajan",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Castellanos",
    "Haddad",
    "Brennan",
    "Sato",
    "Kowalski",
    "Adeyemi",
    "Ferreira",
    "Novak",
    "Oyelaran",
    "Richter",
    "Vasquez",
    "Mbeki",
    "Andersen",
    "Dubois",
    "Ishikawa",
    "Petrov",
    "Quintero",
    "Halloran",
    "Szabo",
    "Akhtar",
    "Bergström",
    "Delacroix",
    "Nakamura",
    "Oduya",
    "Pereira",
    "Wojcik",
]
JOBS = """database administrator|site reliability engineer|product designer|data analyst|
security auditor|technical writer|release manager|frontend developer|firmware engineer|
support lead|machine learning engineer|network architect|QA engineer|scrum master|
compliance officer""".replace("\n", "").split("|")
COMPANIES = """Halvorsen Freight|Bluefin Analytics|Tamarack Health|Corvid Systems|Ostrava Mills|
Lumen Grid|Pellucid Bank|Quarry Labs|Saffron Logistics|Tidewater Media|Kestrel Robotics|
Umber Insurance""".replace("\n", "").split("|")
CITIES = """Lisbon|Montreal|Tallinn|Osaka|Nairobi|Valparaíso|Ghent|Porto|Kraków|Hobart|
Reykjavik|Tbilisi|Bergen|Cusco|Da Nang|Ljubljana|Halifax|Marrakesh|Aarhus|Bilbao""".replace(
    "\n", ""
).split("|")
HOBBIES = """plays cello in a community orchestra|restores old motorbikes|runs ultramarathons|
keeps bees on the roof|collects vintage maps|brews cider|climbs indoors twice a week|
paints watercolour landscapes|builds mechanical keyboards|sails small dinghies""".replace(
    "\n", ""
).split("|")
COMPONENTS = """ingest service|billing worker|search backend|audit log|session cache|
report generator|notification queue|image pipeline|feature flag store|metrics store|
export job|pricing engine|identity gateway|upload scanner|scheduler daemon|geo lookup|
invoice renderer|webhook relay|backup agent|config registry|chat gateway|ledger sync|
recommendation service|thumbnail cache|alerting bridge|translation memory|inventory feed|
payout batcher|consent tracker|telemetry collector|sandbox runner|archive reader""".replace(
    "\n", ""
).split("|")
TECHS = """ClickHouse|PostgreSQL|Redis|Kafka|SQLite|RabbitMQ|DuckDB|Elasticsearch|NATS|
MinIO|Cassandra|etcd|Memcached|TimescaleDB|Pulsar|LMDB""".replace("\n", "").split("|")
RULE_NAMES = """Aldebaran|Marlowe|Cobalt|Juniper|Ptarmigan|Sorrel|Wexford|Halcyon|Tamsin|
Oriel|Brackley|Quillon|Fennimore|Galway|Isolde|Korrigan|Larkspur|Mereth|Nettlefield|Oakhurst|
Pendle|Rowan|Selkirk|Thistlewood|Ulverston|Vardø|Whitcombe|Yarrow|Zennor|Ashdown|Bellhaven|
Carrick""".replace("\n", "").split("|")
RULES = """customer events must stay on servers inside the EU|every write must be replayable for
seven years|the service must run on a single node without a cluster|reads must answer within two
milliseconds at the edge|no component may require a commercial licence|storage must survive the
loss of one region|data must be deletable per customer within a day|the process must fit in
256 MB of memory|nothing may call out to the public internet|schema changes must be reversible
without downtime""".replace("\n", " ").split("|")
CHANGES = """moved to {tech}|switched its storage to {tech}|dropped {tech} after an outage|
started caching through {tech}|was rewritten on top of {tech}|began mirroring writes into {tech}
""".replace("\n", "").split("|")


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    body: str
    created: date
    updated: date

    def markdown(self) -> str:
        return (
            f"---\ndescription: {json.dumps(self.description)}\ncreated: {self.created.isoformat()}\n"
            f"updated: {self.updated.isoformat()}\n---\n{self.body}\n"
        )


@dataclass(frozen=True)
class Question:
    kind: str  # single-hop | multi-hop | temporal
    form: str
    text: str
    relevant: tuple[str, ...]


@dataclass
class LabelledSet:
    entries: list[Entry] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    facts: list[tuple] = field(default_factory=list)  # what the variant templates ask about


def _name(*parts: str) -> str:
    """A stable entry name that reveals nothing about its role in the set."""
    digest = hashlib.sha256("|".join(parts).encode()).hexdigest()[:10]
    return f"note-{digest}"


def _day(rng: random.Random, start: date, end: date) -> date:
    return start + timedelta(days=rng.randrange(max((end - start).days, 1)))


def _month(day: date) -> str:
    return day.strftime("%B %Y")


def _variant(key: str, options: list[str]) -> str:
    """One of ``options`` chosen by a hash of ``key`` (consumes no random state,
    so adding templates leaves the rest of the set unchanged)."""
    return options[hashlib.sha256(key.encode()).digest()[0] % len(options)]


EMPLOYER = [
    "Where is {full} employed?",
    "Who is {full}'s employer?",
    "Which organisation is {full} with?",
]
ROLE = [
    "What kind of work does {full} do?",
    "What position does {full} hold?",
    "What is {full}'s job title?",
]
PASTIME = [
    "What is {full} into outside of work?",
    "Any hobbies worth knowing about for {full}?",
    "How does {full} spend free weekends?",
]
HOME = ["Where does {first} live now?", "Where is {first} based these days?"]
REVERSE_BRIDGE = [
    "What company does the person who moved to {city} in {month} work for?",
    "Who employs the colleague that relocated to {city} in {month}?",
]
HOBBY_BRIDGE = [
    "Where did the colleague who {hobby} move to?",
    "Which city is the person who {hobby} living in now?",
]
STORAGE = [
    "What storage backs the {component}?",
    "Which datastore did we settle on for the {component}?",
    "Where does the {component} keep its data?",
]
RULE_TEXT = ["What does the {rule} rule demand?", "Remind me what {rule} requires."]
RULE_BRIDGE = [
    "Which contractual requirement shaped the {component}'s storage decision?",
    "What requirement is the {component}'s choice of {tech} meant to meet?",
]
LATEST = [
    "What was the latest change to the {component}?",
    "What is the most recent thing that happened to the {component}?",
]
AFTER = [
    "What changed in the {component} after {cut}?",
    "Anything new on the {component} since {cut}?",
]
DURING = [
    "How did the {component} change during {month}?",
    "What was done to the {component} in {month}?",
]


def people(rng: random.Random, out: LabelledSet, count: int) -> None:
    firsts = rng.sample(FIRST, count)
    roles = rng.sample([(job, company) for job in JOBS for company in COMPANIES], count)
    for i, (first, (job, company)) in enumerate(zip(firsts, roles, strict=True)):
        last = rng.choice(LAST)
        city, hobby = rng.choice(CITIES), rng.choice(HOBBIES)
        full = f"{first} {last}"
        joined = _day(rng, date(2023, 1, 1), date(2025, 6, 1))
        moved = _day(rng, date(2025, 6, 1), date(2026, 6, 1))
        job_e = Entry(
            _name("job", full),
            f"{full}'s role",
            f"{full} works as a {job} at {company}; joined in {_month(joined)}.",
            joined,
            joined,
        )
        move_e = Entry(
            _name("move", full),
            f"{first} relocated",
            f"{first} moved to {city} in {_month(moved)} and now works remotely from there.",
            moved,
            moved,
        )
        hobby_e = Entry(
            _name("hobby", full), f"about {first}", f"Outside work, {full} {hobby}.", joined, joined
        )
        out.entries += [job_e, move_e, hobby_e]
        out.facts.append(("person", full, first, job, company, city, hobby, _month(moved), i))
        out.facts.append(("person-entries", job_e.name, move_e.name, hobby_e.name))
        out.questions.append(
            Question("single-hop", "fact", f"Which company does {full} work for?", (job_e.name,))
        )
        if i % 3 == 0:
            out.questions.append(
                Question(
                    "single-hop", "fact", f"What does {first} do in spare time?", (hobby_e.name,)
                )
            )
        if i % 2 == 0:
            text = f"Which city did the {job} from {company} move to?"
            out.questions.append(Question("multi-hop", "bridge", text, (job_e.name, move_e.name)))
        else:
            text = f"What is {full}'s job, and which city did {first} move to recently?"
            out.questions.append(
                Question("multi-hop", "conjunction", text, (job_e.name, move_e.name))
            )


def decisions(rng: random.Random, out: LabelledSet, count: int) -> None:
    components = rng.sample(COMPONENTS, count)
    rules = rng.sample(RULE_NAMES, count)
    for i, (component, rule) in enumerate(zip(components, rules, strict=True)):
        tech, constraint = rng.choice(TECHS), rng.choice(RULES)
        decided = _day(rng, date(2025, 1, 1), date(2026, 5, 1))
        decision = Entry(
            _name("decision", component),
            f"{component} storage decision",
            f"Decision: the {component} keeps its data in {tech}, to satisfy the {rule} "
            f"constraint. Agreed on {decided.isoformat()}.",
            decided,
            decided,
        )
        rule_e = Entry(
            _name("rule", rule),
            f"the {rule} constraint",
            f"{rule} constraint: {constraint}. It came from a customer contract review.",
            decided - timedelta(days=40),
            decided - timedelta(days=40),
        )
        out.entries += [decision, rule_e]
        out.facts.append(("decision", component, tech, rule, decision.name, rule_e.name, i))
        out.questions.append(
            Question(
                "single-hop", "fact", f"Which database does the {component} use?", (decision.name,)
            )
        )
        if i % 2 == 0:
            text = (
                f"What exactly does the constraint behind the {component}'s {tech} choice demand?"
            )
            out.questions.append(
                Question("multi-hop", "bridge", text, (decision.name, rule_e.name))
            )
        else:
            text = (
                f"Why did the {component} pick {tech}, and what does the {rule} constraint require?"
            )
            out.questions.append(
                Question("multi-hop", "conjunction", text, (decision.name, rule_e.name))
            )


def timelines(rng: random.Random, out: LabelledSet, count: int) -> None:
    components = rng.sample(COMPONENTS, count)
    for i, component in enumerate(components):
        last_month = TODAY.replace(day=1) - timedelta(days=20)
        days = sorted(
            {
                _day(rng, date(2025, 3, 1), date(2025, 10, 1)),
                _day(rng, date(2025, 11, 1), date(2026, 4, 1)),
                last_month,
            }
        )
        notes = []
        for j, day in enumerate(days):
            change = rng.choice(CHANGES).format(tech=rng.choice(TECHS))
            body = f"On {day.day} {_month(day)} the {component} {change}."
            entry = Entry(
                _name("timeline", component, str(j)), f"{component} change", body, day, day
            )
            notes.append(entry)
        out.entries += notes
        out.facts.append(("timeline", component, tuple(days), tuple(n.name for n in notes), i))
        form = ("last-month", "before", "in-month")[i % 3]
        if form == "last-month":
            text, answer = f"What changed in the {component} last month?", notes[2]
        elif form == "before":
            cut = days[1] - timedelta(days=10)
            text, answer = f"What did the {component} change before {cut.isoformat()}?", notes[0]
        else:
            text, answer = f"What happened to the {component} in {_month(days[1])}?", notes[1]
        out.questions.append(Question("temporal", form, text, (answer.name,)))


def hard_distractors(rng: random.Random, out: LabelledSet, count: int) -> None:
    """Entries that share names, employers, cities and components with answers."""
    for i in range(count):
        day = _day(rng, date(2024, 1, 1), TODAY)
        kind = i % 4
        if kind == 0:
            body = (
                f"{rng.choice(FIRST)} {rng.choice(LAST)} from {rng.choice(COMPANIES)} reviewed "
                f"the {rng.choice(COMPONENTS)} runbook."
            )
        elif kind == 1:
            body = (
                f"{rng.choice(FIRST)} visited {rng.choice(CITIES)} for a conference and moved "
                "the team offsite to a later week."
            )
        elif kind == 2:
            body = (
                f"The {rng.choice(COMPONENTS)} had a {rng.choice(TECHS)} upgrade window on "
                f"{day.isoformat()}; nothing changed for users."
            )
        else:
            body = (
                f"A {rng.choice(JOBS)} at {rng.choice(COMPANIES)} asked which city hosts the "
                f"{rng.choice(COMPONENTS)} replicas."
            )
        out.entries.append(Entry(_name("hard", str(i)), "team note", body, day, day))


def build(seed: int = 24) -> LabelledSet:
    rng = random.Random(seed)
    out = LabelledSet()
    people(rng, out, 48)
    decisions(rng, out, 30)
    timelines(rng, out, 32)
    hard_distractors(rng, out, 240)
    variants(out)
    return out


def variants(out: LabelledSet) -> None:
    """More templates over the same entries (see the module notes)."""
    people = [f for f in out.facts if f[0] == "person"]
    names = [f for f in out.facts if f[0] == "person-entries"]
    moved = [(f[5], f[7]) for f in people]
    hobbies = [f[6] for f in people]
    add = out.questions.append
    for (_, full, first, _job, _company, city, hobby, month, i), ids in zip(
        people, names, strict=True
    ):
        _, job_id, move_id, hobby_id = ids
        key = f"{full}|{i}"
        if i % 2 == 1:
            add(
                Question(
                    "single-hop", "v:employer", _variant(key, EMPLOYER).format(full=full), (job_id,)
                )
            )
        else:
            add(Question("single-hop", "v:role", _variant(key, ROLE).format(full=full), (job_id,)))
        if i % 3 == 1:
            add(
                Question(
                    "single-hop", "v:pastime", _variant(key, PASTIME).format(full=full), (hobby_id,)
                )
            )
        if i % 3 == 2:
            add(
                Question(
                    "single-hop", "v:home", _variant(key, HOME).format(first=first), (move_id,)
                )
            )
        if moved.count((city, month)) == 1 and i % 2 == 0:
            text = _variant(key, REVERSE_BRIDGE).format(city=city, month=month)
            add(Question("multi-hop", "v:reverse-bridge", text, (move_id, job_id)))
        elif hobbies.count(hobby) == 1:
            text = _variant(key, HOBBY_BRIDGE).format(hobby=hobby)
            add(Question("multi-hop", "v:hobby-bridge", text, (hobby_id, move_id)))
    for _, component, tech, rule, decision_id, rule_id, i in (
        f for f in out.facts if f[0] == "decision"
    ):
        key = f"{component}|{i}"
        add(
            Question(
                "single-hop",
                "v:storage",
                _variant(key, STORAGE).format(component=component),
                (decision_id,),
            )
        )
        if i % 3 == 0:
            add(
                Question(
                    "single-hop", "v:rule", _variant(key, RULE_TEXT).format(rule=rule), (rule_id,)
                )
            )
        if i % 2 == 1:
            text = _variant(key, RULE_BRIDGE).format(component=component, tech=tech)
            add(Question("multi-hop", "v:rule-bridge", text, (decision_id, rule_id)))
    for _, component, days, ids, i in (f for f in out.facts if f[0] == "timeline"):
        key = f"{component}|{i}"
        form = ("latest", "after", "during")[(i + 1) % 3]
        if form == "latest":
            text, answer = _variant(key, LATEST).format(component=component), ids[2]
        elif form == "after":
            cut = (days[1] + timedelta(days=3)).isoformat()
            text, answer = _variant(key, AFTER).format(component=component, cut=cut), ids[2]
        else:
            text, answer = (
                _variant(key, DURING).format(component=component, month=_month(days[0])),
                ids[0],
            )
        add(Question("temporal", f"v:{form}", text, (answer,)))


GENERIC = """the parser|the tokenizer|the cache layer|the job scheduler|the build script|
the logger|the plugin loader|the linter config|the upload handler|the rate limiter|
the release workflow|the docs site|the retry policy|the Docker image|the CI pipeline""".replace(
    "\n", ""
).split("|")
GENERIC_VERBS = ["must not", "should always", "was changed to", "needs to", "used to"]
GENERIC_OBJECTS = """retry failed requests|use UTC timestamps|run on two cores|pin exact versions|
skip network tests|stream large responses|normalise file paths|compress old logs|reuse
connections|escape shell arguments|watch files for changes|batch requests""".replace(
    "\n", " "
).split("|")


def padding(count: int, seed: int = 7) -> list[Entry]:
    """Generic distractors (developer notes, people, places) up to ``count``."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        day = _day(rng, date(2024, 1, 1), TODAY)
        subject = rng.choice(GENERIC)
        body = (
            f"{subject.capitalize()} {rng.choice(GENERIC_VERBS)} "
            f"{' '.join(rng.choice(GENERIC_OBJECTS).split())}."
        )
        if i % 3 == 0:
            body += f" Noted by {rng.choice(FIRST)} {rng.choice(LAST)} in {_month(day)}."
        if i % 5 == 0:
            body += f" The {rng.choice(COMPONENTS)} team in {rng.choice(CITIES)} agreed."
        out.append(Entry(f"pad-{i:05d}", "developer note", body, day, day))
    return out


# -- conversation turns (held out: written before any step it measures) ------
#
# The project is judged on long conversations stored one file per dialogue
# turn, asked about in the words of a user ("When did Maren buy the cello?")
# while the turn says it in a speaker's ("Maren: I bought a secondhand cello
# last weekend"): other tense, other person, other words. :func:`dialogue`
# writes such a set: pairs of speakers over dated sessions (front matter
# ``created``/``updated`` is the session's date), each turn one entry whose
# body is ``Speaker: text``; each event turn answered by the other speaker
# with an echo that shares its object words ("A cello! Which one?") and
# chit-chat around them. Three kinds: a fact of one event (single), when it
# happened (temporal; the turn holds only a relative date such as "last
# Saturday"), and the events of one kind a speaker mentioned in different
# sessions (multi). It is reported as its own column and no knob is chosen
# on it.

SPEAKERS = """Maren|Joel|Anouk|Tobias|Keziah|Lorcan|Wren|Idris|Paloma|Casimir|Noemi|Ezra|
Thandiwe|Anselm|Liesel|Marcus""".replace("\n", "").split("|")
PETS = ["Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Clover", "Pickle", "Ziggy"]
INSTRUMENTS = [
    "cello",
    "ukulele",
    "banjo",
    "trumpet",
    "violin",
    "keyboard",
    "mandolin",
    "saxophone",
]
PLACES = """Lake Tahoe|the Blue Ridge mountains|Big Sur|the Cairngorms|Lake Bled|Banff|
the Dolomites|Yosemite""".replace("\n", "").split("|")
CAUSES = """the animal shelter|children's hospital|cancer research|mental health awareness|
the local food bank|clean rivers""".replace("\n", "").split("|")
TOPICS = """urban beekeeping|the history of jazz|composting at home|birdwatching for
beginners|family recipes|old lighthouses""".replace("\n", " ").split("|")
BANDS = ["Arcade Fire", "Fleet Foxes", "the National", "Radiohead", "Bon Iver", "the Strokes"]
NEW_JOBS = ["nurse", "librarian", "carpenter", "park ranger", "pastry chef", "bus driver"]
RELATIVE = ["yesterday", "last weekend", "last Saturday", "two weeks ago", "last Friday"]

# (category, turn in the speaker's words, the other speaker's echo, a question
# of fact, a question of when): {x} is the event's own filler word
EVENTS: list[tuple[str, str, str, str, str]] = [
    (
        "outdoors",
        "I ran a charity race for {x} {rel}! My legs still hurt.",
        "A race? That's amazing, I could never run that far.|Wow, how long was the race?|Good for you, running for a cause is the best.",
        "What cause did {name}'s charity race support?",
        "When did {name} run the charity race?",
    ),
    (
        "outdoors",
        "We went camping at {x} {rel}, the kids loved sleeping under the stars.",
        "Camping sounds so fun, we should go together some time.|Did you sleep in a tent? I'd be scared of bears.|I haven't been camping in years, that sounds lovely.",
        "Where did {name} go camping with the kids?",
        "When did {name} go camping?",
    ),
    (
        "creative",
        "I bought a secondhand {x} {rel} and I'm slowly learning the chords.",
        "Oh nice, I always wanted to learn an instrument too.|Play me something when we next meet!|Music lessons were the best part of school for me.",
        "Which instrument did {name} buy?",
        "When did {name} buy the instrument?",
    ),
    (
        "family",
        "My sister got married {rel}; the whole family flew in for the wedding.",
        "Congratulations to her! Weddings are the best.|Was it a big ceremony? Send photos of the dress!|How lovely, give her my best wishes.",
        "Whose wedding did {name}'s family fly in for?",
        "When did {name}'s sister get married?",
    ),
    (
        "creative",
        "I took my first pottery class {rel} and made a lopsided {x} bowl.",
        "Pottery is so relaxing, I love that you tried it.|Lopsided is charming! Will you go back?|I've always wanted to try a clay class.",
        "What did {name} make at the pottery class?",
        "When did {name} take the pottery class?",
    ),
    (
        "pets",
        "We adopted a puppy {rel}, we named him {x}.",
        "A puppy! I love dogs, send me pictures.|What breed is he? I bet he chews everything.|Puppies are so much work but so worth it.",
        "What is the name of {name}'s dog?",
        "When did {name} get the puppy?",
    ),
    (
        "pets",
        "I found a stray kitten under our porch {rel} and kept her. She's called {x}.",
        "Aww, cats are wonderful company.|Poor little thing, lucky she found you.|Is she getting along with the rest of the house?",
        "What did {name} call the kitten?",
        "When did {name} find the cat?",
    ),
    (
        "creative",
        "I gave a talk about {x} at the library {rel}, about forty people came.",
        "Forty people, wow! Public speaking scares me.|I'd love to hear that talk some time.|Did people ask lots of questions afterwards?",
        "What subject did {name} speak about at the library?",
        "When did {name} give the library talk?",
    ),
    (
        "outdoors",
        "We drove up to {x} {rel} to see the autumn leaves.",
        "The leaves must have been gorgeous this time of year.|Road trips in autumn are the best.|I saw your photos, the colours were unreal.",
        "Where did {name} drive to see the fall colours?",
        "When did {name} see the autumn leaves?",
    ),
    (
        "family",
        "My son broke his arm {rel} playing football at school.",
        "Oh no, I hope he heals quickly. Kids are tough though.|Poor kid! Is he wearing a cast?|That must have been a scary day at the hospital.",
        "How did {name}'s son get injured?",
        "When did {name}'s son break his arm?",
    ),
    (
        "music",
        "I finally saw {x} live {rel}, it was so loud and so good.",
        "I'm jealous, I've never seen them in concert.|Was the crowd wild? Live music is everything.|Which song did they open with?",
        "Which band did {name} see in concert?",
        "When did {name} go to the concert?",
    ),
    (
        "work",
        "I got a new job as a {x} {rel}, I start on Monday!",
        "That's huge news, congratulations on the job!|You deserve it, you worked so hard for this.|Are you nervous about the first day?",
        "What is {name}'s new position?",
        "When did {name} get hired?",
    ),
]
FILLERS = [
    "Hey! How have you been lately?",
    "Hi! It's been a while, what's new with you?",
    "Good morning! I hope your week is going well.",
    "What have you been up to since we last talked?",
    "Things have been busy but good, thanks for asking.",
    "Same here, work has been hectic this month.",
    "I've mostly been reading and trying to sleep more.",
    "Honestly just tired, but hanging in there.",
    "The weather has been awful, it rained all week.",
    "I made soup for dinner and watched a movie.",
    "Let's catch up again soon, okay?",
    "Take care, talk to you next week!",
    "I have to run, but this was nice. Bye!",
    "Thanks for listening, it means a lot.",
    "Say hi to everyone for me!",
]
FILLS: dict[str, list[str]] = {
    "I ran": CAUSES,
    "camping": PLACES,
    "secondhand": INSTRUMENTS,
    "pottery": ["blue", "green", "speckled", "tiny", "huge", "yellow"],
    "puppy": PETS,
    "kitten": PETS,
    "talk about": TOPICS,
    "drove up": PLACES,
    "saw": BANDS,
    "new job": NEW_JOBS,
}
CATEGORY_QUESTIONS = {
    "outdoors": "What has {name} done outdoors recently?",
    "creative": "What creative things has {name} been trying?",
    "pets": "What animals does {name} have at home?",
    "family": "What has been going on in {name}'s family?",
}


def _fill(turn: str, rng: random.Random) -> str:
    for marker, options in FILLS.items():
        if marker in turn:
            return rng.choice(options)
    return ""


def dialogue(seed: int = 5, conversations: int = 8) -> tuple[list[Entry], list[Question]]:
    """Dialogue turns and the questions about them (see the notes above)."""
    rng = random.Random(seed)
    entries: list[Entry] = []
    questions: list[Question] = []
    speakers = rng.sample(SPEAKERS, conversations * 2)
    for c in range(conversations):
        pair = speakers[2 * c : 2 * c + 2]
        start = _day(rng, date(2025, 1, 1), date(2025, 9, 1))
        plan = {who: rng.sample(EVENTS, 6) for who in pair}
        said: dict[str, dict[str, list[str]]] = {who: {} for who in pair}
        for session in range(6):
            day = start + timedelta(days=18 * session + rng.randrange(5))
            turns: list[tuple[str, str, tuple[str, ...] | None]] = []
            turns.append((pair[session % 2], rng.choice(FILLERS[:4]), None))
            turns.append((pair[1 - session % 2], rng.choice(FILLERS[4:10]), None))
            for who in rng.sample(pair, 2):
                other = pair[1] if who == pair[0] else pair[0]
                category, turn, echo, fact, when = plan[who][session]
                text = turn.format(x=_fill(turn, rng), rel=rng.choice(RELATIVE))
                turns.append((who, text, (category, fact, when)))
                turns.append((other, rng.choice(echo.split("|")), None))
            turns.append((pair[session % 2], rng.choice(FILLERS[10:]), None))
            for t, (who, text, event) in enumerate(turns):
                name = _name("dialogue", str(c), str(session), str(t))
                entries.append(Entry(name, "conversation turn", f"{who}: {text}", day, day))
                if event is None:
                    continue
                category, fact, when = event
                said[who].setdefault(category, []).append(name)
                key = f"{c}|{session}|{t}"
                if hashlib.sha256(key.encode()).digest()[0] % 2:
                    questions.append(
                        Question("dialogue", "d:single", fact.format(name=who), (name,))
                    )
                else:
                    questions.append(
                        Question("dialogue", "d:temporal", when.format(name=who), (name,))
                    )
        for who in pair:
            for category, names in said[who].items():
                if len(names) >= 2 and category in CATEGORY_QUESTIONS:
                    text = CATEGORY_QUESTIONS[category].format(name=who)
                    questions.append(Question("dialogue", "d:multi", text, tuple(names)))
    return entries, questions
