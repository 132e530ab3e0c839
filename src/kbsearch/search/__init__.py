"""The search pipeline: routes (a registry), fusion, stages, and a trace explanations read.

See :mod:`kbsearch.search.pipeline` for the flow; :mod:`kbsearch.search.routes` for adding a
route, :mod:`kbsearch.search.stages` for a stage, :mod:`kbsearch.search.backend` for a backend.
"""

from .pipeline import DEFAULT_DEPTH, MAX_K, Pipeline, SearchRequest, SearchResult
from .routes import HYBRID, REGISTRY, Route, RouteContext, make_routes, route_names
from .stages import Stage
from .trace import Trace

__all__ = [
    "DEFAULT_DEPTH",
    "HYBRID",
    "MAX_K",
    "REGISTRY",
    "Pipeline",
    "Route",
    "RouteContext",
    "SearchRequest",
    "SearchResult",
    "Stage",
    "Trace",
    "make_routes",
    "route_names",
]
