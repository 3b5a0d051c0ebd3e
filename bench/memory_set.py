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
