"""One retriever per modality."""
