"""The repository map's pure half: ranking the reference graph and rendering the map."""
