"""The lexical route's parts: the BM25 formula (:mod:`.bm25`), query-term preparation
(:mod:`.terms`), the FTS5 SQL path kept as the reference (:mod:`.sql`) and the in-memory
impact index that serves searches (:mod:`.impact`)."""
