"""An all-capitals query word is searched for even when its lower case is a stop word
(issue 22, RediSearch#3080: "IT helpdesk hours" ranked the customer helpdesk first)."""

from __future__ import annotations

import pytest
from support import write_files

import kbsearch
from kbsearch.knowledge_base import KnowledgeBase
from kbsearch.records import Filters

PAGES = {
    "it-helpdesk.md": "# IT helpdesk\n\n"
    "IT helpdesk hours: 8:00 to 18:00 for laptops, passwords and printers.\n",
    "customer-helpdesk.md": "# Customer helpdesk\n\n"
    "Customer helpdesk hours: 9:00 to 17:00 on weekdays.\n",
    "contacts.md": "# Contacts\n\nContact the shop by phone or by mail.\n",
    "parcels.md": "# Parcels\n\nA parcel travels by courier and it arrives in 3 days.\n",
    "returns.md": "# Returns\n\nReturn unused items within 30 days.\n",
    "gift-cards.md": "# Gift cards\n\nA gift card is valid for one year.\n",
    "rewards.md": "# Rewards\n\nPoints expire after 18 months.\n",
    "kettles.md": "# Kettles\n\nDescale the kettle every month.\n",
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    root = tmp_path_factory.mktemp("acronym")
    files = {name: f"---\naccess: public\n---\n{text}" for name, text in PAGES.items()}
    docs = write_files(root / "docs", files)
    kb = kbsearch.open_kb(root / "kb.db", create=True, embedder="none")
    assert kb.index([docs]).ok
    return kb


def test_the_acronym_ranks_its_page_first(kb: KnowledgeBase) -> None:
    hits = kb.search("IT helpdesk hours", route="lexical", k=4, filters=Filters())
    assert [h.doc_id for h in hits[:2]] == ["it-helpdesk", "customer-helpdesk"]


def test_the_acronym_finds_its_pages_beside_the_other_words(kb: KnowledgeBase) -> None:
    hits = kb.search("contact IT", route="lexical", k=4, filters=Filters())
    assert hits[0].doc_id == "contacts" and "it-helpdesk" in [h.doc_id for h in hits]


def test_the_lower_case_stop_word_is_still_dropped(kb: KnowledgeBase) -> None:
    hits = kb.search("helpdesk hours it", route="lexical", k=4, filters=Filters())
    assert hits[0].doc_id == "customer-helpdesk"  # the shorter page, "it" not searched
    assert "parcels" not in [h.doc_id for h in hits]
