"""Text analysis: words, stems and stop words per language, language detection, sentence
segmentation (:mod:`kbsearch.text.sentences`), heading slugs (:mod:`kbsearch.text.slugs`)."""
