"""The lexical route's parts: the BM25 formula (:mod:`.bm25`), query-term preparation
(:mod:`.terms`), the FTS5 SQL path kept as the reference (:mod:`.sql`), the whole-table impact
index (:mod:`.impact`), and what serves searches: the per-term index (:mod:`.postings`) with
its MaxScore top k (:mod:`.maxscore`), the doclists kept across generations
(:mod:`.doclists`) and the rows searches touched (:mod:`.rows`)."""
