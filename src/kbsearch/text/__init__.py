"""Text analysis: words, stems and stop words per language, language detection."""
