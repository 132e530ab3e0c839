"""Judging a ranked list: the evidence, the confidence model, the abstention stage, the
answer."""
