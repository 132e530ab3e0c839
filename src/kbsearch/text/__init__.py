"""Text analysis shared by ingestion, chunking and answering (sentence segmentation...)."""
