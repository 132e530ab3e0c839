"""The parts the :class:`~kbsearch.knowledge_base.KnowledgeBase` facade is made of: its
indexing side and its reading side."""
