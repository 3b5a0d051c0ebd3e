"""Irregular English word forms, for questions worded unlike their answers.

A user asks in the present ("When did Maren buy the cello?") about a turn
written in the past ("I bought a secondhand cello"); FTS5's ``porter``
stemmer joins regular inflections (*moved*/*move*) but not irregular ones
(*bought*/*buy*, *went*/*go*, *ran*/*run*, *found*/*find*). :func:`variants`
gives the other forms of such a word so the query can search them too.

Only verbs whose forms are not also a common unrelated word are listed
(no *bit*/*bite*, *born*/*bear*, *lay*/*lie*, *lead*/*led*); forms that are
stop words (*did*, *had*, *got*) are searched by nothing anyway.
"""

from __future__ import annotations

_GROUPS = """
    arise arose arisen | awake awoke awoken | become became | begin began begun |
    bend bent | bleed bled | blow blew blown | break broke broken | breed bred |
    bring brought | build built | burn burnt | buy bought | catch caught |
    choose chose chosen | cling clung | come came | creep crept | deal dealt |
    dig dug | draw drew drawn | dream dreamt | drink drank drunk | drive drove driven |
    eat ate eaten | fall fell fallen | feed fed | feel felt | fight fought | find found |
    flee fled | fly flew flown | forbid forbade forbidden | forget forgot forgotten |
    forgive forgave forgiven | freeze froze frozen | give gave given | go went gone |
    grind ground | grow grew grown | hang hung | hear heard | hide hid hidden |
    hold held | keep kept | kneel knelt | know knew known | leave left | lend lent |
    lose lost | make made | mean meant | meet met | overcome overcame |
    pay paid | ride rode ridden | ring rang rung | rise rose risen | run ran |
    say said | see saw seen | seek sought | sell sold | send sent | shake shook shaken |
    shine shone | shoot shot | shrink shrank shrunk | sing sang sung | sink sank sunk |
    sit sat | sleep slept | slide slid | speak spoke spoken | speed sped |
    spend spent | spin spun | spring sprang sprung | stand stood | steal stole stolen |
    stick stuck | sting stung | stink stank stunk | strike struck | strive strove striven |
    swear swore sworn | sweep swept | swim swam swum | swing swung | take took taken |
    teach taught | tear tore torn | tell told | think thought | throw threw thrown |
    understand understood | undertake undertook undertaken | wake woke woken |
    wear wore worn | weave wove woven | weep wept | win won |
    withdraw withdrew withdrawn | write wrote written |
    child children | man men | woman women | person people | mouse mice |
    foot feet | tooth teeth | goose geese
"""


def _table() -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for group in _GROUPS.split("|"):
        forms = tuple(group.split())
        for form in forms:
            table[form] = tuple(f for f in forms if f != form)
    return table


IRREGULAR: dict[str, tuple[str, ...]] = _table()


def variants(word: str) -> tuple[str, ...]:
    """The other forms of an irregular word (lower case), or ``()``."""
    return IRREGULAR.get(word.lower(), ())
