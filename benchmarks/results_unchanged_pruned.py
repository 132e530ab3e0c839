"""``results_unchanged.py`` with the lexical MaxScore pruning forced on every query.

The lexical top k adds every posting of a query holding at most ``maxscore.EXHAUSTIVE``
(2^17) postings in all and prunes only above that, so on collections of a few thousand
passages the pruned path never runs. This runs the same script (same arguments, e.g.
``--write-only DIR`` or ``--ref-runs DIR``) with ``top_candidates`` called with
``exhaustive=0``: every query with postings goes through MaxScore's threshold and its three
rules. Prints how many lexical top-k calls it forced; exits as the script does.

    PYTHONPATH=src python benchmarks/results_unchanged_pruned.py DATA/scifact --db DB \
        --split final --write-only runs/scifact_pruned
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import results_unchanged  # noqa: E402

from kbsearch.retrieve.lexical import maxscore, postings  # noqa: E402

forced = 0


def pruned(*args: Any, **kwargs: Any) -> Any:
    """``maxscore.top_candidates`` with no exhaustive sum (``exhaustive=0``)."""
    global forced
    forced += 1
    kwargs["exhaustive"] = 0
    return maxscore.top_candidates(*args, **kwargs)


if __name__ == "__main__":
    postings.top_candidates = pruned  # type: ignore[assignment]
    status = results_unchanged.main(sys.argv[1:])
    print(f"lexical top-k calls forced through MaxScore's pruning: {forced}")
    sys.exit(status)
