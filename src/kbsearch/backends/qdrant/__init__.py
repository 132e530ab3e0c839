"""The Qdrant backend: SQLite stays the system of record, Qdrant holds one point per passage.

- :mod:`.points`: point ids (UUIDv5 of the passage id), payload, payload indexes;
- :mod:`.names`: the passage each point id stands for (SQLite's table, else the payload);
- :mod:`.sparse`: BM25 sparse vectors from kbsearch's analyzer (IDF by Qdrant's modifier);
- :mod:`.filters`: the search filters as a Qdrant filter (``to_qdrant``);
- :mod:`.collection`: the :class:`~.collection.Collection` interface, qdrant-client side;
- :mod:`.edge`: the same interface on Qdrant Edge (in-process engine);
- :mod:`.mirror`: batched writes, ``verify`` and ``sync``.

Needs the ``qdrant`` extra (``pip install 'kbsearch[qdrant]'``).
"""
