"""py3langid's model unpacked into the cache gives py3langid's own probabilities, is written
once and reused, and is unpacked again when a file is missing or damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kbsearch.text import langid_model
from kbsearch.text.langid_model import load_identifier, unpacked_dir

TEXTS = [
    "how long do refunds take?",
    "combien de temps faut-il pour être remboursé ?",
    "Wie lange dauert die Rückerstattung?",
    "12345 !!!",
    "",
]


@pytest.fixture(scope="module")
def reference():  # noqa: ANN201 - py3langid's own identifier, from its packed model
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def test_the_unpacked_model_gives_py3langids_probabilities(tmp_path: Path, reference) -> None:  # noqa: ANN001
    first = load_identifier(tmp_path, norm_probs=True)  # unpacks and writes
    assert (unpacked_dir(tmp_path) / "nextmove.npy").is_file()
    second = load_identifier(tmp_path, norm_probs=True)  # memory-mapped copy
    assert isinstance(second.nb_ptc, np.memmap) or isinstance(second.nb_ptc.base, np.memmap)
    for text in TEXTS:
        expected = reference.rank(text)
        for identifier in (first, second):
            found = identifier.rank(text)
            assert [lang for lang, _ in found] == [lang for lang, _ in expected], text
            np.testing.assert_array_equal([p for _, p in found], [p for _, p in expected])


def test_the_copy_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_identifier(tmp_path)
    monkeypatch.setattr(langid_model, "_unpack", lambda: pytest.fail("unpacked again"))
    assert load_identifier(tmp_path).classify("the refund takes five days")[0] == "en"


@pytest.mark.parametrize(
    "damage",
    [lambda p: p.unlink(), lambda p: p.write_bytes(b"\x93NUMPY garbage")],
    ids=["missing", "corrupt"],
)
def test_a_damaged_copy_is_unpacked_again(tmp_path: Path, damage) -> None:  # noqa: ANN001
    load_identifier(tmp_path)
    damage(unpacked_dir(tmp_path) / "out_feat.npy")
    assert load_identifier(tmp_path).classify("le remboursement prend cinq jours")[0] == "fr"
    assert langid_model._read(unpacked_dir(tmp_path)) is not None  # repaired


def test_an_unwritable_cache_still_loads(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert load_identifier(blocker).classify("the refund takes five days")[0] == "en"
