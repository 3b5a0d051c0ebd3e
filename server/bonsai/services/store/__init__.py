"""SQLite persistence through apsw."""
