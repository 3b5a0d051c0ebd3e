"""The conversation as history: its tree, attachment, episodes and recall pages."""
