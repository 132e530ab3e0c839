"""Fitting the abstention model: weights, threshold rule, determinism, and the shipped file
rebuilt byte for byte from the committed dev table by the training script's own code."""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kbsearch.errors import InvalidArgumentError
from kbsearch.judge.confidence import ConfidenceModel
from kbsearch.judge.confidence_features import DENSE_FEATURES
from kbsearch.judge.confidence_fit import (
    BandRule,
    TrainingRow,
    choose_bands,
    choose_threshold,
    cross_validated,
    dumps,
    fit,
    weights,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "train_abstain.py"
TABLE = ROOT / "benchmarks" / "data" / "abstain_dev.tsv"
SHIPPED = ROOT / "src" / "kbsearch" / "judge" / "models" / "abstain.json"


def rows(n: int = 60) -> list[TrainingRow]:
    rng = np.random.default_rng(1)
    out = []
    for i in range(n):
        covered = i % 2 == 0
        label = int(covered and i % 10 != 0)
        values = {"x": rng.normal(loc=1.0 if label else -1.0), "y": rng.normal()}
        out.append(TrainingRow(f"s{i % 3}", f"q{i // 2}", covered, label, values))
    return out


def test_weights_balance_datasets_and_halves() -> None:
    data = rows()
    w = weights(data)
    for stratum in ("s0", "s1", "s2"):
        for covered in (True, False):
            mine = [
                wi
                for wi, r in zip(w, data, strict=True)
                if r.stratum == stratum and r.covered == covered
            ]
            assert sum(mine) == pytest.approx(0.5)


def test_threshold_rule_by_hand() -> None:
    conf = np.array([0.1, 0.2, 0.3, 0.4, 0.9])
    label = np.array([0, 0, 1, 0, 1])
    w = np.ones(5)
    # cut 0.3: abstain on 0.1, 0.2 (both right) -> 1.0; cut 0.4: 2 of 3 -> 0.67; cut 0.9: 3/4
    assert choose_threshold(conf, label, w, 0.9) == 0.3
    assert choose_threshold(conf, label, w, 0.7) == 0.9


def test_band_rule_by_hand() -> None:
    """Cuts from the highest down: answered answerable precision and the share of uncovered
    rows above each cut, computed by hand (uncovered rows .7, .4, .3, .2)."""
    confidence = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    covered = np.array([True, True, False, True, True, False, False, False])
    label = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    rule = BandRule(answered_precision=0.75, uncovered_answered=0.25, uncovered_shown=0.5)
    # answered: at .5 the covered rows above are right 3 of 4 (.75) and 1 of 4 uncovered is
    # above (.25); at .6 precision is 2/3, at .4 2 of 4 uncovered are above. Uncertain: at
    # .4 2 of 4 uncovered are shown (.5), at .3 3 of 4
    assert choose_bands(confidence, label, covered, np.ones(8), rule) == (0.5, 0.4)
    # shares are within each kind: weighing the uncovered rows three times moves nothing
    heavy = np.where(covered, 1.0, 3.0)
    assert choose_bands(confidence, label, covered, heavy, rule) == (0.5, 0.4)
    # a rule no cut meets answers nothing; the floor stays at most the threshold
    strict = BandRule(answered_precision=1.0, uncovered_answered=0.0, uncovered_shown=0.0)
    assert choose_bands(confidence, label, covered, np.ones(8), strict) == (0.8, 0.8)
    with pytest.raises(InvalidArgumentError):
        BandRule(answered_precision=1.5)
    with pytest.raises(InvalidArgumentError):
        BandRule(uncovered_answered=0.4, uncovered_shown=0.3)


def test_fit_is_deterministic_and_separates() -> None:
    first = fit(rows(), ("x", "y"))
    assert dumps(first) == dumps(fit(rows(), ("x", "y")))
    assert first.coef[0] > 0
    assert first.confidence({"x": 2.0, "y": 0.0}) > first.confidence({"x": -2.0, "y": 0.0})


def test_threshold_is_chosen_on_the_cross_validated_confidences() -> None:
    data = rows()
    confidence = cross_validated(data, ("x", "y"))
    assert confidence.shape == (len(data),) and ((confidence > 0) & (confidence < 1)).all()
    label = np.array([r.label for r in data])
    expected = choose_threshold(confidence, label, weights(data), 0.9)
    assert fit(data, ("x", "y")).threshold == pytest.approx(expected, rel=1e-8)


def test_dense_only_sub_model_shares_the_threshold() -> None:
    model = fit(rows(), ("x", "y"), dense_only=("x",))
    assert model.dense_only is not None and model.dense_only.names == ("x",)
    assert model.dense_only.threshold == model.threshold and model.dense_only.dense_only is None


def test_fit_refuses_one_class_and_constant_features() -> None:
    with pytest.raises(InvalidArgumentError, match="both labels"):
        fit([TrainingRow("s", "q", True, 1, {"x": 1.0})], ("x",))
    constant = [TrainingRow("s", f"q{i}", True, i % 2, {"x": 1.0}) for i in range(4)]
    with pytest.raises(InvalidArgumentError, match="constant"):
        fit(constant, ("x",))


def test_shipped_model_is_rebuilt_from_the_dev_table() -> None:
    spec = importlib.util.spec_from_file_location("train_abstain", SCRIPT)
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    table = script.read_table(str(TABLE))
    model = script.build_model(table, str(TABLE))
    # the span-aware sub-model from the answer dev table (benchmarks/answer_tune.py fit)
    tune = _answer_tune()
    answers = SCRIPT.parent / "data" / "answer_dev.tsv"
    model = replace(model, answer=tune.answer_model(tune._read([str(answers)]), answers.name))
    assert dumps(model) == SHIPPED.read_text(encoding="utf-8")
    assert model.dense_only is not None
    assert model.dense_only.names == tuple(n for n in model.names if n in DENSE_FEATURES)


def _answer_tune():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("answer_tune", SCRIPT.with_name("answer_tune.py"))
    assert spec and spec.loader
    tune = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tune)
    return tune


