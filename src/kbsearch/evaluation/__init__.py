"""Evaluation: question sets, relevance judging, metrics, significance, runs and reports.

from kbsearch.evaluation import load_questions, evaluate
questions = load_questions("data/scifact")             # BEIR folder, JSONL, JSON, TREC
result = evaluate(search, questions, ["lexical", "hybrid"], k=10)
result.routes["hybrid"].evaluation.means["nDCG@10"]
"""

from kbsearch.evaluation.compare import Comparison, MeasureComparison, compare_runs
from kbsearch.evaluation.formats import (
    READERS,
    detect_format,
    load_questions,
    read_topics,
    read_trec_qrels,
)
from kbsearch.evaluation.judging import judge_hits, matches, question_qrels, set_qrels
from kbsearch.evaluation.metrics import (
    MEASURES,
    Measure,
    RunEvaluation,
    evaluate_run,
    parse_measure,
    query_scores,
)
from kbsearch.evaluation.questions import (
    MATCH_RULES,
    Question,
    QuestionSet,
    Relevant,
)
from kbsearch.evaluation.report import render_report, write_report
from kbsearch.evaluation.runner import (
    EvaluationResult,
    Latency,
    Missed,
    RouteResult,
    default_measures,
    evaluate,
)
from kbsearch.evaluation.significance import (
    SignificanceResult,
    bootstrap_test,
    paired_test,
    randomization_test,
)
from kbsearch.evaluation.trec import read_trec_run, write_trec_qrels, write_trec_run

__all__ = [
    "MATCH_RULES",
    "MEASURES",
    "READERS",
    "Comparison",
    "EvaluationResult",
    "Latency",
    "Measure",
    "MeasureComparison",
    "Missed",
    "Question",
    "QuestionSet",
    "Relevant",
    "RouteResult",
    "RunEvaluation",
    "SignificanceResult",
    "bootstrap_test",
    "compare_runs",
    "default_measures",
    "detect_format",
    "evaluate",
    "evaluate_run",
    "judge_hits",
    "load_questions",
    "matches",
    "paired_test",
    "parse_measure",
    "query_scores",
    "question_qrels",
    "randomization_test",
    "read_topics",
    "read_trec_qrels",
    "read_trec_run",
    "render_report",
    "set_qrels",
    "write_report",
    "write_trec_qrels",
    "write_trec_run",
]
