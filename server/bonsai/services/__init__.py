"""Services: SQLite stores, providers, tokenizers, filesystem, embeddings."""
