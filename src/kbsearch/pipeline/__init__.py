"""The search pipeline: routes (a registry), fusion, stages, and a trace explanations read.

See :mod:`kbsearch.pipeline.run` for the flow, :mod:`kbsearch.pipeline.request` for a
request; :mod:`kbsearch.retrieve.routes` for adding a
route, :mod:`kbsearch.ranking.stages` for a stage, :mod:`kbsearch.retrieve.backend` for a backend.
"""

from ..ranking.stages import Stage
from ..ranking.trace import Trace
from ..retrieve.routes import HYBRID, REGISTRY, Route, RouteContext, make_routes, route_names
from .request import DEFAULT_DEPTH, MAX_K, RankingOptions, SearchOptions, SearchRequest
from .run import Pipeline, SearchResult

__all__ = [
    "DEFAULT_DEPTH",
    "HYBRID",
    "MAX_K",
    "REGISTRY",
    "RankingOptions",
    "Pipeline",
    "Route",
    "RouteContext",
    "SearchOptions",
    "SearchRequest",
    "SearchResult",
    "Stage",
    "Trace",
    "make_routes",
    "route_names",
]
