"""How results are shown: snippets (the sentence that answers, matched words marked) and
document sources."""
