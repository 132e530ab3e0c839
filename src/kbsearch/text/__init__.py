"""Text processing shared by indexing and answering (sentence segmentation, ...)."""
