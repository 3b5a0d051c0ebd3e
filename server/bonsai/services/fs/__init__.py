"""File-system primitives every tool and store uses: confined paths, atomic writes."""