def test_tables_read_the_retrieval_confidence_of_a_span_aware_decision() -> None:
    """A decision collected with the ``answer`` sub-model shipped carries the span-aware
    confidence; the table's ``retrieval`` column (and the refit's ``retrieval_logit``) must
    be the retrieval stage's, read back from the decision's features."""
    from kbsearch.judge.confidence import ConfidenceModel
    from kbsearch.judge.confidence_features import span_features
    from kbsearch.judge.verdict import Decision

    tune = _answer_tune()
    answer = ConfidenceModel.load().answer
    assert answer is not None
    for retrieval in (0.03, 0.4, 0.97):
        decision = answer.decide_on(span_features(retrieval, None))
        assert decision.confidence != pytest.approx(retrieval, abs=1e-3)
        assert tune.retrieval_confidence(decision) == pytest.approx(retrieval, rel=1e-12)
    # collected before the answer sub-model: the confidence is the retrieval's
    assert tune.retrieval_confidence(Decision(True, 0.61, 0.5, {"dense_top": 0.8})) == 0.61


def test_refitting_the_retrieval_model_keeps_the_answer_sub_model(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("train_abstain", SCRIPT)
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "abstain.json"
    out.write_text(SHIPPED.read_text(encoding="utf-8"), encoding="utf-8")
    script.fit_command(argparse.Namespace(table=str(TABLE), out=str(out), precision=0.9))
    refit = ConfidenceModel.load(out)
    assert refit.answer is not None and refit.answer == ConfidenceModel.load(SHIPPED).answer
    assert "answer sub-model" in refit.info["note"]  # whose bands the verdict reads


def test_the_answer_table_chooses_the_span_with_the_collected_heading_cosines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kb.ask`` chooses the span with the question's cosines to the headings of the
    candidates; the table the answer sub-model is fitted on must judge that same span."""
    import pickle
    from types import SimpleNamespace

    from kbsearch.judge.verdict import Decision

    tune = _answer_tune()
    seen: list[object] = []

    def choose(*args: object, heading_cosines: object = None, **kwargs: object) -> None:
        seen.append(heading_cosines)

    monkeypatch.setattr(tune, "choose", choose)
    headings = {"d1@v1#top": 0.87}
    row = {
        "question": SimpleNamespace(qid="q1", text="q?", extra={}, relevant=[]),
        "condition": "present",
        "hits": [SimpleNamespace(doc_id="d1", version="v1", passage_id="d1@v1#top")],
        "decision": Decision(True, 0.6, 0.5, {}),
        "documents": {("d1", "v1"): None},
        "languages": ["en"],
        "terms": None,
        "cosines": {},
        "headings": headings,
    }
    rows = tmp_path / "covid_dev.pkl"
    rows.write_bytes(pickle.dumps([row]))
    out = tmp_path / "covid_dev.tsv"
    tune.table(argparse.Namespace(rows=str(rows), gold=None, out=str(out)))
    assert seen == [headings]
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
