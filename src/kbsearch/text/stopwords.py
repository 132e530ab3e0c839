"""Query-side stop words and French elision for the lexical route.

French elides a short word before a vowel with an apostrophe (``l'activer``, ``qu'est-ce``,
``d'adresse``, straight ``'`` or typographic ``’``); the tokenizer splits these into a one- or
two-letter word that BM25 then scores ("l", "d", "qu"). :func:`strip_elisions` removes the elided
article or pronoun before the split, and :func:`content_words` drops stop words, so that a query
such as "Mon serveur n'a pas d'adresse IPv6, comment l'activer ?" searches for
``serveur adresse ipv6 activer``.

The stop word lists are Snowball's (https://snowballstem.org/algorithms/english/stop.txt and
french/stop.txt, BSD licence), with the words that English contractions leave once split at the
apostrophe ("don", "isn", ...) and the interrogative words of each language, which questions
carry and answers rarely do ("how", "comment", "quel", ...). Matching ignores case and accents.
A query made only of stop words keeps them all (never an empty search). A word the query writes
in capitals (``IT``, ``ON``; two letters or more) is an acronym, never a stop word, unless the
whole query is written in capitals (see :func:`kbsearch.text.analysis.acronyms`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Sequence

ELIDED = ("l", "d", "n", "qu", "j", "s", "c", "m", "t", "jusqu", "lorsqu", "puisqu", "quoiqu")
ELISION_RE = re.compile(r"\b(?:" + "|".join(ELIDED) + r")['’ʼ](?=\w)", re.IGNORECASE)

ENGLISH = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
her hers herself it its itself they them their theirs themselves what which who whom this that
these those am is are was were be been being have has had having do does did doing would should
could ought a an the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in out on off over under
again further then once here there when where why how all any both each few more most other some
such no nor not only own same so than too very can will just
s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn shan shouldn
couldn mustn
"""

FRENCH = """
au aux avec ce ces dans de des du elle en et eux il ils je la le les leur lui ma mais me même mes
moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un
une vos votre vous c d j l à m n s t y été étée étées étés étant étante étants étantes suis es
est sommes êtes sont serai seras sera serons serez seront serais serait serions seriez seraient
étais était étions étiez étaient fus fut fûmes fûtes furent sois soit soyons soyez soient fusse
fusses fût fussions fussiez fussent ayant ayante ayantes ayants eu eue eues eus ai as avons avez
ont aurai auras aura aurons aurez auront aurais aurait aurions auriez auraient avais avait avions
aviez avaient eut eûmes eûtes eurent aie aies ait ayons ayez aient eusse eusses eût eussions
eussiez eussent
comment quel quelle quels quelles quoi lequel laquelle lesquels lesquelles est-ce
"""


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _words_of(text: str) -> frozenset[str]:
    return frozenset(_fold(w) for token in text.split() for w in token.split("-"))


STOPWORDS: dict[str, frozenset[str]] = {"en": _words_of(ENGLISH), "fr": _words_of(FRENCH)}


def strip_elisions(text: str) -> str:
    """``text`` without French elided words before an apostrophe (``l'activer`` -> ``activer``,
    ``qu’est-ce`` -> ``est-ce``); straight, typographic and modifier apostrophes."""
    return ELISION_RE.sub("", text)


def is_stopword(word: str, languages: Iterable[str]) -> bool:
    """True when ``word`` (any case, accents or not) is a stop word of one of ``languages``
    (codes such as ``"en"``, ``"fr"``; unknown codes have no stop words)."""
    folded = _fold(word)
    return any(folded in STOPWORDS.get(lang, frozenset()) for lang in languages)


def content_words(
    words: Sequence[str], languages: Iterable[str], keep: Collection[str] = ()
) -> list[str]:
    """``words`` without the stop words of ``languages``, in order; all of ``words`` when every
    one of them is a stop word. A word in ``keep`` (the query's acronyms) is never dropped."""
    langs = list(languages)
    kept = [w for w in words if w in keep or not is_stopword(w, langs)]
    return kept or list(words)
